#!/usr/bin/perl
# The lab's Perl worker (nodelay bench --lang perl; bench/nodelay_bench/langs.py):
#
#     perl worker.pl SPEC_JSON
#
# measures one Perl client x one workload (warm-up, then the timed
# repetitions) and prints one JSON line, the object the Python worker
# (bench/nodelay_bench/worker.py) prints: {"reps": [...], "protocol",
# "peak_rss_kb", "note", "latency_ms", ...}, or {"skipped": why} when the
# client is not installed or cannot run the workload. Every answer is
# checked (status, length, JSON document, echoed form): a wrong answer is an
# error, not a request.
use strict;
use warnings;
use JSON::PP ();
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

# A run of this many failures in a row ends a repetition (the rest count as
# errors), as in the Python worker.
use constant MAX_CONSECUTIVE_ERRORS => 20;
# Seconds any client may wait for one answer.
use constant TIMEOUT => 10;
use constant PERCENTILES => (50, 90, 99);

my $spec = JSON::PP->new->decode($ARGV[0] // die "usage: worker.pl SPEC_JSON\n");

# The JSON parser of workload b's check: the fastest one installed, the same
# for every client of the run.
my ($decode_json, $json_parser);
if (eval { require Cpanel::JSON::XS; 1 }) {
    my $p = Cpanel::JSON::XS->new;
    ($decode_json, $json_parser) = (sub { $p->decode($_[0]) }, 'Cpanel::JSON::XS');
}
else {
    my $p = JSON::PP->new;
    ($decode_json, $json_parser) = (sub { $p->decode($_[0]) }, 'JSON::PP');
}

# Each client: what it needs installed, and a constructor returning
# {get => sub(url) -> (status, body), post_form => sub(url, pairs, body) ->
# (status, body), protocol => sub -> string}.
my %CLIENTS = (
    'nodelay' => [['Nodelay'], sub {
        my $ua = Nodelay->new(timeout => TIMEOUT);
        my $last;
        return {
            get       => sub { $last = $ua->get($_[0]); ($last->status, $last->content) },
            post_form => sub { $last = $ua->post($_[0], form => $_[1]); ($last->status, $last->content) },
            protocol  => sub { $last ? $last->protocol : '?' },
        };
    }],
    'nodelay-tiny' => [['Nodelay::Tiny'], sub {
        my $ua = Nodelay::Tiny->new(timeout => TIMEOUT);
        my $last;
        return {
            get       => sub { $last = $ua->get($_[0]); ($last->{status}, $last->{content}) },
            post_form => sub { $last = $ua->post_form($_[0], $_[1]); ($last->{status}, $last->{content}) },
            protocol  => sub { $last ? $last->{protocol} : '?' },
        };
    }],
    'nodelay-lwp' => [['LWP::UserAgent', 'LWP::Protocol::nodelay'], sub {
        LWP::Protocol::implementor($_, 'LWP::Protocol::nodelay') for qw(http https);
        return _lwp(LWP::UserAgent->new(timeout => TIMEOUT));
    }],
    'lwp' => [['LWP::UserAgent'], sub {
        return _lwp(LWP::UserAgent->new(timeout => TIMEOUT, keep_alive => 1));
    }, 'keep_alive => 1 (LWP::ConnCache)'],
    'lwp-cookies' => [['LWP::UserAgent', 'HTTP::Cookies'], sub {
        return _lwp(LWP::UserAgent->new(timeout => TIMEOUT, keep_alive => 1, cookie_jar => HTTP::Cookies->new));
    }, 'keep_alive => 1, cookie_jar => HTTP::Cookies->new'],
    'http-tiny' => [['HTTP::Tiny'], sub {
        my $ua = HTTP::Tiny->new(timeout => TIMEOUT);
        my $last;
        return {
            get       => sub { $last = $ua->get($_[0]); ($last->{status}, $last->{content}) },
            post_form => sub { $last = $ua->post_form($_[0], $_[1]); ($last->{status}, $last->{content}) },
            protocol  => sub { $last && $last->{protocol} ? $last->{protocol} : 'HTTP/1.1' },
        };
    }],
    'furl' => [['Furl'], sub {
        my $ua = Furl->new(timeout => TIMEOUT);
        my $last;
        return {
            get       => sub { $last = $ua->get($_[0]); ($last->code, $last->content) },
            post_form => sub { $last = $ua->post($_[0], [], $_[1]); ($last->code, $last->content) },
            protocol  => sub { $last ? $last->protocol : '?' },
        };
    }],
    'hijk' => [['Hijk'], sub {
        my %cache;
        my $call = sub {
            my ($url, $method, $body, $type) = @_;
            my ($host, $port, $path) = $url =~ m{\Ahttp://([^/:]+):(\d+)(/.*)\z} or die "hijk: $url\n";
            my $res = Hijk::request({
                host => $host, port => $port, path => $path, method => $method,
                socket_cache => \%cache, read_timeout => TIMEOUT, connect_timeout => TIMEOUT,
                (defined $body ? (body => $body, head => ['Content-Type' => $type]) : ()),
            });
            die "hijk error $res->{error}\n" if $res->{error};
            return ($res->{status}, $res->{body});
        };
        return {
            get       => sub { $call->($_[0], 'GET') },
            post_form => sub { $call->($_[0], 'POST', $_[2], 'application/x-www-form-urlencoded') },
            protocol  => sub { 'HTTP/1.1' },
        };
    }, 'hand-built body (Hijk has no form API)'],
    'www-curl' => [['WWW::Curl::Easy'], sub {
        my $curl = WWW::Curl::Easy->new;
        my $body;
        $curl->setopt(WWW::Curl::Easy::CURLOPT_WRITEDATA(), \$body);
        $curl->setopt(WWW::Curl::Easy::CURLOPT_TIMEOUT(), TIMEOUT);
        my $perform = sub {
            $body = '';
            my $rc = $curl->perform;
            die 'curl: ' . $curl->strerror($rc) . "\n" if $rc;
            return ($curl->getinfo(WWW::Curl::Easy::CURLINFO_HTTP_CODE()), $body);
        };
        return {
            get => sub {
                $curl->setopt(WWW::Curl::Easy::CURLOPT_URL(), $_[0]);
                $perform->();
            },
            post_form => sub {
                $curl->setopt(WWW::Curl::Easy::CURLOPT_URL(), $_[0]);
                $curl->setopt(WWW::Curl::Easy::CURLOPT_POSTFIELDS(), $_[2]);
                $perform->();
            },
            protocol => sub { 'HTTP/1.1' },
        };
    }, 'hand-built body (CURLOPT_POSTFIELDS)'],
    'mojo' => [['Mojo::UserAgent'], sub {
        my $ua = Mojo::UserAgent->new(request_timeout => TIMEOUT);
        my $last;
        return {
            get       => sub { $last = $ua->get($_[0])->result; ($last->code, $last->body) },
            post_form => sub { my %f = @{ $_[1] }; $last = $ua->post($_[0], form => \%f)->result; ($last->code, $last->body) },
            protocol  => sub { $last ? 'HTTP/' . $last->version : '?' },
        };
    }],
);

sub _lwp {
    my ($ua) = @_;
    my $last;
    return {
        get       => sub { $last = $ua->get($_[0]); ($last->code, $last->content) },
        post_form => sub { $last = $ua->post($_[0], $_[1]); ($last->code, $last->content) },
        protocol  => sub { $last ? $last->protocol // '?' : '?' },
    };
}

sub emit {
    my ($result) = @_;
    print JSON::PP->new->canonical->encode($result), "\n";
    exit 0;
}

my $entry = $CLIENTS{ $spec->{client} } or emit({ skipped => "the perl worker has no client $spec->{client}" });
my ($modules, $make, $note) = @$entry;
for my $module (@$modules) {
    eval "require $module; 1" or do {
        my ($why) = split /\n/, $@;
        emit({ skipped => "$module is not installed or not built: $why" });
    };
}
emit({ skipped => 'the perl worker runs one request at a time' }) if $spec->{concurrency} > 1;
emit({ skipped => 'the perl worker keeps one client per row' }) if $spec->{fresh_client};
emit({ skipped => "the perl worker does not run check '$spec->{check}'" })
    unless $spec->{check} =~ /\A(?:bytes|json|echo)\z/;

my $client = $make->();
my $url = $spec->{url};
my $check = $spec->{check};
my $op;
if ($spec->{method} eq 'POST') {
    my @pairs = map { @$_ } @{ $spec->{form} };
    my $body = $spec->{form_bodies}[0];
    my %expected = map { $_ => 1 } @{ $spec->{form_bodies} };
    my $post = $client->{post_form};
    $op = sub {
        my ($status, $data) = $post->($url, \@pairs, $body);
        return ($status == 200 && $expected{$data}, length $data);
    };
}
elsif ($check eq 'json') {
    my $get = $client->{get};
    $op = sub {
        my ($status, $data) = $get->($url);
        my $doc = $decode_json->($data);
        # "ok": true, a JSON boolean (an object), not 1 or "yes".
        return ($status == 200 && ref $doc eq 'HASH' && ref $doc->{ok} && $doc->{ok}, length $data);
    };
}
else {
    my $get = $client->{get};
    my $size = $spec->{expect_length};
    $op = sub {
        my ($status, $data) = $get->($url);
        return ($status == 200 && length $data == $size, length $data);
    };
}

# (errors, body bytes) of $n sequential requests; their durations (seconds)
# go to @$latency.
sub run_seq {
    my ($n, $latency) = @_;
    my ($errors, $bytes, $streak) = (0, 0, 0);
    for my $i (0 .. $n - 1) {
        my $t0 = clock_gettime(CLOCK_MONOTONIC);
        my ($ok, $size) = eval { $op->() };
        push @$latency, clock_gettime(CLOCK_MONOTONIC) - $t0;
        if ($ok) {
            $bytes += $size;
            $streak = 0;
        }
        else {
            $errors++;
            if (++$streak >= MAX_CONSECUTIVE_ERRORS) {
                return ($errors + ($n - $i - 1), $bytes);
            }
        }
    }
    return ($errors, $bytes);
}

# User and system CPU seconds of this process (getrusage through times():
# its clock ticks are coarse, so each repetition's total is also read from
# the process CPU clock and split in the ratio times() gives).
sub cpu {
    my ($user, $sys) = times;
    return (clock_gettime(Time::HiRes::CLOCK_PROCESS_CPUTIME_ID()), $user, $sys);
}

run_seq($spec->{warmup}, []);
my (@reps, @latency);
for (1 .. $spec->{repeat}) {
    my ($c0, $u0, $s0) = cpu();
    my $t0 = clock_gettime(CLOCK_MONOTONIC);
    my ($errors, $bytes) = run_seq($spec->{n}, \@latency);
    my $seconds = clock_gettime(CLOCK_MONOTONIC) - $t0;
    my ($c1, $u1, $s1) = cpu();
    my ($user, $sys) = ($u1 - $u0, $s1 - $s0);
    my $total = $c1 - $c0;
    my $user_share = $user + $sys > 0 ? $user / ($user + $sys) : 1;
    push @reps, {
        seconds  => $seconds,
        requests => $spec->{n} - $errors,
        bytes    => $bytes,
        cpu_user => $total * $user_share,
        cpu_sys  => $total * (1 - $user_share),
        errors   => $errors,
    };
}

sub summary {
    my @ordered = sort { $a <=> $b } map { $_ * 1000 } @_;
    return undef unless @ordered;
    my %out;
    for my $q (PERCENTILES) {
        my $rank = int($q / 100 * @ordered);
        $rank++ if $rank < $q / 100 * @ordered;    # nearest rank: ceil
        $out{"p$q"} = $ordered[$rank - 1];
    }
    my $sum = 0;
    $sum += $_ for @ordered;
    @out{qw(max mean n)} = ($ordered[-1], $sum / @ordered, scalar @ordered);
    return \%out;
}

sub peak_rss_kb {
    open my $fh, '<', '/proc/self/status' or return undef;
    while (<$fh>) { return $1 + 0 if /^VmHWM:\s+(\d+)/ }
    return undef;
}

my @notes = grep { defined } $note, ($check eq 'json' ? "parsed with $json_parser" : undef);
emit({
    reps        => \@reps,
    protocol    => $client->{protocol}->(),
    peak_rss_kb => peak_rss_kb(),
    chunks      => undef,
    note        => join('; ', @notes),
    latency_ms  => summary(@latency),
    connect_ms  => undef,
    tls_ms      => undef,
});
