package LWP::Protocol::nodelay;
# An LWP protocol implementation over the nodelay engine. After
#
#     LWP::Protocol::implementor($_, 'LWP::Protocol::nodelay') for qw(http https);
#
# every LWP::UserAgent sends its http and https requests through Nodelay:
# LWP keeps doing what it does above the wire (cookies, redirects,
# credentials, :content_file and :content_cb); the engine does the wire
# (pooled keep-alive connections, one write per small request, TLS).
use strict;
use warnings;
use parent 'LWP::Protocol';
use Nodelay;
use HTTP::Response;

our $VERSION = '0.01';

# One engine client per distinct setting (timeout, proxy, TLS checks), so
# connections are reused across requests and user agents. LWP makes a new
# protocol object per request, which cannot hold them. A new ithread's
# copies of these clients get handles of their own (Nodelay::CLONE).
my %CLIENTS;


sub _client {
    my ($self, $proxy, $timeout) = @_;
    my $ua = $self->{ua};
    my $ssl = $ua ? ($ua->ssl_opts('verify_hostname') // 1) : 1;
    my $ca = $ua ? $ua->ssl_opts('SSL_ca_file') : undef;
    my $proxy_url = defined $proxy ? "$proxy" : undef;
    my $key = join "\0", $timeout // '', $proxy_url // '', $ssl ? 1 : 0, $ca // '', $$;
    return $CLIENTS{$key} ||= Nodelay->new(
        timeout => $timeout,
        verify  => $ssl,
        # LWP sends its own User-Agent header (or none when agent is '') and
        # keeps its own cookie jar.
        agent   => '',
        cookies => 0,
        (defined $proxy_url ? (proxy => $proxy_url) : ()),
    );
}

sub request {
    my ($self, $request, $proxy, $arg, $size, $timeout) = @_;
    my $client = $self->_client($proxy, $timeout);
    my @headers;
    $request->headers->scan(sub { push @headers, @_ });
    my $content = $request->content_ref;
    if (ref $$content eq 'CODE') {    # dynamic content: collect it
        my $cb = $$content;
        my $body = '';
        while (defined(my $chunk = $cb->())) { last unless length $chunk; $body .= $chunk }
        $content = \$body;
    }
    my $method = $request->method;
    my $body = length($$content) || $method eq 'POST' || $method eq 'PUT' ? $$content : undef;
    # With :content_file or :content_cb (LWP's $arg) the body streams to
    # LWP's collector piece by piece and is never held whole.
    my $stream = defined $arg && (ref $arg || length $arg) && $method ne 'HEAD';
    my ($code, $handle, $data) = Nodelay::XS::request(
        $client->{handle}, $method, $request->uri->as_string, \@headers, $body, $method ne 'HEAD' && !$stream);
    if ($code) {
        my $e = eval { Nodelay::X->throw($code, $handle, $method, $request->uri->as_string) } || $@;
        # LWP turns a die here into a 500 response with Client-Warning; a
        # timeout says so, as LWP::Protocol::http's does.
        die _lwp_message($e);
    }
    my $res = Nodelay::Response->_new($handle, $data, $method, $request->uri->as_string);
    my $response = HTTP::Response->new($res->status, $res->reason, $res->_decoded_headers);
    $response->protocol($res->protocol);
    $response->request($request);
    return $self->collect_once($arg, $response, $data) unless $stream;
    my $piece_size = $size || Nodelay::STREAM_PIECE();
    # LWP's collector protocol: a reference to the next piece, an empty
    # one at the end. A failure mid-body dies there, and LWP records it in
    # X-Died as it does for its own connections.
    return $self->collect($arg, $response, sub {
        my ($c, $piece) = Nodelay::XS::response_read_chunk($res->{handle}, $piece_size);
        if ($c) {
            my $e = eval { Nodelay::X->throw($c, $piece, $method, $request->uri->as_string) } || $@;
            die _lwp_message($e);
        }
        return \$piece;
    });
}

sub _lwp_message {
    my ($e) = @_;
    return $e->is_timeout ? 'read timeout: ' . $e->message . "\n" : $e->message . "\n";
}

1;

__END__

=head1 NAME

LWP::Protocol::nodelay - LWP::UserAgent over the nodelay engine

=head1 SYNOPSIS

    use LWP::UserAgent;
    use LWP::Protocol::nodelay;
    LWP::Protocol::implementor($_, 'LWP::Protocol::nodelay') for qw(http https);
    my $res = LWP::UserAgent->new->get('http://127.0.0.1:8080/');

=cut
