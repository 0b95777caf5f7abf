use strict;
use warnings;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use IO::Socket::INET;
use Nodelay::Tiny;
use TestServer;
use Scripted;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

# Each request goes through Nodelay::Tiny and through the stock HTTP::Tiny:
# the stock answer is the reference for the hashref's shape and contents.
my $tiny = Nodelay::Tiny->new(timeout => 5, agent => 'same-agent/1');
my $stock = HTTP::Tiny->new(timeout => 5, agent => 'same-agent/1');

# The headers both must agree on (Date and the like may differ).
sub same_fields {
    my ($ours, $ref, $what) = @_;
    for my $key (qw(success status reason content url)) {
        is $ours->{$key}, $ref->{$key}, "$what: $key as HTTP::Tiny";
    }
    for my $h (qw(content-type content-length location x-echo-method)) {
        is_deeply $ours->{headers}{$h}, $ref->{headers}{$h}, "$what: header $h as HTTP::Tiny";
    }
    is ref $ours->{headers}, 'HASH', "$what: headers hashref";
}

for my $case (
    ['GET', '/bytes/202'],
    ['GET', '/chunked/1000'],
    ['GET', '/status/404'],
    ['HEAD', '/bytes/50'],
    ['GET', '/json/2048'],
) {
    my ($method, $path) = @$case;
    same_fields($tiny->request($method, "$base$path"), $stock->request($method, "$base$path"), "$method $path");
}

subtest 'get with headers, and the agent' => sub {
    my $args = { headers => { 'X-Test' => 'yes' } };
    my $ours = $tiny->get("$base/headers", $args);
    my $ref = $stock->get("$base/headers", $args);
    like $ours->{content}, qr/same-agent\/1/, 'agent sent';
    like $ours->{content}, qr/yes/, 'header sent';
    like $ref->{content}, qr/same-agent\/1/, 'the reference too';
};

