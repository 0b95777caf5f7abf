package LWPFloor;
# The lab's lwp-floor row (a reference, not a peer: bench/nodelay_bench/results.py
# REFERENCES): LWP::UserAgent over the cheapest transport written in Perl
# (SocketClient.pm, the perl-socket row's client: one kept socket per origin with TCP_NODELAY, one syswrite per
# request, sysread until the head and Content-Length bytes are in); then the
# HTTP::Response and LWP's own collect_once, as any LWP protocol must. What is left per
# request is LWP::UserAgent's own work, so this row bounds what any transport under LWP
# can reach beside stock LWP (docs/performance.md, "Ceilings"). It reads Content-Length
# framed answers only (the lab's servers send them for a, b, c and e) and dies on
# anything else, which LWP reports as a 500.
use strict;
use warnings;
use parent 'LWP::Protocol';
use HTTP::Response;
use SocketClient;

my %CLIENTS;

sub request {
    my ($self, $request, $proxy, $arg, $size, $timeout) = @_;
    my $uri = $request->uri;
    my ($host, $port) = ($uri->host, $uri->port);
    my $key = "$host:$port";
    my $client = $CLIENTS{$key} //= SocketClient->new($host, $port, $timeout);
    my $content = $request->content;
    my $out = $request->method . ' ' . $uri->path_query . " HTTP/1.1\r\nHost: $key\r\n"
        . $request->headers->as_string("\r\n")
        . (length $content ? 'Content-Length: ' . length($content) . "\r\n" : '') . "\r\n"
        . $content;
    my ($code, $body) = eval { $client->request($out) } or do {
        delete $CLIENTS{$key};    # a later request opens a new connection
        die $@;
    };
    my ($status_line, @lines) = split /\r\n/, $client->head;
    my (undef, undef, $message) = split / /, $status_line, 3;
    my $response = HTTP::Response->new($code, $message, [map { split /:\s*/, $_, 2 } @lines]);
    $response->protocol('HTTP/1.1');
    $response->request($request);
    return $self->collect_once($arg, $response, $body);
}

1;
