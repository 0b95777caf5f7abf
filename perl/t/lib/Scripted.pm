package Scripted;
# A scripted raw-socket server for byte-level tests: a child process that
# accepts connections on a loopback port and plays the same script on each
# (recv: read one request head; send: write bytes; sleep: wait; close;
# reset: close with RST). Stopped when the object goes away.
use strict;
use warnings;
use IO::Socket::INET;
use Socket qw(SOL_SOCKET SO_LINGER);
use POSIX ();

# Seconds a connection is kept open after its script ends (the client's
# deadline decides what happens first).
use constant HOLD_SECONDS => 10;
# A request head larger than this is not read further.
use constant MAX_HEAD_BYTES => 65536;

sub start {
    my ($class, @script) = @_;
    my $listen = IO::Socket::INET->new(
        Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1) or die "listen: $!";
    my $port = $listen->sockport;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        while (my $conn = $listen->accept) {
            _play($conn, @script);
        }
        POSIX::_exit(0);
    }
    close $listen;
    return bless { pid => $pid, url => "http://127.0.0.1:$port" }, $class;
}

sub _play {
    my ($conn, @script) = @_;
    binmode $conn;
    for my $step (@script) {
        my ($what, $arg) = @$step;
        if ($what eq 'recv') {
            my $head = '';
            while ($head !~ /\r\n\r\n/ && length $head < MAX_HEAD_BYTES) {
                my $n = sysread $conn, $head, 4096, length $head;
                return unless $n;
            }
        }
        elsif ($what eq 'send') {
            my $off = 0;
            while ($off < length $arg) {
                my $n = syswrite $conn, $arg, length($arg) - $off, $off;
                return unless defined $n;
                $off += $n;
            }
        }
        elsif ($what eq 'sleep') { select undef, undef, undef, $arg }
        elsif ($what eq 'close') { close $conn; return }
        elsif ($what eq 'reset') {
            setsockopt $conn, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0);
            close $conn;
            return;
        }
    }
    # Kept open: the client must act on the bytes, not on an end of stream.
    my $buf;
    my $until = time + HOLD_SECONDS;
    while (time < $until) {
        my $rin = '';
        vec($rin, fileno $conn, 1) = 1;
        last if select($rin, undef, undef, 0.2) && !sysread $conn, $buf, 4096;
    }
    close $conn;
}

sub url { $_[0]{url} }

sub DESTROY {
    my ($self) = @_;
    return unless $self->{pid};
    kill 'KILL', $self->{pid};
    waitpid $self->{pid}, 0;
    delete $self->{pid};
}

1;