subtest 'post_form' => sub {
    my $form = { user => 'me', q => 'a b&c', list => [1, 2] };
    my $ours = $tiny->post_form("$base/echo", $form);
    my $ref = $stock->post_form("$base/echo", $form);
    same_fields($ours, $ref, 'post_form');
    is $ours->{content}, 'list=1&list=2&q=a+b%26c&user=me', 'the body';
    is $tiny->www_form_urlencode([b => 1, a => 2]), $stock->www_form_urlencode([b => 1, a => 2]), 'array order kept';
    # Byte strings and character strings are both sent as UTF-8 characters;
    # arrayref values repeat a name in an arrayref too; HTTP::Tiny's croaks.
    my ($bytes, $chars) = ("caf\xe9", "caf\x{e9} \x{263a}");
    for my $data ([k => [1, 2], j => undef, $bytes => $chars, '~-._' => '+=/ '], { $bytes => [$bytes, 'x y'], a => '' }) {
        is $tiny->www_form_urlencode($data), $stock->www_form_urlencode($data), 'www_form_urlencode as HTTP::Tiny';
    }
    ok !utf8::is_utf8($bytes), "the caller's byte string is left as it was";
    for my $bad ([1], [undef, 1]) {
        my @croaks = map { my $http = $_; eval { $http->www_form_urlencode($bad) }; $@ =~ s/ at .* line \d+\.?\n\z//sr } $stock, $tiny;
        is $croaks[1], $croaks[0], "the croak: $croaks[0]";
    }
};

subtest 'post content' => sub {
    my $args = { content => "raw\0", headers => { 'content-type' => 'application/octet-stream' } };
    same_fields($tiny->post("$base/echo", $args), $stock->post("$base/echo", $args), 'post');
};

subtest 'redirects' => sub {
    my $ours = $tiny->get("$base/redirect/2");
    my $ref = $stock->get("$base/redirect/2");
    is $ours->{status}, $ref->{status}, 'final status';
    is $ours->{url}, $ref->{url}, 'final url';
    is scalar @{ $ours->{redirects} || [] }, scalar @{ $ref->{redirects} || [] }, 'redirect count';
    is_deeply [map { $_->{status} } @{ $ours->{redirects} }], [map { $_->{status} } @{ $ref->{redirects} }], 'hop statuses';
    my $none = Nodelay::Tiny->new(max_redirect => 0)->get("$base/redirect/1");
    is $none->{status}, HTTP::Tiny->new(max_redirect => 0)->get("$base/redirect/1")->{status}, 'max_redirect 0';
};

subtest 'failure is a 599 response' => sub {
    require IO::Socket::INET;
    my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $sock->sockport;
    close $sock;
    my $ours = $tiny->get("http://127.0.0.1:$port/");
    my $ref = $stock->get("http://127.0.0.1:$port/");
    is $ours->{status}, $ref->{status}, 'status 599 as HTTP::Tiny';
    is $ours->{reason}, $ref->{reason}, 'reason';
    ok !$ours->{success}, 'no success';
    like $ours->{content}, qr/./, 'the error in the content';
};

subtest 'data_callback' => sub {
    my $got = '';
    my $res = $tiny->get("$base/bytes/3000", { data_callback => sub { $got .= $_[0] } });
    is length $got, 3000, 'the body went to the callback';
    is $res->{content}, '', 'not kept';
    my $ref = $stock->get("$base/bytes/3000", { data_callback => sub { } });
    is $res->{content}, $ref->{content}, 'as HTTP::Tiny';
};

subtest 'mirror' => sub {
    my $file = "mirror-test-$$.bin";
    unlink $file;
    my $res = $tiny->mirror("$base/bytes/1234", $file);
    ok $res->{success}, 'downloaded';
    is -s $file, 1234, 'written';
    my $ref = $stock->mirror("$base/bytes/1234", $file);
    is $res->{status}, $ref->{status}, 'status as HTTP::Tiny';
    unlink $file;
};

subtest 'the API beside the requests, as HTTP::Tiny has it' => sub {
    my $croak = sub { my ($code) = @_; eval { $code->(); 1 } ? 'no croak' : $@ =~ s/ at .* line \d+\.?\n\z//sr };
    for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
        my $http = $class->new;
        my @croaks = map { $croak->($_) } (
            sub { $http->get() },
            sub { $http->get("$base/", 'not a hash') },
            sub { $http->request('GET') },
            sub { $http->post_form("$base/") },
            sub { $http->mirror("$base/") },
            sub { $http->www_form_urlencode('x') },
        );
        is_deeply \@croaks, [
            "Usage: \$http->get(URL, [HASHREF])\n",
            "Usage: \$http->get(URL, [HASHREF])\n",
            "Usage: \$http->request(METHOD, URL, [HASHREF])\n",
            "Usage: \$http->post_form(URL, DATAREF, [HASHREF])\n",
            "Usage: \$http->mirror(URL, FILE, [HASHREF])\n",
            "Usage: \$http->www_form_urlencode(DATAREF)\n",
        ], "$class: the usage croaks";
        ok scalar $class->can_ssl, "$class: can_ssl";
        $http->timeout(7);
        $http->agent('set/1');
        is_deeply [$http->timeout, $http->agent], [7, 'set/1'], "$class: accessors write";
        like $http->get("$base/headers")->{content}, qr{"user-agent":\s*"set/1"}i, "$class: the new agent is sent";
        my $res = $http->get("$base/headers", { headers => { Host => 'x' } });
        is_deeply [$res->{status}, $res->{content}], [599, "The 'Host' header must not be provided as header option\n"],
            "$class: a Host header is refused";
    }
};

subtest 'an HTTP::CookieJar jar, as HTTP::Tiny uses it' => sub {
    require JSON::PP;
    eval { require HTTP::CookieJar; 1 } or plan skip_all => 'HTTP::CookieJar not installed (Debian libhttp-cookiejar-perl)';
    my %seen;
    for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
        my $jar = HTTP::CookieJar->new;
        my $http = $class->new(timeout => 5, cookie_jar => $jar);
        my $set = $http->get("$base/cookies/set?flavour=oat&size=2");
        # The jar's header replaces the caller's Cookie field.
        my $back = $http->get("$base/cookies", { headers => { Cookie => 'caller=1' } });
        # The cookies the server saw (HTTP::CookieJar orders cookies made in
        # the same second as its hash does: the order may differ).
        $seen{$class} = [$set->{status}, [sort map { $_->{name} . '=' . $_->{value} } $jar->cookies_for("$base/")],
            $back->{status}, JSON::PP::decode_json($back->{content})];
    }
    is_deeply $seen{'Nodelay::Tiny'}, $seen{'HTTP::Tiny'}, 'same jar contents and the same Cookie sent';
    is_deeply $seen{'HTTP::Tiny'}[3], { cookies => { flavour => 'oat', size => 2 } }, 'the cookies came back';
};

