package TestServer;
# Starts the embedded server (crates/nodelay-server) on a free loopback port
# for one test file and stops it when the object goes away.
use strict;
use warnings;
use IO::Handle;

# Seconds to wait for the server's "listening on URL" line.
use constant START_TIMEOUT => 30;

sub start {
    my ($class) = @_;
    my $bin = $ENV{NODELAY_SERVER};
    return undef unless $bin && -x $bin;
    my $pid = open(my $out, '-|', $bin, '--host', '127.0.0.1', '--port', '0') or return undef;
    my $url;
    local $SIG{ALRM} = sub { die "no 'listening on' line from $bin\n" };
    alarm START_TIMEOUT;
    while (my $line = <$out>) {
        if ($line =~ /^listening on (\S+)/) { $url = $1; last }
    }
    alarm 0;
    $url =~ s{/\z}{};
    return bless { pid => $pid, out => $out, url => $url }, $class;
}

sub url { $_[0]{url} }

sub DESTROY {
    my ($self) = @_;
    return unless $self->{pid};
    kill 'TERM', $self->{pid};
    waitpid $self->{pid}, 0;
    delete $self->{pid};
}

1;
