#!/usr/bin/perl
# The lab's Perl worker (nodelay bench --lang perl; bench/nodelay_bench/langs.py):
#
#     perl worker.pl SPEC_JSON
#
# measures one Perl client x one workload (warm-up, then the timed
# repetitions) and prints one JSON line, the object the Python worker
# (bench/nodelay_bench/worker.py) prints: {"reps": [...], "protocol",
# "peak_rss_kb", "note", "latency_ms", "capped", ...}, or {"skipped": why} when the
# client is not installed or cannot run the workload. Every answer is
# checked (status, length, JSON document, echoed form): a wrong answer is an
# error, not a request.
use strict;
use warnings;
use JSON::PP ();
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
use FindBin ();
use lib $FindBin::Bin;    # LWPFloor.pm and SocketClient.pm, the reference rows' code

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
# (status, body), protocol => sub -> string}, and optionally get_json =>
# sub(url) -> (status, document, body length) for a client with its own
# JSON parser (the others' bodies go to the fastest parser installed).
# Workload h's clients: COOKIES{name}->(path) returns the client above plus
# save => sub (write the Netscape cookie file at path). The file must be one
# curl -b and HTTP::Cookies::Netscape read.
my %COOKIES = (
    'nodelay' => sub {
        my ($path) = @_;
        my $ua = Nodelay->new(timeout => TIMEOUT, cookie_jar => $path);
        my $last;
        return {
            get       => sub { $last = $ua->get($_[0]); ($last->status, $last->content) },
            post_form => sub { $last = $ua->post($_[0], form => $_[1]); ($last->status, $last->content) },
            protocol  => sub { $last ? $last->protocol : '?' },
            save      => sub { $ua->save_cookies },
        };
    },
    'lwp-cookies' => sub { require HTTP::Cookies; _lwp_cookies(@_, keep_alive => 1) },
    'nodelay-lwp' => sub {
        require HTTP::Cookies;
        LWP::Protocol::implementor($_, 'LWP::Protocol::nodelay') for qw(http https);
        return _lwp_cookies(@_, keep_alive => 1);
    },
    'www-curl' => sub {
        my ($path) = @_;
        my $curl = WWW::Curl::Easy->new;
        my $body;
        $curl->setopt(WWW::Curl::Easy::CURLOPT_WRITEDATA(), \$body);
        $curl->setopt(WWW::Curl::Easy::CURLOPT_TIMEOUT(), TIMEOUT);
        $curl->setopt(WWW::Curl::Easy::CURLOPT_COOKIEFILE(), $path);
        $curl->setopt(WWW::Curl::Easy::CURLOPT_COOKIEJAR(), $path);
        my $perform = sub {
            my ($url, $post) = @_;
            $body = '';
            $curl->setopt(WWW::Curl::Easy::CURLOPT_URL(), $url);
            if (defined $post) { $curl->setopt(WWW::Curl::Easy::CURLOPT_POSTFIELDS(), $post) }
            else { $curl->setopt(WWW::Curl::Easy::CURLOPT_HTTPGET(), 1) }
            my $rc = $curl->perform;
            die 'curl: ' . $curl->strerror($rc) . "\n" if $rc;
            return ($curl->getinfo(WWW::Curl::Easy::CURLINFO_HTTP_CODE()), $body);
        };
        return {
            get       => sub { $perform->($_[0]) },
            post_form => sub { $perform->($_[0], $_[2]) },
            protocol  => sub { 'HTTP/1.1' },
            # libcurl writes COOKIEJAR when the handle is cleaned up.
            save      => sub { undef $curl },
        };
    },
);

# LWP's rows keep the jar in HTTP::Cookies' own file format, as seed A did
# (HTTP::Cookies->new(file => ..., autosave => 1)): HTTP::Cookies::Netscape
# drops a session cookie (no expiry) both when it saves and when it loads, so
# it cannot carry workload h's login cookie. curl -b does not read that format
# (the row's note says so).
sub _lwp_cookies {
    my ($path, %opt) = @_;
    my $jar = HTTP::Cookies->new(file => $path, ignore_discard => 1);
    my $client = _lwp(LWP::UserAgent->new(timeout => TIMEOUT, cookie_jar => $jar, %opt));
    $client->{save} = sub { $jar->save };
    return $client;
}

