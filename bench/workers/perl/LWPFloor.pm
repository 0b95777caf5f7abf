package LWPFloor;
# The lab's lwp-floor row (a reference, not a peer: bench/nodelay_bench/results.py
# REFERENCES): LWP::UserAgent over the cheapest transport Perl has. One kept
# socket per origin with TCP_NODELAY, each request written with one syswrite,
# the answer read with sysread until its head and Content-Length bytes are in,
# its head split with one regex; then the HTTP::Response and LWP's own
# collect_once, as any LWP protocol must. What is left per request is
# LWP::UserAgent's own work, so this row bounds what any transport under LWP
# can reach beside stock LWP (docs/performance.md, "Ceilings"). It reads
# Content-Length framed answers only (the lab's servers send them for a, b, c
# and e) and dies on anything else, which LWP reports as a 500.
use strict;
use warnings;
use parent 'LWP::Protocol';
use HTTP::Response;
use IO::Socket::INET;
use Socket qw(IPPROTO_TCP TCP_NODELAY);

# Bytes asked of each sysread. Perl grows the buffer to what is asked, and 64 KiB
# stays below glibc's mmap threshold (256 KiB made each request map and unmap).
use constant READ_BYTES => 64 * 1024;

my %SOCKETS;

sub _socket {
    my ($host, $port, $timeout) = @_;
    my $key = "$host:$port";
    return $SOCKETS{$key} //= do {
        my $sock = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Proto => 'tcp',
            Timeout => $timeout) or die "lwp-floor: connect $key: $!\n";
        setsockopt($sock, IPPROTO_TCP, TCP_NODELAY, 1) or die "lwp-floor: TCP_NODELAY: $!\n";
        $sock;
    };
}

sub request {
    my ($self, $request, $proxy, $arg, $size, $timeout) = @_;
    my $uri = $request->uri;
    my ($host, $port) = ($uri->host, $uri->port);
    my $sock = _socket($host, $port, $timeout);
    my $content = $request->content;
    my $head = $request->method . ' ' . $uri->path_query . " HTTP/1.1\r\nHost: $host:$port\r\n"
        . $request->headers->as_string("\r\n")
        . (length $content ? 'Content-Length: ' . length($content) . "\r\n" : '') . "\r\n";
    my $out = $head . $content;
    my $sent = syswrite($sock, $out);
    die "lwp-floor: short write: $!\n" unless defined $sent && $sent == length $out;
    my $buf = '';
    my ($end, $length);
    while (1) {
        my $n = sysread($sock, $buf, READ_BYTES, length $buf);
        if (!$n) {
            delete $SOCKETS{"$host:$port"};
            die "lwp-floor: connection closed\n";
        }
        if (!defined $end) {
            $end = index($buf, "\r\n\r\n");
            if ($end < 0) { undef $end; next }
            ($length) = substr($buf, 0, $end) =~ /^Content-Length:\s*(\d+)/mi
                or die "lwp-floor: an answer without Content-Length\n";
        }
        last if length($buf) >= $end + 4 + $length;
    }
    my ($status_line, @lines) = split /\r\n/, substr($buf, 0, $end);
    my (undef, $code, $message) = split / /, $status_line, 3;
    my $response = HTTP::Response->new($code, $message, [map { split /:\s*/, $_, 2 } @lines]);
    $response->protocol('HTTP/1.1');
    $response->request($request);
    return $self->collect_once($arg, $response, substr($buf, $end + 4, $length));
}

1;
