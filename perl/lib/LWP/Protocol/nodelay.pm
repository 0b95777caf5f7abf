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
use HTTP::Headers;
use LWP::UserAgent ();
use Scalar::Util ();

our $VERSION = '0.01';

# `use LWP::Protocol::nodelay qw(http https)` (or `perl
# -MLWP::Protocol::nodelay=http,https program.pl`): the implementor of those
# schemes from now on, so an LWP program runs over the engine unchanged.
sub import {
    my ($class, @schemes) = @_;
    LWP::Protocol::implementor($_, $class) for @schemes;
    return;
}

# One engine client per distinct setting (timeout, proxy, TLS checks), so
# connections are reused across requests and user agents. LWP makes a new
# protocol object per request, which cannot hold them. A new ithread's
# copies of these clients get handles of their own (Nodelay::CLONE); a fork
# child keeps using them, as with any Nodelay object: the engine drops the
# connections it inherited and connects anew (t/07-threads-fork.t). The key
# has no process id: \$\$ is a getpid() system call on every read in Perl.
my %CLIENTS;


sub _client {
    my ($self, $proxy, $timeout) = @_;
    my $ua = $self->{ua};
    my $ssl = $ua ? ($ua->ssl_opts('verify_hostname') // 1) : 1;
    my $ca = $ua ? $ua->ssl_opts('SSL_ca_file') : undef;
    my $proxy_url = defined $proxy ? "$proxy" : undef;
    my $key = join "\0", $timeout // '', $proxy_url // '', $ssl ? 1 : 0, $ca // '';
    return $CLIENTS{$key} ||= Nodelay->new(
        timeout => $timeout,
        verify  => $ssl,
        # LWP sends its own User-Agent header (or none when agent is '') and
        # keeps its own cookie jar.
        agent   => '',
        cookies => 0,
        # Nor any Accept-Encoding but the one LWP's caller set (LWP sends
        # none by default).
        accept_encoding => '',
        (defined $ca ? (ca_file => $ca) : ()),
        (defined $proxy_url ? (proxy => $proxy_url) : ()),
    );
}

# HTTP::Message's fields of a new response beyond headers, content, code
# and message (6.4x adds _max_body_size, read when it is made).
my $WITH_MAX_BODY_SIZE = exists HTTP::Response->new(200)->{_max_body_size};

# A received field name -> [its key in an HTTP::Headers hash, the case
# HTTP::Headers keeps for it or undef], found once per name by HTTP::Headers
# itself (push_header with underscores kept, as LWP::Protocol::http does).
my %FIELD;
use constant MAX_FIELD_NAMES => 1024;

sub _field {
    my ($name) = @_;
    %FIELD = () if keys %FIELD >= MAX_FIELD_NAMES;    # a server inventing names
    my $probe = HTTP::Headers->new;
    {
        local $HTTP::Headers::TRANSLATE_UNDERSCORE;
        $probe->push_header($name => '');
    }
    my ($key) = grep { $_ ne '::std_case' } keys %$probe;
    return $FIELD{$name} = [$key, $probe->{'::std_case'} ? $probe->{'::std_case'}{$key} : undef];
}

# The HTTP::Headers that push_header of these name, value pairs makes, one
# after the other (what LWP::Protocol::http does with a received head),
# built straight into its hash.
sub _headers {
    my $h = bless {}, 'HTTP::Headers';
    for (my $i = 0; $i < @_; $i += 2) {
        my ($key, $case) = @{ $FIELD{ $_[$i] } || _field($_[$i]) };
        $h->{'::std_case'}{$key} //= $case if defined $case;
        if (!exists $h->{$key}) { $h->{$key} = $_[$i + 1] }
        elsif (ref $h->{$key} eq 'ARRAY') { push @{ $h->{$key} }, $_[$i + 1] }
        else { $h->{$key} = [$h->{$key}, $_[$i + 1]] }
    }
    return $h;
}

# The HTTP::Response for a received head, as HTTP::Response->new($code,
# $message), then protocol and request, make it.
sub _response {
    my ($handle, $request) = @_;
    my ($status, $reason, $version, $encoded, @pairs) = Nodelay::XS::response_head($handle);
    my $response = bless {
        # A Content-Encoding the engine undid goes, as Nodelay::Response's
        # as_http_response drops it.
        _headers  => _headers($encoded ? @{ Nodelay::Response::_decoded_pairs(\@pairs) } : @pairs),
        _content  => '',
        ($WITH_MAX_BODY_SIZE ? (_max_body_size => $HTTP::Message::MAXIMUM_BODY_SIZE) : ()),
        _rc       => $status,
        _msg      => $reason,
        _protocol => $version,
        _request  => $request,
    }, 'HTTP::Response';
    # The engine undid the transfer coding: as LWP::Protocol::http, the field
    # moves to Client-Transfer-Encoding, so the head describes the body held.
    if (my @te = $response->remove_header('Transfer-Encoding')) {
        $response->push_header('Client-Transfer-Encoding', \@te);
    }
    return $response;
}

# Per user agent class: are handlers() and progress() LWP::UserAgent's own?
# Then a body with no data handlers goes straight into the response and a
# progress call that would print nothing is skipped.
my %PLAIN_UA;

sub _plain_ua {
    my ($class) = @_;
    return $PLAIN_UA{$class} //= (($class->can('handlers') // 0) == \&LWP::UserAgent::handlers
        && ($class->can('progress') // 0) == \&LWP::UserAgent::progress) ? 1 : 0;
}

# LWP matches its handlers (HTTP::Config: parse_head's response_header
# handler on every response) against the request's canonical URI, which
# HTTP::Request works out once per request object (uri_canonical) and which
# is the URI object itself when it is canonical already. Whether a URL is
# canonical is a property of its class and text, found here once per URL
# (URI's own canonical, bounded cache); for such a request the memo is
# filled with the object uri_canonical would have stored.
my %CANONICAL;
use constant MAX_CANONICAL_URLS => 1024;

sub _note_canonical {
    my ($request, $url) = @_;
    my $uri = $request->{_uri};
    my $key = ref($uri) . " $url";
    my $canonical = $CANONICAL{$key} // do {
        %CANONICAL = () if keys %CANONICAL >= MAX_CANONICAL_URLS;
        my $c = $uri->canonical;
        $CANONICAL{$key} = ref $c && Scalar::Util::refaddr($c) == Scalar::Util::refaddr($uri) ? 1 : 0;
    };
    $request->{_uri_canonical} = $uri if $canonical;
    return;
}

# The schemes the engine speaks. LWP hands a request for any other scheme
# (ftp://, say) to the implementor of its proxy's scheme: such a request is
# forwarded to the HTTP proxy by LWP's own protocol, as without this module.
my %ENGINE_SCHEMES = (http => 1, https => 1);

sub request {
    my ($self, $request, $proxy, $arg, $size, $timeout) = @_;
    if (!$ENGINE_SCHEMES{ $request->uri->scheme // '' }) {
        require LWP::Protocol::http;
        return LWP::Protocol::http->new($self->{scheme}, $self->{ua})->request($request, $proxy, $arg, $size, $timeout);
    }
    my $client = $self->_client($proxy, $timeout);
    my (@headers, @connection, $te);
    # As LWP::Protocol::http sends them: a leading ':' off the name, a line
    # break in a value (HTTP::Headers allows them) sent as a space; the
    # Connection tokens gathered into one field (Net::HTTP's format_request).
    $request->headers->scan(sub {
        my ($name, $value) = (ord $_[0] == 58 ? substr($_[0], 1) : $_[0], index($_[1], "\n") < 0 ? $_[1] : $_[1] =~ tr/\n/ /r);
        my $lc = lc $name;
        if ($lc eq 'connection') { push @connection, split /\s*,\s*/, $value =~ s/\A\s+|\s+\z//gr; return }
        $te = 1 if $lc eq 'te';
        push @headers, $name, $value;
    });
    push @connection, 'TE' if $te && !grep { lc eq 'te' } @connection;
    # A user agent without keep_alive (no connection cache) closes each
    # connection after its response, and says so, as stock LWP does: a
    # response without a length then ends when the server closes, at once.
    push @connection, 'close' if !($self->{ua} && $self->{ua}{conn_cache}) && !grep { lc eq 'close' } @connection;
    push @headers, Connection => join ', ', @connection if @connection;
    my $content = $request->content_ref;
    if (ref $$content eq 'CODE') {    # dynamic content: collect it
        my $cb = $$content;
        my $body = '';
        while (defined(my $chunk = $cb->())) { last unless length $chunk; $body .= $chunk }
        $content = \$body;
    }
    my $method = $request->method;
    my $url = $request->uri->as_string;
    my $body = length($$content) || $method eq 'POST' || $method eq 'PUT' ? $$content : undef;
    # With :content_file or :content_cb (LWP's $arg) the body streams to
    # LWP's collector piece by piece and is never held whole.
    my $stream = defined $arg && (ref $arg || length $arg) && $method ne 'HEAD';
    my ($code, $handle, $data) = Nodelay::XS::request(
        $client->{handle}, $method, $url, \@headers, $body, $method ne 'HEAD' && !$stream);
    if ($code) {
        my $e = eval { Nodelay::X->throw($code, $handle, $method, $url) } || $@;
        # LWP turns a die here into a 500 response with Client-Warning; a
        # timeout says so, as LWP::Protocol::http's does.
        die _lwp_message($e);
    }
    _note_canonical($request, $url) if ref $request->{_uri} && !defined $request->{_uri_canonical};
    unless ($stream) {
        # The body is read: the handle is done with once the head is copied.
        my $response = eval { _response($handle, $request) };
        my $error = $@;
        Nodelay::XS::response_free($handle);
        die $error unless $response;
        return defined $arg ? $self->collect_once($arg, $response, $data) : $self->_collect_whole($response, $data);
    }
    my $res = Nodelay::Response->_new($handle, $data, $method, $url);
    my $response = _response($handle, $request);
    my $piece_size = $size || Nodelay::STREAM_PIECE();
    # LWP's collector protocol: a reference to the next piece, an empty
    # one at the end. A failure mid-body dies there, and LWP records it in
    # X-Died as it does for its own connections.
    return $self->collect($arg, $response, sub {
        my ($c, $piece) = Nodelay::XS::response_read_chunk($res->{handle}, $piece_size);
        if ($c) {
            my $e = eval { Nodelay::X->throw($c, $piece, $method, $url) } || $@;
            die _lwp_message($e);
        }
        return \$piece;
    });
}

# LWP::Protocol::collect_once($arg, $response, $data) for $arg undef (the
# body kept in the response), step for step: the response_header handlers
# (which may set default_add_content or add data handlers), the body as one
# piece to the data handlers, progress, max_size; a die becomes X-Died. With
# no data handler but the default one, the body is added directly.
sub _collect_whole {
    my ($self, $response, $data) = @_;
    my ($ua, $max_size) = @{$self}{qw(ua max_size)};
    my $error = do {
        local $@;
        local $\;
        eval {
            $response->{default_add_content} = 1;
            $ua->run_handlers('response_header', $response);
            my $add = delete $response->{default_add_content};
            if (length $data) {
                my $plain = $PLAIN_UA{ ref $ua } // _plain_ua(ref $ua);
                if ($plain && !$ua->{handlers}{response_data}
                    && !($response->{handlers} && $response->{handlers}{response_data})) {
                    if (!$add) { }    # a response_header handler asked for no body
                    # add_content's work for bytes appended to plain content.
                    elsif (exists $response->{_content} && !ref $response->{_content} && !utf8::is_utf8($data)) {
                        $response->{_content} .= $data;
                        delete $response->{_parts};
                    }
                    else { $response->add_content($data) }
                }
                else {
                    push @{ $response->{handlers}{response_data} }, {
                        callback => sub { $_[0]->add_content($_[3]); 1 },
                    } if $add;
                    for my $h ($ua->handlers('response_data', $response)) {
                        $h->{callback}->($response, $ua, $h, $data);
                    }
                }
                if (!$plain || $ua->{show_progress}) {
                    my $length = $response->content_length;
                    $ua->progress(($length ? (length($data) / $length) : 'tick'), $response);
                }
                if (defined($max_size) && length($data) > $max_size) {
                    $response->push_header('Client-Aborted', 'max_size');
                }
            }
            1;
        };
        $@;
    };
    if ($error) {
        chomp $error;
        $response->push_header('X-Died' => $error);
        $response->push_header('Client-Aborted', 'die');
    }
    if ($response->{handlers}) {
        delete $response->{handlers}{response_data};
        delete $response->{handlers} unless %{ $response->{handlers} };
    }
    return $response;
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
    use LWP::Protocol::nodelay qw(http https);
    my $res = LWP::UserAgent->new->get('http://127.0.0.1:8080/');

    # or, for a program left as it is:
    #   perl -MLWP::Protocol::nodelay=http,https program.pl

=cut
