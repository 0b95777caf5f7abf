package Nodelay::Charset;
# The charset of a body whose Content-Type names none, guessed from its
# bytes by HTTP::Message's content_charset rules (so decoded_content agrees
# with HTTP::Response's): a byte-order mark; for XML the encoding in its
# <?xml ...?> declaration, else UTF-8; for HTML a <meta charset> or
# <meta http-equiv=content-type content="...; charset=..."> in the first
# bytes (the HTML standard's prescan); for other text/* US-ASCII, UTF-8
# when the bytes are valid UTF-8, else ISO-8859-1.
use strict;
use warnings;

# Bytes of an HTML body searched for a <meta> charset (the HTML standard's
# prescan reads this many).
use constant HTML_PRESCAN_BYTES => 1024;

# HTML whitespace, as a regex character class body.
my $WS = qr/[\x09\x0A\x0C\x0D ]/;

sub guess {
    my ($content, $type, $is_xml) = @_;
    for ($content) {
        return 'UTF-8'    if /\A\xEF\xBB\xBF/;
        return 'UTF-32LE' if /\A\xFF\xFE\x00\x00/;
        return 'UTF-32BE' if /\A\x00\x00\xFE\xFF/;
        return 'UTF-16LE' if /\A\xFF\xFE/;
        return 'UTF-16BE' if /\A\xFE\xFF/;
    }
    return _xml($content) if $is_xml;
    if ($type eq 'text/html') {
        my $meta = html_meta($content);
        return $meta if defined $meta;
    }
    return undef unless $type =~ m{\Atext/} && length $content;
    return 'US-ASCII' unless $content =~ /[\x80-\xFF]/;
    my $copy = $content;
    return utf8::decode($copy) ? 'UTF-8' : 'ISO-8859-1';
}

# XML without a byte-order mark: the layout of its first '<' tells UTF-16
# and UTF-32 apart; otherwise the declaration's encoding, else UTF-8.
sub _xml {
    my ($content) = @_;
    for ($content) {
        return 'UTF-32BE' if /\A\x00\x00\x00</;
        return 'UTF-32LE' if /\A<\x00\x00\x00/;
        return 'UTF-16BE' if /\A(?:\x00\s)*\x00</;
        return 'UTF-16LE' if /\A(?:\s\x00)*<\x00/;
        if (/\A\s*(<\?xml[^\x00]*?\?>)/ && $1 =~ /\sencoding\s*=\s*(["'])(.*?)\1/) {
            (my $name = $2) =~ s/\A\s+|\s+\z//g;
            return $name if length $name;
        }
    }
    return 'UTF-8';
}

# The charset a <meta> tag in the first HTML_PRESCAN_BYTES names, as its
# MIME name, or undef. Walks the markup as the HTML standard's prescan does
# (comments and other tags skipped, attributes parsed), taking the first
# <meta> whose charset attribute, or content attribute's charset=, names an
# encoding Perl knows. A declared UTF-16 means UTF-8 (the bytes were read as
# ASCII to find it) and ISO-8859-1 means windows-1252, as browsers do.
sub html_meta {
    my ($content) = @_;
    my $head = substr $content, 0, HTML_PRESCAN_BYTES;
    require Encode;
    for ($head) {
        pos = 0;
        while (pos() < length) {
            if (/\G<!--.*?(?<=--)>/sgc) { }
            elsif (/\G<meta(?=[\x09\x0A\x0C\x0D \/])/gci) {
                my $charset = _meta_charset();
                if (defined $charset) {
                    $charset = 'UTF-8'  if $charset =~ /\Autf-?16/;
                    $charset = 'cp1252' if $charset eq 'iso-8859-1';
                    if (my $encoding = Encode::find_encoding($charset)) {
                        return $encoding->mime_name // $encoding->name;
                    }
                }
            }
            elsif (m{\G</?[a-zA-Z][^\x09\x0A\x0C\x0D >]*}gc) { 1 while _attribute() }
            elsif (m{\G<[!/?][^>]*}gc) { }
            elsif (/\G</gc) { }
            /\G[^<]+/gc;
        }
    }
    return undef;
}

# The charset one <meta> tag's attributes declare ($_ at the tag's first
# attribute), or undef.
sub _meta_charset {
    my $charset;
    while (my ($name, $value) = _attribute()) {
        if ($name eq 'charset') { $charset = $value }
        elsif ($name eq 'content' && !defined $charset) { $charset = _content_charset($value) }
    }
    return $charset;
}

# One attribute of the tag at pos($_): (name, value), both lower-cased, or
# an empty list at the tag's end.
sub _attribute {
    m{\G[\x09\x0A\x0C\x0D /]+}gc;
    return if /\G>/gc || !/\G(=?[^\x09\x0A\x0C\x0D =]*)/gc;
    my ($name, $value) = (lc $1, '');
    if (/\G$WS*=$WS*/gc) {
        if (/\G"/gc)    { /\G([^"]*)("?)/gc or return; return unless $2; $value = lc $1 }
        elsif (/\G'/gc) { /\G([^']*)('?)/gc or return; return unless $2; $value = lc $1 }
        else            { /\G([^\x09\x0A\x0C\x0D >]*)/gc; $value = lc $1 }
    }
    return ($name, $value);
}

# The charset= parameter inside a <meta content="..."> value, or undef.
sub _content_charset {
    my ($value) = @_;
    while ($value =~ /charset$WS*=$WS*/gi) {
        return $1 if $value =~ /\G"([^"]*)"/gc || $value =~ /\G'([^']*)'/gc
            || $value =~ /\G(?!['"])([^\x09\x0A\x0C\x0D ;]+)/gc;
    }
    return undef;
}

1;
