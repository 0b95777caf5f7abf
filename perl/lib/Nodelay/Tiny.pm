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

sub new {
    my ($class, %args) = @_;
    my $agent = $args{agent} // 'Nodelay-Tiny/' . $VERSION;
    $agent .= 'Nodelay-Tiny/' . $VERSION if $agent =~ / \z/;    # HTTP::Tiny's rule
    my $self = bless {
        agent           => $agent,
        timeout         => $args{timeout} // DEFAULT_TIMEOUT,
        max_redirect    => $args{max_redirect} // DEFAULT_MAX_REDIRECT,
        default_headers => $args{default_headers} || {},
        verify_SSL      => $args{verify_SSL} // $args{verify_ssl} // 1,
        proxy           => $args{proxy} // $args{http_proxy},
        cookie_jar      => $args{cookie_jar},
        SSL_options     => $args{SSL_options} || {},
    }, $class;
    # HTTP::Tiny's SSL_options: SSL_ca_file names the CAs to trust (the
    # engine's TLS is rustls, so the other IO::Socket::SSL options do not apply).
    my $ca = $self->{SSL_options}{SSL_ca_file};
    $self->{client} = Nodelay->new(
        timeout => $self->{timeout},
        agent   => $agent,
        verify  => $self->{verify_SSL},
        (defined $ca ? (ca_file => $ca) : ()),
        (defined $self->{proxy} ? (proxy => $self->{proxy}) : ()),
        # HTTP::Tiny keeps no cookies unless given a jar; a cookies.txt path
        # is nodelay's own jar.
        (defined $self->{cookie_jar} ? (cookie_jar => $self->{cookie_jar}) : (cookies => 0)),
    );
    return $self;
}

for my $name (qw(agent timeout max_redirect default_headers verify_SSL SSL_options proxy cookie_jar)) {
    no strict 'refs';
    *{$name} = sub { $_[0]{$name} };
}

for my $method (qw(get head put post patch delete)) {
    my $verb = uc $method;
    no strict 'refs';
    *{$method} = sub {
        my ($self, $url, $args) = @_;
        return $self->request($verb, $url, $args || {});
    };
}

sub post_form {
    my ($self, $url, $data, $args) = @_;
    my %headers = %{ ($args || {})->{headers} || {} };
    delete $headers{$_} for grep { lc $_ eq 'content-type' } keys %headers;
    return $self->request('POST', $url, {
        %{ $args || {} },
        content => $self->www_form_urlencode($data),
        headers => { %headers, 'content-type' => 'application/x-www-form-urlencoded' },
    });
}

sub www_form_urlencode {
    my ($self, $data) = @_;
    ref $data eq 'HASH' || ref $data eq 'ARRAY'
        or die "form data must be a hash or array reference\n";
    my @pairs = ref $data eq 'HASH' ? map { my $k = $_; map { ($k, $_) } ref $data->{$k} eq 'ARRAY' ? @{ $data->{$k} } : $data->{$k} } keys %$data : @$data;
    my @terms;
    while (my ($k, $v) = splice @pairs, 0, 2) {
        push @terms, _uri_escape($k) . '=' . _uri_escape($v);
    }
    return join '&', ref $data eq 'ARRAY' ? @terms : sort @terms;
}

sub _uri_escape {
    my ($s) = @_;
    $s = '' unless defined $s;
    utf8::encode($s) if utf8::is_utf8($s);
    $s =~ s/([^A-Za-z0-9\-._~ ])/sprintf '%%%02X', ord $1/ge;
    $s =~ tr/ /+/;
    return $s;
}

# Downloads $url to $file unless the file is as new as the server's copy
# (If-Modified-Since from its mtime); success for 200 and 304.
sub mirror {
    my ($self, $url, $file, $args) = @_;
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
    $args ||= {};
    my @redirects;
    for (my $hops = 0; ; $hops++) {
        my $response = $self->_request_once($method, $url, $args);
        my $location = $response->{headers}{location};
        if ($REDIRECT{ $response->{status} } && defined $location && !ref $location
            && ($method eq 'GET' || $method eq 'HEAD') && $hops < $self->{max_redirect}) {
            push @redirects, $response;
            $url = _absolute($location, $url);
            next;
        }
        $response->{redirects} = [@redirects] if @redirects;
        return $response;
    }
}

sub _request_once {
    my ($self, $method, $url, $args) = @_;
    my %headers = (%{ $self->{default_headers} }, %{ $args->{headers} || {} });
    my $content = $args->{content};
    if (ref $content eq 'CODE') {
        my $body = '';
        while (defined(my $chunk = $content->()) ) { last if $chunk eq ''; $body .= $chunk }
        $content = $body;
    }
    # As HTTP::Tiny: a data_callback gets the pieces of a 2xx body with the
    # response hashref (its head filled in); other statuses keep their body
    # in content. The hashref is made from the head at the first piece.
    my $data_callback = $args->{data_callback};
    my ($response, $kept);
    my $stream = $data_callback && sub {
        my ($piece, $res) = @_;
        $response ||= _head_hash($res, $url);
        if ($response->{success}) { $data_callback->($piece, $response) }
        else { $kept .= $piece }
    };
    my $res = eval {
        $self->{client}->request($method, $url, {
            headers => \%headers,
            content => $content,
            ($stream ? (data_callback => $stream) : ()),
        });
    };
    unless ($res) {
        my $error = "$@";
        return {
            url     => $url,
            success => '',
            status  => INTERNAL_STATUS,
            reason  => INTERNAL_REASON,
            content => $error,
            headers => { 'content-type' => 'text/plain', 'content-length' => length $error },
        };
    }
    $response ||= _head_hash($res, $url);
    my $status = $response->{status};
    # As HTTP::Tiny: no content key for a response without a body (HEAD,
    # 204, 304); an empty one when the body went to data_callback.
    return $response if $method eq 'HEAD' || $status == 204 || $status == 304;
    $response->{content} = $stream ? $kept // '' : $res->content;
    return $response;
}

# HTTP::Tiny's response hashref from a response's head (no content yet).
sub _head_hash {
    my ($res, $url) = @_;
    my %h;
    my $pairs = $res->headers;
    for (my $i = 0; $i < @$pairs; $i += 2) {
        my $name = lc $pairs->[$i];
        if (exists $h{$name}) {
            $h{$name} = [$h{$name}] unless ref $h{$name};
            push @{ $h{$name} }, $pairs->[$i + 1];
        }
        else {
            $h{$name} = $pairs->[$i + 1];
        }
    }
    my $status = $res->status;
    return {
        url      => $url,
        success  => substr($status, 0, 1) eq '2',
        status   => $status,
        reason   => $res->reason,
        headers  => \%h,
        protocol => $res->protocol,
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
