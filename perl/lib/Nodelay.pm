package Nodelay;
# An HTTP client for Perl over the nodelay Rust engine (crates/nodelay-ffi):
# keep-alive connections, TCP_NODELAY, deadlines, a Netscape cookies.txt jar.
use strict;
use warnings;

our $VERSION = '0.01';

require XSLoader;
XSLoader::load('Nodelay', $VERSION);

use Nodelay::Response;
use Nodelay::X;
use Scalar::Util qw(blessed refaddr weaken);

# The ABI this module was written against (include/nodelay.h).
use constant ABI_VERSION => 1;

my %HTTP2 = (off => 0, negotiate => 1, prior_knowledge => 2);

# Bytes asked of the engine per data_callback piece: its socket reads are
# 64 KiB, so a piece is at most one read's worth of decoded body.
use constant STREAM_PIECE => 65536;

# Every live client of this thread, by address (weak references), so that
# CLONE can find the copies a new ithread received.
my %LIVE;

# A new ithread receives a copy of every client object, holding the same
# engine pointer as the parent's. Each copy gets its own handle over the
# same engine client (its pool and jar shared by reference count), so each
# thread frees only what it holds and the parent's client keeps working.
sub CLONE {
    my @clients = grep { defined } values %LIVE;
    %LIVE = ();
    for my $self (@clients) {
        next unless $self->{handle};
        my ($code, $handle) = Nodelay::XS::client_dup($self->{handle});
        # Without a handle of its own the copy must not free the parent's.
        $self->{handle} = $code ? undef : $handle;
        _register($self);
    }
}

sub _register {
    my ($self) = @_;
    weaken($LIVE{ refaddr $self } = $self);
}

