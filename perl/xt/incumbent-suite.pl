#!/usr/bin/perl
# Runs an incumbent's own test files twice in one sitting, once as they are
# and once with LWP::Protocol::nodelay as the http and https implementor
# (perl -MLWP::Protocol::nodelay=http,https), and prints each run's counts
# and wall time. Exits nonzero when the nodelay run passes fewer tests than
# the stock one.
#
#   perl xt/incumbent-suite.pl --dir DIR [--blib BLIB] [--label NAME] FILES...
#
# DIR is the unpacked source of the incumbent (its t/ is run from there,
# against the installed library); BLIB this distribution's blib (for the XS
# module and the adapter).
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Find ();
use Getopt::Long qw(GetOptions);
use TAP::Harness;
use Time::HiRes qw(time);

my %opt;
GetOptions(\%opt, 'dir=s', 'blib=s', 'label=s') && $opt{dir}
    or die "usage: $0 --dir DIR [--blib BLIB] [--label NAME] [FILES...]\n";
my $blib = abs_path($opt{blib} // 'blib') // die "no blib: build the distribution first\n";
my $label = $opt{label} // $opt{dir};
chdir $opt{dir} or die "cd $opt{dir}: $!\n";

my @files = @ARGV;
if (!@files) {
    File::Find::find({ no_chdir => 1, wanted => sub { push @files, $_ if /\.t\z/ } }, 't');
    @files = sort @files;
}

# One run: the aggregated counts and the seconds it took.
sub run {
    my (@switches) = @_;
    my $harness = TAP::Harness->new({
        verbosity => -2,    # failures only
        lib       => ["$blib/lib", "$blib/arch"],
        switches  => \@switches,
        merge     => 1,
    });
    my $start = time;
    my $aggregate = $harness->runtests(@files);
    my $seconds = time - $start;
    return {
        files   => scalar @files,
        planned => $aggregate->total,
        passed  => scalar $aggregate->passed,
        failed  => scalar $aggregate->failed,
        skipped => scalar $aggregate->skipped,
        bad     => [grep { ($aggregate->parsers($_))[0]->has_problems } $aggregate->descriptions],
        seconds => $seconds,
    };
}

my %run;
print "== $label: stock\n";
$run{stock} = run();
print "== $label: LWP::Protocol::nodelay for http and https\n";
$run{nodelay} = run('-MLWP::Protocol::nodelay=http,https');

printf "\n%-10s %6s %7s %7s %7s %8s  %s\n", $label, 'files', 'tests', 'passed', 'failed', 'seconds', 'files with problems';
for my $which (qw(stock nodelay)) {
    my $r = $run{$which};
    printf "%-10s %6d %7d %7d %7d %8.1f  %s\n", $which, @{$r}{qw(files planned passed failed seconds)},
        join(' ', @{ $r->{bad} }) || '-';
}
exit($run{nodelay}{passed} < $run{stock}{passed} ? 1 : 0);
