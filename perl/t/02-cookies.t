use strict;
use warnings;
use lib 't/lib';
use Test::More;
use Nodelay;
use TestServer;

my $server = TestServer->start or plan skip_all => 'nodelay-server not built (run make)';
my $base = $server->url;
my $file = "cookies-test-$$.txt";
unlink $file;

{
    my $ua = Nodelay->new(timeout => 5, cookie_jar => $file);
    my $res = $ua->post("$base/login", form => { user => 'perl' });
    is $res->status, 200, 'logged in';
    like $res->content, qr/perl-\d+/, 'session issued';
    my ($session) = $res->content =~ /(perl-\d+)/;
    like $ua->get("$base/cookies")->content, qr/\Q$session\E/, 'cookie sent back';

    ok -e $file, 'jar autosaved';
    open my $fh, '<', $file or die $!;
    my @lines = <$fh>;
    close $fh;
    like $lines[0], qr/^# Netscape HTTP Cookie File/, 'Netscape format';
    ok((grep { /\tsession\t\Q$session\E$/ } @lines), 'cookie line');
}

{
    my $ua = Nodelay->new(timeout => 5, cookie_jar => $file);
    like $ua->get("$base/cookies")->content, qr/perl-\d+/, 'a new client reads the file';
    ok $ua->save_cookies, 'save_cookies';
}

unlink $file;
done_testing;
