use strict;
use warnings;
use lib 't/lib';
use Test::More;
use TestServer;

BEGIN {
    eval { require LWP::UserAgent; require HTTP::Cookies; 1 }
        or plan skip_all => 'LWP::UserAgent not installed (Debian libwww-perl)';
}
use LWP::Protocol::nodelay;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;

# The same program, once with LWP's own protocol, once through the engine:
# the stock answer is the reference.
my $stock_impl = LWP::Protocol::implementor('http');
sub with_nodelay {
    my ($code) = @_;
    LWP::Protocol::implementor('http', 'LWP::Protocol::nodelay');
    my @out = eval { $code->() };
    my $err = $@;
    LWP::Protocol::implementor('http', $stock_impl);
    die $err if $err;
    return wantarray ? @out : $out[0];
}

my $ua = LWP::UserAgent->new(timeout => 5, agent => 'lwp-same/1');
# A user agent without keep_alive asks for Connection: close and opens a
# connection per request, stock or through the engine (t/12-lwp-wire.t); the
# tests of the engine's pooling use one with keep_alive.
my $kua = LWP::UserAgent->new(timeout => 5, agent => 'lwp-same/1', keep_alive => 1);

sub same_response {
    my ($path_or_req, $what) = @_;
    my $req = ref $path_or_req ? $path_or_req : HTTP::Request->new(GET => "$base$path_or_req");
    my $ref = $ua->request($req->clone);
    my $ours = with_nodelay(sub { $ua->request($req->clone) });
    is $ours->code, $ref->code, "$what: code";
    is $ours->message, $ref->message, "$what: message";
    is $ours->content, $ref->content, "$what: content";
    is $ours->decoded_content, $ref->decoded_content, "$what: decoded_content";
    is scalar $ours->header('Content-Type'), scalar $ref->header('Content-Type'), "$what: Content-Type";
    is $ours->base, $ref->base, "$what: base";
    is $ours->request->uri, $ref->request->uri, "$what: final request";
    return $ours;
}

my $ours = same_response('/bytes/202', 'GET');
is $ours->protocol, 'HTTP/1.1', 'protocol';
same_response('/chunked/700', 'chunked');
same_response('/status/404', '404');
same_response('/json/1024', 'json');
same_response('/redirect/2', 'redirects (followed by LWP)');
same_response(HTTP::Request->new(HEAD => "$base/bytes/20"), 'HEAD');
same_response('/gzip/', 'gzip') if 0;

subtest 'post form and content' => sub {
    require HTTP::Request::Common;
    same_response(HTTP::Request::Common::POST("$base/echo", [user => 'me', q => 'a b']), 'POST form');
    same_response(HTTP::Request::Common::POST("$base/echo", Content_Type => 'application/json', Content => '{"a":1}'), 'POST content');
    same_response(HTTP::Request::Common::PUT("$base/echo", Content => 'put body'), 'PUT');
};

subtest 'headers and agent reach the server' => sub {
    my $res = with_nodelay(sub { $ua->get("$base/headers", 'X-Test' => 'yes') });
    like $res->content, qr/lwp-same\/1/, "LWP's agent";
    like $res->content, qr/yes/, 'own header';
    unlike $res->content, qr/nodelay\//, "not the engine's agent";
    # LWP::Protocol::http sends a line break in a value as a space and a
    # ':'-prefixed name without the colon.
    for my $h (['X-Multi-Line' => "a\nb"], [':X-Colon' => 'c']) {
        my $ref = $kua->get("$base/headers", @$h);
        my $ours = with_nodelay(sub { $kua->get("$base/headers", @$h) });
        is $ours->code, $ref->code, "$h->[0]: code as stock";
        (my $lc = lc $h->[0]) =~ s/^://;
        my ($sent_ref) = $ref->content =~ /("\Q$lc\E": "[^"]*")/;
        my ($sent_ours) = $ours->content =~ /("\Q$lc\E": "[^"]*")/;
        ok defined $sent_ref, "$h->[0]: stock sent it";
        is $sent_ours, $sent_ref, "$h->[0]: sent as stock sends it";
    }
};

