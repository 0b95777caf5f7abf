package Nodelay::X;
# Exception objects: the engine's stable code (include/nodelay.h), its
# message, and the request. The classes are the Python front's
# (nodelay._exceptions) under Nodelay::X::, with the same hierarchy and the
# same messages (both come from the engine), so a failure reads the same in
# either language. Nodelay::X::Timeout and Nodelay::X::Connect are the
# short names of TimeoutException and the connect failures.
use strict;
use warnings;

use overload '""' => sub { $_[0]->message . "\n" }, fallback => 1;

# ABI code => class (as nodelay-py's errors.rs maps the same codes).
my %CLASS = (
    1  => 'Nodelay::X::InvalidURL',
    2  => 'Nodelay::X::UnsupportedProtocol',
    3  => 'Nodelay::X::LocalProtocolError',
    4  => 'Nodelay::X::ConnectTimeout',
    5  => 'Nodelay::X::ReadTimeout',
    6  => 'Nodelay::X::WriteTimeout',
    7  => 'Nodelay::X::PoolTimeout',
    8  => 'Nodelay::X::ConnectError',
    9  => 'Nodelay::X::TLSError',
    10 => 'Nodelay::X::ProxyError',
    11 => 'Nodelay::X::ReadError',
    12 => 'Nodelay::X::WriteError',
    13 => 'Nodelay::X::RemoteProtocolError',
    14 => 'Nodelay::X::HeaderTooLarge',
    15 => 'Nodelay::X::DecodingError',
    16 => 'Nodelay::X::Interrupted',
    17 => 'Nodelay::X::TransportError',    # closed
    18 => 'Nodelay::X::TransportError',    # body source
);

# The exception object of an ABI code, of its class.
sub new {
    my ($class, $code, $message, $method, $url) = @_;
    my $kind = $CLASS{$code} || 'Nodelay::X';
    return bless {
        code    => $code,
        name    => Nodelay::XS::code_name($code),
        message => $message,
        method  => $method,
        url     => $url,
    }, $kind;
}

sub throw { die shift->new(@_) }

sub code    { $_[0]{code} }
sub name    { $_[0]{name} }
sub message { $_[0]{message} }
sub method  { $_[0]{method} }
sub url     { $_[0]{url} }
sub is_timeout { 0 }

# The hierarchy: class => its parents.
my %ISA = (
    'Nodelay::X::TransportError'      => ['Nodelay::X'],
    'Nodelay::X::Timeout'             => ['Nodelay::X::TransportError'],
    'Nodelay::X::ConnectTimeout'      => ['Nodelay::X::Timeout'],
    'Nodelay::X::ReadTimeout'         => ['Nodelay::X::Timeout'],
    'Nodelay::X::WriteTimeout'        => ['Nodelay::X::Timeout'],
    'Nodelay::X::PoolTimeout'         => ['Nodelay::X::Timeout'],
    'Nodelay::X::NetworkError'        => ['Nodelay::X::TransportError'],
    'Nodelay::X::ReadError'           => ['Nodelay::X::NetworkError'],
    'Nodelay::X::WriteError'          => ['Nodelay::X::NetworkError'],
    'Nodelay::X::Connect'             => ['Nodelay::X::NetworkError'],
    'Nodelay::X::ConnectError'        => ['Nodelay::X::Connect'],
    'Nodelay::X::TLSError'            => ['Nodelay::X::ConnectError'],
    'Nodelay::X::ProxyError'          => ['Nodelay::X::TransportError'],
    'Nodelay::X::UnsupportedProtocol' => ['Nodelay::X::TransportError'],
    'Nodelay::X::ProtocolError'       => ['Nodelay::X::TransportError'],
    'Nodelay::X::LocalProtocolError'  => ['Nodelay::X::ProtocolError'],
    'Nodelay::X::RemoteProtocolError' => ['Nodelay::X::ProtocolError'],
    'Nodelay::X::HeaderTooLarge'      => ['Nodelay::X::RemoteProtocolError'],
    'Nodelay::X::DecodingError'       => ['Nodelay::X'],
    'Nodelay::X::InvalidURL'          => ['Nodelay::X'],
    'Nodelay::X::Interrupted'         => ['Nodelay::X'],
);
{
    no strict 'refs';
    @{"${_}::ISA"} = @{ $ISA{$_} } for keys %ISA;
}

package Nodelay::X::Timeout;
sub is_timeout { 1 }

1;
