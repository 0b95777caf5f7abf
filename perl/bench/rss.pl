#!/usr/bin/perl
# Resident memory across many requests: N GETs (default 1,000,000) on one
# Nodelay client against the embedded server (or URL), printing the RSS
# every --every requests, then the growth after the warm-up.
#   perl -Iperl/blib/lib -Iperl/blib/arch perl/bench/rss.pl [--requests N] [--every K] [--url URL]
use strict;
use warnings;
use Getopt::Long;
use Time::HiRes ();
use FindBin;
use lib "$FindBin::Bin/../t/lib";
use Nodelay;
use TestServer;

my ($requests, $every, $url, $path) = (1_000_000, 100_000, undef, '/bytes/202');
GetOptions('requests=i' => \$requests, 'every=i' => \$every, 'url=s' => \$url, 'path=s' => \$path)
    or die "usage: $0 [--requests N] [--every K] [--url URL] [--path /bytes/202]\n";

# Requests before the first figure that counts: pools, caches and perl's
# own arenas reach their working size.
use constant WARMUP => 10_000;

my $server;
unless ($url) {
    $server = TestServer->start or die "no server: set NODELAY_SERVER or --url\n";
    $url = $server->url;
}
my $ua = Nodelay->new(timeout => 10);

sub rss_kib {
    open my $fh, '<', "/proc/$$/status" or return -1;
    while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)/ }
    return -1;
}

$ua->get("$url$path") for 1 .. WARMUP;
my $base = rss_kib();
my $t0 = Time::HiRes::time();
printf "%10s %10s %8s\n", 'requests', 'rss_kib', 'seconds';
printf "%10d %10d %8.1f\n", 0, $base, 0;
for my $n (1 .. $requests) {
    my $res = $ua->get("$url$path");
    die 'status ' . $res->status . "\n" unless $res->status == 200;
    printf "%10d %10d %8.1f\n", $n, rss_kib(), Time::HiRes::time() - $t0 if $n % $every == 0;
}
my $end = rss_kib();
printf "after %d requests (warm-up %d): RSS %d KiB -> %d KiB (%+d KiB)\n",
    $requests, WARMUP, $base, $end, $end - $base;
