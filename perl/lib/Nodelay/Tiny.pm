package Nodelay::Tiny;
# HTTP::Tiny's interface over the nodelay engine: the same constructor
# options (the common subset) and methods, the same response hashrefs
# ({success, status, reason, content, headers, url, protocol, redirects}),
# failures as status 599 responses. For modules that take an HTTP::Tiny-like
# agent.
use strict;
use warnings;
use Nodelay;
use Scalar::Util qw(blessed);

our $VERSION = '0.01';

# HTTP::Tiny's defaults: seconds of inactivity, and redirects followed.
use constant DEFAULT_TIMEOUT      => 60;
use constant DEFAULT_MAX_REDIRECT => 5;

# Status and reason of a request that failed before an answer (HTTP::Tiny's).
use constant INTERNAL_STATUS => 599;
use constant INTERNAL_REASON => 'Internal Exception';

my %REDIRECT = map { $_ => 1 } 301, 302, 303, 307, 308;

sub _default_agent { 'Nodelay-Tiny/' . $VERSION }

sub new {
    my ($class, %args) = @_;
    my $agent = $args{agent} // _default_agent();
    $agent .= _default_agent() if $agent =~ / \z/;    # HTTP::Tiny's rule
    my $self = bless {
        agent           => $agent,
        timeout         => $args{timeout} // DEFAULT_TIMEOUT,
        max_redirect    => $args{max_redirect} // DEFAULT_MAX_REDIRECT,
        default_headers => $args{default_headers} || {},
        verify_SSL      => $args{verify_SSL} // $args{verify_ssl} // 1,
        cookie_jar      => $args{cookie_jar},
        keep_alive      => $args{keep_alive} // 1,
        max_size        => $args{max_size},
        SSL_options     => $args{SSL_options} || {},
        local_address   => $args{local_address},
    }, $class;
    $self->_set_proxies(\%args);
    $self->_build_client;
    return $self;
}

# The proxies as HTTP::Tiny's _set_proxies sets them: each of proxy,
# http_proxy and https_proxy from its argument when given (undef: none),
# else from the environment (all_proxy, http_proxy, https_proxy, in either
# case; HTTP_PROXY not under CGI), http_proxy and https_proxy defaulting to
# proxy; no_proxy an arrayref or a comma-separated string (else $ENV{no_proxy})
# of host suffixes that go direct. A malformed proxy URL croaks with
# HTTP::Tiny's message.
sub _set_proxies {
    my ($self, $args) = @_;
    my $proxy = exists $args->{proxy} ? $args->{proxy} : $ENV{all_proxy} || $ENV{ALL_PROXY};
    _check_proxy('generic proxy', $proxy) if defined $proxy;
    my $http = $args->{http_proxy};
    if (!exists $args->{http_proxy}) {
        # Under CGI, HTTP_PROXY comes from the request's Proxy header.
        my $upper = $ENV{REQUEST_METHOD} ? $ENV{CGI_HTTP_PROXY} : $ENV{HTTP_PROXY};
        $http = $ENV{http_proxy} || $upper || $proxy;
    }
    _check_proxy(http_proxy => $http) if defined $http;
    my $https = exists $args->{https_proxy} ? $args->{https_proxy} : $ENV{https_proxy} || $ENV{HTTPS_PROXY} || $proxy;
    _check_proxy(https_proxy => $https) if $https;
    my $no_proxy = exists $args->{no_proxy} ? $args->{no_proxy} : $ENV{no_proxy};
    $no_proxy = [defined $no_proxy ? split(/\s*,\s*/, $no_proxy) : ()] unless ref $no_proxy eq 'ARRAY';
    @$self{qw(proxy http_proxy https_proxy no_proxy)} = ($proxy, $http, $https || undef, $no_proxy);
    return;
}

