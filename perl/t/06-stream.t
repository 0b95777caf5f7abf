use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Nodelay;
use Nodelay::Tiny;
use HTTP::Tiny;
use TestServer;

# Streamed bodies: the native data_callback, Nodelay::Tiny's (compared with
# the stock HTTP::Tiny) and LWP's :content_cb and :content_file through
# LWP::Protocol::nodelay (compared with stock LWP).
my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

# A body several engine pieces long: a callback called once with the whole
# body would mean it was buffered first.
use constant BIG => 1_000_000;

my $ua = Nodelay->new(timeout => 5);

subtest 'native data_callback' => sub {
    my $whole = $ua->get("$base/bytes/" . BIG)->content;
    my ($got, $calls, $status) = ('', 0);
    my $res = $ua->get("$base/bytes/" . BIG, data_callback => sub {
        my ($piece, $r) = @_;
        $got .= $piece;
        $calls++;
        $status //= $r->status;
    });
    is $got, $whole, 'the pieces make the body';
    cmp_ok $calls, '>', 1, 'in several pieces';
    is $status, 200, 'the head is readable from the callback';
    is $res->content, '', 'the body is not kept';
    is $ua->get("$base/bytes/10")->status, 200, 'the connection serves the next request';
};

subtest 'decoded and chunked bodies stream decoded' => sub {
    for my $path ('/gzip/200000', '/chunked/70000') {
        my $whole = $ua->get("$base$path")->content;
        my $got = '';
        $ua->get("$base$path", data_callback => sub { $got .= $_[0] });
        is $got, $whole, "$path as read whole";
    }
};

subtest 'a callback that dies stops the request' => sub {
    my $ok = eval { $ua->get("$base/bytes/" . BIG, data_callback => sub { die "enough\n" }); 1 };
    ok !$ok, 'died';
    is $@, "enough\n", "the callback's exception";
    is length $ua->get("$base/bytes/100")->content, 100, 'the client still works';
};

subtest 'HEAD calls no callback' => sub {
    my $calls = 0;
    my $res = $ua->head("$base/bytes/100", data_callback => sub { $calls++ });
    is $calls, 0, 'no pieces';
    is $res->status, 200, 'status';
};

my $tiny = Nodelay::Tiny->new(timeout => 5);
my $stock = HTTP::Tiny->new(timeout => 5);

