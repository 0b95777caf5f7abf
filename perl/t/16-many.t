use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Time::HiRes qw(time);
use Nodelay;
use TestServer;

# get_many / request_many: many requests through the engine at once,
# results in input order, errors per request, the concurrency and the
# per-host limit as the server counts them (/stats/in-flight: the most
# requests it answered at once, which only grows: the checks run from the
# lowest peak to the highest, each on a server of its own where needed).

sub peak {
    my ($base) = @_;
    my $stats = Nodelay->new->get("$base/stats/in-flight")->json;
    return $stats->{peak_in_flight};
}

subtest 'concurrency and the per-host limit, as the server sees them' => sub {
    my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
    my $base = $server->url;
    my $limited = Nodelay->new(timeout => 10, max_connections_per_host => 2);
    my @res = $limited->get_many([("$base/delay/300") x 8], concurrency => 8);
    is scalar(@res), 8, 'one result per URL';
    is_deeply [map { $_->status } @res], [(200) x 8], 'all answered';
    is peak($base), 2, 'the per-host limit holds: 2 at once';
    my $ua = Nodelay->new(timeout => 10);
    @res = $ua->get_many([("$base/delay/300") x 9], concurrency => 3);
    is_deeply [map { $_->content } @res], [('delayed') x 9], 'bodies';
    is peak($base), 3, 'concurrency 3: 3 at once';
    @res = $ua->get_many([("$base/delay/300") x 16], concurrency => 8);
    is peak($base), 8, 'concurrency 8: 8 at once';
};

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

subtest 'results in input order, errors per request' => sub {
    my $ua = Nodelay->new(timeout => 10);
    my $refused = do {
        require IO::Socket::INET;
        my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
        my $port = $s->sockport;
        close $s;
        "http://127.0.0.1:$port/";
    };
    my @urls = ("$base/delay/200", "$base/bytes/3", $refused, "$base/gzip/2000", 'nowhere', "$base/status/404");
    my @res = $ua->get_many(\@urls, concurrency => 4);
    is scalar(@res), 6, 'one result per URL';
    isa_ok $res[0], 'Nodelay::Response';
    is $res[0]->content, 'delayed', 'the slow one first';
    is $res[1]->content, 'abc', 'then the quick one';
    isa_ok $res[2], 'Nodelay::X::ConnectError', 'a refused connection';
    is $res[2]->url, $refused, 'the error names its URL';
    like $res[2]->message, qr/\S/, 'and has a message';
    is length($res[3]->content), 2000, 'gzip decoded';
    is $res[3]->header('Content-Encoding'), 'gzip', 'headers looked up lazily';
    isa_ok $res[4], 'Nodelay::X::UnsupportedProtocol', 'a URL without a scheme';
    is $res[5]->status, 404, 'a 404 is a response';
    is $res[5]->url, "$base/status/404", 'url';
    is $res[5]->method, 'GET', 'method';
    is_deeply [$ua->get_many([])], [], 'no URLs, no results';
};

subtest 'headers, the client default and the cookie jar' => sub {
    my $ua = Nodelay->new(timeout => 10, agent => 'many/1.0');
    my @res = $ua->get_many([("$base/headers") x 3], headers => { 'X-Batch' => 'yes' });
    for my $res (@res) {
        my $seen = $res->json->{headers};
        is $seen->{'x-batch'}, 'yes', 'the request header';
        is $seen->{'user-agent'}, 'many/1.0', 'the client agent';
    }
    $ua->get_many(["$base/cookies/set?flavour=oat"]);
    my ($jar, $own) = $ua->request_many([
        [GET => "$base/cookies"],
        [GET => "$base/cookies", { headers => { Cookie => 'flavour=rye' } }],
    ]);
    is $jar->json->{cookies}{flavour}, 'oat', 'the jar cookie set by an earlier batch';
    is $own->json->{cookies}{flavour}, 'rye', "the request's own Cookie wins";
};

subtest 'request_many sends bodies' => sub {
    my $ua = Nodelay->new(timeout => 10);
    my @res = $ua->request_many([
        [POST => "$base/echo", { content => 'raw bytes' }],
        [POST => "$base/anything", { form => { a => 1, b => 'x y' } }],
        [PUT => "$base/anything", { json => { list => [1, 2] } }],
    ], concurrency => 2);
    is $res[0]->content, 'raw bytes', 'content';
    is $res[1]->json->{body}, 'a=1&b=x+y', 'form';
    my %seen = map { (lc $_->[0] => $_->[1]) } @{ $res[1]->json->{headers} };
    is $seen{'content-type'}, 'application/x-www-form-urlencoded', 'form type';
    is $res[2]->json->{method}, 'PUT', 'method';
    is $res[2]->json->{body}, '{"list":[1,2]}', 'json';
};

subtest 'a deadline ends the batch' => sub {
    my $ua = Nodelay->new(timeout => 10);
    my $started = time;
    my @res = $ua->get_many(["$base/bytes/1", ("$base/delay/5000") x 3], concurrency => 2, deadline => 0.3);
    cmp_ok time - $started, '<', 4, 'long before the server would answer';
    is $res[0]->content, 'a', 'the quick one answered';
    for my $err (@res[1 .. 3]) {
        isa_ok $err, 'Nodelay::X::Timeout';
        like "$err", qr/total timeout of 0\.3 s/, 'naming the deadline';
    }
};

subtest 'a %SIG handler that dies stops the batch' => sub {
    my $ua = Nodelay->new(timeout => 10);
    my $started = time;
    my $err = do {
        local $@;
        local $SIG{ALRM} = sub { die "alarm\n" };
        alarm 1;
        eval { $ua->get_many([("$base/delay/10000") x 4]) };
        alarm 0;
        $@;
    };
    is $err, "alarm\n", "the handler's error is what the caller catches";
    cmp_ok time - $started, '<', 5, 'within the handler interval, not the delay';
    is $ua->get("$base/bytes/2")->content, 'ab', 'the client still works';
    my $handled = 0;
    my @res = do {
        local $SIG{ALRM} = sub { $handled++ };
        alarm 1;
        my @got = $ua->get_many(["$base/delay/1500"]);
        alarm 0;
        @got;
    };
    is $handled, 1, 'a handler that returns runs during the wait';
    is $res[0]->content, 'delayed', 'and the batch goes on';
};

subtest 'bad arguments' => sub {
    my $ua = Nodelay->new;
    for my $case (
        [sub { $ua->get_many("$base/") }, qr/array reference of URLs/],
        [sub { $ua->get_many(["$base/"], concurrency => 0) }, qr/concurrency must be/],
        [sub { $ua->get_many(["$base/"], concurrency => 5000) }, qr/concurrency must be between 1 and 1024/],
        [sub { $ua->get_many(["$base/"], deadline => 'soon') }, qr/deadline must be/],
        [sub { $ua->request_many([['GET']]) }, qr/each request must be/],
        [sub { $ua->request_many([[GET => "$base/", { data_callback => sub {} }]]) }, qr/whole bodies/],
    ) {
        my ($code, $want) = @$case;
        my $err = do { local $@; eval { $code->() }; $@ };
        isa_ok $err, 'Nodelay::X';
        like "$err", $want, "refused: $want";
    }
};

done_testing;