# HTTP::Tiny's _split_proxy check: scheme://[auth@]host[:port][/] with a
# port (given, or the scheme's: http and https have one).
sub _check_proxy {
    my ($type, $url) = @_;
    my ($scheme, $authority, $path) = $url =~ m{\A([^:/?#]+)://([^/?#]*)([^#]*)};
    my $ok = defined $scheme && ($path eq '' || $path eq '/');
    if ($ok) {
        $authority =~ s/\A[^\@]*\@//;
        my $port = $authority =~ s/:(\d*)\z// && length $1 ? $1 : lc $scheme eq 'http' ? 80 : lc $scheme eq 'https' ? 443 : undef;
        $ok = length $authority && defined $port;
    }
    _croak(qq{$type URL must be in format http[s]://[auth@]<host>:<port>/\n}) unless $ok;
    return;
}

# The proxy HTTP::Tiny uses for $url (its scheme's, unless the host ends
# with a no_proxy suffix), or undef.
sub _proxy_for {
    my ($self, $url) = @_;
    my ($scheme, $host) = $url =~ m{\A([^:/?#]+)://(?:[^/?#\@]*\@)?([^/?#]*)} or return undef;
    my $proxy = $self->{lc($scheme) . '_proxy'} // return undef;
    $host = lc $host;
    $host =~ s/:\d*\z//;
    return (grep { $host =~ /\Q$_\E$/ } @{ $self->{no_proxy} }) ? undef : $proxy;
}

# The engine client for $url's route: one per proxy (and one for direct
# requests), made when first needed; a new setting makes them again.
sub _client_for {
    my ($self, $url) = @_;
    # No proxy set (the usual case): the direct client, without a look at the URL.
    return $self->{clients}{''} ||= $self->_new_client(undef)
        unless defined $self->{http_proxy} || defined $self->{https_proxy};
    my $proxy = $self->_proxy_for($url);
    return $self->{clients}{ $proxy // '' } ||= $self->_new_client($proxy);
}

# Drops the engine clients: the next request makes them with the current
# settings (as HTTP::Tiny drops its kept connection).
sub _build_client {
    my ($self) = @_;
    $self->{clients} = {};
    delete $self->{last_client};
    return;
}

sub _new_client {
    my ($self, $proxy) = @_;
    # HTTP::Tiny's SSL_options: SSL_ca_file names the CAs to trust (the
    # engine's TLS is rustls, so the other IO::Socket::SSL options do not apply).
    my $ca = ($self->{SSL_options} || {})->{SSL_ca_file};
    return Nodelay->new(
        timeout => $self->{timeout},
        # The User-Agent is each request's own (_request_fields).
        agent   => '',
        verify  => $self->{verify_SSL},
        # HTTP::Tiny asks for no content coding; a caller's Accept-Encoding
        # still gets its body decoded by the engine.
        accept_encoding => '',
        (defined $ca ? (ca_file => $ca) : ()),
        (defined $proxy ? (proxy => $proxy) : ()),
        (defined $self->{local_address} ? (local_address => $self->{local_address}) : ()),
        # HTTP::Tiny keeps no cookies unless given a jar; a cookies.txt path
        # is nodelay's own jar, an HTTP::Cookies-like object the engine's
        # jar object; an HTTP::CookieJar-like one (HTTP::Tiny's interface) is
        # asked here, per request (_tiny_jar).
        (defined $self->{cookie_jar} && !_tiny_jar($self->{cookie_jar})
            ? (cookie_jar => $self->{cookie_jar}) : (cookies => 0)),
    );
}

# Whether $jar has HTTP::Tiny's cookie jar interface (HTTP::CookieJar's add
# and cookie_header), which HTTP::Tiny asks itself for each request.
sub _tiny_jar {
    my ($jar) = @_;
    return blessed($jar) && $jar->can('add') && $jar->can('cookie_header');
}

sub _croak { require Carp; Carp::croak(@_) }

# HTTP::Tiny's accessors read and write. A new value of a setting the
# engine client holds makes a new client; as HTTP::Tiny, a changed value of
# any other setting but these lets go of the kept connection (connected).
my %CLIENT_SETTING = map { $_ => 1 } qw(timeout verify_SSL SSL_options proxy http_proxy https_proxy no_proxy cookie_jar local_address);
my %KEEPS_CONNECTION = map { $_ => 1 } qw(agent timeout cookie_jar default_headers max_redirect max_size);
for my $name (qw(agent timeout max_redirect default_headers verify_SSL SSL_options proxy http_proxy https_proxy no_proxy cookie_jar local_address keep_alive max_size)) {
    no strict 'refs';
    *{$name} = sub {
        my $self = shift;
        return $self->{$name} unless @_;
        my $value = shift;
        # HTTP::Tiny's agent rule: one ending with a space gets the default appended.
        $value .= _default_agent() if $name eq 'agent' && defined $value && $value =~ / \z/;
        delete $self->{last_client}
            unless $KEEPS_CONNECTION{$name} || ($value // '') eq ($self->{$name} // '');
        $self->{$name} = $value;
        $self->_build_client if $CLIENT_SETTING{$name};
        return $self->{$name};
    };
}

# As HTTP::Tiny: the peer ("address:port", or the two in list context) of
# the connection the last request left open for the next one, else undef
# (or ()): none was made, it was closed (keep_alive 0, Connection: close, a
# failure), or a setting changed since. Through a proxy, the proxy.
sub connected {
    my ($self) = @_;
    my $client = $self->{last_client} or return;
    return $client->kept_peer;
}

# As HTTP::Tiny: the TLS support is there (rustls, in the engine) and the
# system's CAs or SSL_options' SSL_ca_file are trusted: (1, '').
sub can_ssl { return wantarray ? (1, '') : 1 }

for my $method (qw(get head put post patch delete)) {
    my $verb = uc $method;
    no strict 'refs';
    *{$method} = sub {
        my ($self, $url, $args) = @_;
        @_ == 2 || (@_ == 3 && ref $args eq 'HASH')
            or _croak("Usage: \$http->$method(URL, [HASHREF])\n");
        return $self->request($verb, $url, $args || {});
    };
}

sub post_form {
    my ($self, $url, $data, $args) = @_;
    (@_ == 3 || @_ == 4 && ref $args eq 'HASH')
        or _croak("Usage: \$http->post_form(URL, DATAREF, [HASHREF])\n");
    my $given = $args && $args->{headers};
    my %headers = $given ? map { lc $_ eq 'content-type' ? () : ($_ => $given->{$_}) } keys %$given : ();
    return $self->request('POST', $url, {
        ($args ? %$args : ()),
        content => $self->www_form_urlencode($data),
        headers => { %headers, 'content-type' => 'application/x-www-form-urlencoded' },
    });
}

sub www_form_urlencode {
    my ($self, $data) = @_;
    (@_ == 2 && ref $data) or _croak("Usage: \$http->www_form_urlencode(DATAREF)\n");
    ref $data eq 'HASH' || ref $data eq 'ARRAY'
        or _croak("form data must be a hash or array reference\n");
    # As HTTP::Tiny: name, value pairs (a hashref's in its hash order); an
    # arrayref value repeats the name; every string is taken as characters
    # and sent as UTF-8 (a byte string's bytes above 0x7F too); an
    # arrayref's terms in their order, a hashref's sorted.
    if (ref $data eq 'ARRAY') {
        # The usual form (plain pairs) in one call; the XS leaves the rest
        # (undef) to the loop below.
        my $encoded = Nodelay::XS::form_urlencode($data, 1);
        return $encoded if defined $encoded;
    }
    my @params = ref $data eq 'HASH' ? %$data : @$data;
    @params % 2 == 0 or _croak("form data reference must have an even number of terms\n");
    my @terms;
    while (@params) {
        my ($key, $value) = splice @params, 0, 2;
        defined $key or _croak('form data keys must not be undef');
        if (ref $value eq 'ARRAY') { unshift @params, map { ($key => $_) } @$value }
        else { push @terms, Nodelay::XS::form_urlencode([$key, $value], 1) }
    }
    return join '&', ref $data eq 'ARRAY' ? @terms : sort @terms;
}


# Downloads $url to $file unless the file is as new as the server's copy
# (If-Modified-Since from its mtime); success for 200 and 304.
sub mirror {
    my ($self, $url, $file, $args) = @_;
    @_ == 3 || (@_ == 4 && ref $args eq 'HASH')
        or _croak("Usage: \$http->mirror(URL, FILE, [HASHREF])\n");
    $args ||= {};
    my %headers = %{ $args->{headers} || {} };
    if (-e $file and my $mtime = (stat $file)[9]) {
        $headers{'if-modified-since'} //= _http_date($mtime);
    }
    # As HTTP::Tiny: the body streams into a temporary file, which replaces
    # the file only on success.
    my $tempfile = $file . int(rand 2**31);
    open my $fh, '>:raw', $tempfile or die "Error: Could not create temporary file $tempfile for downloading: $!\n";
    my $response = $self->request('GET', $url, {
        %$args,
        headers       => \%headers,
        data_callback => sub { print {$fh} $_[0] },
    });
    close $fh or die "Error: Could not write $tempfile: $!\n";
    if ($response->{success}) {
        rename $tempfile, $file or die "Error replacing $file with $tempfile: $!\n";
        if (my $lm = $response->{headers}{'last-modified'}) {
            my $time = _parse_http_date($lm);
            utime $time, $time, $file if defined $time;
        }
    }
    unlink $tempfile;
    $response->{success} ||= $response->{status} == 304;
    return $response;
}

sub request {
    my ($self, $method, $url, $args) = @_;
    @_ == 3 || (@_ == 4 && ref $args eq 'HASH')
        or _croak("Usage: \$http->request(METHOD, URL, [HASHREF])\n");
    $args ||= {};
    my @redirects;
    for (my $hops = 0; ; $hops++) {
        my $response = $self->_request_once($method, $url, $args);
        my $location = $response->{headers}{location};
        # HTTP::Tiny's rule: a 303 is followed with GET whatever the method,
        # the other redirects only for GET and HEAD.
        my $follow = $response->{status} eq '303'
            || ($REDIRECT{ $response->{status} } && ($method eq 'GET' || $method eq 'HEAD'));
        if ($follow && defined $location && !ref $location && $hops < $self->{max_redirect}) {
            push @redirects, $response;
            $method = 'GET' if $response->{status} eq '303';
            $url = _absolute($location, $url);
            $args = { %$args, content => undef } if $response->{status} eq '303';
            next;
        }
        $response->{redirects} = [@redirects] if @redirects;
        return $response;
    }
}

# Request header names HTTP::Tiny spells its own way (RFC 9110's spelling);
# others keep the caller's spelling, else each word is capitalised.
my %HEADER_CASE = map { lc($_) => $_ } qw(
  Accept Accept-Charset Accept-Encoding Accept-Language Authorization
  Cache-Control Connection Content-Length Expect From Host
  If-Match If-Modified-Since If-None-Match If-Range If-Unmodified-Since
  Max-Forwards Pragma Proxy-Authorization Range Referer TE Trailer
  Transfer-Encoding Upgrade User-Agent Via
  Content-Encoding Content-MD5 Content-Type Cookie DNT Date Origin
  X-XSS-Protection
);

# The URL without its userinfo, and the userinfo (percent-decoded) that
# HTTP::Tiny sends as Basic credentials.
sub _split_credentials {
    my ($url) = @_;
    # The usual URL (a host, no userinfo) as it is, after one anchored match.
    return ($url, '') unless $url =~ m{\A[a-z][a-z0-9+.-]*://(?:[/?#]|\z|[^/?#]*\@)}i;
    # An empty host is localhost, as HTTP::Tiny reads it.
    $url =~ s{\A([a-z][a-z0-9+.-]*://)(?=[/?#]|\z)}{${1}localhost}i;
    my ($scheme, $userinfo, $rest) = $url =~ m{\A([^:/?#]+://)([^/?#\@]*)\@(.*)\z}s or return ($url, '');
    $userinfo =~ s/%([0-9A-Fa-f]{2})/chr hex $1/eg;
    return ("$scheme$rest", $userinfo);
}

# The request's header fields as HTTP::Tiny builds them (its
# _prepare_headers_and_cb): default_headers, then the request's, one value
# (or an arrayref of values) per lower-cased name; User-Agent, Connection:
# close without keep_alive, Content-Length 0 for an empty PUT or POST, a
# default Content-Type for content, Transfer-Encoding: chunked for a content
# callback without a Content-Length, Basic credentials from the URL. Returns
# the name, value pairs (flat), the content (bytes, or a callback giving the
# pieces as HTTP::Tiny's write_body takes them) and the trailer callback;
# dies with HTTP::Tiny's message for a Host header or an invalid field.
sub _request_fields {
    my ($self, $method, $url, $args, $userinfo) = @_;
    my (%value, %case);
    for my $given ($self->{default_headers}, $args->{headers}) {
        next unless $given;
        for my $k (keys %$given) { $value{ lc $k } = $given->{$k}; $case{ lc $k } = $k }
    }
    die qq/The 'Host' header must not be provided as header option\n/ if exists $value{host};
    # As HTTP::Tiny: an HTTP::CookieJar-like jar's header replaces the caller's.
    if ($self->{cookie_jar} && _tiny_jar($self->{cookie_jar})) {
        my $cookies = $self->{cookie_jar}->cookie_header($url);
        $value{cookie} = $cookies if length $cookies;
    }
    $value{'user-agent'} ||= $self->{agent} if length $self->{agent};
    $value{connection} = 'close' unless $self->{keep_alive};
    my $content = $args->{content};
    if (($method eq 'PUT' || $method eq 'POST') && !(defined $content && length $content)) {
        $value{'content-length'} = 0;
    }
    my $trailer_cb;
    if (ref $content eq 'CODE') {
        $value{'content-type'} ||= 'application/octet-stream';
        $value{'transfer-encoding'} = 'chunked'
            unless exists $value{'content-length'} || $value{'transfer-encoding'};
        $trailer_cb = $args->{trailer_callback}
            if ref $args->{trailer_callback} eq 'CODE' && !exists $value{'content-length'};
        $content = _pieces($content, $value{'content-length'});
    }
    elsif (defined $content && length $content) {
        utf8::downgrade($content, 1) or die qq/Wide character in request message body\n/;
        $value{'content-type'} ||= 'application/octet-stream';
    }
    if (length $userinfo && !exists $value{authorization}) {
        require MIME::Base64;
        $value{authorization} = 'Basic ' . MIME::Base64::encode_base64($userinfo, '');
    }
    return (_header_lines(\%value, \%case), $content, $trailer_cb && _trailers($trailer_cb));
}

# A content callback's pieces as HTTP::Tiny's write_body sends them: without
# a Content-Length, chunked (write_chunked_body); with one, that many bytes
# (write_content_body: none at all for 0, and its message when the pieces
# add up to another size). Each piece must be bytes, as HTTP::Tiny's
# utf8::downgrade requires.
sub _pieces {
    my ($callback, $length) = @_;
    return sub { undef } if defined $length && !$length;
    my $wide = defined $length ? "Wide character in write_content()\n" : "Wide character in write_chunked_body()\n";
    my $sent = 0;
    return sub {
        my $data = $callback->();
        if (!(defined $data && length $data)) {
            die "Content-Length mismatch (got: $sent expected: $length)\n" if defined $length && $sent != $length;
            return undef;
        }
        utf8::downgrade($data, 1) or die $wide;
        $sent += length $data;
        if (defined $length && $sent > $length) {
            # HTTP::Tiny writes every piece, then compares: count the rest.
            while (defined(my $more = $callback->())) { last unless length $more; $sent += length $more }
            die "Content-Length mismatch (got: $sent expected: $length)\n";
        }
        return $data;
    };
}

# trailer_callback's hashref as HTTP::Tiny's write_header_lines writes it
# after the last chunk (names spelt its way, its messages for a field it
# refuses), as the name, value pairs the engine sends.
sub _trailers {
    my ($callback) = @_;
    return sub {
        my $fields = $callback->();
        ref $fields eq 'HASH'
            or die q/Usage: $handle->write_header_lines(headers, [header_case, prefix])/ . "\n";
        my %value = map { (lc $_ => $fields->{$_}) } keys %$fields;
        return _header_lines(\%value, {});
    };
}

# HTTP::Tiny's field checks (write_header_lines): a name is a token, a value
# is printable (a line fold already unwrapped to a space).
my $TOKEN = qr/[\x21\x23-\x27\x2A\x2B\x2D\x2E\x30-\x39\x41-\x5A\x5E-\x7A\x7C\x7E]/;
my $FIELD_CONTENT = qr/[[:print:]]+ (?: [\x20\x09]+ [[:print:]]+ )*/x;

# Field names already found to be tokens, each with the values already
# found printable (as sent, after unfolding): the same User-Agent,
# Content-Type and the like come with every request and are checked once
# (credentials are not kept: %SECRET).
# At most CHECKED_FIELDS_MAX names, and values per name (past it a value is
# checked each time; past it names start over), so callers that vary them
# do not grow it.
use constant CHECKED_FIELDS_MAX => 64;
my %CHECKED;
# Fields whose values carry credentials: checked each time, never kept.
my %SECRET = map { $_ => 1 } qw(Authorization Proxy-Authorization Cookie);

# What HTTP::Tiny prints of a refused name or value.
sub _printable {
    local $_ = shift;
    s/\r/\\r/g;
    s/\n/\\n/g;
    s/\t/\\t/g;
    s/([^\x20-\x7E])/sprintf('\\x%.2X', ord($1))/ge;
    return $_;
}

# The name, value pairs (flat) of lower-cased %$value (an arrayref value
# repeats the field), in name order, each name spelt as HTTP::Tiny spells it: its own
# spelling, else the caller's (%$case), else each word capitalised.
sub _header_lines {
    my ($value, $case) = @_;
    my @fields;
    for my $name (sort keys %$value) {
        my $spelt = $HEADER_CASE{$name} // $case->{$name} // ($name =~ s/\b(\w)/\u$1/gr);
        my $checked = $CHECKED{$spelt};
        if (!$checked) {
            $spelt =~ /\A $TOKEN+ \z/xo
                or die 'Invalid HTTP header field name: ' . _printable($spelt) . "\n";
            %CHECKED = () if keys %CHECKED >= CHECKED_FIELDS_MAX;
            $checked = $CHECKED{$spelt} = {};
        }
        for my $v (ref $value->{$name} eq 'ARRAY' ? @{ $value->{$name} } : $value->{$name}) {
            my $given = $v // '';
            my $line = $checked->{$given};
            if (!defined $line) {
                ($line = $given) =~ s/\x0D?\x0A\s+/ /g;
                die "Invalid HTTP header field value ($spelt): " . _printable($line) . "\n"
                    unless $line eq '' || $line =~ /\A $FIELD_CONTENT \z/xo;
                $checked->{$given} = $line if keys %$checked < CHECKED_FIELDS_MAX && !$SECRET{$spelt};
            }
            push @fields, $spelt, $line;
        }
    }
    return \@fields;
}

sub _request_once {
    my ($self, $method, $url, $args) = @_;
    # As HTTP::Tiny, which lets go of its kept connection when a request
    # starts: a request that fails before it is sent leaves none connected.
    delete $self->{last_client};
    my ($target, $userinfo) = _split_credentials($url);
    # As HTTP::Tiny: a data_callback gets the pieces of a 2xx body with the
    # response hashref (its head filled in); other statuses keep their body
    # in content. The hashref is made from the head at the first piece.
    my $data_callback = $args->{data_callback};
    my ($response, $kept);
    # max_size: a body past it (kept whole, not one given to a data_callback)
    # fails the request with HTTP::Tiny's message; it is then read in pieces.
    my $max_size = $data_callback ? undef : $self->{max_size};
    my $received = 0;
    my $stream = ($data_callback || defined $max_size) && sub {
        my ($piece, $res) = @_;
        $response ||= _head_hash($res, $url);
        if ($data_callback && $response->{success}) { return $data_callback->($piece, $response) }
        $received += length $piece;
        die "Size of response body exceeds the maximum allowed of $max_size\n"
            if defined $max_size && $received > $max_size;
        $kept .= $piece;
    };
    my $client;
    # One eval for the request's preparation (HTTP::Tiny's messages for the
    # fields it refuses) and its sending: either failure is the 599.
    my $res = eval {
        my ($fields, $content, $trailers) = $self->_request_fields($method, $url, $args, $userinfo);
        $client = $self->_client_for($target);
        # The usual request (bytes or no body, kept whole): straight to the
        # shim, without Nodelay::request's option handling.
        return $client->_request_pairs($method, $target, $fields, $content) unless $stream || ref $content;
        $client->request($method, $target, {
            headers => $fields,
            content => $content,
            ($trailers ? (trailer_callback => $trailers) : ()),
            ($stream ? (data_callback => $stream) : ()),
        });
    };
    $self->{last_client} = $client;    # undef when it could not be made
    return _internal_error($url, _status_line_error($@)) unless $res;
    $response ||= _head_hash($res, $url);
    # As HTTP::Tiny: the trailer fields after a chunked body join the
    # headers (a repeated name becomes an arrayref).
    _add_fields($response->{headers}, $res->trailers) if exists $response->{headers}{'transfer-encoding'};
    # As HTTP::Tiny's _update_cookie_jar: each Set-Cookie to the jar.
    if ($self->{cookie_jar} && _tiny_jar($self->{cookie_jar}) && defined(my $set = $response->{headers}{'set-cookie'})) {
        $self->{cookie_jar}->add($url, $_) for ref $set ? @$set : $set;
    }
    my $status = $response->{status};
    # As HTTP::Tiny: no content key for a response without a body (HEAD,
    # 204, 304); an empty one when the body went to data_callback.
    return $response if $method eq 'HEAD' || $status == 204 || $status == 304;
    $response->{content} = $stream ? $kept // '' : $res->content;
    return $response;
}

# Backslash escapes of the status line an engine error quotes (Rust's
# escape_ascii), and what each stands for.
my %UNESCAPE = (t => "\t", r => "\r", n => "\n", "'" => "'", '"' => '"', '\\' => '\\');

# The text of a failure: for a status line the engine refused (its error
# quotes the line), HTTP::Tiny's message for that line as its
# read_response_header words it; else the engine's message.
sub _status_line_error {
    my ($error) = @_;
    return "$error" unless blessed($error) && $error->isa('Nodelay::X::RemoteProtocolError');
    my ($quoted) = $error->message =~ /\(status line "(.*)"\)\z/s or return "$error";
    (my $line = $quoted) =~ s/\\(?:x([0-9a-f]{2})|(.))/defined $1 ? chr hex $1 : $UNESCAPE{$2}/ge;
    $line =~ /\A (HTTP\/(0*\d+\.0*\d+)) [\x09\x20]+ ([0-9]{3}) (?: [\x09\x20]+ ([^\x0D\x0A]*) )? \x0D?\x0A/x
        or return 'Malformed Status-Line: ' . _printable($line) . "\n";
    my ($protocol, $version) = ($1, $2);
    return "Unsupported HTTP protocol: $protocol\n" unless $version =~ /0*1\.0*[01]/;
    # A line HTTP::Tiny takes (HTTP/01.01) and the engine does not.
    return "$error";
}

# HTTP::Tiny's response for a request that failed before an answer.
sub _internal_error {
    my ($url, $error) = @_;
    return {
        url     => $url,
        success => '',
        status  => INTERNAL_STATUS,
        reason  => INTERNAL_REASON,
        content => $error,
        headers => { 'content-type' => 'text/plain', 'content-length' => length $error },
    };
}

# Adds the [name, value, ...] fields to HTTP::Tiny's headers hash: names in
# lower case, a repeated one's values in an arrayref.
sub _add_fields {
    my ($h, $pairs) = @_;
    for (my $i = 0; $i < @$pairs; $i += 2) {
        my $name = lc $pairs->[$i];
        if (exists $h->{$name}) {
            $h->{$name} = [$h->{$name}] unless ref $h->{$name};
            push @{ $h->{$name} }, $pairs->[$i + 1];
        }
        else {
            $h->{$name} = $pairs->[$i + 1];
        }
    }
    return;
}

# HTTP::Tiny's response hashref from a response's head (no content yet).
sub _head_hash {
    my ($res, $url) = @_;
    my ($status, $reason, $protocol, $headers) = $res->_head_hash;
    return {
        url      => $url,
        success  => substr($status, 0, 1) eq '2',
        status   => $status,
        reason   => $reason,
        headers  => $headers,
        protocol => $protocol,
    };
}

sub _absolute {
    my ($location, $base) = @_;
    return $location if $location =~ m{\A[a-z][a-z0-9+.-]*://}i;
    my ($origin, $path) = $base =~ m{\A([a-z][a-z0-9+.-]*://[^/?#]*)([^?#]*)}i;
    return "$origin$location" if $location =~ m{\A/};
    $path =~ s{[^/]*\z}{};
    return "$origin$path$location";
}

my @DAYS = qw(Sun Mon Tue Wed Thu Fri Sat);
my @MONTHS = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);

sub _http_date {
    my ($s, $m, $h, $mday, $mon, $year, $wday) = gmtime $_[0];
    return sprintf '%s, %02d %s %04d %02d:%02d:%02d GMT',
        $DAYS[$wday], $mday, $MONTHS[$mon], $year + 1900, $h, $m, $s;
}

sub _parse_http_date {
    my ($date) = @_;
    my %mon;
    @mon{@MONTHS} = 0 .. 11;
    my ($mday, $mon, $year, $h, $m, $s) = $date =~ /(\d\d?)[ -](\w{3})[ -](\d{4}) (\d\d):(\d\d):(\d\d)/
        or return undef;
    require Time::Local;
    return eval { Time::Local::timegm($s, $m, $h, $mday, $mon{$mon}, $year) };
}

1;

__END__

=head1 NAME

Nodelay::Tiny - HTTP::Tiny's interface over the nodelay engine

=head1 SYNOPSIS

    use Nodelay::Tiny;
    my $http = Nodelay::Tiny->new(timeout => 10);
    my $res = $http->get('http://127.0.0.1:8080/');
    print "$res->{status} $res->{reason}\n$res->{content}" if $res->{success};

=cut
