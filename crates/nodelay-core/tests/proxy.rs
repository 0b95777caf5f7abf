//! Proxies against a scripted raw-socket proxy: the exact bytes the proxy
//! receives (absolute-form requests, the CONNECT head), its refusals and
//! failures (docs/hostile.md G26), and NO_PROXY matching (G27).
//!
//! The proxy is a std `TcpListener` on 127.0.0.1:0; each accepted connection
//! runs the test's handler on its own thread, and everything a connection
//! received is recorded. Only loopback is used: the "origins" in the URLs
//! below never resolve, because the client only ever connects to the proxy.

mod support;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::{
    Client, Error, ErrorKind, NeverInterrupt, NoProxy, PoolConfig, ProxySettings, RequestParts,
    Timeouts, TlsOptions,
};

// ---------------------------------------------------------------- scripted proxy

type Handler = dyn Fn(&mut Conn) + Send + Sync;

/// The bytes one connection received, shared with the test.
type Received = Arc<Mutex<Vec<u8>>>;

/// One accepted connection: its socket and what it received so far.
struct Conn {
    stream: TcpStream,
    received: Received,
    pending: Vec<u8>,
}

impl Conn {
    /// Reads up to and including the blank line ending a head (bounded by a
    /// 10 s timeout); `None` at EOF.
    fn read_head(&mut self) -> Option<Vec<u8>> {
        let _ = self.stream.set_read_timeout(Some(Duration::from_secs(10)));
        loop {
            if let Some(end) = self.pending.windows(4).position(|w| w == b"\r\n\r\n") {
                return Some(self.pending.drain(..end + 4).collect());
            }
            self.read_more()?;
        }
    }

    /// Reads whatever comes next; `None` at EOF or error.
    fn read_more(&mut self) -> Option<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        self.pending.extend_from_slice(&chunk[..n]);
        self.received.lock().unwrap().extend_from_slice(&chunk[..n]);
        Some(n)
    }

    /// Reads until the peer closes (or 10 s pass).
    fn read_to_close(&mut self) {
        let _ = self.stream.set_read_timeout(Some(Duration::from_secs(10)));
        while self.read_more().is_some() {}
    }

    fn write(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }
}

struct ScriptedProxy {
    port: u16,
    /// Bytes received, per accepted connection.
    connections: Arc<Mutex<Vec<Received>>>,
    /// Connections whose handler returned.
    finished: Arc<AtomicUsize>,
}

