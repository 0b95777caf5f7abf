use strict;
use warnings;
use lib 't/lib';
use Test::More;
use IO::Socket::INET;
use Nodelay;
use TestServer;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

my $ua = Nodelay->new(timeout => 5, agent => 'nodelay-perl-test/1');

subtest 'get' => sub {
    my $res = $ua->get("$base/bytes/1000");
    isa_ok $res, 'Nodelay::Response';
    is $res->status, 200, 'status';
    is $res->reason, 'OK', 'reason';
    ok $res->is_success, 'is_success';
    is length($res->content), 1000, 'body of the announced length';
    is $res->header('content-LENGTH'), '1000', 'header lookup is case-insensitive';
    is $res->header('x-absent'), undef, 'absent header';
    my %h = @{ $res->headers };
    is $h{'content-length'} // $h{'Content-Length'}, '1000', 'all headers';
};

subtest 'chunked body' => sub {
    my $res = $ua->get("$base/chunked/500");
    is length($res->content), 500, 'length not announced';
};

subtest 'agent and headers' => sub {
    my $res = $ua->get("$base/headers", headers => { 'X-Test' => 'yes' });
    like $res->content, qr/nodelay-perl-test\/1/, 'User-Agent sent';
    like $res->content, qr/yes/, 'own header sent';
};

subtest 'head' => sub {
    my $res = $ua->head("$base/bytes/100");
    is $res->status, 200, 'status';
    is $res->content, '', 'no body';
};

subtest 'post' => sub {
    my $res = $ua->post("$base/echo", content => "raw\0bytes", headers => { 'Content-Type' => 'application/octet-stream' });
    is $res->content, "raw\0bytes", 'content echoed';
    is $res->header('x-echo-method'), 'POST', 'method';
    $res = $ua->post("$base/echo", form => { user => 'me', q => 'a b&c' });
    is $res->content, 'q=a+b%26c&user=me', 'form encoded';
    is $res->header('content-type'), 'application/x-www-form-urlencoded', 'form content type';
};

# HTTP::Tiny's www_form_urlencode is the reference for character strings;
# a byte string (no UTF-8 flag) is sent as its bytes, each escaped, as
# HTTP::Request::Common's POST does (HTTP::Tiny would UTF-8 encode it).
subtest 'form encoding' => sub {
    require HTTP::Tiny;
    my $tiny = HTTP::Tiny->new;
    my @forms = (
        [user => 'bench', q => 'nodelay fast http'],
        [a => '', 'b c' => 'd&e=f', '~-._' => '*+/%', 0 => 0, 1.5 => -3],
        [do { utf8::upgrade(my $k = "\x{e9}t\x{e9}"); $k } => "\x{2603} snow", "\0" => "\x7f", nl => "\r\n\t"],
        [k => 1, 'odd'],
        [],
    );
    for my $form (@forms) {
        my @padded = map { $_ // '' } @$form, (@$form % 2 ? '' : ());
        my $res = $ua->post("$base/echo", form => $form);
        is $res->content, $tiny->www_form_urlencode(\@padded), 'as HTTP::Tiny: ' . join(',', @padded);
    }
    is $ua->post("$base/echo", form => { z => 1, a => 'b c', m => 0 })->content, 'a=b+c&m=0&z=1', 'a hash in key order';
    is $ua->post("$base/echo", form => [bytes => "caf\xe9"])->content, 'bytes=caf%E9', 'a byte string as its bytes';
    my $chars = "caf\xe9";
    utf8::upgrade($chars);
    is $ua->post("$base/echo", form => [chars => $chars])->content, 'chars=caf%C3%A9', 'a character string as UTF-8';
    is $ua->post("$base/echo", form => [u => undef])->content, 'u=', 'undef is empty';
};

subtest 'status' => sub {
    my $res = $ua->get("$base/status/404");
    is $res->status, 404, '404 is a response, not an exception';
    ok !$res->is_success, 'not a success';
};

subtest 'timeout' => sub {
    my $quick = Nodelay->new(timeout => 0.2);
    my $ok = eval { $quick->get("$base/delay/3000"); 1 };
    ok !$ok, 'failed';
    isa_ok $@, 'Nodelay::X::Timeout';
    isa_ok $@, 'Nodelay::X';
    ok $@->is_timeout, 'is_timeout';
    is $@->code, 5, 'read timeout code';
    is $@->url, "$base/delay/3000", 'url';
};

subtest 'connection refused' => sub {
    my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $sock->sockport;
    close $sock;
    my $ok = eval { $ua->get("http://127.0.0.1:$port/"); 1 };
    ok !$ok, 'failed';
    isa_ok $@, 'Nodelay::X::Connect';
    ok !$@->is_timeout, 'not a timeout';
    like "$@", qr/./, 'stringifies to its message';
};

subtest 'alarm interrupts a waiting request' => sub {
    # Its read timeout (8 s) is past the check below: only the abort
    # callback can end the wait early.
    my $patient = Nodelay->new(timeout => 8);
    my $t0 = time;
    my $ok = eval {
        local $SIG{ALRM} = sub { die "alarm\n" };
        alarm 1;
        $patient->get("$base/delay/10000");
        alarm 0;
        1;
    };
    alarm 0;
    ok !$ok, 'interrupted';
    is $@, "alarm\n", "the handler's exception";
    cmp_ok time - $t0, '<', 5, 'well before the server answered';
};

done_testing;
