use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Nodelay;
use TestServer;

# HTTPS against a server whose certificate a private CA signed: trusted
# when the client is given that CA (ca_file, HTTP::Tiny's SSL_ca_file,
# LWP's ssl_opts SSL_ca_file), refused with a Connect error when not.
my $server = TestServer->start('--tls') or plan skip_all => 'nodelay-server not built (run make)';
(my $base = $server->url) =~ s{//127\.0\.0\.1:}{//localhost:};
my $ca = TestServer::CA_FILE;
$ca or plan skip_all => "no crates/nodelay-server/certs/ca.pem above t/lib";

subtest 'native: ca_file' => sub {
    my $res = Nodelay->new(timeout => 5, ca_file => $ca)->get("$base/bytes/10");
    is $res->status, 200, 'trusted with the CA given';
    is length $res->content, 10, 'the body';
    my $e = eval { Nodelay->new(timeout => 5)->get("$base/bytes/10"); 1 } ? undef : $@;
    isa_ok $e, 'Nodelay::X::Connect', 'without it, the system store refuses the certificate:';
    is(Nodelay->new(timeout => 5, verify => 0)->get("$base/bytes/10")->status, 200, 'verify => 0 skips the check');
};

subtest 'Nodelay::Tiny: SSL_options => {SSL_ca_file}' => sub {
    require Nodelay::Tiny;
    my $res = Nodelay::Tiny->new(SSL_options => { SSL_ca_file => $ca })->get("$base/bytes/10");
    is $res->{status}, 200, 'trusted with the CA given';
    is(Nodelay::Tiny->new->get("$base/bytes/10")->{status}, 599, 'without it, a 599 as HTTP::Tiny gives');
};

subtest 'LWP::Protocol::nodelay: ssl_opts SSL_ca_file' => sub {
    eval { require LWP::UserAgent; require LWP::Protocol::nodelay; 1 } or plan skip_all => 'no LWP';
    my $with = LWP::Protocol::implementor('https');
    LWP::Protocol::implementor($_, 'LWP::Protocol::nodelay') for qw(http https);
    my $res = LWP::UserAgent->new(timeout => 5, ssl_opts => { SSL_ca_file => $ca })->get("$base/bytes/10");
    is $res->code, 200, 'trusted with the CA given' or diag $res->status_line;
    is(LWP::UserAgent->new(timeout => 5)->get("$base/bytes/10")->code, 500, 'without it, the 500 LWP gives a failed connection');
    LWP::Protocol::implementor('https', $with);
};

done_testing;