# What a data_callback saw, and the response hashref, from either client.
sub tiny_stream {
    my ($http, $url) = @_;
    my ($got, $calls, $seen_status) = ('', 0);
    my $res = $http->get($url, { data_callback => sub { $got .= $_[0]; $calls++; $seen_status //= $_[1]{status} } });
    return ($res, $got, $calls, $seen_status);
}

for my $path ('/bytes/' . BIG, '/chunked/5000', '/status/404', '/gzip/100000') {
    subtest "Nodelay::Tiny data_callback $path as HTTP::Tiny" => sub {
        my ($ours, $got, $calls, $seen) = tiny_stream($tiny, "$base$path");
        my ($ref, $ref_got, $ref_calls, $ref_seen) = tiny_stream($stock, "$base$path");
        is $ours->{status}, $ref->{status}, 'status';
        is $ours->{content}, $ref->{content}, 'content (empty for 2xx, the body otherwise)';
        is $seen, $ref_seen, 'the hashref the callback saw had the status';
        if ($path =~ /gzip/) {
            # HTTP::Tiny does not undo content codings; the engine does.
            is length $got, 100000, 'the decoded body';
        }
        else {
            is $got, $ref_got, 'the callback got the same bytes';
        }
        is !!$calls, !!$ref_calls, 'called when HTTP::Tiny calls';
        cmp_ok $calls, '>', 1, 'in several pieces' if $path =~ /bytes/;
    };
}

subtest 'mirror streams to the file' => sub {
    my $file = "mirror-stream-$$.bin";
    unlink $file;
    my $res = $tiny->mirror("$base/bytes/" . BIG, $file);
    ok $res->{success}, 'success';
    is -s $file, BIG, 'the whole body in the file';
    my $missing = $tiny->mirror("$base/status/404", $file);
    ok !$missing->{success}, '404 is no success';
    is -s $file, BIG, 'the file is left alone';
    my @left = glob "$file*";
    is_deeply \@left, [$file], 'no temporary file left';
    unlink $file;
};

SKIP: {
    eval { require LWP::UserAgent; require LWP::Protocol::nodelay; 1 }
        or skip 'LWP::UserAgent not installed', 2;
    my $stock_lwp = LWP::UserAgent->new(timeout => 5, keep_alive => 1);
    # The engine's LWP: the same class with the implementor switched for
    # the duration of each call.
    my $through = sub {
        my ($code) = @_;
        my $old = LWP::Protocol::implementor('http');
        LWP::Protocol::implementor('http', 'LWP::Protocol::nodelay');
        my @r = eval { $code->() };
        my $e = $@;
        LWP::Protocol::implementor('http', $old);
        die $e if $e;
        return @r;
    };
    subtest 'LWP :content_cb as stock LWP' => sub {
        for my $path ('/bytes/' . BIG, '/chunked/5000', '/status/404') {
            my $run = sub {
                my ($got, $calls) = ('', 0);
                my $res = LWP::UserAgent->new(timeout => 5)->get("$base$path", ':content_cb' => sub { $got .= $_[0]; $calls++ });
                return ($res, $got, $calls);
            };
            my ($ours, $got, $calls) = $through->($run);
            my ($ref, $ref_got) = $run->();
            is $ours->code, $ref->code, "$path: code";
            is $ours->content, $ref->content, "$path: content";
            is $got, $ref_got, "$path: the callback's bytes";
            is $ours->header('X-Died'), $ref->header('X-Died'), "$path: nothing died";
            cmp_ok $calls, '>', 1, "$path: in several pieces" if $path =~ /bytes/;
        }
    };
    subtest 'LWP :content_file as stock LWP' => sub {
        my ($a, $b) = ("lwp-ours-$$.bin", "lwp-stock-$$.bin");
        my ($ours) = $through->(sub { LWP::UserAgent->new(timeout => 5)->get("$base/bytes/" . BIG, ':content_file' => $a) });
        my $ref = LWP::UserAgent->new(timeout => 5)->get("$base/bytes/" . BIG, ':content_file' => $b);
        is $ours->code, $ref->code, 'code';
        is -s $a, -s $b, 'the file size';
        is -s $a, BIG, 'the whole body';
        my $slurp = sub { local (@ARGV, $/) = @_; <> };
        ok $slurp->($a) eq $slurp->($b), 'the same bytes';
        is $ours->content, $ref->content, 'content (empty) as LWP';
        unlink $a, $b;
    };
}

subtest 'native request body from a callback' => sub {
    # Pieces of 64 KiB up to BIG bytes: the echo route sends them back.
    my $sent = 0;
    my $piece = 'x' x 65536;
    my $pieces = sub {
        return undef if $sent >= BIG;
        my $n = BIG - $sent < length $piece ? BIG - $sent : length $piece;
        $sent += $n;
        return substr $piece, 0, $n;
    };
    my $res = $ua->put("$base/echo", content => $pieces,
        trailer_callback => sub { { 'X-Sent' => $sent } });
    is $res->status, 200, 'sent chunked, with a trailer field';
    is length $res->content, BIG, 'the whole body arrived';
    $sent = 0;
    $res = $ua->put("$base/echo", content => $pieces, headers => { 'Content-Length' => BIG });
    is length $res->content, BIG, 'with the Content-Length given';
    my $calls = 0;
    ok !eval { $ua->put("$base/echo", content => sub { $calls++ ? die "source broke\n" : 'ab' }); 1 },
        'a callback that dies stops the request';
    is $@, "source broke\n", "the caller catches the callback's own error";
    ok !eval { $ua->put("$base/echo", content => sub { "\x{263a}" }); 1 }, 'a wide character stops it';
    is $@, "Wide character in request body\n", 'with its message';
    is $ua->get("$base/bytes/3")->status, 200, 'the client works after the failures';
};

done_testing;