my %CLIENTS = (
    'nodelay' => [['Nodelay'], sub {
        my $ua = Nodelay->new(timeout => TIMEOUT);
        my $last;
        return {
            get       => sub { $last = $ua->get($_[0]); ($last->status, $last->content) },
            # Workload b: the front's own parser, as the Python lab uses json().
            get_json  => sub { $last = $ua->get($_[0]); ($last->status, $last->json, length $last->content) },
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
    # keep_alive as the lwp row: without it LWP::Protocol::nodelay closes each
    # connection after its response, as stock LWP does.
    'nodelay-lwp' => [['LWP::UserAgent', 'LWP::Protocol::nodelay'], sub {
        LWP::Protocol::implementor($_, 'LWP::Protocol::nodelay') for qw(http https);
        return _lwp(LWP::UserAgent->new(timeout => TIMEOUT, keep_alive => 1));
    }, 'keep_alive => 1'],
    # A reference row, not a peer: LWP::UserAgent over the cheapest transport
    # Perl has (LWPFloor.pm, beside this script).
    'lwp-floor' => [['LWP::UserAgent', 'LWPFloor'], sub {
        LWP::Protocol::implementor('http', 'LWPFloor');
        return _lwp(LWP::UserAgent->new(timeout => TIMEOUT));
    }, 'reference: LWP::UserAgent over one syswrite and sysread (LWPFloor.pm)'],
    # A reference row, not a peer: the cheapest client written in Perl (SocketClient.pm,
    # beside this script), connected to the origin of the first URL it is given.
    'perl-socket' => [['SocketClient'], sub {
        my ($client, $origin, $host);
        my $send = sub {
            my ($method, $url, $rest) = @_;
            if (!$client) {
                my ($name, $port);
                ($origin, $name, $port) = $url =~ m{\A(http://([^/:]+):(\d+))/}
                    or die "perl-socket: http://host:port/ URLs only, not $url\n";
                $client = SocketClient->new($name, $port, TIMEOUT);
                $host = "Host: $name:$port\r\n";
            }
            index($url, $origin) == 0 or die "perl-socket: one origin ($origin), not $url\n";
            return $client->request("$method " . substr($url, length $origin) . " HTTP/1.1\r\n$host$rest");
        };
        return {
            get       => sub { $send->('GET', $_[0], "\r\n") },
            post_form => sub {
                $send->('POST', $_[0], "Content-Type: application/x-www-form-urlencoded\r\n"
                    . 'Content-Length: ' . length($_[2]) . "\r\n\r\n$_[2]");
            },
            protocol  => sub { 'HTTP/1.1' },
        };
    }, 'reference: one socket, one syswrite, sysread into a kept buffer, '
        . 'Content-Length answers only (SocketClient.pm)'],
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
    unless $spec->{check} =~ /\A(?:bytes|json|echo|cookies)\z/;
# The request of the timed loop: () -> (answer right?, body bytes).
my $op;
if ($spec->{check} eq 'cookies') {
    emit({ skipped => 'no cookie file support in this adapter' }) unless $COOKIES{ $spec->{client} };
    cookie_flow();
}

my $client = $make->();
my $url = $spec->{url};
my $check = $spec->{check};
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
    my $get_json = $client->{get_json} // sub {
        my ($status, $data) = $get->($_[0]);
        return ($status, $decode_json->($data), length $data);
    };
    $json_parser = 'Nodelay::Response->json' if $client->{get_json};
    $op = sub {
        my ($status, $doc, $length) = $get_json->($url);
        # "ok": true, a JSON boolean (an object), not 1 or "yes".
        return ($status == 200 && ref $doc eq 'HASH' && ref $doc->{ok} && $doc->{ok}, $length);
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

# Workload h, as worker.py's run_cookie_flow: log in (untimed), then GET
# /cookies and POST /anything/cookies alternating, each answer checked for the
# session cookie; then the cookie file is saved, and a fresh client of the
# same kind and the real curl -b must send the cookie from it.
sub cookie_flow {
    require File::Temp;
    my $dir = File::Temp::tempdir('nodelay-bench-cookies-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $path = "$dir/cookies.txt";
    my $get_url = $spec->{url};
    my $origin = substr $get_url, 0, index($get_url, '/', length 'http://');
    my $client = $COOKIES{ $spec->{client} }->($path);
    my @login = map { @$_ } @{ $spec->{login_form} };
    my ($status, $body) = $client->{post_form}->($origin . $spec->{login_path}, \@login, _form(@login));
    my $doc = eval { $decode_json->($body) };
    my $session = ref $doc eq 'HASH' && ref $doc->{cookies} eq 'HASH' ? $doc->{cookies}{session} : undef;
    emit({ failed => "login POST answered $status: " . substr($body // '', 0, 80) })
        unless $status == 200 && defined $session && !ref $session;
    my $get_body = qq({"cookies": {"session": "$session"}});
    my $needle = qq(["cookie", "session=$session"]);
    my @pairs = map { @$_ } @{ $spec->{form} };
    my $form_body = $spec->{form_bodies}[0];
    my $post_url = $origin . $spec->{cookie_post_path};
    my ($get, $post) = @$client{qw(get post_form)};
    my $turn = 0;
    $op = sub {
        if ($turn ^= 1) {
            my ($s, $d) = $get->($get_url);
            return ($s == 200 && $d eq $get_body, length $d);
        }
        my ($s, $d) = $post->($post_url, \@pairs, $form_body);
        return ($s == 200 && index($d, $needle) >= 0, length $d);
    };
    my ($reps, $latency, $capped) = measure();
    my $protocol = $client->{protocol}->();
    $client->{save}->();
    undef $client;
    undef $op;
    my $fresh = $COOKIES{ $spec->{client} }->($path);
    my ($s, $d) = $fresh->{get}->($get_url);
    emit({ failed => "reloaded cookie file not sent: $s " . substr($d, 0, 80) }) unless $s == 200 && $d eq $get_body;
    undef $fresh;
    my $note = 'cookie file reloaded; curl not found';
    if (grep { -x "$_/curl" } split /:/, $ENV{PATH} // '') {
        my $out = `curl -s -m 10 -b '$path' '$get_url'`;
        $note = $out eq $get_body ? 'cookie file reloaded; curl -b sends it' : 'cookie file reloaded; curl -b does NOT send it';
    }
    result($reps, $latency, $capped, $protocol, $note);
}

sub _form {
    my @pairs = @_;
    my @out;
    while (my ($k, $v) = splice @pairs, 0, 2) {
        push @out, join '=', map { (my $s = $_) =~ s/([^A-Za-z0-9\-._~ ])/sprintf '%%%02X', ord $1/ge; $s =~ tr/ /+/; $s } $k, $v;
    }
    return join '&', @out;
}

# (requests done, errors, body bytes, capped?) of up to $n sequential
# requests, stopping early once $cap seconds have passed (the lab's time cap,
# spec pass_seconds; undef: none); their durations (seconds) go to @$latency.
sub run_seq {
    my ($n, $latency, $cap) = @_;
    my ($errors, $bytes, $streak) = (0, 0, 0);
    my $start = clock_gettime(CLOCK_MONOTONIC);
    for my $i (0 .. $n - 1) {
        my $t0 = clock_gettime(CLOCK_MONOTONIC);
        my ($ok, $size) = eval { $op->() };
        my $t1 = clock_gettime(CLOCK_MONOTONIC);
        push @$latency, $t1 - $t0;
        if ($ok) {
            $bytes += $size;
            $streak = 0;
        }
        else {
            $errors++;
            if (++$streak >= MAX_CONSECUTIVE_ERRORS) {
                return ($n, $errors + ($n - $i - 1), $bytes, 0);
            }
        }
        return ($i + 1, $errors, $bytes, 1) if defined $cap && $t1 - $start >= $cap && $i + 1 < $n;
    }
    return ($n, $errors, $bytes, 0);
}

# User and system CPU seconds of this process (getrusage through times():
# its clock ticks are coarse, so each repetition's total is also read from
# the process CPU clock and split in the ratio times() gives).
sub cpu {
    my ($user, $sys) = times;
    return (clock_gettime(Time::HiRes::CLOCK_PROCESS_CPUTIME_ID()), $user, $sys);
}

# The warm-up, then the timed repetitions: (reps, latencies in seconds,
# capped?).
sub measure {
    my $cap = $spec->{pass_seconds};
    run_seq($spec->{warmup}, [], $cap);
    my (@reps, @latency);
    my $capped = 0;
    for (1 .. $spec->{repeat}) {
        my ($c0, $u0, $s0) = cpu();
        my $t0 = clock_gettime(CLOCK_MONOTONIC);
        my ($done, $errors, $bytes, $cut) = run_seq($spec->{n}, \@latency, $cap);
        $capped ||= $cut;
        my $seconds = clock_gettime(CLOCK_MONOTONIC) - $t0;
        my ($c1, $u1, $s1) = cpu();
        my ($user, $sys) = ($u1 - $u0, $s1 - $s0);
        my $total = $c1 - $c0;
        my $user_share = $user + $sys > 0 ? $user / ($user + $sys) : 1;
        push @reps, {
            seconds  => $seconds,
            requests => $done - $errors,
            bytes    => $bytes,
            cpu_user => $total * $user_share,
            cpu_sys  => $total * (1 - $user_share),
            errors   => $errors,
        };
    }
    return (\@reps, \@latency, $capped);
}

sub result {
    my ($reps, $latency, $capped, $protocol, $note) = @_;
    emit({
        capped      => $capped ? JSON::PP::true : JSON::PP::false,
        reps        => $reps,
        protocol    => $protocol,
        peak_rss_kb => peak_rss_kb(),
        chunks      => undef,
        note        => $note,
        latency_ms  => summary(@$latency),
        connect_ms  => undef,
        tls_ms      => undef,
    });
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

my ($reps, $latency, $capped) = measure();
my @notes = grep { defined } $note, ($check eq 'json' ? "parsed with $json_parser" : undef);
result($reps, $latency, $capped, $client->{protocol}->(), join('; ', @notes));
