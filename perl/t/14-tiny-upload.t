use strict;
use warnings;
use lib 't/lib';
use Test::More;
use File::Temp qw(tempfile);
use IO::Socket::INET;
use POSIX ();
use HTTP::Tiny;
use Nodelay::Tiny;

# A content callback (`content => sub { ... }`) and `trailer_callback`, sent
# by stock HTTP::Tiny and by Nodelay::Tiny to one recording server in the
# same test: the request bytes must be the same (header lines compared in
# sorted order, trailer fields too: HTTP::Tiny writes most of them in hash
# order; chunk-size
# lines compared as lower-case hex, RFC 9112 §7.1: HTTP::Tiny writes `2A`,
# the engine `2a`, as curl does), and so must the response hashrefs,
# failures (599 with HTTP::Tiny's message) included.

# Seconds the server waits for a request's bytes before it gives up.
use constant WAIT_SECONDS => 5;

# Reads one request from $conn (head, then a Content-Length or chunked body
# with its trailer section); returns its bytes, chunk-size lines in lower
# case, or undef at end of input.
sub read_request {
    my ($conn) = @_;
    my $buf = '';
    my $fill = sub {
        my $rin = '';
        vec($rin, fileno $conn, 1) = 1;
        return 0 unless select($rin, undef, undef, WAIT_SECONDS);
        return sysread $conn, $buf, 65536, length $buf;
    };
    my $line = sub {
        while ($buf !~ /\r\n/) { $fill->() or return undef }
        $buf =~ s/\A(.*?\r\n)//s;
        return $1;
    };
    my $head = '';
    while (defined(my $l = $line->())) { $head .= $l; last if $l eq "\r\n" }
    return undef unless $head =~ /\r\n\r\n\z/;
    my $request = $head;
    if ($head =~ /^transfer-encoding:[^\r]*chunked/im) {
        while (defined(my $size = $line->())) {
            $request .= lc $size;
            my ($digits) = $size =~ /\A([0-9A-Fa-f]+)/ or return $request;
            my $n = hex $digits;
            if (!$n) {
                while (defined(my $t = $line->())) { $request .= $t; last if $t eq "\r\n" }
                last;
            }
            while (length $buf < $n + 2) { $fill->() or return $request }
            $request .= substr $buf, 0, $n + 2, '';
        }
    }
    elsif (my ($len) = $head =~ /^content-length:\s*(\d+)/im) {
        while (length $buf < $len) { $fill->() or last }
        $request .= substr $buf, 0, $len, '';
    }
    return $request;
}

