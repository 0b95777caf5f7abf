package Nodelay::Response;
# A response: status and reason, the body (read whole, content codings
# already decoded by the engine), and header lookups answered from the
# received head bytes when asked (nothing is decoded before).
use strict;
use warnings;
use Carp ();
use Nodelay::Charset;

sub CLONE_SKIP { 1 }

sub _new {
    my ($class, $handle, $content, $method, $url) = @_;
    return bless { handle => $handle, content => $content, method => $method, url => $url }, $class;
}

# Hands the body to $callback piece by piece ($piece, $self), as the engine
# decodes it; the body is not kept. A failure mid-body is thrown as the
# request's exception; a callback that dies leaves the rest unread (the
# connection is then closed, not reused).
sub _stream {
    my ($self, $callback) = @_;
    while (1) {
        my ($code, $piece) = Nodelay::XS::response_read_chunk($self->{handle}, Nodelay::STREAM_PIECE());
        Nodelay::X->throw($code, $piece, $self->{method}, $self->{url}) if $code;
        last unless length $piece;
        $callback->($piece, $self);
    }
    return;
}

# status: in Nodelay.xs.
sub code    { $_[0]->status }
sub reason  { Nodelay::XS::response_reason($_[0]{handle}) }
sub message { $_[0]->reason }
sub content { $_[0]{content} }
sub url     { $_[0]{url} }
sub method  { $_[0]{method} }
sub protocol { Nodelay::XS::response_version($_[0]{handle}) }

# In scalar context the first value of the header (case-insensitive name),
# undef when absent; in list context every value in received order.
sub header { Nodelay::XS::response_header($_[0]{handle}, $_[1]) }

# Every header as a list of name, value pairs in received order.
sub headers { [Nodelay::XS::response_headers($_[0]{handle})] }

# The head in one call, as HTTP::Tiny's response hash holds it: status,
# reason, protocol, and a hashref of the fields by lower-cased name (a
# repeated one's values in an arrayref).
sub _head_hash { Nodelay::XS::response_head_hash($_[0]{handle}) }

# The trailer fields that followed a chunked body (HTTP/1.1), as name, value
# pairs in received order; empty until the body was read to its end.
sub trailers { [Nodelay::XS::response_trailers($_[0]{handle})] }

# The body parsed as JSON, as JSON::PP->new->utf8->allow_nonref->decode
# returns it: hash and array references, character strings, numbers, undef
# for null, and $JSON::PP::true / $JSON::PP::false. The engine's JSON fast
# path builds the value in one pass over the bytes; a document it leaves
# (invalid JSON, an integer beyond 64 bits, a lone UTF-16 surrogate, nesting
# deeper than 256) goes to JSON::PP itself, which returns its value or
# croaks with its own message.
sub json {
    my ($self) = @_;
    require JSON::PP;
    my ($ok, $value) = Nodelay::XS::json_decode($self->{content});
    return $value if $ok;
    return JSON::PP->new->utf8->allow_nonref->decode($self->{content});
}

sub is_success { my $s = $_[0]->status; $s >= 200 && $s < 300 }

# The media type (lower case, no parameters) and the charset parameter.
sub _content_type {
    my ($self) = @_;
    my $ct = $self->header('Content-Type');
    return ('', undef) unless defined $ct;
    my ($type) = $ct =~ m{\A\s*([^;\s]+)};
    my ($charset) = $ct =~ m{;\s*charset\s*=\s*"?([^";\s]+)}i;
    return (lc($type // ''), $charset);
}

# The body as text, decoded by its charset with HTTP::Message's rules: only
# text/* and XML are decoded (other types come back as bytes); the charset
# is the charset option, else the Content-Type parameter, else the
# default_charset option, else what the bytes say (Nodelay::Charset: a
# byte-order mark, an XML declaration, an HTML <meta> charset, UTF-8 when
# valid), else ISO-8859-1. charset => 'none' returns the
# bytes. Bytes that are not valid in the charset become U+FFFD, or croak
# with raise_error => 1. Content codings (gzip, br, ...) were already undone
# by the engine.
sub decoded_content {
    my ($self, %opt) = @_;
    my $content = $self->{content};
    my ($type, $charset) = $self->_content_type;
    my $is_xml = $type =~ m{\A(?:text|application)/xml\z|\+xml\z};
    return $content unless $type =~ m{\Atext/} || $is_xml;
    $charset = $opt{charset} || $charset || $opt{default_charset}
        || Nodelay::Charset::guess($content, $type, $is_xml) || 'ISO-8859-1';
    return $content if lc $charset eq 'none';
    require Encode;
    my $encoding = Encode::find_encoding($charset)
        or Carp::croak("decoded_content: unknown charset '$charset'");
    my $check = ($opt{raise_error} ? Encode::FB_CROAK() : Encode::FB_DEFAULT()) | Encode::LEAVE_SRC();
    my $decoded = eval { $encoding->decode($content, $check) };
    Carp::croak("decoded_content: the body is not valid $charset: $@") unless defined $decoded;
    return $decoded;
}

# The response as an HTTP::Response (libhttp-message-perl), with its request
# (method and URL) attached, for code written against LWP.
sub as_http_response {
    my ($self) = @_;
    eval { require HTTP::Response; require HTTP::Request; 1 }
        or Carp::croak('as_http_response needs HTTP::Response (HTTP::Message, Debian libhttp-message-perl), which is not installed');
    my $res = HTTP::Response->new($self->status, $self->reason, $self->_decoded_headers, $self->{content});
    $res->protocol($self->protocol);
    $res->request(HTTP::Request->new($self->{method}, $self->{url})) if defined $self->{url};
    return $res;
}

# The content codings the engine undoes while it reads a body.
my %ENGINE_DECODES = map { $_ => 1 } qw(gzip x-gzip deflate br zstd identity);

# The headers as name, value pairs for a body the engine already decoded:
# a Content-Encoding it undid is dropped with the Content-Length of the
# encoded bytes (as HTTP::Message expects of decoded content).
sub _decoded_headers { _decoded_pairs($_[0]->headers) }

# The same for a list of received pairs (an array reference): what
# LWP::Protocol::nodelay builds its HTTP::Response from.
sub _decoded_pairs {
    my ($pairs) = @_;
    my @codings;
    for (my $i = 0; $i < @$pairs; $i += 2) {
        push @codings, map { split /\s*,\s*/, lc } $pairs->[$i + 1] if lc $pairs->[$i] eq 'content-encoding';
    }
    return $pairs unless grep { $_ ne '' } @codings;
    return $pairs if grep { $_ ne '' && !$ENGINE_DECODES{$_} } @codings;
    my @out;
    for (my $i = 0; $i < @$pairs; $i += 2) {
        next if $pairs->[$i] =~ /\Acontent-(?:encoding|length)\z/i;
        push @out, $pairs->[$i], $pairs->[$i + 1];
    }
    return \@out;
}

# DESTROY (freeing the engine's response): in Nodelay.xs.

1;
