use strict;
use warnings;
use lib 't/lib';
use Test::More;
use B ();
use JSON::PP ();
use Nodelay;
use TestServer;

# Nodelay::Response->json against its reference, JSON::PP->new->utf8
# ->allow_nonref->decode on the same bytes: every document comes back from
# the server's /echo route, and both values must be the same, down to the
# kind of each scalar (an integer stays an integer, a string a string).
my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;
my $ua = Nodelay->new(timeout => 5);
my $reference = JSON::PP->new->utf8->allow_nonref;

# What a scalar is, as Perl keeps it: the shape is_deeply does not see.
sub shape {
    my ($v) = @_;
    return 'undef' unless defined $v;
    if (my $ref = ref $v) {
        return "$ref:" . ($$v ? 'true' : 'false') if $ref eq 'JSON::PP::Boolean';
        return '[' . join(',', map { shape($_) } @$v) . ']' if $ref eq 'ARRAY';
        return '{' . join(',', map { "$_=" . shape($v->{$_}) } sort keys %$v) . '}';
    }
    my $flags = B::svref_2object(\$v)->FLAGS;
    if ($flags & B::SVf_POK()) { return utf8::is_utf8($v) ? 'chars' : 'bytes' }
    # JSON::PP gives 1E+2 as an integer and 2.5 as a float; that choice is
    # below what a program sees (both print and compare as numbers).
    return 'num' if $flags & (B::SVf_NOK() | B::SVf_IOK());
    return 'other';
}

sub echo_json {
    my ($doc) = @_;
    return $ua->post("$base/echo", content => $doc, headers => { 'content-type' => 'application/json' });
}

my @documents = (
    '{"id": 1, "ok": true, "items": [{"i":0,"name":"item-0","tags":["a","b"]}]}',
    '[]', '{}', '[[], {}, [[]], {"a": {}}]',
    ' [1, -1, 0, -0, 9223372036854775807, -9223372036854775808] ',
    '[0.1, -1.5e-3, 1E+2, 2.5, 1e400, -0.0, 123456789.125]',
    '["plain", "tab\there", "q\"uote", "back\\\\slash", "sl\/ash", "\b\f\n\r\t"]',
    '["caf\u00e9", "\u2603 snow", "\ud83d\ude00 pair", "\u0000 nul"]',
    qq(["raw caf\xc3\xa9", "\xe2\x98\x83"]),
    qq({"caf\xc3\xa9": 1, "k\\u00e9y": 2, "\\n": 3}),
    '{"a": 1, "b": 2, "a": 3}',
    '"a lone string"', '42', '-7.5', 'true', 'false', 'null',
    '[true, false, null, {"t": true}]',
    '[18446744073709551616, -9223372036854775809]',
);

for my $doc (@documents) {
    my $res = echo_json($doc);
    my $want = $reference->decode($res->content);
    my $got = $res->json;
    is_deeply($got, $want, "value: $doc");
    is(shape($got), shape($want), "kinds: $doc");
}

subtest 'the fast path takes what it can and leaves the rest' => sub {
    my ($ok, $value) = Nodelay::XS::json_decode('{"a": [1, "\u00e9"]}');
    is($ok, 1, 'a valid document is built by the engine');
    is_deeply($value, { a => [1, "\x{e9}"] }, 'its value');
    is_deeply([Nodelay::XS::json_decode('[1,]')], [], 'an invalid one is left to JSON::PP');
    is_deeply([Nodelay::XS::json_decode('[18446744073709551616]')], [], 'so is an integer past 64 bits');
};

subtest 'integers are integers, floats are floats' => sub {
    my $v = echo_json('[7, -9223372036854775808, 7.0, 1e2]')->json;
    my @flags = map { B::svref_2object(\$_)->FLAGS } @$v;
    ok($flags[0] & B::SVf_IOK() && !($flags[0] & B::SVf_NOK()), '7 is an IV');
    ok($flags[1] & B::SVf_IOK(), 'the smallest int64 is an IV');
    is($v->[1], '-9223372036854775808', 'and keeps every digit');
    ok($flags[2] & B::SVf_NOK(), '7.0 is an NV');
    is("$v->[3]", '100', '1e2 prints as 100');
};

subtest 'a document of the lab (workload b)' => sub {
    my $res = $ua->get("$base/json/16384");
    my $got = $res->json;
    is_deeply($got, $reference->decode($res->content), 'the same value');
    is(shape($got), shape($reference->decode($res->content)), 'the same kinds');
    ok(ref $got->{ok} && $got->{ok}, 'ok is JSON::PP::true');
};

subtest 'nesting past the fast path is JSON::PP\'s to judge' => sub {
    my $deep = '[' x 300 . ']' x 300;
    my $res = echo_json($deep);
    my $want = eval { $reference->decode($deep) };
    my $want_error = $@;
    my $got = eval { $res->json };
    my $got_error = $@;
    s/ at \S+ line \d+\.\n\z// for $want_error, $got_error;
    is($got_error, $want_error, 'the same outcome as JSON::PP (its depth limit)');
};

# Invalid documents croak with JSON::PP's own message (its "at FILE line N"
# names the caller, so that part is left out).
for my $doc ('["\ud800 lone"]', '["\udc00 low"]', '["\ud800\u0041"]', '[1,]', '{"a":1,}', '[01]', '', '   ', '[NaN]', '{"a" 1}', '[1] [2]', "[\"\xff\"]", "\xef\xbb\xbf[1]") {
    my $res = echo_json($doc);
    my $want = eval { $reference->decode($doc) };
    my $want_error = $@;
    my $got = eval { $res->json };
    my $got_error = $@;
    s/ at \S+ line \d+\.?\n\z// for $want_error, $got_error;
    is_deeply([$got, $got_error], [$want, $want_error], "the same outcome as JSON::PP: " . ($doc =~ s/[^\x20-\x7e]/?/gr));
}

subtest 'the value belongs to the caller' => sub {
    my $res = echo_json('{"list": [1, 2]}');
    my $first = $res->json;
    push @{ $first->{list} }, 3;
    is_deeply($res->json, { list => [1, 2] }, 'each call builds a new value');
};

done_testing;
