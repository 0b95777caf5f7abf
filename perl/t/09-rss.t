use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Nodelay;
use TestServer;

# Resident memory stays flat across many requests once warm: every object
# the shim and the library make per request (responses, header lists,
# streamed pieces, request bodies) is freed. perl/bench/rss.pl runs the
# same over a million requests.
my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;
open my $probe, '<', "/proc/$$/status" or plan skip_all => 'no /proc here';
# AddressSanitizer (make asan-perl) holds freed memory back in its
# quarantine, so resident memory grows by design there.
plan skip_all => 'under AddressSanitizer (its quarantine keeps freed memory)'
    if ($ENV{LD_PRELOAD} // '') =~ /asan/;
close $probe;

# Requests before the baseline (pools, caches and perl's arenas reach their
# working size), requests measured, and the growth allowed: a leak of
# 40 bytes per request would pass it.
use constant WARMUP    => 5_000;
use constant REQUESTS  => 50_000;
use constant TOLERANCE_KIB => 2048;

sub rss_kib {
    open my $fh, '<', "/proc/$$/status" or die "/proc/$$/status: $!";
    while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)/ }
    die "no VmRSS\n";
}

my $ua = Nodelay->new(timeout => 5);
# One round of the kinds of request the front handles.
my $bad = 0;
sub round {
    my ($i) = @_;
    my $res = $ua->get("$base/bytes/202");
    $bad++ unless $res->status == 200 && $res->header('Content-Length') == 202 && length $res->content == 202;
    if ($i % 10 == 0) {
        $bad++ unless $ua->post("$base/echo", form => { n => $i })->content eq "n=$i";
        my $got = 0;
        $ua->get("$base/chunked/300", data_callback => sub { $got += length $_[0] });
        $bad++ unless $got == 300;
        $bad++ unless @{ $ua->get("$base/status/404")->headers } >= 2;
    }
}

round($_) for 1 .. WARMUP;
my $before = rss_kib();
round($_) for 1 .. REQUESTS;
my $after = rss_kib();
is $bad, 0, 'every answer as expected';
cmp_ok $after - $before, '<', TOLERANCE_KIB, "RSS flat over @{[REQUESTS]} rounds ($before KiB -> $after KiB)";

done_testing;
