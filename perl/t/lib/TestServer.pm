package TestServer;
# Starts the embedded server (crates/nodelay-server) on a free loopback port
# for one test file and stops it when the object goes away.
use strict;
use warnings;
use IO::Handle;

# Seconds to wait for the server's "listening on URL" line.
use constant START_TIMEOUT => 30;
# The CA that signed the server's built-in certificate (for localhost and
# 127.0.0.1), as a PEM file: crates/nodelay-server/certs/ca.pem of the
# checkout this distribution sits in (perl/, or a copy in build/), or of the
# engine/ a distribution made by `make dist` carries.
use constant CA_FILE => do {
    require File::Spec;
    require File::Basename;
    my $dir = File::Spec->rel2abs(File::Basename::dirname(__FILE__));
    my $found;
    while (!$found) {
        my ($try) = grep { -r } map { "$dir/$_/nodelay-server/certs/ca.pem" } 'crates', 'engine/crates';
        if ($try) { $found = $try; last }
        my $up = File::Basename::dirname($dir);
        last if $up eq $dir;
        $dir = $up;
    }
    $found // '';
};

sub start {
    my ($class, @options) = @_;
    my $bin = $ENV{NODELAY_SERVER};
    return undef unless $bin && -x $bin;
    my $pid = open(my $out, '-|', $bin, '--host', '127.0.0.1', '--port', '0', @options) or return undef;
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

# Runs $code in a fork child and returns what it returned (one line of
# text; 'died' when it died), once the child has exited: the child's side
# of a fork-safety test.
sub in_child {
    my ($code) = @_;
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        my $line = eval { $code->() } // 'died';
        print {$w} "$line\n";
        close $w;
        require POSIX;
        POSIX::_exit(0);
    }
    close $w;
    chomp(my $line = <$r> // '');
    waitpid $pid, 0;
    return $line;
}

1;
