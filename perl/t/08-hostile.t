use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Time::HiRes ();
use IO::Compress::Gzip qw(gzip $GzipError);
use Nodelay;
use Scripted;

# Hostile servers (HOSTILE.md) scripted byte by byte: each failure is the
# exception class and message the Python front raises for the same bytes
# (tests/hostile), within the client's deadline.

# The client's timeouts, and the slack a failure may take past them.
use constant TIMEOUT => 1;
use constant SLACK   => 3;

my $OK_HEAD = "HTTP/1.1 200 OK\r\n";
my $CHUNKED_HEAD = "${OK_HEAD}Transfer-Encoding: chunked\r\n\r\n";

sub gzip_layers {
    my ($data, $n) = @_;
    for (1 .. $n) { my $out; gzip(\$data => \$out) or die $GzipError; $data = $out }
    return $data;
}
my $six = gzip_layers('deep', 6);

my @cases = (
    # [name, script, class, message regex, request options]
    ['A2 two Content-Lengths differ', [['recv'], ['send', "${OK_HEAD}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"]],
        'RemoteProtocolError', qr/Content-Length/],
    ['A2 Content-Length +5', [['recv'], ['send', "${OK_HEAD}Content-Length: +5\r\n\r\nhello"]],
        'RemoteProtocolError', qr/Content-Length/],
    ['A3 unknown transfer coding', [['recv'], ['send', "${OK_HEAD}Transfer-Encoding: gzip, chunked, foo\r\n\r\n5\r\nhello\r\n0\r\n\r\n"]],
        'RemoteProtocolError', qr/Transfer/],
    ['A4 bare LF in a chunk line', [['recv'], ['send', "${CHUNKED_HEAD}5;a\nhello\r\n0\r\n\r\n"]],
        'RemoteProtocolError', qr/chunk/],
    ['A4 chunk size -1', [['recv'], ['send', "${CHUNKED_HEAD}-1\r\nhello\r\n0\r\n\r\n"]],
        'RemoteProtocolError', qr/chunk/],
    ['A7 status line HTTP/1.1 20', [['recv'], ['send', "HTTP/1.1 20\r\nContent-Length: 0\r\n\r\n"]],
        'RemoteProtocolError', qr/./],
    ['A8 a 200 KiB header line', [['recv'], ['send', $OK_HEAD . 'X-Big: ' . ('a' x (200 * 1024)) . "\r\nContent-Length: 0\r\n\r\n"]],
        'HeaderTooLarge', qr/exceeds/],
    ['A8 129 header fields', [['recv'], ['send', $OK_HEAD . join('', map { "X-$_: v\r\n" } 0 .. 127) . "Content-Length: 0\r\n\r\n"]],
        'HeaderTooLarge', qr/128/],
    ['A9 body shorter than Content-Length', [['recv'], ['send', "${OK_HEAD}Content-Length: 10\r\n\r\nxxx"], ['close']],
        'RemoteProtocolError', qr/received 3 of 10 bytes/],
    ['A9 streamed body shorter than Content-Length', [['recv'], ['send', "${OK_HEAD}Content-Length: 100000\r\n\r\n" . ('x' x 3000)], ['close']],
        'RemoteProtocolError', qr/received 3000 of 100000 bytes/, { data_callback => sub { } }],
    ['A9 chunked body cut mid-chunk', [['recv'], ['send', "${CHUNKED_HEAD}a\r\nabc"], ['close']],
        'RemoteProtocolError', qr/chunked body cut after \d+ bytes/],
    ['A9 head cut', [['recv'], ['send', "${OK_HEAD}Content-Length: 5\r\n"], ['close']],
        'RemoteProtocolError', qr/middle of the response head/],
    ['A13 fifty 100 Continue', [['recv'], ['send', ("HTTP/1.1 100 Continue\r\n\r\n" x 50) . "${OK_HEAD}Content-Length: 4\r\n\r\nlate"]],
        'RemoteProtocolError', qr/interim/],
    ['B15 six gzip layers', [['recv'], ['send', "${OK_HEAD}Content-Encoding: gzip, gzip, gzip, gzip, gzip, gzip\r\nContent-Length: " . length($six) . "\r\n\r\n$six"]],
        'DecodingError', qr/content codings/],
    ['B16 corrupt gzip', [['recv'], ['send', "${OK_HEAD}Content-Encoding: gzip\r\nContent-Length: 20\r\n\r\n" . ("\x1f\x8b\x08\x00" . ("\xff" x 16))]],
        'DecodingError', qr/./],
    ['I31 closed before any response byte', [['recv'], ['close']],
        'RemoteProtocolError', qr/without sending a response/],
    ['I31 reset mid-body', [['recv'], ['send', "${OK_HEAD}Content-Length: 100000\r\n\r\n" . ('x' x 5000)], ['sleep', 0.1], ['reset']],
        'ReadError', qr/./],
    ['I32 never answers', [['recv']],
        'ReadTimeout', qr/\Aread timeout of 1\.0 s while waiting for the response head\z/],
);

my $ua = Nodelay->new(timeout => TIMEOUT);
for my $case (@cases) {
    my ($name, $script, $class, $message, $opts) = @$case;
    subtest $name => sub {
        my $server = Scripted->start(@$script);
        my $t0 = Time::HiRes::time();
        my $ok = eval { $ua->request('GET', $server->url . '/', $opts || {}); 1 };
        my $e = $@;
        my $took = Time::HiRes::time() - $t0;
        ok !$ok, 'failed';
        isa_ok $e, "Nodelay::X::$class";
        like ref $e && $e->message, $message, 'the message';
        is $e->url, $server->url . '/', 'the url' if ref $e;
        cmp_ok $took, '<', TIMEOUT + SLACK, 'within the deadline';
    };
}

subtest 'A10 a body longer than Content-Length is not read as the next response' => sub {
    my $server = Scripted->start(['recv'], ['send', "${OK_HEAD}Content-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nPOISON"], ['recv'],
        ['send', "${OK_HEAD}Content-Length: 5\r\n\r\nfresh"]);
    my $client = Nodelay->new(timeout => TIMEOUT);
    is $client->get($server->url . '/')->content, 'ok', 'the declared length';
    my $next = eval { $client->get($server->url . '/')->content } // "error: $@";
    isnt $next, 'POISON', 'the extra bytes are not the next response';
};

subtest 'F25 CR LF in a header value: LocalProtocolError before sending' => sub {
    my $server = Scripted->start(['recv'], ['send', "${OK_HEAD}Content-Length: 0\r\n\r\n"]);
    my $ok = eval { $ua->get($server->url . '/', headers => { 'X-A' => "b\r\nX-Injected: 1" }); 1 };
    ok !$ok, 'failed';
    isa_ok $@, 'Nodelay::X::LocalProtocolError';
    isa_ok $@, 'Nodelay::X::ProtocolError';
};

subtest 'the hierarchy' => sub {
    isa_ok 'Nodelay::X::HeaderTooLarge', $_ for qw(Nodelay::X::RemoteProtocolError Nodelay::X::ProtocolError Nodelay::X::TransportError Nodelay::X);
    isa_ok 'Nodelay::X::TLSError', $_ for qw(Nodelay::X::ConnectError Nodelay::X::Connect Nodelay::X::NetworkError);
    isa_ok 'Nodelay::X::ReadTimeout', $_ for qw(Nodelay::X::Timeout Nodelay::X::TransportError);
    ok 'Nodelay::X::ReadTimeout'->is_timeout && !'Nodelay::X::ReadError'->is_timeout, 'is_timeout';
};

done_testing;