sub new {
    my ($class, %args) = @_;
    Nodelay::X->throw(1000, 'libnodelay_ffi ABI ' . Nodelay::XS::abi_version() . ', this module needs ' . ABI_VERSION)
        if Nodelay::XS::abi_version() != ABI_VERSION;
    my $http2 = $args{http2} // 'off';
    $http2 = $http2 ? 'negotiate' : 'off' if $http2 =~ /\A[01]\z/;
    defined $HTTP2{$http2} or Nodelay::X->throw(1000, "http2 must be off, negotiate or prior_knowledge, not $http2");
    # cookie_jar: a cookies.txt path (the engine's own jar, autosaved), or an
    # object with HTTP::Cookies' add_cookie_header/extract_cookies (kept by
    # that object; the engine's jar is then off). cookies => 0: no cookies at
    # all (for callers that keep their own, as LWP::UserAgent does).
    my $jar = $args{cookie_jar};
    my $jar_object = blessed($jar) ? $jar : undef;
    Nodelay::X->throw(1000, 'cookie_jar must be a file name or an object with add_cookie_header and extract_cookies')
        if ($jar_object && !($jar->can('add_cookie_header') && $jar->can('extract_cookies'))) || (ref $jar && !$jar_object);
    # max_connections_per_host: connections open at once to one origin (busy,
    # idle and being opened). rate_limit => { per_second => R, burst => B,
    # per_host => 1 }: requests started per second, per origin (or for the
    # whole client), after a burst of B (default a fifth of a second's worth,
    # at least 1); a request waits for its turn within the pool timeout.
    my $rate = $args{rate_limit};
    Nodelay::X->throw(1000, 'rate_limit must be a hash reference with per_second')
        if defined $rate && (ref $rate ne 'HASH' || !defined $rate->{per_second});
    my ($code, $handle) = Nodelay::XS::client_new(
        $args{timeout},
        (exists $args{verify} ? ($args{verify} ? 1 : 0) : 1),
        $args{agent},
        ($jar_object ? undef : $jar),
        $args{proxy},
        $HTTP2{$http2},
        ($jar_object || (exists $args{cookies} && !$args{cookies}) ? 0 : 1),
        # ca_file: a PEM bundle of the CAs to trust instead of the system's.
        $args{ca_file},
        $args{max_connections_per_host} // 0,
        ($rate ? $rate->{per_second} : 0),
        ($rate ? $rate->{burst} // 0 : 0),
        ($rate && exists $rate->{per_host} && !$rate->{per_host} ? 0 : 1),
        # accept_encoding: sent when a request has no Accept-Encoding; undef:
        # every coding the engine decodes; '': none.
        $args{accept_encoding},
        # local_address: the IP address connections are made from.
        $args{local_address},
    );
    Nodelay::X->throw($code, $handle) if $code;
    my $self = bless { handle => $handle, jar => $jar_object }, $class;
    _register($self);
    return $self;
}

# request(METHOD, URL, {headers => {...}, content => BYTES | CODE | form =>
# {...} | json => DATA, trailer_callback => CODE, data_callback => CODE}): a
# Nodelay::Response (any status), or a Nodelay::X thrown. A CODE content is
# called for each piece of the body while it is sent (undef or '' ends it):
# chunked, unless the headers give a Content-Length; trailer_callback's
# fields follow the last chunk. With data_callback the body is not kept: the callback
# is called with each decoded piece and the response (its head readable) as
# the pieces arrive, and the response's content is empty.
sub request {
    my ($self, $method, $url, $opts) = @_;
    $opts ||= {};
    my ($headers, $body) = $self->_prepare($method, $url, $opts);
    my $jar = $self->{jar};
    my $data_callback = $opts->{data_callback};
    my $want_body = $method ne 'HEAD' && !$data_callback;
    my ($code, $response, $content) = ref $body eq 'CODE'
        ? Nodelay::XS::request_streamed($self->{handle}, $method, $url, $headers, $body,
            _trailer_pairs($opts->{trailer_callback}), $want_body)
        : Nodelay::XS::request($self->{handle}, $method, $url, $headers, $body, $want_body);
    Nodelay::X->throw($code, $response, $method, $url) if $code;
    my $res = Nodelay::Response->_new($response, $content, $method, $url);
    $jar->extract_cookies($res->as_http_response) if $jar && defined $res->header('Set-Cookie');
    $res->_stream($data_callback) if $data_callback && $method ne 'HEAD';
    return $res;
}

# The header list (name, value, ...) and body a request is sent with: the
# caller's headers (a hashref, an arrayref value sending the field once per
# value, or an arrayref of name, value pairs sent in that order), the body
# of content, form or json with its Content-Type (unless the headers have
# one), and the Cookie header of a jar object.
use constant FORM_TYPE => 'application/x-www-form-urlencoded';
sub _prepare {
    my ($self, $method, $url, $opts) = @_;
    my @headers;
    my $headers = $opts->{headers} || {};
    if (ref $headers eq 'ARRAY') { @headers = @$headers; $headers = {@headers} }
    else {
        for my $name (sort keys %$headers) {
            my $value = $headers->{$name};
            push @headers, map { ($name, $_) } ref $value eq 'ARRAY' ? @$value : $value;
        }
    }
    my $body = $opts->{content};
    my $type;
    if (my $form = $opts->{form}) {
        $body = _urlencode($form);
        $type = FORM_TYPE;
    }
    elsif (exists $opts->{json}) {
        $body = _json()->encode($opts->{json});
        $type = 'application/json';
    }
    push @headers, 'Content-Type', $type
        if $type && !grep { lc $_ eq 'content-type' } keys %$headers;
    push @headers, _jar_cookie($self->{jar}, $method, $url, $headers) if $self->{jar};
    return (\@headers, $body);
}

# get_many(\@urls, concurrency => N, deadline => SECONDS, headers => {...}):
# GETs every URL with at most N requests in flight (default 32), each read
# whole, and returns one result per URL in the order given: a
# Nodelay::Response, or the Nodelay::X object of a request that failed
# (not thrown). See request_many.
sub get_many {
    my ($self, $urls, %opts) = @_;
    ref $urls eq 'ARRAY' or Nodelay::X->throw(1000, 'get_many needs an array reference of URLs');
    my %request = exists $opts{headers} ? (headers => delete $opts{headers}) : ();
    return $self->request_many([map { ['GET', $_, \%request] } @$urls], %opts);
}

# request_many([[METHOD, URL, {headers, content, form, json}], ...],
# concurrency => N, deadline => SECONDS): every request sent by the engine at
# once, at most N in flight (default 32; the client's
# max_connections_per_host and rate_limit hold too), each read whole; with
# a deadline the whole batch ends within it (a request still running fails
# with a Nodelay::X::Timeout naming it). Returns one result per request in
# the order given: a Nodelay::Response, or the Nodelay::X object of a
# request that failed (not thrown; the others are unaffected). The calling
# thread waits in the engine, running %SIG handlers as a single request
# does: one that dies stops the batch and its error is thrown.
sub request_many {
    my ($self, $requests, %opts) = @_;
    ref $requests eq 'ARRAY' or Nodelay::X->throw(1000, 'request_many needs an array reference of requests');
    my $concurrency = $opts{concurrency} // 0;
    Nodelay::X->throw(1000, "concurrency must be an integer of at least 1, not $concurrency")
        if exists $opts{concurrency} && !($concurrency =~ /\A[0-9]+\z/ && $concurrency >= 1);
    my $deadline = $opts{deadline} // -1;
    Nodelay::X->throw(1000, "deadline must be a number of seconds, not $deadline")
        unless $deadline =~ /\A(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+|-1)\z/;
    my (@batch, %shared);
    for my $request (@$requests) {
        ref $request eq 'ARRAY' && @$request >= 2
            or Nodelay::X->throw(1000, 'each request must be [METHOD, URL] or [METHOD, URL, {options}]');
        my ($method, $url, $request_opts) = @$request;
        $request_opts ||= {};
        Nodelay::X->throw(1000, 'request_many sends whole bodies: no data_callback or code content')
            if $request_opts->{data_callback} || ref $request_opts->{content} eq 'CODE';
        my ($headers, $body) = $self->_prepare($method, $url, $request_opts);
        # Requests with equal headers share one list: the engine converts it once.
        $headers = $shared{ join "\0", @$headers } ||= $headers;
        push @batch, [$method, $url, $headers, $body];
    }
    my ($code, $outcomes) = Nodelay::XS::request_many($self->{handle}, \@batch, $concurrency, $deadline);
    Nodelay::X->throw($code, $outcomes) if $code;
    my $jar = $self->{jar};
    my @results;
    for my $i (0 .. $#batch) {
        my ($got, $response, $content) = @{ $outcomes->[$i] };
        my ($method, $url) = @{ $batch[$i] };
        if ($got) { push @results, Nodelay::X->new($got, $response, $method, $url); next }
        my $res = Nodelay::Response->_new($response, $content, $method, $url);
        $jar->extract_cookies($res->as_http_response) if $jar && defined $res->header('Set-Cookie');
        push @results, $res;
    }
    return @results;
}

# trailer_callback returns a hashref (fields in name order; an arrayref value
# repeats the field) or an arrayref of name, value pairs (sent in that
# order); the shim takes the pairs.
sub _trailer_pairs {
    my ($callback) = @_;
    return undef unless $callback;
    return sub {
        my $fields = $callback->();
        return $fields if ref $fields eq 'ARRAY';
        die "trailer_callback must return a hash or array reference\n" unless ref $fields eq 'HASH';
        return [map { my $k = $_; map { ($k, $_) } ref $fields->{$k} eq 'ARRAY' ? @{ $fields->{$k} } : $fields->{$k} }
            sort keys %$fields];
    };
}

# A GET without options and without a jar object (the common case, and the
# measured one) goes straight to the shim: no option hash, no header list.
my @NO_HEADERS;
sub get {
    my ($self, $url, %opts) = @_;
    return $self->request('GET', $url, \%opts) if @_ > 2 || $self->{jar};
    return $self->_request_pairs('GET', $url, \@NO_HEADERS, undef);
}

# A request with its headers already an arrayref of name, value pairs and
# its body bytes (or undef), body read whole (none for HEAD): the shim
# straight away, without request's option handling (a jar object still
# goes through request). For get and Nodelay::Tiny.
sub _request_pairs {
    my ($self, $method, $url, $pairs, $body) = @_;
    return $self->request($method, $url, { headers => $pairs, content => $body }) if $self->{jar};
    my ($code, $response, $content) = Nodelay::XS::request($self->{handle}, $method, $url, $pairs, $body, $method ne 'HEAD');
    Nodelay::X->throw($code, $response, $method, $url) if $code;
    return Nodelay::Response::_new('Nodelay::Response', $response, $content, $method, $url);
}
sub head { my ($self, $url, %opts) = @_; $self->request('HEAD', $url, \%opts) }
# A POST of a form alone (workload e's shape) goes straight to the shim as
# get does (_request_pairs sends a jar object's through request): the same
# header list and body request would build, without its option hash.
my @FORM_HEADERS = ('Content-Type', FORM_TYPE);
sub post {
    return $_[0]->_request_pairs('POST', $_[1], \@FORM_HEADERS, _urlencode($_[3]))
        if @_ == 4 && ref $_[3] && $_[2] eq 'form';
    my ($self, $url, %opts) = @_;
    $self->request('POST', $url, \%opts);
}
sub put  { my ($self, $url, %opts) = @_; $self->request('PUT',  $url, \%opts) }
sub delete { my ($self, $url, %opts) = @_; $self->request('DELETE', $url, \%opts) }

# The Cookie header an HTTP::Cookies-like jar object gives this request (none
# when the caller set one).
sub _jar_cookie {
    my ($jar, $method, $url, $headers) = @_;
    return () if grep { lc $_ eq 'cookie' } keys %$headers;
    require HTTP::Request;
    my $req = HTTP::Request->new($method, $url);
    $jar->add_cookie_header($req);
    my $cookie = $req->header('Cookie');
    return defined $cookie ? ('Cookie', $cookie) : ();
}

my $JSON;
sub _json { $JSON ||= do { require JSON::PP; JSON::PP->new->utf8->canonical } }

# The peer of the connection the latest request used, while it is kept
# for the next request: (IP address, port) in list context, "address:port"
# in scalar context (HTTP::Tiny's connected); () / undef when none is kept
# (it was closed, the request went over HTTP/2, or none was made).
sub kept_peer {
    my ($self) = @_;
    my ($host, $port) = Nodelay::XS::client_kept_peer($self->{handle});
    return unless defined $host;
    return wantarray ? ($host, $port) : "$host:$port";
}

# Writes the cookie jar to its file now (it is also written after every
# response that changed it, and when the client is destroyed); a jar object
# is asked to save itself.
sub save_cookies {
    my ($self) = @_;
    if ($self->{jar}) { $self->{jar}->save; return 1 }
    my ($code, $message) = Nodelay::XS::client_save_cookies($self->{handle});
    Nodelay::X->throw($code, $message) if $code;
    return 1;
}

sub DESTROY {
    my ($self) = @_;
    delete $LIVE{ refaddr $self };
    Nodelay::XS::client_free(delete $self->{handle}) if $self->{handle};
}

# application/x-www-form-urlencoded, pairs in key order (a hashref) or as
# given (an arrayref of name, value, ...): HTTP::Tiny's escapes; a byte string
# is sent as its bytes, as HTTP::Request::Common does (the XS).
sub _urlencode {
    my ($form) = @_;
    return Nodelay::XS::form_urlencode(ref $form eq 'HASH' ? [map { ($_, $form->{$_}) } sort keys %$form] : $form);
}

1;

__END__

=head1 NAME

Nodelay - HTTP client over the nodelay Rust engine

=head1 SYNOPSIS

    use Nodelay;
    my $ua = Nodelay->new(timeout => 10, agent => 'me/1.0', cookie_jar => 'cookies.txt');
    my $res = $ua->get('http://127.0.0.1:8080/');
    print $res->status, ' ', $res->header('Content-Type'), "\n" if $res->is_success;
    $ua->post($url, form => { user => 'me' });
    $ua->post($url, content => $bytes, headers => { 'Content-Type' => 'application/json' });

Failures are thrown as L<Nodelay::X> objects: C<Nodelay::X::Timeout>,
C<Nodelay::X::Connect>, C<Nodelay::X::Interrupted> and C<Nodelay::X> itself.

Politeness per host: C<< max_connections_per_host => 4 >> bounds the
connections open at once to one origin; C<< rate_limit => { per_second => 10,
burst => 2, per_host => 1 } >> spaces the requests each origin receives (see
docs/pool.md). A request that cannot get a connection or its turn within the
pool timeout throws C<Nodelay::X::Timeout>.

=cut
