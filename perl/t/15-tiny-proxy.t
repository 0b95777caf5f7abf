use strict;
use warnings;
use Test::More;
use IO::Socket::INET;
use POSIX ();
use HTTP::Tiny;
use Nodelay::Tiny;

# Which proxy a request goes through (proxy, http_proxy, https_proxy and
# no_proxy as arguments and from the environment) and which address it
# comes from (local_address), through stock HTTP::Tiny and Nodelay::Tiny in
# the same test. Two local servers answer with their own name, the client's
# address and the request line they read: the origin, and a proxy.

# Seconds a server waits for a request head.
use constant WAIT_SECONDS => 5;

sub server {
    my ($name) = @_;
    my $listen = IO::Socket::INET->new(Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
        or die "listen: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        while (my $conn = $listen->accept) {
            my $head = '';
            while ($head !~ /\r\n\r\n/) {
                my $rin = '';
                vec($rin, fileno $conn, 1) = 1;
                last unless select($rin, undef, undef, WAIT_SECONDS);
                last unless sysread $conn, $head, 4096, length $head;
            }
            my ($line) = $head =~ /\A([^\r\n]*)/;
            my $body = "$name (from " . $conn->peerhost . "): $line";
            syswrite $conn, "HTTP/1.1 200 OK\r\nContent-Length: " . length($body) . "\r\nConnection: close\r\n\r\n$body";
            close $conn;
        }
        POSIX::_exit(0);
    }
    my $port = $listen->sockport;
    close $listen;
    return { pid => $pid, port => $port };
}

my $origin = server('origin');
my $proxy = server('proxy');
my $url = "http://127.0.0.1:$origin->{port}/x";
my $proxy_url = "http://127.0.0.1:$proxy->{port}/";

# [what, new() arguments, environment]
my @cases = (
    ['http_proxy' => { http_proxy => $proxy_url }, {}],
    ['proxy (any scheme)' => { proxy => $proxy_url }, {}],
    ['no_proxy names the host' => { http_proxy => $proxy_url, no_proxy => ['127.0.0.1'] }, {}],
    ['no_proxy is a suffix of the host' => { http_proxy => $proxy_url, no_proxy => 'example.com, 0.0.1' }, {}],
    ['no_proxy names another host' => { proxy => $proxy_url, no_proxy => 'example.com' }, {}],
    ['https_proxy only: http goes direct' => { https_proxy => $proxy_url }, {}],
    ['$ENV{http_proxy}' => {}, { http_proxy => $proxy_url }],
    ['$ENV{HTTP_PROXY}' => {}, { HTTP_PROXY => $proxy_url }],
    ['$ENV{all_proxy}' => {}, { all_proxy => $proxy_url }],
    ['$ENV{http_proxy}, http_proxy => undef' => { http_proxy => undef }, { http_proxy => $proxy_url }],
    ['$ENV{no_proxy}' => {}, { http_proxy => $proxy_url, no_proxy => 'localhost, 127.0.0.1' }],
    ['no_proxy => [] over $ENV{no_proxy}' => { no_proxy => [] }, { http_proxy => $proxy_url, no_proxy => '127.0.0.1' }],
    # Linux routes all of 127.0.0.0/8 to the loopback interface.
    ['local_address' => { local_address => '127.0.0.2' }, {}],
    ['local_address, through the proxy' => { local_address => '127.0.0.3', proxy => $proxy_url }, {}],
);
my @env = qw(http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy REQUEST_METHOD);
for my $case (@cases) {
    my ($what, $args, $env) = @$case;
    my %got;
    for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
        local @ENV{@env};
        delete @ENV{@env};
        %ENV = (%ENV, %$env);
        my $res = $class->new(timeout => 5, %$args)->get($url);
        $got{$class} = [$res->{status}, $res->{content}];
    }
    is_deeply $got{'Nodelay::Tiny'}, $got{'HTTP::Tiny'}, "$what: as HTTP::Tiny ($got{'HTTP::Tiny'}[1])";
}

# A proxy URL HTTP::Tiny refuses, with its message.
for my $bad (['http_proxy', 'http://127.0.0.1:1/path'], ['proxy', 'ftp://127.0.0.1/'], ['https_proxy', 'nonsense']) {
    my ($key, $value) = @$bad;
    my %error;
    for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
        local @ENV{@env};
        delete @ENV{@env};
        eval { $class->new($key => $value) };
        ($error{$class} = $@) =~ s/ at \S+ line \d+\.\n\z//;
    }
    like $error{'HTTP::Tiny'}, qr/URL must be in format/, "$key => $value: stock refuses it";
    is $error{'Nodelay::Tiny'}, $error{'HTTP::Tiny'}, "$key => $value: with HTTP::Tiny's message";
}

my $bad = eval { Nodelay::Tiny->new(local_address => 'nowhere')->get($url) };
is $bad->{status}, 599, 'a local_address that is no IP address: 599';
like $bad->{content}, qr/local_address must be an IP address/, 'saying so';

for ($origin, $proxy) { kill 'TERM', $_->{pid}; waitpid $_->{pid}, 0 }
done_testing;
