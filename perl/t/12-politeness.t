use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Time::HiRes qw(time);
use Nodelay;
use TestServer;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

subtest 'the rate limit spaces the requests to a host' => sub {
    my $ua = Nodelay->new(timeout => 5, rate_limit => { per_second => 20, burst => 1 });
    my $started = time;
    is $ua->get("$base/bytes/10")->status, 200, 'answered' for 1 .. 6;
    # 5 waits of 50 ms after the first request.
    cmp_ok time - $started, '>=', 0.24, 'six requests at 20/s take a quarter second';
};

subtest 'a turn beyond the pool timeout is a timeout naming the rate' => sub {
    my $ua = Nodelay->new(timeout => 0.2, rate_limit => { per_second => 2 },
                          max_connections_per_host => 1);
    is $ua->get("$base/bytes/10")->status, 200, 'first request at once';
    my $err = do { local $@; eval { $ua->get("$base/bytes/10") }; $@ };
    isa_ok $err, 'Nodelay::X::Timeout';
    like "$err", qr/rate limit of 2 requests\/s/, 'the message names the rate';
};

subtest 'bad rate_limit is refused' => sub {
    my $err = do { local $@; eval { Nodelay->new(rate_limit => { burst => 2 }) }; $@ };
    like "$err", qr/per_second/, 'per_second is required';
    $err = do { local $@; eval { Nodelay->new(rate_limit => { per_second => -1 }) }; $@ };
    like "$err", qr/rate_per_second must be a number above 0/, 'a negative rate';
};

done_testing;
