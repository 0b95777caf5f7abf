use strict;
use warnings;
use lib 't/lib';
use Test::More;
use TestServer;

BEGIN {
    eval { require LWP::UserAgent; require HTTP::Cookies; 1 }
        or plan skip_all => 'LWP::UserAgent not installed (Debian libwww-perl)';
}
use LWP::Protocol::nodelay;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

# The same program, once with LWP's own protocol, once through the engine:
# the stock answer is the reference.
my $stock_impl = LWP::Protocol::implementor('http');
sub with_nodelay {
    my ($code) = @_;
    LWP::Protocol::implementor('http', 'LWP::Protocol::nodelay');
    my @out = eval { $code->() };
    my $err = $@;
    LWP::Protocol::implementor('http', $stock_impl);
    die $err if $err;
    return wantarray ? @out : $out[0];
}

my $ua = LWP::UserAgent->new(timeout => 5, agent => 'lwp-same/1');

sub same_response {
    my ($path_or_req, $what) = @_;
    my $req = ref $path_or_req ? $path_or_req : HTTP::Request->new(GET => "$base$path_or_req");
    my $ref = $ua->request($req->clone);
    my $ours = with_nodelay(sub { $ua->request($req->clone) });
    is $ours->code, $ref->code, "$what: code";
    is $ours->message, $ref->message, "$what: message";
    is $ours->content, $ref->content, "$what: content";
    is $ours->decoded_content, $ref->decoded_content, "$what: decoded_content";
    is scalar $ours->header('Content-Type'), scalar $ref->header('Content-Type'), "$what: Content-Type";
    is $ours->base, $ref->base, "$what: base";
    is $ours->request->uri, $ref->request->uri, "$what: final request";
    return $ours;
}

my $ours = same_response('/bytes/202', 'GET');
is $ours->protocol, 'HTTP/1.1', 'protocol';
same_response('/chunked/700', 'chunked');
same_response('/status/404', '404');
same_response('/json/1024', 'json');
same_response('/redirect/2', 'redirects (followed by LWP)');
same_response(HTTP::Request->new(HEAD => "$base/bytes/20"), 'HEAD');
same_response('/gzip/', 'gzip') if 0;

subtest 'post form and content' => sub {
    require HTTP::Request::Common;
    same_response(HTTP::Request::Common::POST("$base/echo", [user => 'me', q => 'a b']), 'POST form');
    same_response(HTTP::Request::Common::POST("$base/echo", Content_Type => 'application/json', Content => '{"a":1}'), 'POST content');
    same_response(HTTP::Request::Common::PUT("$base/echo", Content => 'put body'), 'PUT');
};

subtest 'headers and agent reach the server' => sub {
    my $res = with_nodelay(sub { $ua->get("$base/headers", 'X-Test' => 'yes') });
    like $res->content, qr/lwp-same\/1/, "LWP's agent";
    like $res->content, qr/yes/, 'own header';
    unlike $res->content, qr/nodelay\//, "not the engine's agent";
};

subtest 'HTTP::Cookies jar (kept by LWP)' => sub {
    my $file = "cookies-test-lwp-$$.txt";
    unlink $file;
    my $jar_ua = LWP::UserAgent->new(timeout => 5, cookie_jar => HTTP::Cookies->new(file => $file, autosave => 1, ignore_discard => 1));
    my $login = with_nodelay(sub { $jar_ua->post("$base/login", { user => 'lwp' }) });
    my ($session) = $login->content =~ /(lwp-\d+)/;
    ok $session, 'logged in';
    like with_nodelay(sub { $jar_ua->get("$base/cookies") })->content, qr/\Q$session\E/, 'cookie sent back';
    like $jar_ua->get("$base/cookies")->content, qr/\Q$session\E/, 'the same jar with stock LWP';
    undef $jar_ua;
    open my $fh, '<', $file or die "$file: $!";
    like join('', <$fh>), qr/\Q$session\E/, 'autosaved by HTTP::Cookies';
    unlink $file;
};

subtest ':content_file and :content_cb' => sub {
    my $file = "lwp-content-$$.bin";
    my $res = with_nodelay(sub { $ua->get("$base/bytes/5000", ':content_file' => $file) });
    ok $res->is_success, 'success';
    is -s $file, 5000, 'written to the file';
    unlink $file;
    my $got = '';
    with_nodelay(sub { $ua->get("$base/bytes/4000", ':content_cb' => sub { $got .= $_[0] }) });
    is length $got, 4000, 'given to the callback';
};

subtest 'errors become LWP 500 responses' => sub {
    require IO::Socket::INET;
    my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $sock->sockport;
    close $sock;
    my $ref = $ua->get("http://127.0.0.1:$port/");
    my $res = with_nodelay(sub { $ua->get("http://127.0.0.1:$port/") });
    is $res->code, $ref->code, 'code as stock LWP';
    is $res->header('Client-Warning'), $ref->header('Client-Warning'), 'Client-Warning';
    my $quick = LWP::UserAgent->new(timeout => 0.3);
    $res = with_nodelay(sub { $quick->get("$base/delay/3000") });
    is $res->code, 500, 'timeout: 500';
    like $res->message, qr/timeout/i, 'says timeout';
};

subtest 'connections are reused' => sub {
    my $before = with_nodelay(sub { $ua->get("$base/stats") })->content;
    with_nodelay(sub { $ua->get("$base/bytes/10") }) for 1 .. 20;
    my $after = with_nodelay(sub { $ua->get("$base/stats") })->content;
    my ($c0) = $before =~ /"connections"\s*:\s*(\d+)/;
    my ($c1) = $after =~ /"connections"\s*:\s*(\d+)/;
    SKIP: {
        skip 'no connection count in /stats', 1 unless defined $c0 && defined $c1;
        cmp_ok $c1 - $c0, '<=', 1, '21 requests on the same connection';
    }
};

done_testing;