impl ScriptedProxy {
    fn start(handler: impl Fn(&mut Conn) + Send + Sync + 'static) -> ScriptedProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections: Arc<Mutex<Vec<Received>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let seen = Arc::clone(&connections);
        let finished: Arc<AtomicUsize> = Arc::default();
        let done = Arc::clone(&finished);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let received = Arc::new(Mutex::new(Vec::new()));
                seen.lock().unwrap().push(Arc::clone(&received));
                let handler = Arc::clone(&handler);
                let done = Arc::clone(&done);
                thread::spawn(move || {
                    let mut conn = Conn {
                        stream,
                        received,
                        pending: Vec::new(),
                    };
                    handler(&mut conn);
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        ScriptedProxy {
            port,
            connections,
            finished,
        }
    }

    fn url(&self, userinfo: &str) -> String {
        format!("http://{userinfo}127.0.0.1:{}", self.port)
    }

    fn accepted(&self) -> usize {
        self.connections.lock().unwrap().len()
    }

    /// Waits (up to 5 s) until `n` handlers returned; false if they did not.
    fn wait_finished(&self, n: usize) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while self.finished.load(Ordering::SeqCst) < n {
            if Instant::now() > until {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// What connection `i` received, once it has received at least `len`
    /// bytes or closed (waits up to 5 s).
    fn received(&self, i: usize, len: usize) -> Vec<u8> {
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let got = self.connections.lock().unwrap()[i].lock().unwrap().clone();
            if got.len() >= len || Instant::now() > until {
                return got;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

// ---------------------------------------------------------------- client helpers

fn client_via(http: Option<String>, https: Option<String>, no_proxy: Option<&str>) -> Client {
    Client::with_proxies(
        PoolConfig {
            max_connections: Some(10),
            max_keepalive: Some(10),
            keepalive_expiry: Some(Duration::from_secs(30)),
            ..PoolConfig::default()
        },
        TlsOptions::default(),
        &ProxySettings {
            http,
            https,
            no_proxy: no_proxy.map(str::to_owned),
        },
    )
    .expect("valid proxy settings")
}

fn timeouts(connect: Duration) -> Timeouts {
    Timeouts {
        connect: Some(connect),
        ..support::each_phase_within(Duration::from_secs(3))
    }
}

fn get(client: &Client, url: &str, headers: &[(&str, &str)]) -> Result<(u16, Vec<u8>), Error> {
    get_within(client, url, headers, Duration::from_secs(3))
}

fn get_within(
    client: &Client,
    url: &str,
    headers: &[(&str, &str)],
    connect: Duration,
) -> Result<(u16, Vec<u8>), Error> {
    let prepared = client.prepare(&RequestParts {
        method: "GET",
        url,
        headers,
        body: None,
    })?;
    let mut exchange = client.send(&prepared, None, timeouts(connect), &NeverInterrupt)?;
    let mut body = Vec::new();
    exchange.read_to_end(&mut body, &NeverInterrupt)?;
    let status = exchange.status();
    exchange.finish();
    Ok((status, body))
}

fn wire(client: &Client, url: &str, headers: &[(&str, &str)]) -> String {
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url,
            headers,
            body: None,
        })
        .expect("valid request");
    String::from_utf8(prepared.wire().to_vec()).unwrap()
}

#[track_caller]
fn expect_error<T>(result: Result<T, Error>) -> Error {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";

// ---------------------------------------------------------------- forwarding (http targets)

#[test]
fn http_target_goes_to_the_proxy_in_absolute_form_with_its_credentials() {
    let proxy = ScriptedProxy::start(|conn| {
        while conn.read_head().is_some() {
            conn.write(OK);
        }
    });
    let client = client_via(Some(proxy.url("user:p%40ss@")), None, None);
    let got = get(
        &client,
        "http://origin.test:8080/path?q=1#frag",
        &[("Accept", "*/*")],
    );
    assert_eq!(got.unwrap(), (200, b"hi".to_vec()));
    // "user:p@ss" in base64.
    let expected = "GET http://origin.test:8080/path?q=1 HTTP/1.1\r\n\
                    Host: origin.test:8080\r\n\
                    Accept: */*\r\n\
                    Proxy-Authorization: Basic dXNlcjpwQHNz\r\n\r\n";
    assert_eq!(
        String::from_utf8(proxy.received(0, expected.len())).unwrap(),
        expected
    );
}

#[test]
fn forwarded_requests_share_one_keep_alive_connection_to_the_proxy() {
    let proxy = ScriptedProxy::start(|conn| {
        while conn.read_head().is_some() {
            conn.write(OK);
        }
    });
    let client = client_via(Some(proxy.url("")), None, None);
    for url in ["http://a.test/1", "http://b.test:81/2", "http://a.test/3"] {
        assert_eq!(get(&client, url, &[]).unwrap().0, 200);
    }
    assert_eq!(proxy.accepted(), 1, "one pooled connection to the proxy");
    let expected = "GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\n\
                    GET http://b.test:81/2 HTTP/1.1\r\nHost: b.test:81\r\n\r\n\
                    GET http://a.test/3 HTTP/1.1\r\nHost: a.test\r\n\r\n";
    assert_eq!(
        String::from_utf8(proxy.received(0, expected.len())).unwrap(),
        expected
    );
}

#[test]
fn a_callers_proxy_authorization_is_kept_for_a_forwarding_proxy_not_doubled() {
    let client = client_via(Some("http://u:p@127.0.0.1:1".into()), None, None);
    let sent = wire(
        &client,
        "http://o.test/",
        &[("proxy-authorization", "Bearer t")],
    );
    assert_eq!(
        sent,
        "GET http://o.test/ HTTP/1.1\r\nHost: o.test\r\nproxy-authorization: Bearer t\r\n\r\n"
    );
}

// ---------------------------------------------------------------- CONNECT (https targets)

#[test]
fn https_target_opens_a_tunnel_with_exact_connect_bytes_then_tls_for_the_origin() {
    let proxy = ScriptedProxy::start(|conn| {
        if conn.read_head().is_some() {
            conn.write(b"HTTP/1.1 200 Connection established\r\n\r\n");
            // The client's next bytes: its TLS ClientHello to the origin.
            while conn.pending.len() < 200 && conn.read_more().is_some() {}
        }
    });
    let client = client_via(None, Some(proxy.url("u:p@")), None);
    let err = expect_error(get(&client, "https://origin.test/secret?x=1", &[]));
    // The scripted proxy is no TLS server: the handshake fails after it.
    assert!(
        matches!(err.kind(), ErrorKind::Tls | ErrorKind::Connect),
        "{err:?}"
    );
    let connect = "CONNECT origin.test:443 HTTP/1.1\r\n\
                   Host: origin.test:443\r\n\
                   Proxy-Authorization: Basic dTpw\r\n\r\n";
    let received = proxy.received(0, connect.len() + 6);
    assert_eq!(&received[..connect.len()], connect.as_bytes());
    let hello = &received[connect.len()..];
    // A TLS handshake record carrying the origin's name (SNI), nothing in clear.
    assert_eq!(&hello[..1], &[0x16], "TLS handshake record");
    assert!(hello.windows(11).any(|w| w == b"origin.test"), "SNI");
    assert!(!hello.windows(6).any(|w| w == b"secret"));
}

#[test]
fn connect_to_an_ipv6_origin_brackets_the_authority() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        conn.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let err = expect_error(get(&client, "https://[::1]:8443/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    let expected = "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n";
    assert_eq!(
        String::from_utf8(proxy.received(0, expected.len())).unwrap(),
        expected
    );
}

#[test]
fn g26_407_is_a_proxy_error_and_nothing_else_is_sent() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        conn.write(
            b"HTTP/1.1 407 Proxy Authentication Required\r\n\
              Proxy-Authenticate: Basic realm=\"p\"\r\nContent-Length: 0\r\n\r\n",
        );
        conn.read_to_close();
    });
    let client = client_via(None, Some(proxy.url("user:hunter2@")), None);
    let err = expect_error(get(&client, "https://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    let message = err.to_string();
    assert!(message.contains("407"), "{message}");
    assert!(message.contains("refused the credentials"), "{message}");
    assert!(
        !message.contains("hunter2") && !message.contains("user"),
        "{message}"
    );
    assert!(!format!("{err:?}").contains("hunter2"));
    // The connection was closed right after the answer (the proxy's read
    // saw EOF): it received the CONNECT head and nothing more.
    assert!(proxy.wait_finished(1), "the client closed the connection");
    let connect = "CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\
                   Proxy-Authorization: Basic dXNlcjpodW50ZXIy\r\n\r\n";
    assert_eq!(String::from_utf8(proxy.received(0, 0)).unwrap(), connect);
}

#[test]
fn g26_407_without_credentials_says_they_are_required() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        conn.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n");
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let err = expect_error(get(&client, "https://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    assert!(err.to_string().contains("requires credentials"), "{err}");
}

#[test]
fn g26_500_is_a_proxy_error_naming_the_status() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        conn.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops");
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let err = expect_error(get(&client, "https://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    assert!(
        err.to_string()
            .contains("refused to open a tunnel to origin.test:443: 500 Internal Server Error"),
        "{err}"
    );
}

#[test]
fn proxy_closing_mid_connect_answer_is_a_proxy_error() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        conn.write(b"HTTP/1.1 200 Connec");
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let err = expect_error(get(&client, "https://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    assert!(err.to_string().contains("in the middle of"), "{err}");
}

#[test]
fn proxy_closing_before_answering_connect_is_a_proxy_error() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let err = expect_error(get(&client, "https://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    assert!(err.to_string().contains("before its answer"), "{err}");
}

#[test]
fn proxy_that_never_answers_connect_is_a_connect_timeout_on_time() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_to_close();
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let started = Instant::now();
    let err = expect_error(get_within(
        &client,
        "https://origin.test/",
        &[],
        Duration::from_millis(300),
    ));
    assert_eq!(err.kind(), ErrorKind::ConnectTimeout, "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn proxy_dripping_its_connect_answer_is_stopped_by_one_connect_timeout() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: yes\r\n\r\n" {
            conn.write(&[*byte]);
            thread::sleep(Duration::from_millis(100));
        }
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let started = Instant::now();
    let err = expect_error(get_within(
        &client,
        "https://origin.test/",
        &[],
        Duration::from_millis(400),
    ));
    assert_eq!(err.kind(), ErrorKind::ConnectTimeout, "{err:?}");
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn bytes_after_the_connect_answer_are_refused() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        conn.write(b"HTTP/1.1 200 OK\r\n\r\n\x16\x03\x03junk");
        conn.read_to_close();
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let err = expect_error(get(&client, "https://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    assert!(err.to_string().contains("unexpected bytes"), "{err}");
}

#[test]
fn oversized_connect_answer_is_bounded() {
    let proxy = ScriptedProxy::start(|conn| {
        conn.read_head();
        conn.write(b"HTTP/1.1 200 OK\r\n");
        let line = format!("X: {}\r\n", "a".repeat(1000));
        for _ in 0..400 {
            conn.write(line.as_bytes());
        }
    });
    let client = client_via(None, Some(proxy.url("")), None);
    let err = expect_error(get(&client, "https://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
}

#[test]
fn unreachable_proxy_is_a_proxy_error_naming_it_without_credentials() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let client = client_via(
        Some(format!("http://u:hunter2@127.0.0.1:{port}")),
        None,
        None,
    );
    let err = expect_error(get(&client, "http://origin.test/", &[]));
    assert_eq!(err.kind(), ErrorKind::Proxy);
    let message = err.to_string();
    assert!(
        message.contains(&format!("proxy http://127.0.0.1:{port}")),
        "{message}"
    );
    assert!(!message.contains("hunter2"));
}

#[test]
fn tunnelled_request_never_carries_proxy_authorization_to_the_origin() {
    let client = client_via(None, Some("http://u:p@127.0.0.1:1".into()), None);
    let sent = wire(
        &client,
        "https://o.test/x",
        &[("Proxy-Authorization", "Basic c2VjcmV0"), ("Accept", "*/*")],
    );
    assert_eq!(
        sent,
        "GET /x HTTP/1.1\r\nHost: o.test\r\nAccept: */*\r\n\r\n"
    );
}

#[test]
fn bad_proxy_urls_fail_when_the_client_is_built_with_credentials_masked() {
    let build = |url: &str| {
        Client::with_proxies(
            PoolConfig {
                max_connections: None,
                max_keepalive: None,
                keepalive_expiry: None,
                ..PoolConfig::default()
            },
            TlsOptions::default(),
            &ProxySettings {
                http: Some(url.to_owned()),
                ..ProxySettings::default()
            },
        )
        .map(|_| ())
    };
    let err = expect_error(build("ftp://u:hunter2@127.0.0.1:1080"));
    assert_eq!(err.kind(), ErrorKind::UnsupportedProtocol);
    assert!(!err.to_string().contains("hunter2"), "{err}");
    let err = expect_error(build("http://u:hunter2@[::1"));
    assert_eq!(err.kind(), ErrorKind::InvalidUrl);
    assert!(!err.to_string().contains("hunter2"), "{err}");
    // host:port alone is an http proxy.
    build("127.0.0.1:3128").unwrap();
}

// ---------------------------------------------------------------- NO_PROXY

#[test]
fn no_proxy_bypass_sends_origin_form_direct() {
    let client = client_via(
        Some("http://127.0.0.1:1".into()),
        Some("http://127.0.0.1:1".into()),
        Some("internal.test, 10.0.0.0/8"),
    );
    assert_eq!(
        wire(&client, "http://api.internal.test/a", &[]),
        "GET /a HTTP/1.1\r\nHost: api.internal.test\r\n\r\n"
    );
    assert_eq!(
        wire(&client, "http://10.1.2.3/a", &[]),
        "GET /a HTTP/1.1\r\nHost: 10.1.2.3\r\n\r\n"
    );
    assert_eq!(
        wire(&client, "http://example.test/a", &[]),
        "GET http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n"
    );
}

#[test]
fn g27_no_proxy_domains_match_themselves_and_subdomains() {
    let list = NoProxy::parse("example.com");
    assert!(list.matches("example.com", 80));
    assert!(list.matches("www.example.com", 443));
    assert!(list.matches("a.b.example.com", 1));
    assert!(!list.matches("notexample.com", 80));
    assert!(!list.matches("example.com.evil", 80));
    assert!(!list.matches("com", 80));
}

#[test]
fn g27_leading_dot_matches_subdomains_and_the_domain_itself_like_curl() {
    for entry in [".example.com", "*.example.com"] {
        let list = NoProxy::parse(entry);
        assert!(list.matches("www.example.com", 80), "{entry}");
        assert!(list.matches("example.com", 80), "{entry}");
        assert!(!list.matches("badexample.com", 80), "{entry}");
    }
}

#[test]
fn g27_case_trailing_dots_and_separators() {
    let list = NoProxy::parse(" Example.COM. ,\tlocalhost  other.test,,");
    assert!(list.matches("www.example.com", 80));
    assert!(list.matches("example.com.", 80));
    assert!(list.matches("localhost", 8000));
    assert!(list.matches("other.test", 80));
    assert!(!list.matches("example.org", 80));
    assert!(NoProxy::parse(" , ").is_empty());
}

#[test]
fn g27_star_matches_everything() {
    let list = NoProxy::parse("foo.test, *");
    assert!(list.matches("anything.example", 80));
    assert!(list.matches("10.0.0.1", 80));
    assert!(list.matches("::1", 443));
}

#[test]
fn g27_ip_literals_and_cidr_blocks() {
    let list =
        NoProxy::parse("192.168.1.10, 10.0.0.0/8, ::1, [fe80::1], 2001:db8::/32, 172.16.0.0/12");
    assert!(list.matches("192.168.1.10", 80));
    assert!(!list.matches("192.168.1.11", 80));
    assert!(list.matches("10.255.0.1", 80));
    assert!(!list.matches("11.0.0.1", 80));
    assert!(list.matches("172.31.255.255", 80));
    assert!(!list.matches("172.32.0.0", 80));
    assert!(list.matches("::1", 80));
    assert!(list.matches("fe80::1", 80));
    assert!(list.matches("2001:db8:1::5", 80));
    assert!(!list.matches("2001:db9::5", 80));
    // Names are not resolved: an IP entry never matches a host name.
    assert!(!NoProxy::parse("127.0.0.1").matches("localhost", 80));
    // A prefix of /0 matches every address of its family.
    assert!(NoProxy::parse("0.0.0.0/0").matches("8.8.8.8", 80));
    assert!(!NoProxy::parse("0.0.0.0/0").matches("::1", 80));
    assert!(NoProxy::parse("::1/128").matches("::1", 80));
    assert!(!NoProxy::parse("::1/128").matches("::2", 80));
}

#[test]
fn g27_ports_restrict_a_match() {
    let list = NoProxy::parse("example.com:8080, 10.0.0.1:443, [::1]:8443");
    assert!(list.matches("example.com", 8080));
    assert!(list.matches("sub.example.com", 8080));
    assert!(!list.matches("example.com", 80));
    assert!(list.matches("10.0.0.1", 443));
    assert!(!list.matches("10.0.0.1", 80));
    assert!(list.matches("::1", 8443));
    assert!(!list.matches("::1", 80));
}

#[test]
fn g27_malformed_entries_are_skipped_not_fatal() {
    let list = NoProxy::parse("10.0.0.0/33, example.com:99999, [::1, good.test");
    assert!(!list.matches("10.0.0.1", 80));
    assert!(!list.matches("example.com", 80));
    assert!(list.matches("good.test", 80));
}
