#!/usr/bin/perl
# HTTP::Tiny's own request/response corpus (the corpus/*.txt case files of
# its distribution) replayed on real sockets, through stock HTTP::Tiny and
# through Nodelay::Tiny in one run. Each case names a call (URL, headers,
# content, new() arguments), the request bytes expected and the response to
# give; HTTP::Tiny's tests play them through a mocked socket, this runner
# through a local server that records the bytes it receives and answers
# with the case's responses in turn. The checks are the ones HTTP::Tiny's
# t/1xx files make of each case (request bytes with header lines sorted,
# status, success flag, content, URL, redirects, headers, mirrored file).
#
#   perl -Iblib/lib -Iblib/arch xt/tiny-corpus.pl --corpus DIR [--known FILE] [-v]
#
# Hosts are the local server: `example.com[:port]` in a case becomes
# 127.0.0.1:PORT (in the URL, the expected Host line and Location), except
# behind a proxy, where only the proxy is the local server. Prints each
# client's passed checks; exits nonzero when stock HTTP::Tiny fails a check,
# when Nodelay::Tiny fails one that FILE (the known gaps, one check label a
# line) does not list, or passes (or never makes) one FILE lists.
use strict;
use warnings;
use File::Basename qw(basename);
use File::Temp qw(tempdir tempfile);
use Getopt::Long qw(GetOptions);
use IO::Socket::INET;
use POSIX ();
use HTTP::Tiny;
use Nodelay::Tiny;

my %opt;
GetOptions(\%opt, 'corpus=s', 'known=s', 'v') && $opt{corpus}
    or die "usage: $0 --corpus DIR [--known FILE] [-v]\n";

my $CRLF = "\r\n";
# Seconds a client may take over one case before the server gives up on it.
use constant CASE_SECONDS => 10;
# The case files this runner plays, by prefix, and the call each makes.
# Left out: cookies-* (HTTP::Tiny's tests give it a cookie jar class of their
# own) and keepalive-* (they test which mocked handle is reused).
my %CALL = map { $_ => 1 } qw(get head put delete post form mirror redirect auth proxy-auth);

# --- the case files, parsed as HTTP::Tiny's t/Util.pm parses them ---

