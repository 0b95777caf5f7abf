package Nodelay::Response;
# A response: status and reason, the body (read whole), and header lookups
# answered from the received head bytes when asked (nothing is decoded
# before).
use strict;
use warnings;

sub CLONE_SKIP { 1 }

sub _new {
    my ($class, $handle, $content) = @_;
    return bless { handle => $handle, content => $content }, $class;
}

sub status  { Nodelay::XS::response_status($_[0]{handle}) }
sub code    { $_[0]->status }
sub reason  { Nodelay::XS::response_reason($_[0]{handle}) }
sub message { $_[0]->reason }
sub content { $_[0]{content} }

# In scalar context the first value of the header (case-insensitive name),
# undef when absent; in list context every value in received order.
sub header { Nodelay::XS::response_header($_[0]{handle}, $_[1]) }

# Every header as a list of name, value pairs in received order.
sub headers { [Nodelay::XS::response_headers($_[0]{handle})] }

sub is_success { my $s = $_[0]->status; $s >= 200 && $s < 300 }

sub DESTROY {
    my ($self) = @_;
    Nodelay::XS::response_free(delete $self->{handle}) if $self->{handle};
}

1;
