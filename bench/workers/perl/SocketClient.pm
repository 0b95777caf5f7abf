package SocketClient;
# The cheapest keep-alive HTTP/1.1 client written in Perl, under the lab's two Perl
# reference rows (bench/nodelay_bench/results.py REFERENCES): perl-socket is this client
# alone, so what is left per request is Perl's own cost of a socket round trip through its
# syswrite and sysread (a client doing its I/O in native code can go below it); lwp-floor is
# LWP::UserAgent over it (LWPFloor.pm). One socket to one origin with TCP_NODELAY; each
# request, head and body, goes out in one syswrite; the answer is read with sysread into
# a buffer kept for every request, until its head and Content-Length bytes are in. It
# reads Content-Length framed answers only (the lab's servers send them for a, b, c and
# e): a chunked answer, a closed connection or bytes after the answer die, and it follows
# no redirect. docs/performance.md, "Ceilings".
use strict;
use warnings;
use IO::Socket::INET;
use Socket qw(IPPROTO_TCP TCP_NODELAY SOL_SOCKET SO_RCVTIMEO);

# Bytes asked of each sysread. Perl grows the buffer to what is asked, and 64 KiB
# stays below glibc's mmap threshold (256 KiB made each request map and unmap).
use constant READ_BYTES => 64 * 1024;
use constant HEAD_END => "\r\n\r\n";
# "HTTP/1.1 200 ": where the status code starts.
use constant STATUS_AT => 9;

# A client of the origin $host:$port; every read waits at most $timeout seconds.
sub new {
    my ($class, $host, $port, $timeout) = @_;
    my $sock = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Proto => 'tcp',
        Timeout => $timeout) or die "socket-client: connect $host:$port: $!\n";
    setsockopt($sock, IPPROTO_TCP, TCP_NODELAY, 1) or die "socket-client: TCP_NODELAY: $!\n";
    # The kernel's receive timeout bounds each blocking sysread, at no cost per read.
    setsockopt($sock, SOL_SOCKET, SO_RCVTIMEO, pack('l!l!', $timeout, 0))
        or die "socket-client: SO_RCVTIMEO: $!\n";
    return bless { sock => $sock, buf => '', head_end => 0 }, $class;
}

# Sends $out, a whole request, with one syswrite and reads its answer: (status code,
# body). The answer's head stays readable through head() until the next request.
sub request {
    my ($self, $out) = @_;
    my $sock = $self->{sock};
    my $sent = syswrite($sock, $out);
    die "socket-client: short write: $!\n" unless defined $sent && $sent == length $out;
    $self->_read(0);
    my $end;
    $self->_read(length $self->{buf}) while ($end = index($self->{buf}, HEAD_END)) < 0;
    die "socket-client: not an HTTP/1.x answer\n" unless rindex($self->{buf}, 'HTTP/1.', 0) == 0;
    $self->{buf} =~ /^Content-Length:[ \t]*(\d+)\r$/mi && $-[0] < $end
        or die "socket-client: an answer without Content-Length\n";
    my $length = $1;
    my $total = $end + length(HEAD_END) + $length;
    $self->_read(length $self->{buf}) while length $self->{buf} < $total;
    die "socket-client: bytes after the answer\n" if length $self->{buf} > $total;
    $self->{head_end} = $end;
    return (substr($self->{buf}, STATUS_AT, 3) + 0, substr($self->{buf}, $total - $length));
}

# The last answer's head: its status line and header lines, without the blank line.
sub head { substr $_[0]{buf}, 0, $_[0]{head_end} }

# The next bytes of the answer, into the buffer at $at (0: replacing what it held).
sub _read {
    my ($self, $at) = @_;
    my $n = sysread($self->{sock}, $self->{buf}, READ_BYTES, $at);
    return if $n;
    die defined $n ? "socket-client: connection closed\n" : "socket-client: read: $!\n";
}

1;