subtest 'HTTP::Cookies jar (kept by LWP)' => sub {
    my $file = "cookies-test-lwp-$$.txt";
    unlink $file;
    my $jar_ua = LWP::UserAgent->new(timeout => 5, cookie_jar => HTTP::Cookies->new(file => $file, autosave => 1, ignore_discard => 1));
    my $login = with_nodelay(sub { $jar_ua->post("$base/login", { user => 'lwp' }) });
    my ($session) = $login->content =~ /(lwp-\d+)/;
    ok $session, 'logged in';
    like with_nodelay(sub { $jar_ua->get("$base/cookies") })->content, qr/\Q$session\E/, 'cookie sent back';
    like $jar_ua->get("$base/cookies")->content, qr/\Q$session\E/, 'the same jar with stock LWP';
    undef $jar_ua;
    open my $fh, '<', $file or die "$file: $!";
    like join('', <$fh>), qr/\Q$session\E/, 'autosaved by HTTP::Cookies';
    unlink $file;
};

subtest ':content_file and :content_cb' => sub {
    my $file = "lwp-content-$$.bin";
    my $res = with_nodelay(sub { $ua->get("$base/bytes/5000", ':content_file' => $file) });
    ok $res->is_success, 'success';
    is -s $file, 5000, 'written to the file';
    unlink $file;
    my $got = '';
    with_nodelay(sub { $ua->get("$base/bytes/4000", ':content_cb' => sub { $got .= $_[0] }) });
    is length $got, 4000, 'given to the callback';
};

subtest 'errors become LWP 500 responses' => sub {
    require IO::Socket::INET;
    my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $sock->sockport;
    close $sock;
    my $ref = $ua->get("http://127.0.0.1:$port/");
    my $res = with_nodelay(sub { $ua->get("http://127.0.0.1:$port/") });
    is $res->code, $ref->code, 'code as stock LWP';
    is $res->header('Client-Warning'), $ref->header('Client-Warning'), 'Client-Warning';
    my $quick = LWP::UserAgent->new(timeout => 0.3);
    $res = with_nodelay(sub { $quick->get("$base/delay/3000") });
    is $res->code, 500, 'timeout: 500';
    like $res->message, qr/timeout/i, 'says timeout';
};

# Everything LWP users read off a response, stock against ours: the
# headers compared whole (every field, every value in order, the case
# HTTP::Headers prints), less the Client-* fields only stock LWP adds.
sub _headers_without_client {
    my ($res) = @_;
    my $h = $res->headers->clone;
    $h->remove_header(grep /^Client-/i, $h->header_field_names);
    return $h;
}
sub same_everything {
    my ($ref, $ours, $what) = @_;
    is $ours->code, $ref->code, "$what: code";
    is $ours->message, $ref->message, "$what: message";
    is $ours->protocol, $ref->protocol, "$what: protocol";
    is $ours->content, $ref->content, "$what: content";
    is $ours->decoded_content, $ref->decoded_content, "$what: decoded_content";
    is _headers_without_client($ours)->as_string, _headers_without_client($ref)->as_string, "$what: headers as_string";
    is_deeply [_headers_without_client($ours)->flatten], [_headers_without_client($ref)->flatten], "$what: header pairs";
    is $ours->request->uri, $ref->request->uri, "$what: request";
    is_deeply [sort grep !/^_(?:headers|request|content)\z/, keys %$ours],
        [sort grep !/^_(?:headers|request|content)\z/, keys %$ref], "$what: same HTTP::Response fields";
}

subtest 'repeated, odd-case and HTML head headers (scripted server)' => sub {
    require Scripted;
    my $body = '<html><head><title>Hi there</title><meta http-equiv="X-From-Meta" content="m1"></head><body>x</body></html>';
    my $head = join "\r\n",
        'HTTP/1.1 200 Fine Thanks', 'Content-Type: text/html; charset=UTF-8',
        'Set-Cookie: a=1', 'x-multi: one', 'Set-Cookie: b=2', 'X-MULTI: two', 'X-multi: three',
        'x-lower-only: v', 'X_Under: u', 'Server: scripted', 'Connection: close',
        'Content-Length: ' . length($body), '', '';
    my $s = Scripted->start([recv => 1], [send => $head . $body], ['close']);
    my $ref = $kua->get($s->url . '/');
    my $ours = with_nodelay(sub { $kua->get($s->url . '/') });
    same_everything($ref, $ours, 'scripted');
    is_deeply [$ours->header('Set-Cookie')], ['a=1', 'b=2'], 'Set-Cookie values in order';
    is_deeply [$ours->header('X-Multi')], [qw(one two three)], 'X-Multi values in order';
    is $ours->header('Title'), 'Hi there', "LWP's parse_head ran (Title)";
    is $ours->header('X-From-Meta'), 'm1', "LWP's parse_head ran (meta)";
};