sub parse_case {
    my ($text) = @_;
    my (%args, %seen, $key);
    for my $line (split /\n/, $text) {
        if (substr($line, 0, 1) eq ' ') { $line =~ s/^\s+//; push @{ $args{$key} }, $line }
        else { $key = $line; $seen{$key}++ }
    }
    exists $args{$_} or $args{$_} = undef for keys %seen;
    return \%args;
}

sub hashify {
    my ($lines) = @_;
    my %hash;
    for (@{ $lines || [] }) {
        my ($k, $v) = /^([^:]+): (.*)$/ or next;
        if (!exists $hash{$k}) { $hash{$k} = $v }
        elsif (ref $hash{$k}) { push @{ $hash{$k} }, $v }
        else { $hash{$k} = [$hash{$k}, $v] }
    }
    return %hash;
}

sub sort_headers {
    my ($text) = @_;
    my @lines = split /$CRLF/, $text;
    my $line = shift(@lines) // '';
    my @headers;
    while (defined(my $h = shift @lines)) { last unless length $h; push @headers, $h }
    return join $CRLF, $line, sort(@headers), '', @lines;
}

# A request's bytes as compared: header lines sorted (sort_headers), and the
# chunk-size lines of a chunked body in lower case. Hex digits are the same
# in either case (RFC 9112 §7.1); HTTP::Tiny writes `2A`, the engine `2a`,
# as curl does.
sub comparable_request {
    my ($text) = @_;
    my ($head, $body) = split /(?<=\r\n\r\n)/, $text, 2;
    return sort_headers($text) unless defined $body && $head =~ /^transfer-encoding:[^\r]*chunked/im;
    my $out = '';
    while ($body =~ s/\A([0-9A-Fa-f]+)([^\r\n]*\r\n)//) {
        my ($digits, $rest) = ($1, $2);
        $out .= lc($digits) . $rest;
        last if !hex $digits;
        $out .= substr $body, 0, hex($digits) + 2, '';
    }
    return sort_headers($head . $out . $body);
}

# --- the local server ---

# Reads one request (head, then a Content-Length or chunked body) from
# $conn; the raw bytes, or undef at end of input.
sub read_request {
    my ($conn) = @_;
    my $buf = '';
    my $more = sub {
        my $rin = '';
        vec($rin, fileno $conn, 1) = 1;
        select($rin, undef, undef, CASE_SECONDS) or return 0;
        return sysread $conn, $buf, 65536, length $buf;
    };
    while ($buf !~ /\r\n\r\n/) { $more->() or return length $buf ? $buf : undef }
    my ($head) = $buf =~ /\A(.*?\r\n\r\n)/s;
    if (my ($len) = $head =~ /^content-length:\s*(\d+)/im) {
        while (length $buf < length($head) + $len) { $more->() or last }
    }
    elsif ($head =~ /^transfer-encoding:[^\r]*chunked/im) {
        # The last chunk, then the trailer fields and a blank line.
        while (substr($buf, length $head) !~ /(?:\A|\r\n)0+[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n\z/) { $more->() or last }
    }
    return $buf;
}

# A server answering the Nth request it receives with $responses->[N] and
# closing the connection after each (HTTP::Tiny's cases use keep_alive => 0);
# every request's bytes go to the log, each followed by a separator line.
my $SEPARATOR = "\n=== end of request ===\n";
sub start_server {
    my ($listen, $responses) = @_;
    my ($fh, $log) = tempfile(UNLINK => 1);
    close $fh;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        my $n = 0;
        while (my $conn = $listen->accept) {
            binmode $conn;
            my $req = read_request($conn);
            if (defined $req) {
                open my $out, '>>', $log or die;
                binmode $out;
                print {$out} $req, $SEPARATOR;
                close $out;
                my $res = $responses->[$n++];
                syswrite $conn, $res if defined $res;
            }
            close $conn;
        }
        POSIX::_exit(0);
    }
    close $listen;
    return { pid => $pid, log => $log };
}

sub stop_server {
    my ($server) = @_;
    kill 'TERM', $server->{pid};
    waitpid $server->{pid}, 0;
    open my $in, '<', $server->{log} or die;
    binmode $in;
    my $all = do { local $/; <$in> };
    return [split /\Q$SEPARATOR\E/, $all];
}

# --- one case through one client ---

my $tempdir = tempdir(CLEANUP => 1);

# The checks of one case through $class: a list of [label, ok, got, expected].
sub run_case {
    my ($class, $file) = @_;
    my $label = basename($file);
    my ($prefix) = $label =~ /^([a-z-]+?)-\d+\.txt\z/;
    my $data = do { local (@ARGV, $/) = $file; <> };
    my ($params, @pairs) = split /--+\n/, $data;
    my $case = parse_case($params);
    my %new_args = hashify($case->{new_args});
    my $version = $class->VERSION || 0;
    my $agent = $new_args{agent} || ($class eq 'HTTP::Tiny' ? "HTTP-Tiny/$version" : undef);
    my (@expect, @give);
    while (@pairs) {
        my ($req, $res) = splice @pairs, 0, 2;
        s/\n/$CRLF/g for $req, $res;
        push @expect, $req;
        push @give, $res // '';
    }
    # The case points at the local server's port.
    my $listen = IO::Socket::INET->new(Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
        or die "listen: $!";
    my $here = '127.0.0.1:' . $listen->sockport;
    my $proxied = defined $new_args{proxy};
    my $rewrite = sub {
        my ($text) = @_;
        return $text unless defined $text;
        if ($proxied) { $text =~ s{(?<=[/@])proxy\.example\.com(?::\d+)?}{$here}g }
        else {
            $text =~ s{(?<=[/@])example\.com(?::\d+)?}{$here}g;
            # An empty host is localhost to HTTP::Tiny.
            $text =~ s{\A(https?://)(?=/)}{$1$here};
            $text =~ s{^Host: (?:example\.com|localhost)(?::\d+)?(?=\r?$)}{Host: $here}mg;
        }
        return $text;
    };
    # A response's head only: its body's length is part of the case.
    my $rewrite_head = sub {
        my ($text) = @_;
        my ($head, $body) = split /(?<=\r\n\r\n)/, $text, 2;
        return $rewrite->($head) . ($body // '');
    };
    $new_args{proxy} = $rewrite->($new_args{proxy}) if $proxied;
    my $url = $rewrite->($case->{url}[0]);
    $_ = $rewrite->($_) for @expect;
    $_ = $rewrite_head->($_) for @give;
    # The agent of this client in the expected bytes (Nodelay::Tiny's own
    # default string when the case names HTTP::Tiny's).
    for (@expect) {
        if (defined $agent) { s{HTTP-Tiny/VERSION}{$agent} }
        else { s{^(User-Agent: )HTTP-Tiny/VERSION(?=\r$)}{$1 . Nodelay::Tiny->new->agent}me }
    }
    my %headers = hashify($case->{headers});
    my %options;
    $options{headers} = \%headers if %headers;
    if ($case->{content} && $prefix ne 'form') { $options{content} = $case->{content}[0] }
    elsif (exists $case->{content} && $prefix eq 'put') { $options{content} = '' }
    elsif ($case->{content_cb}) { $options{content} = eval join "\n", @{ $case->{content_cb} } }
    $options{trailer_callback} = eval join "\n", @{ $case->{trailer_cb} } if $case->{trailer_cb};
    local $main::data = '';
    $options{data_callback} = eval join "\n", @{ $case->{data_cb} } if $case->{data_cb};

    my $mirror_file = "$tempdir/tempfile.txt";
    my $known_epoch = 760233600;
    my %timestamp = ('modified.txt' => $known_epoch - 2 * 86400, 'not-modified.txt' => $known_epoch - 2 * 86400);
    (my $basename = $url) =~ s{.*/}{};
    if ($prefix eq 'mirror') {
        1 while unlink $mirror_file;
        if (my $mtime = $timestamp{$basename}) {
            open my $fh, '>', $mirror_file or die;
            close $fh;
            utime $mtime, $mtime, $mirror_file;
        }
    }

    my $server = start_server($listen, \@give);
    my $http = eval { $class->new(keep_alive => 0, %new_args) };
    my $response = $http && eval {
        local $SIG{ALRM} = sub { die "case took longer than " . CASE_SECONDS . " s\n" };
        alarm CASE_SECONDS;
        my $r;
        if ($prefix eq 'get') { $r = $http->get($url, %options ? \%options : ()) }
        elsif ($prefix eq 'head') { $r = $http->head($url, %options ? \%options : ()) }
        elsif ($prefix eq 'put') { $r = $http->put($url, %options ? \%options : ()) }
        elsif ($prefix eq 'delete') { $r = $http->delete($url, %options ? \%options : ()) }
        elsif ($prefix eq 'post') { $r = $http->post($url, %options ? \%options : ()) }
        elsif ($prefix eq 'mirror') { $r = $http->mirror($url, $mirror_file, %options ? \%options : ()) }
        elsif ($prefix eq 'form') { $r = $http->post_form($url, form_data($case), %options ? \%options : ()) }
        else { $r = $http->request($case->{method}[0] || 'GET', $url, %options ? \%options : ()) }
        alarm 0;
        $r;
    };
    my $error = $@;
    alarm 0;
    my $got = stop_server($server);
    $response ||= { status => 'died', content => $error || 'new failed: ' . ($@ // '') };

    my @checks;
    my $check = sub { my ($what, $got, $want) = @_; push @checks, ["$label $what", _same($got, $want), $got, $want] };
    # As t/130_redirect.t and t/161_basic_auth.t: the requests up to the
    # redirect limit (a case may list answers past it).
    my $max_redirect = defined $new_args{max_redirect} ? $new_args{max_redirect} : 5;
    my $last = $prefix =~ /\A(?:redirect|auth|proxy-auth)\z/ && $max_redirect < $#expect ? $max_redirect : $#expect;
    for my $i (0 .. $last) {
        $check->("request ($i)", comparable_request($got->[$i] // ''), comparable_request($expect[$i]));
    }
    # A case whose call fails before any request has no response to give.
    my ($rc) = ($give[-1] // '') =~ m{\S+\s+(\d+)};
    ($rc) = ($give[0] // '') =~ m{\S+\s+(\d+)} if $prefix ne 'redirect' && $prefix ne 'auth' && $prefix ne 'proxy-auth';
    $rc = $case->{expected_rc}[0] if defined $case->{expected_rc};
    if ($prefix =~ /\A(?:redirect|auth|proxy-auth)\z/) {
        my $content = $case->{expected} ? join($CRLF, @{ $case->{expected} }) : '';
        $check->('content', $response->{content}, $content);
        if ($prefix eq 'redirect') {
            my $n = $max_redirect < @expect ? $max_redirect : @expect - 1;
            $check->('redirects array size', scalar @{ $response->{redirects} || [] }, $n);
        }
        $check->('response URL', $response->{url}, $rewrite->($case->{expected_url}[0])) if $case->{expected_url};
        return @checks;
    }
    $check->('response code', $response->{status}, $rc);
    my $success = $rc =~ /\A[23]/ && ($rc =~ /\A2/ || ($prefix eq 'mirror' && $rc eq '304'));
    $check->('success flag', $response->{success} ? 1 : 0, $success ? 1 : 0);
    if ($prefix eq 'mirror') {
        if ($rc =~ /\A2/) { $check->('file created', -e $mirror_file ? 1 : 0, 1) }
        elsif ($rc eq '304') { $check->('file not overwritten', (stat $mirror_file)[9], $timestamp{$basename}) }
        else { $check->('file not created', -e $mirror_file ? 1 : 0, 0) }
    }
    if ($prefix eq 'get') {
        $check->('response URL', $response->{url}, $url);
        $check->('expected headers', $response->{headers}, { hashify($case->{expected_headers}) })
            if defined $case->{expected_headers};
        my $want = $case->{expected} ? join($CRLF, @{ $case->{expected} }, '') : '';
        if ($case->{expected_like}) {
            my $text = $options{data_callback} ? $main::data : $response->{content};
            push @checks, ["$label content like", scalar(($text // '') =~ $case->{expected_like}[0]), $text, "/$case->{expected_like}[0]/"];
        }
        elsif ($options{data_callback}) { $check->('cb got content', $main::data, $want) }
        else { $check->('content', $response->{content}, $want) }
        $check->('resp content empty', $response->{content}, '') if $options{data_callback};
        $check->("redirects array doesn't exist", exists $response->{redirects} ? 1 : 0, 0);
    }
    return @checks;
}

# post_form's data, built as t/150_post_form.t builds it.
sub form_data {
    my ($case) = @_;
    my @params = split /\|/, $case->{content}[0];
    return [map { $_ eq '<undef>' ? undef : $_ } @params] if $case->{datatype}[0] ne 'HASH';
    my $form = {};
    while (@params) {
        my ($key, $value) = splice @params, 0, 2;
        $value = undef if $value eq '<undef>';
        if (ref $form->{$key}) { push @{ $form->{$key} }, $value }
        elsif (exists $form->{$key}) { $form->{$key} = [$form->{$key}, $value] }
        else { $form->{$key} = $value }
    }
    return $form;
}

sub _same {
    my ($got, $want) = @_;
    return (defined $got ? 1 : 0) == (defined $want ? 1 : 0) if !defined $got || !defined $want;
    if (ref $want eq 'HASH') {
        return 0 unless ref $got eq 'HASH' && keys %$got == keys %$want;
        for (keys %$want) { return 0 unless exists $got->{$_} && _same($got->{$_}, $want->{$_}) }
        return 1;
    }
    if (ref $want eq 'ARRAY') {
        return 0 unless ref $got eq 'ARRAY' && @$got == @$want;
        for (0 .. $#$want) { return 0 unless _same($got->[$_], $want->[$_]) }
        return 1;
    }
    return ref $got ? 0 : $got eq $want;
}

# --- the run ---

opendir my $dh, $opt{corpus} or die "$opt{corpus}: $!\n";
my @files = map { "$opt{corpus}/$_" } sort grep { /^([a-z-]+?)-\d+\.txt\z/ && $CALL{$1} } readdir $dh;
my %known;
if ($opt{known} && open my $kh, '<', $opt{known}) {
    while (<$kh>) { chomp; s/\s*#.*//; $known{$_} = 1 if length }
}
my (%passed, %total, @unexpected, %seen_known);
for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
    for my $file (@files) {
        for my $c (run_case($class, $file)) {
            my ($what, $ok, $got, $want) = @$c;
            $total{$class}++;
            $passed{$class}++ if $ok;
            if ($class eq 'Nodelay::Tiny' && $known{$what}) {
                $seen_known{$what} = 1;
                push @unexpected, "Nodelay::Tiny: $what passes: take it out of the known gaps" if $ok;
            }
            next if $ok;
            my $expected_gap = $class eq 'Nodelay::Tiny' && $known{$what};
            push @unexpected, "$class: $what" unless $expected_gap;
            if ($opt{v} || !$expected_gap) {
                require Data::Dumper;
                no warnings 'once';
                local $Data::Dumper::Useqq = 1;
                local $Data::Dumper::Terse = 1;
                local $Data::Dumper::Sortkeys = 1;
                print "not ok: $class: $what\n  got:      ", Data::Dumper::Dumper($got), "  expected: ", Data::Dumper::Dumper($want);
            }
        }
    }
}
push @unexpected, map { "known gap $_ is not a check of this corpus" } grep { !$seen_known{$_} } sort keys %known;
printf "HTTP::Tiny's corpus (%d case files) on real sockets:\n", scalar @files;
printf "  %-14s %3d of %3d checks pass\n", $_, $passed{$_} // 0, $total{$_} for qw(HTTP::Tiny Nodelay::Tiny);
print "unexpected failures:\n", map { "  $_\n" } @unexpected if @unexpected;
exit(@unexpected ? 1 : 0);
