# The Perl path of the hop counter (tools/hops.py runs it under gdb): Nodelay->new->get($url),
# once to open the connection, then, after getpgrp (gdb starts watching), the call studied.
# Every sub of Nodelay::XS (the shim's functions) is wrapped to record the Perl stack that
# called it, as tools/hops.py's Python recorder does with sys.setprofile; the wrapper leaves
# with `goto &sub`, so it is not on the stack it records.
use strict;
use warnings;
use JSON::PP ();
use Time::HiRes ();
use Nodelay;

my ($url, $out) = @ARGV;
my @calls;
my $recording = 0;

# Our frames from just below main::front_call (outermost first): the sub a frame runs is
# caller($i)'s, the file its code is in is the call site recorded one frame further in.
sub perl_stack {
    my @stack;
    for (my $i = 2; my @c = caller($i); $i++) {
        last if $c[3] eq 'main::front_call';
        my @inner = caller($i - 1);
        unshift @stack, { function => $c[3], file => $inner[1], line => $inner[2] };
    }
    return \@stack;
}

{
    no strict 'refs';
    no warnings 'redefine';
    for my $name (grep { defined &{"Nodelay::XS::$_"} } keys %Nodelay::XS::) {
        my $xs = \&{"Nodelay::XS::$name"};
        *{"Nodelay::XS::$name"} = sub {
            if ($recording) {
                push @calls, { name => $name, start => Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()),
                               end => undef, stack => perl_stack() };
            }
            goto &$xs;
        };
    }
}

sub front_call { my ($client, $u) = @_; return $client->get($u) }

my $client = Nodelay->new;
my $warm = $client->get($url);
die "hops: $url answered " . $warm->status . "\n" unless $warm->status == 200;
getpgrp();    # ready: gdb starts watching (tools/hops_gdb.py)
$recording = 1;
my $res = front_call($client, $url);
$recording = 0;
die "hops: $url answered " . $res->status . "\n" unless $res->status == 200;
open my $fh, '>', $out or die "hops: $out: $!\n";
print {$fh} JSON::PP->new->encode(\@calls);
close $fh;