subtest 'HEAD, 404 and chunked compared whole' => sub {
    for my $case ([HEAD => '/bytes/20'], [GET => '/status/404'], [GET => '/chunked/700'], [GET => '/redirect/1']) {
        my $req = HTTP::Request->new(@$case[0], "$base$case->[1]");
        my ($ref, $ours) = ($kua->request($req->clone), with_nodelay(sub { $kua->request($req->clone) }));
        same_everything($ref, $ours, "@$case");
        is $ours->header('Client-Transfer-Encoding'), $ref->header('Client-Transfer-Encoding'),
            "@$case: Client-Transfer-Encoding";
    }
};

subtest 'gzip body: decoded_content as stock' => sub {
    my $ref = $ua->get("$base/gzip/3000");
    my $ours = with_nodelay(sub { $ua->get("$base/gzip/3000") });
    is $ours->code, $ref->code, 'code';
    is $ours->decoded_content, $ref->decoded_content, 'decoded_content';
    is length $ours->decoded_content, 3000, 'decoded length';
    is $ours->header('Content-Encoding'), undef, 'no Content-Encoding (the engine decoded it)';
};

subtest 'user agent handlers run as with stock LWP' => sub {
    for my $impl ('stock', 'nodelay') {
        my @seen;
        my $hua = LWP::UserAgent->new(timeout => 5);
        $hua->add_handler(request_send => sub { push @seen, 'request_send'; return });
        $hua->add_handler(response_header => sub { push @seen, 'response_header:' . $_[0]->code; return });
        $hua->add_handler(response_data => sub { push @seen, 'response_data:' . length $_[3]; 1 });
        $hua->add_handler(response_done => sub { push @seen, 'response_done:' . length $_[0]->content; return });
        my $res = $impl eq 'stock' ? $hua->get("$base/bytes/202") : with_nodelay(sub { $hua->get("$base/bytes/202") });
        is length $res->content, 202, "$impl: content kept";
        is_deeply \@seen, [qw(request_send response_header:200 response_data:202 response_done:202)], "$impl: handlers in order";
    }
    # A response_header handler that turns default_add_content off keeps the
    # body out of the response, and one that adds a data handler sees it.
    for my $impl ('stock', 'nodelay') {
        my $got = '';
        my $hua = LWP::UserAgent->new(timeout => 5);
        $hua->add_handler(response_header => sub {
            my ($res) = @_;
            $res->{default_add_content} = 0;
            push @{ $res->{handlers}{response_data} }, { callback => sub { $got .= $_[3]; 1 } };
            return;
        });
        my $res = $impl eq 'stock' ? $hua->get("$base/bytes/100") : with_nodelay(sub { $hua->get("$base/bytes/100") });
        is $res->content, '', "$impl: default_add_content honoured";
        is length $got, 100, "$impl: response's own data handler ran";
        ok !exists $res->{handlers}, "$impl: data handlers removed after";
    }
    # A handler that dies mid-response becomes X-Died, as stock.
    my $dua = LWP::UserAgent->new(timeout => 5);
    $dua->add_handler(response_header => sub { die "stop here\n" });
    my $ref = $dua->get("$base/bytes/10");
    my $ours = with_nodelay(sub { $dua->get("$base/bytes/10") });
    is $ours->header('X-Died'), $ref->header('X-Died'), 'X-Died';
    is $ours->header('Client-Aborted'), $ref->header('Client-Aborted'), 'Client-Aborted';
    is $ours->code, $ref->code, 'code after a dying handler';
};

