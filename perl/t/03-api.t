use strict;
use warnings;
use utf8;
use lib 't/lib';
use Test::More;
use Encode ();
use JSON::PP ();
use Nodelay;
use TestServer;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;
my $ua = Nodelay->new(timeout => 5);
my $have_message = eval { require HTTP::Response; require HTTP::Headers; 1 };

subtest 'post json' => sub {
    my $data = { name => 'Zoë', list => [1, 2, 3], nested => { ok => JSON::PP::true } };
    my $res = $ua->post("$base/echo", json => $data);
    is $res->header('content-type'), 'application/json', 'JSON content type';
    is_deeply(JSON::PP->new->utf8->decode($res->content), $data, "the document, UTF-8 encoded");
    $res = $ua->post("$base/echo", json => [1], headers => { 'content-type' => 'application/vnd.x+json' });
    is $res->header('content-type'), 'application/vnd.x+json', "the caller's content type wins";
};

subtest 'put and delete' => sub {
    is $ua->request('PUT', "$base/echo", { content => 'x' })->header('x-echo-method'), 'PUT', 'request';
    is $ua->put("$base/echo", content => 'y')->content, 'y', 'put';
    is $ua->delete("$base/echo")->header('x-echo-method'), 'DELETE', 'delete';
};

# The echo route answers with the request's body and Content-Type, so each
# case is a body in a declared (or undeclared) charset; HTTP::Message's
# decoded_content on the same bytes and header is the reference.
my @cases = (
    ['text/plain; charset=ISO-8859-1', Encode::encode('ISO-8859-1', 'café'), 'café'],
    ['text/plain; charset="utf-8"', Encode::encode('UTF-8', 'naïve ☃'), 'naïve ☃'],
    ['text/html', Encode::encode('UTF-8', '<p>€</p>'), '<p>€</p>'],
    ['text/plain', "caf\xe9", 'café'],
    ['text/plain', 'ascii only', 'ascii only'],
    ['application/xml; charset=windows-1252', "\x80 sign", '€ sign'],
    ['application/octet-stream', "\xff\xfe\x00", "\xff\xfe\x00"],
    ['application/json', Encode::encode('UTF-8', '{"a":"é"}'), Encode::encode('UTF-8', '{"a":"é"}')],
    ['text/plain; charset=utf-8', "bad \xff byte", "bad \x{fffd} byte"],
    # HTML without a charset parameter: its <meta> tags (the HTML prescan).
    ['text/html', qq{<html><head><meta charset="windows-1252"></head>\x80}, '<html><head><meta charset="windows-1252"></head>€'],
    ['text/html', qq{<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=ISO-8859-1">caf\xe9}, '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=ISO-8859-1">café'],
    ['text/html', qq{<!-- <meta charset=koi8-r> --><p title='>'><meta charset='iso-8859-7'>\xe1}, qq{<!-- <meta charset=koi8-r> --><p title='>'><meta charset='iso-8859-7'>α}],
    ['text/html', '<meta content="text/html; charset=utf-16">' . Encode::encode('UTF-8', 'é'), '<meta content="text/html; charset=utf-16">é'],
    ['text/html', qq{<meta charset="no-such-thing"><meta charset=koi8-r>\xc1}, qq{<meta charset="no-such-thing"><meta charset=koi8-r>а}],
    ['text/html', ('x' x 1100) . qq{<meta charset="koi8-r">\xc1}, ('x' x 1100) . '<meta charset="koi8-r">Á'],
    ['text/html', qq{<meta name="description" content="charset=koi8-r">\xc1}, qq{<meta name="description" content="charset=koi8-r">а}],
    # XML without one: its declaration, else UTF-8.
    ['application/xml', qq{<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>}, '<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>'],
    ['text/xml', Encode::encode('UTF-8', '<a>é</a>'), '<a>é</a>'],
);
subtest 'decoded_content' => sub {
    for my $case (@cases) {
        my ($type, $bytes, $text) = @$case;
        my $res = $ua->post("$base/echo", content => $bytes, headers => { 'Content-Type' => $type });
        is $res->content, $bytes, "$type: bytes";
        is $res->decoded_content, $text, "$type: decoded";
        if ($have_message) {
            my $ref = HTTP::Response->new(200, 'OK', ['Content-Type' => $type], $bytes);
            is $res->decoded_content, $ref->decoded_content, "$type: as HTTP::Message decodes it";
        }
    }
    my $res = $ua->post("$base/echo", content => "caf\xe9", headers => { 'Content-Type' => 'text/plain' });
    is $res->decoded_content(charset => 'none'), "caf\xe9", "charset => 'none' keeps the bytes";
    is $res->decoded_content(charset => 'UTF-8'), "caf\x{fffd}", 'charset option';
    $res = $ua->post("$base/echo", content => "bad \xff", headers => { 'Content-Type' => 'text/plain; charset=utf-8' });
    ok !eval { $res->decoded_content(raise_error => 1); 1 }, 'raise_error croaks';
    like $@, qr/not valid utf-8/i, 'naming the charset';
    $res = $ua->post("$base/echo", content => 'x', headers => { 'Content-Type' => 'text/plain; charset=no-such' });
    ok !eval { $res->decoded_content; 1 }, 'unknown charset croaks';
    like $@, qr/unknown charset 'no-such'/, 'naming it';
};

subtest 'as_http_response' => sub {
    plan skip_all => 'HTTP::Message not installed' unless $have_message;
    my $res = $ua->get("$base/bytes/300", headers => { 'X-A' => 'b' });
    my $http = $res->as_http_response;
    isa_ok $http, 'HTTP::Response';
    is $http->code, 200, 'code';
    is $http->message, 'OK', 'message';
    is $http->protocol, 'HTTP/1.1', 'protocol';
    is length($http->content), 300, 'content';
    is $http->header('Content-Length'), 300, 'headers';
    is $http->request->method, 'GET', 'request method';
    is $http->request->uri, "$base/bytes/300", 'request url';
    is $http->base, "$base/bytes/300", 'base';
};

subtest 'as_http_response without HTTP::Message' => sub {
    # A child whose @INC hook hides HTTP::Response and HTTP::Request.
    my $code = 'BEGIN { unshift @INC, sub { die "hidden\n" if $_[1] =~ m{^HTTP/} } } '
        . 'use Nodelay; my $r = Nodelay->new->get(shift); eval { $r->as_http_response }; print $@';
    open my $child, '-|', $^X, '-Mblib', '-e', $code, "$base/bytes/1" or die "fork: $!";
    my $out = join '', <$child>;
    close $child;
    like $out, qr/as_http_response needs HTTP::Response \(HTTP::Message, Debian libhttp-message-perl\)/, 'a clear message';
};

subtest 'HTTP::Cookies jar object' => sub {
    plan skip_all => 'HTTP::Cookies not installed' unless eval { require HTTP::Cookies; 1 };
    # In a directory removed at exit: the jar autosaves again when it is
    # destroyed, after this subtest.
    require File::Temp;
    my $file = File::Temp::tempdir(CLEANUP => 1) . '/cookies.txt';
    my $jar = HTTP::Cookies->new(file => $file, autosave => 1, ignore_discard => 1);
    my $client = Nodelay->new(timeout => 5, cookie_jar => $jar);
    my $res = $client->post("$base/login", form => { user => 'obj' });
    my ($session) = $res->content =~ /(obj-\d+)/;
    ok $session, 'logged in';
    like $jar->as_string, qr/session=\Q$session\E/, 'the object got the Set-Cookie';
    like $client->get("$base/cookies")->content, qr/\Q$session\E/, 'the object gives the Cookie header';
    like $client->get("$base/cookies", headers => { Cookie => 'own=1' })->content, qr/own/, "the caller's Cookie header wins";
    ok $client->save_cookies, 'save_cookies asks the object';
    my $again = HTTP::Cookies->new(file => $file, ignore_discard => 1);
    like $again->as_string, qr/\Q$session\E/, 'saved by the object (its own format)';
    ok !eval { Nodelay->new(cookie_jar => bless {}, 'NotAJar'); 1 }, 'an object without the methods';
    like "$@", qr/cookie_jar must be/, 'is refused';
};

done_testing;
