use strict;
use warnings;
use lib 't/lib';
use Test::More;
use File::Temp qw(tempfile);
use IO::Socket::INET;
use POSIX ();

# The bytes LWP::Protocol::nodelay puts on the wire, beside stock LWP's for
# the same program: a server records every request head it receives and
# answers each with one fixed response, closing the connection when the
# request asks for it (as HTTP::Daemon and LWP's own test servers do).
BEGIN {
    eval { require LWP::UserAgent; 1 }
        or plan skip_all => 'LWP::UserAgent not installed (Debian libwww-perl)';
}
use LWP::Protocol::nodelay;

# Seconds the server keeps a connection the client did not ask to close. The
# server serves one connection at a time, so a kept-alive connection delays the
# next case's by this much: it stays well below the agents' 5 s timeout, even
# under AddressSanitizer.
use constant IDLE_SECONDS => 1;

sub recording_server {
    my ($reply) = @_;
    my ($fh, $log) = tempfile(UNLINK => 1);
    close $fh;
    my $listen = IO::Socket::INET->new(Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
        or die "listen: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        while (my $conn = $listen->accept) {
            binmode $conn;
            my $buf = '';
            while (1) {
                my $rin = '';
                vec($rin, fileno $conn, 1) = 1;
                last unless select($rin, undef, undef, IDLE_SECONDS);
                my $n = sysread $conn, $buf, 65536, length $buf;
                last unless $n;
                next unless $buf =~ s/\A(.*?\r\n\r\n)//s;
                my $head = $1;
                my ($len) = $head =~ /^content-length:\s*(\d+)/im;
                if ($len) { sysread $conn, $buf, $len - length $buf, length $buf while length $buf < $len; substr $buf, 0, $len, '' }
                open my $out, '>>', $log or die;
                print {$out} $head;
                close $out;
                syswrite $conn, $reply;
                last if $head =~ /^connection:[^\r]*\bclose\b/im;
            }
            close $conn;
        }
        POSIX::_exit(0);
    }
    my $port = $listen->sockport;
    close $listen;
    return { pid => $pid, port => $port, log => $log };
}

sub stop { my ($s) = @_; kill 'TERM', $s->{pid}; waitpid $s->{pid}, 0 }

# What stock LWP sends and the engine does not, by design: TE
# (Net::HTTP offers gzip and deflate as transfer codings; the engine undoes
# no transfer coding but chunked, so it does not ask for one), and Keep-Alive
# (Net::HTTP's keep-alive offer to an HTTP/1.0 peer, on a connection whose
# peer's version it does not know yet; HTTP/1.1 connections persist without
# it). Those fields and their Connection tokens are left out of the
# comparison.
sub comparable {
    my ($line) = @_;
    return () if $line =~ /^(?:te|keep-alive):/;
    if ($line =~ /^connection: (.*)/) {
        my @tokens = grep { !/\A(?:te|keep-alive)\z/ } split /, /, $1;
        return @tokens ? 'connection: ' . join(', ', @tokens) : ();
    }
    return $line;
}

# The request heads recorded since the last call, each as its request line
# and its header lines lower-cased and sorted (the engine orders Host
# differently), as comparable() keeps them.
sub heads {
    my ($s) = @_;
    open my $in, '<', $s->{log} or die;
    my @heads = split /\r\n\r\n/, do { local $/; <$in> };
    close $in;
    open my $out, '>', $s->{log} or die;
    close $out;
    return [map { my ($line, @fields) = split /\r\n/; [$line, sort map { comparable(lc) } @fields] } @heads];
}

my $stock = LWP::Protocol::implementor('http');
sub through {
    my ($impl, $code) = @_;
    LWP::Protocol::implementor('http', $impl);
    my @out = eval { $code->() };
    my $err = $@;
    LWP::Protocol::implementor('http', $stock);
    die $err if $err;
    return @out;
}

my $server = recording_server("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok");
my $url = "http://127.0.0.1:$server->{port}/page";

# A default user agent (no keep_alive) asks for Connection: close, as
# Net::HTTP does for stock LWP; one with keep_alive does not, and neither
# does one whose caller gave a Connection header of its own (its tokens are
# kept, close added for the default agent).
for my $case (
    ['default agent', sub { LWP::UserAgent->new(timeout => 5, agent => 'wire/1') }, []],
    ['keep_alive agent', sub { LWP::UserAgent->new(timeout => 5, agent => 'wire/1', keep_alive => 1) }, []],
    ['caller Connection header', sub { LWP::UserAgent->new(timeout => 5, agent => 'wire/1') }, [Connection => 'Upgrade']],
) {
    my ($what, $make, $headers) = @$case;
    my %got;
    for my $impl ($stock, 'LWP::Protocol::nodelay') {
        my $ua = $make->();
        my ($res) = through($impl, sub { $ua->get($url, @$headers) });
        is $res->code, 200, "$what via $impl: 200";
        $got{$impl} = heads($server);
    }
    is_deeply $got{'LWP::Protocol::nodelay'}, $got{$stock}, "$what: the request bytes are stock LWP's"
        or diag explain \%got;
}
stop($server);

# An ftp:// URL with an HTTP proxy for ftp goes to the proxy, as LWP sends
# it (LWP picks the implementor of the proxy's scheme).
my $proxy = recording_server("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nvia proxy");
my %got;
for my $impl ($stock, 'LWP::Protocol::nodelay') {
    my $ua = LWP::UserAgent->new(timeout => 5, agent => 'wire/1');
    $ua->proxy(ftp => "http://127.0.0.1:$proxy->{port}/");
    my ($res) = through($impl, sub { $ua->get('ftp://ftp.example.com/pub/file.txt') });
    $got{$impl} = [$res->code, $res->content, heads($proxy)];
}
is_deeply $got{'LWP::Protocol::nodelay'}, $got{$stock}, 'ftp through an HTTP proxy: as stock LWP'
    or diag explain \%got;
is $got{$stock}[0], 200, 'the proxy answered';
stop($proxy);

done_testing;
