use strict;
use warnings;
use lib 't/lib';
use Test::More;
use File::Temp qw(tempfile);
use IO::Socket::INET;
use Time::HiRes ();
use Nodelay;
use TestServer;

# A SOCKS proxy URL is accepted wherever an http:// one is (the engine speaks
# SOCKS5/5h/4/4a, docs/guide/proxies.md), checked against microsocks, a
# third-party SOCKS5 server (Debian package microsocks), which logs each
# tunnel as "connected to HOST:PORT" with HOST as the client sent it.

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $microsocks = `sh -c 'command -v microsocks'`;
chomp $microsocks;
plan skip_all => 'microsocks is not installed (Debian package microsocks)' unless $microsocks;

# Seconds microsocks has to start listening.
use constant START_TIMEOUT => 10;

sub free_port {
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1) or die $!;
    return $s->sockport;
}

# Starts microsocks (with `-u user -P password` when given); returns its pid,
# port and log file.
sub start_socks {
    my (@auth) = @_;
    my $port = free_port();
    my ($log_fh, $log) = tempfile(UNLINK => 1);
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', $log or die $!;
        open STDERR, '>&', \*STDOUT or die $!;
        exec $microsocks, '-i', '127.0.0.1', '-p', $port, (@auth ? ('-u', $auth[0], '-P', $auth[1]) : ());
        exit 127;
    }
    my $until = Time::HiRes::time() + START_TIMEOUT;
    until (IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port)) {
        die "microsocks did not start\n" if Time::HiRes::time() > $until;
        Time::HiRes::sleep(0.02);
    }
    return { pid => $pid, port => $port, log => $log };
}

sub stop_socks {
    my ($socks) = @_;
    kill 'TERM', $socks->{pid};
    waitpid $socks->{pid}, 0;
}

sub targets {
    my ($socks) = @_;
    open my $fh, '<', $socks->{log} or die $!;
    return [map { /connected to (\S+)$/ ? $1 : () } <$fh>];
}

(my $by_name = $server->url) =~ s/127\.0\.0\.1/localhost/;
my ($port) = $server->url =~ /:(\d+)\z/;

subtest 'socks5h: the proxy resolves the name' => sub {
    my $socks = start_socks();
    my $ua = Nodelay->new(timeout => 5, proxy => "socks5h://127.0.0.1:$socks->{port}");
    my $res = $ua->get("$by_name/bytes/10");
    is $res->status, 200, 'status';
    is length($res->content), 10, 'body';
    is_deeply targets($socks), ["localhost:$port"], 'the name went to the proxy';
    stop_socks($socks);
};

subtest 'credentials, good and bad' => sub {
    my $socks = start_socks('alice', 's3cret');
    my $ua = Nodelay->new(timeout => 5, proxy => "socks5://alice:s3cret\@127.0.0.1:$socks->{port}");
    is $ua->get($server->url . '/bytes/1')->status, 200, 'accepted';
    my $bad = Nodelay->new(timeout => 5, proxy => "socks5://alice:wrong-pw\@127.0.0.1:$socks->{port}");
    my $ok = eval { $bad->get($server->url . '/bytes/1'); 1 };
    my $e = $@;
    ok !$ok, 'refused';
    isa_ok $e, 'Nodelay::X::ProxyError';
    like $e->message, qr/rejected the username and password/, 'the reason';
    unlike $e->message, qr/wrong-pw/, 'no password in the message';
    stop_socks($socks);
};

done_testing;
