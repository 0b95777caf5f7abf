use strict;
use warnings;
use lib 't/lib';
use Test::More;
use IO::Socket::INET;
use POSIX ();
use JSON::PP ();
use TestServer;
use Nodelay;
use Nodelay::Tiny;
use HTTP::Tiny;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;
my $have_lwp = eval { require LWP::UserAgent; require HTTP::Cookies; require LWP::Protocol::nodelay; 1 };

# What the server received as Accept-Encoding (undef: none).
sub accept_encoding_of {
    my ($content) = @_;
    my $headers = JSON::PP->new->decode($content)->{headers};
    my ($name) = grep { lc $_ eq 'accept-encoding' } keys %$headers;
    return defined $name ? $headers->{$name} : undef;
}

subtest 'the native client asks for every coding the engine decodes' => sub {
    my $ua = Nodelay->new(timeout => 5);
    is accept_encoding_of($ua->get("$base/headers")->content), 'gzip, deflate, br, zstd', 'the engine default';
    is accept_encoding_of($ua->get("$base/headers", headers => { 'Accept-Encoding' => 'identity' })->content),
        'identity', "the caller's own wins";
    is accept_encoding_of(Nodelay->new(accept_encoding => '')->get("$base/headers")->content), undef,
        "accept_encoding => '' sends none";
    is accept_encoding_of(Nodelay->new(accept_encoding => 'gzip')->get("$base/headers")->content), 'gzip',
        'a chosen default';
    my $res = $ua->get("$base/gzip/1000");
    is length $res->content, 1000, 'the gzip body is decoded';
};

# The adapters send what their library sends: stock HTTP::Tiny and LWP ask
# for no coding, and neither does the engine under them.
subtest 'the adapters send no Accept-Encoding of their own' => sub {
    is accept_encoding_of(HTTP::Tiny->new->get("$base/headers")->{content}), undef, 'stock HTTP::Tiny';
    is accept_encoding_of(Nodelay::Tiny->new->get("$base/headers")->{content}), undef, 'Nodelay::Tiny';
    plan skip_all => 'LWP not installed (Debian libwww-perl)' unless $have_lwp;
    my $ua = LWP::UserAgent->new(timeout => 5);
    is accept_encoding_of($ua->get("$base/headers")->content), undef, 'stock LWP';
    my $stock = LWP::Protocol::implementor('http');
    LWP::Protocol::implementor('http', 'LWP::Protocol::nodelay');
    my $ours = $ua->get("$base/headers");
    LWP::Protocol::implementor('http', $stock);
    is accept_encoding_of($ours->content), undef, 'LWP::Protocol::nodelay';
};

# The seed articles' login: the answer to the login sets two cookies, and
# every request after it needs both (403 otherwise).
sub login_server {
    my $listen = IO::Socket::INET->new(Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
        or die "listen: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        while (my $conn = $listen->accept) {
            binmode $conn;
            my $buf = '';
            while (1) {
                while ($buf !~ /\r\n\r\n/) { sysread($conn, $buf, 4096, length $buf) or last }
                last unless $buf =~ s/\A(.*?\r\n\r\n)//s;
                my $head = $1;
                my ($len) = $head =~ /^content-length:\s*(\d+)/im;
                sysread $conn, $buf, $len - length $buf, length $buf while $len && length $buf < $len;
                my $body = substr $buf, 0, $len // 0, '';
                my ($cookie) = $head =~ /^cookie:\s*([^\r]*)/im;
                my %has = map { $_ => 1 } split /;\s*/, $cookie // '';
                my $answer =
                    $head =~ m{\APOST /login } && $body eq 'user=me'
                    ? "HTTP/1.1 200 OK\r\nSet-Cookie: session=s1; Path=/; HttpOnly\r\nSet-Cookie: csrf=c1; Path=/\r\nContent-Length: 2\r\n\r\nin"
                    : $has{'session=s1'} && $has{'csrf=c1'}
                    ? "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret"
                    : "HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno";
                syswrite $conn, $answer;
            }
            close $conn;
        }
        POSIX::_exit(0);
    }
    my $port = $listen->sockport;
    close $listen;
    return ($pid, "http://127.0.0.1:$port");
}

my ($login_pid, $site) = login_server();
my @after = ('/a', '/b');

subtest 'login flow: the native client keeps both cookies' => sub {
    my $ua = Nodelay->new(timeout => 5);
    my $login = $ua->post("$site/login", content => 'user=me',
        headers => { 'Content-Type' => 'application/x-www-form-urlencoded' });
    is_deeply [$login->header('Set-Cookie')], ['session=s1; Path=/; HttpOnly', 'csrf=c1; Path=/'],
        'both Set-Cookie fields, in order';
    is_deeply [map { $ua->get("$site$_")->status } @after], [200, 200], 'the requests after it are let in';
};

subtest 'login flow: HTTP::Tiny programs (the cookies carried by hand)' => sub {
    for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
        my $http = $class->new(timeout => 5);
        my $login = $http->post("$site/login", { content => 'user=me',
            headers => { 'Content-Type' => 'application/x-www-form-urlencoded' } });
        my $set = $login->{headers}{'set-cookie'};
        is_deeply $set, ['session=s1; Path=/; HttpOnly', 'csrf=c1; Path=/'], "$class: both fields, an arrayref";
        my $cookie = join '; ', map { (split /;/)[0] } ref $set ? @$set : $set;
        is_deeply [map { $http->get("$site$_", { headers => { Cookie => $cookie } })->{status} } @after], [200, 200],
            "$class: the requests after it are let in";
    }
};

subtest 'login flow: LWP with HTTP::Cookies, stock and over the engine' => sub {
    plan skip_all => 'LWP not installed (Debian libwww-perl)' unless $have_lwp;
    my $stock = LWP::Protocol::implementor('http');
    for my $impl ($stock, 'LWP::Protocol::nodelay') {
        LWP::Protocol::implementor('http', $impl);
        my $ua = LWP::UserAgent->new(timeout => 5, cookie_jar => HTTP::Cookies->new);
        my $login = $ua->post("$site/login", { user => 'me' });
        is_deeply [$login->header('Set-Cookie')], ['session=s1; Path=/; HttpOnly', 'csrf=c1; Path=/'],
            "$impl: both Set-Cookie fields";
        is_deeply [map { $ua->get("$site$_")->code } @after], [200, 200], "$impl: the requests after it are let in";
    }
    LWP::Protocol::implementor('http', $stock);
};

kill 'TERM', $login_pid;
waitpid $login_pid, 0;
done_testing;
