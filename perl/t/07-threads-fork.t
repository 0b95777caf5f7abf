use strict;
use warnings;
use Config;
use lib 't/lib';
use Test::More;
use Time::HiRes ();
use Nodelay;
use TestServer;

# One client shared by Perl ithreads (each thread's copy of the object gets
# its own handle over the same engine client), and a fork child that opens
# its own connection instead of using the parent's.
my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

# Threads, and requests per thread.
use constant THREADS => 4;
use constant PER_THREAD => 25;

# The embedded server's count of connections it accepted (/stats).
sub connections {
    my ($ua) = @_;
    my ($n) = $ua->get("$base/stats")->content =~ /"connections":\s*(\d+)/;
    return $n;
}

SKIP: {
    skip 'this perl has no ithreads', 1 unless $Config{useithreads};
    require threads;
    subtest 'ithreads share one client' => sub {
        my $ua = Nodelay->new(timeout => 5, cookie_jar => undef);
        $ua->get("$base/cookies/set?shared=1");
        my @threads = map {
            my $i = $_;
            threads->create(sub {
                my ($ok, $cookie) = (0, 0);
                for my $n (1 .. PER_THREAD) {
                    my $res = $ua->get("$base/bytes/" . (100 + $i));
                    $ok++ if $res->status == 200 && length $res->content == 100 + $i;
                }
                # The jar is the parent's: its cookie is sent from here too.
                $cookie = 1 if $ua->get("$base/cookies")->content =~ /shared/;
                return "$ok/$cookie";
            });
        } 1 .. THREADS;
        my @results = map { $_->join } @threads;
        is_deeply \@results, [map { PER_THREAD . '/1' } 1 .. THREADS], 'every request in every thread answered, with the shared jar';
        is length $ua->get("$base/bytes/7")->content, 7, 'the parent still works after the threads freed their handles';
        $ua->get("$base/cookies/set?later=2");
        my $t = threads->create(sub { $ua->get("$base/cookies")->content });
        like $t->join, qr/later/, "a cookie the parent got later is seen by a new thread's handle";
    };
}

subtest 'a fork child opens its own connection' => sub {
    my $ua = Nodelay->new(timeout => 5);
    my $before = connections($ua);    # the parent's connection is now pooled
    my $in_child = TestServer::in_child(sub { connections($ua) });
    is $in_child, $before + 1, 'the child connected anew';
    is connections($ua), $before + 1, "the parent's pooled connection is still its own and still works";
};

subtest 'alarm interrupts a blocked request within 100 ms' => sub {
    my $ua = Nodelay->new(timeout => 8);
    my $caught;
    my $due = Time::HiRes::time() + 0.3;
    my $ok = eval {
        local $SIG{ALRM} = sub { die "alarm\n" };
        Time::HiRes::ualarm(300_000);
        $ua->get("$base/delay/10000");
        1;
    };
    $caught = Time::HiRes::time();
    Time::HiRes::ualarm(0);
    ok !$ok, 'interrupted';
    is $@, "alarm\n", "the handler's exception";
    # The gate of issue 16: from the signal (due 0.3 s after the start) to
    # the caller's handler, under 100 ms (the request would otherwise wait
    # for its 8 s timeout or the server's 10 s answer).
    cmp_ok $caught - $due, '<', 0.1, 'stopped within 100 ms of the signal';
};

done_testing;