{
    package ProgressUA;
    our @ISA = ('LWP::UserAgent');
    sub progress { my ($self, $status) = @_; push @{ $self->{seen_progress} }, $status; $self->SUPER::progress(@_[1 .. $#_]) }
}
subtest 'a user agent that overrides progress is called as by stock LWP' => sub {
    my %seen;
    for my $impl ('stock', 'nodelay') {
        my $pua = ProgressUA->new(timeout => 5, keep_alive => 1);
        my $res = $impl eq 'stock' ? $pua->get("$base/bytes/202") : with_nodelay(sub { $pua->get("$base/bytes/202") });
        is length $res->content, 202, "$impl: content";
        $seen{$impl} = $pua->{seen_progress};
    }
    is_deeply $seen{nodelay}, $seen{stock}, "progress statuses (@{ $seen{stock} })";
};

subtest 'max_size and a streamed :content_cb' => sub {
    my $mua = LWP::UserAgent->new(timeout => 5, max_size => 100);
    my $ref = $mua->get("$base/bytes/5000");
    my $ours = with_nodelay(sub { $mua->get("$base/bytes/5000") });
    is $ours->header('Client-Aborted'), $ref->header('Client-Aborted'), 'Client-Aborted max_size';
    my (@pieces, $obj);
    my $res = with_nodelay(sub { $ua->get("$base/bytes/300000", ':content_cb' => sub { push @pieces, length $_[0]; $obj = $_[1] }, ':read_size_hint' => 4096) });
    ok $res->is_success, 'streamed: success';
    is $res->content, '', 'streamed: not kept in the response';
    cmp_ok scalar(@pieces), '>', 1, 'streamed: more than one piece';
    is eval { my $t = 0; $t += $_ for @pieces; $t }, 300000, 'streamed: every byte given';
    isa_ok $obj, 'HTTP::Response', 'callback gets the response';
};

subtest 'received heads become the HTTP::Headers push_header makes' => sub {
    # What LWP::Protocol::http does with a received head, against the
    # handler's direct build (its internal hash, std_case included).
    for my $pairs (
        [],
        ['content-type' => 'text/plain', 'content-length' => '3'],
        ['Set-Cookie' => 'a=1', 'X-Multi' => 'one', 'set-cookie' => 'b=2', 'x-MULTI' => 'two', 'X-Multi' => 'three'],
        ['x-lower' => 'v', 'X_Under' => 'u', 'x_under' => 'w', 'X-Under' => 'x', 'WWW-Authenticate' => 'Basic', 'www-authenticate' => 'Digest'],
        ['ETag' => '"1"', 'etag' => '"2"', 'Content-MD5' => 'x', 'X-Empty' => '', 'x-a.b' => 'dot', 'X-9' => 'n'],
    ) {
        my $expected = HTTP::Headers->new;
        { local $HTTP::Headers::TRANSLATE_UNDERSCORE; $expected->push_header(@$pairs) if @$pairs }
        for my $pass (1, 2) {    # the second from the name cache
            my $got = LWP::Protocol::nodelay::_headers(@$pairs);
            is_deeply $got, $expected, "@$pairs[grep { !($_ % 2) } 0 .. $#$pairs] (pass $pass)";
            is $got->as_string, $expected->as_string, "as_string (pass $pass)";
        }
    }
};

subtest "the request's canonical URI as stock LWP works it out" => sub {
    require Scalar::Util;
    (my $upper = $base) =~ s/^http:/HTTP:/;
    for my $url ("$base/bytes/3", "$base/bytes/3", "$upper/bytes/3", "$base/%7e", $base) {
        my ($ref_req, $our_req) = (HTTP::Request->new(GET => $url), HTTP::Request->new(GET => $url));
        $kua->request($ref_req);
        with_nodelay(sub { $kua->request($our_req) });
        is $our_req->uri_canonical, $ref_req->uri_canonical, "$url: uri_canonical";
        is Scalar::Util::refaddr($our_req->uri_canonical) == Scalar::Util::refaddr($our_req->uri) ? 1 : 0,
           Scalar::Util::refaddr($ref_req->uri_canonical) == Scalar::Util::refaddr($ref_req->uri) ? 1 : 0,
           "$url: the URI object itself exactly when stock's is";
    }
};

subtest 'a fork child through LWP connects anew; the parent keeps its connection' => sub {
    my $count = sub {
        my ($c) = with_nodelay(sub { $kua->get("$base/stats") })->content =~ /"connections"\s*:\s*(\d+)/;
        return $c;
    };
    my $before = $count->();
    plan skip_all => 'no connection count in /stats' unless defined $before;
    my $line = TestServer::in_child(sub {
        my $res = eval { with_nodelay(sub { $kua->get("$base/bytes/10") }) };
        ($res ? $res->code . ' ' . length($res->content) : 'died') . ' ' . ($count->() // -1);
    });
    my ($code, $len, $in_child) = split ' ', $line;
    is "$code $len", '200 10', "the child's request through LWP";
    is $in_child, $before + 1, 'the child connected anew';
    is $count->(), $before + 1, "the parent's pooled connection is still its own and still works";
};

subtest 'connections are reused' => sub {
    my $before = with_nodelay(sub { $kua->get("$base/stats") })->content;
    with_nodelay(sub { $kua->get("$base/bytes/10") }) for 1 .. 20;
    my $after = with_nodelay(sub { $kua->get("$base/stats") })->content;
    my ($c0) = $before =~ /"connections"\s*:\s*(\d+)/;
    my ($c1) = $after =~ /"connections"\s*:\s*(\d+)/;
    SKIP: {
        skip 'no connection count in /stats', 1 unless defined $c0 && defined $c1;
        cmp_ok $c1 - $c0, '<=', 1, '21 requests on the same connection';
    }
};

done_testing;
