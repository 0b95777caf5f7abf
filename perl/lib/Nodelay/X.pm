package Nodelay::X;
# Exception objects: the engine's stable code (include/nodelay.h), its
# message, and the request. Subclasses name the kinds a program handles.
use strict;
use warnings;

use overload '""' => sub { $_[0]->message . "\n" }, fallback => 1;

my %CLASS = (
    4  => 'Nodelay::X::Timeout',    # connect
    5  => 'Nodelay::X::Timeout',    # read
    6  => 'Nodelay::X::Timeout',    # write
    7  => 'Nodelay::X::Timeout',    # pool
    8  => 'Nodelay::X::Connect',
    16 => 'Nodelay::X::Interrupted',
);

sub throw {
    my ($class, $code, $message, $method, $url) = @_;
    my $kind = $CLASS{$code} || 'Nodelay::X';
    die bless {
        code    => $code,
        name    => Nodelay::XS::code_name($code),
        message => $message,
        method  => $method,
        url     => $url,
    }, $kind;
}

sub code    { $_[0]{code} }
sub name    { $_[0]{name} }
sub message { $_[0]{message} }
sub method  { $_[0]{method} }
sub url     { $_[0]{url} }
sub is_timeout { 0 }

package Nodelay::X::Timeout;
our @ISA = ('Nodelay::X');
sub is_timeout { 1 }

package Nodelay::X::Connect;
our @ISA = ('Nodelay::X');

package Nodelay::X::Interrupted;
our @ISA = ('Nodelay::X');

1;