subtest 'connected, as HTTP::Tiny' => sub {
    my ($port) = $base =~ /:(\d+)\z/;
    my $closed = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $refused = 'http://127.0.0.1:' . $closed->sockport . '/';
    close $closed;
    my %seen;
    for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
        my $http = $class->new(timeout => 5);
        my @seen = ('new', scalar $http->connected, [$http->connected]);
        $http->get("$base/bytes/10");
        push @seen, 'kept', scalar $http->connected, [$http->connected];
        $http->get("$base/chunked/100");
        push @seen, 'chunked', scalar $http->connected;
        $http->keep_alive(0);
        push @seen, 'a setting changed', scalar $http->connected;
        $http->get("$base/bytes/10");
        push @seen, 'Connection: close', scalar $http->connected;
        $http->keep_alive(1);
        $http->max_redirect(3);
        $http->get("$base/bytes/10");
        push @seen, 'kept again, max_redirect changed after', scalar $http->connected;
        $http->get($refused);
        push @seen, 'refused', scalar $http->connected, [$http->connected];
        $seen{$class} = \@seen;
    }
    is_deeply $seen{'Nodelay::Tiny'}, $seen{'HTTP::Tiny'}, 'the same answers at each step';
    is $seen{'HTTP::Tiny'}[4], "127.0.0.1:$port", "the reference's kept connection is the server's";
    is_deeply $seen{'HTTP::Tiny'}[5], ['127.0.0.1', $port], '(host, port) in list context';
};

subtest 'trailer fields join the headers, as HTTP::Tiny merges them' => sub {
    my $response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: head\r\n\r\n"
        . "5\r\nhello\r\n0\r\nX-A: tail\r\nX-Sum: 5\r\n\r\n";
    my $s = Scripted->start(['recv'], ['send', $response], ['recv'], ['send', $response], ['close']);
    for my $streamed (0, 1) {
        my %got;
        for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
            my $pieces = '';
            my $res = $class->new(timeout => 5)->get($s->url . '/',
                $streamed ? { data_callback => sub { $pieces .= $_[0] } } : {});
            $got{$class} = [$res->{status}, $res->{content}, $pieces, @{ $res->{headers} }{qw(x-a x-sum)}];
        }
        is_deeply $got{'Nodelay::Tiny'}, $got{'HTTP::Tiny'}, ($streamed ? 'data_callback' : 'whole') . ': as HTTP::Tiny';
        is_deeply $got{'HTTP::Tiny'}[3], ['head', 'tail'], 'the reference merged them';
    }
};

subtest "a refused status line, in HTTP::Tiny's words" => sub {
    for my $line ("HTTP/0 200 OK", "HTTP/1.2 200 OK", "HTTP/2.0 200 OK", "ICY 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2x0 OK") {
        my $s = Scripted->start(['recv'], ['send', "$line\r\nContent-Length: 0\r\n\r\n"], ['close']);
        my %got;
        for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
            my $res = $class->new(timeout => 5)->get($s->url . '/');
            $got{$class} = [$res->{status}, $res->{content}];
        }
        is_deeply $got{'Nodelay::Tiny'}, $got{'HTTP::Tiny'}, "$line: $got{'HTTP::Tiny'}[1]";
    }
};

subtest 'an empty URL host is localhost' => sub {
    for my $class (qw(HTTP::Tiny Nodelay::Tiny)) {
        my $res = $class->new(timeout => 5)->get('http:///nothing');
        is $res->{status}, 599, "$class: 599";
        like $res->{content}, qr/localhost:80/, "$class: the request went to localhost:80";
    }
};

done_testing;