my ($log_fh, $log) = tempfile(UNLINK => 1);
close $log_fh;
my $listen = IO::Socket::INET->new(Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
    or die "listen: $!";
my $port = $listen->sockport;
my $pid = fork // die "fork: $!";
if (!$pid) {
    while (my $conn = $listen->accept) {
        binmode $conn;
        my $request = read_request($conn);
        if (defined $request) {
            open my $out, '>>', $log or die;
            print {$out} $request, "\0";
            close $out;
            syswrite $conn, "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        }
        close $conn;
    }
    POSIX::_exit(0);
}
close $listen;
my $url = "http://127.0.0.1:$port/upload";

# The requests recorded since the last call, header lines sorted.
sub recorded {
    open my $in, '<', $log or die;
    local $/;
    my $all = <$in> // '';
    close $in;
    truncate $log, 0;
    return [map {
        my ($head, $body) = split /\r\n\r\n/, $_, 2;
        my ($line, @fields) = split /\r\n/, $head;
        # The trailer section too: HTTP::Tiny writes it in hash order.
        if ($body =~ /\A((?:.*\r\n)?0\r\n)(.+\r\n)\r\n\z/s) {
            my ($chunks, $trailers) = ($1, $2);
            $body = $chunks . join('', sort $trailers =~ /(.*?\r\n)/g) . "\r\n";
        }
        join("\r\n", $line, sort(@fields)) . "\r\n\r\n" . $body;
    } grep { length } split /\0/, $all];
}

# Makes a callback giving @pieces one by one, then undef.
sub pieces { my @p = @_; sub { shift @p } }

my %new = (timeout => 5, agent => 'same-agent/1');
my $tiny = Nodelay::Tiny->new(%new);
my $stock = HTTP::Tiny->new(%new);

# Each case: the request's options, made afresh for each client (callbacks
# are consumed).
my @cases = (
    ['pieces, chunked' => sub { {
        headers => { 'Content-Type' => 'text/plain' },
        content => pieces('abcdefghijklmnopqrstuvwxyz1234567890abcdef', 'x', 'y' x 70000) } }],
    ['an empty callback' => sub { { content => pieces() } }],
    ['an empty string ends the body' => sub { { content => pieces('ab', '', 'never sent') } }],
    ['trailer fields' => sub { {
        content          => pieces('abc'),
        trailer_callback => sub { { 'x-foo' => 'bar', 'content-md5' => 'abc=', 'X-Multi' => [1, 2] } } } }],
    ['a Content-Length header: no chunks, no trailers' => sub { {
        headers          => { 'Content-Length' => 5 },
        content          => pieces('ab', 'cde'),
        trailer_callback => sub { { 'x-foo' => 'bar' } } } }],
    ['Content-Length: 0: the callback is not called' => sub { {
        headers => { 'Content-Length' => 0 },
        content => sub { die "called\n" } } }],
);
for my $case (@cases) {
    my ($what, $args) = @$case;
    my $ours = $tiny->put($url, $args->());
    my $got = recorded();
    my $ref = $stock->put($url, $args->());
    my $want = recorded();
    is scalar @$got, 1, "$what: one request";
    is $got->[0], $want->[0], "$what: the bytes HTTP::Tiny sends";
    is_deeply [@$ours{qw(status success content)}], [@$ref{qw(status success content)}],
        "$what: the response as HTTP::Tiny's";
}

# Failures: 599 with HTTP::Tiny's message (the callback's own error for a
# callback that dies).
my @failing = (
    ['a callback that dies' => sub { { content => sub { die "no more data\n" } } }],
    ['a callback that dies after a piece' => sub { my $n = 0; { content => sub { $n++ ? die "broken\n" : 'ab' } } }],
    ['a wide character' => sub { { content => pieces("caf\x{e9}", "\x{263a}") } }],
    ['a wide character, with a length' => sub { { headers => { 'Content-Length' => 3 }, content => pieces("\x{263a}") } }],
    ['pieces longer than the Content-Length' => sub { { headers => { 'Content-Length' => 3 }, content => pieces('ab', 'cd', 'e') } }],
    ['pieces shorter than the Content-Length' => sub { { headers => { 'Content-Length' => 9 }, content => pieces('ab') } }],
    ['trailers not a hashref' => sub { { content => pieces('ab'), trailer_callback => sub { [] } } }],
    ['a trailer name HTTP::Tiny refuses' => sub { { content => pieces('ab'), trailer_callback => sub { { 'bad name' => 1 } } } }],
    ['a trailer callback that dies' => sub { { content => pieces('ab'), trailer_callback => sub { die "no trailers\n" } } }],
);
for my $case (@failing) {
    my ($what, $args) = @$case;
    my $ours = $tiny->put($url, $args->());
    recorded();
    my $ref = $stock->put($url, $args->());
    recorded();
    is $ref->{status}, 599, "$what: stock fails";
    is_deeply [@$ours{qw(status reason content)}], [@$ref{qw(status reason content)}],
        "$what: 599 with HTTP::Tiny's message";
}

# The client is still usable after each failure.
my $after = $tiny->put($url, { content => pieces('ok') });
is $after->{status}, 201, 'a request after the failures';
# (The server serves one connection at a time: the failed requests' bytes,
# logged when their connections closed, come before this one.)
like recorded()->[-1], qr/\r\n\r\n2\r\nok\r\n0\r\n\r\n\z/, 'sent chunked';

kill 'TERM', $pid;
waitpid $pid, 0;
done_testing;
