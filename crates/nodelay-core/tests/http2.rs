//! The HTTP/2 driver against the embedded server: h2c with prior knowledge,
//! h2 by ALPN over TLS, fallback to HTTP/1.1 when the server offers only it,
//! many threads multiplexed over one connection, every read path.

mod support;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use nodelay_core::{
    Client, Error, Http2Mode, NeverInterrupt, RequestParts, Timeouts, TlsOptions, Version,
};
use nodelay_server::{pattern, ServerConfig, ServerHandle, TlsIdentity};

fn server(http2: bool, tls: bool) -> ServerHandle {
    nodelay_server::start(ServerConfig {
        http2,
        tls: tls.then(TlsIdentity::localhost),
        ..ServerConfig::default()
    })
    .expect("start the embedded server")
}

fn client(mode: Http2Mode) -> Client {
    Client::with_http2(
        support::pool(Some(100), 20),
        TlsOptions {
            ca_file: Some(support::ca_file()),
            ..TlsOptions::default()
        },
        mode,
    )
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(5))
}

/// Version, status and whole body.
fn request(
    client: &Client,
    method: &str,
    url: &str,
    body: Option<&[u8]>,
) -> Result<(Version, u16, Vec<u8>), Error> {
    let prepared = client.prepare(&RequestParts {
        method,
        url,
        headers: &[("User-Agent", "test"), ("Connection", "keep-alive")],
        body,
    })?;
    let mut exchange = client.send(&prepared, body, timeouts(), &NeverInterrupt)?;
    let mut out = Vec::new();
    exchange.read_to_end(&mut out, &NeverInterrupt)?;
    let status = exchange.status();
    let version = exchange.version();
    exchange.finish();
    Ok((version, status, out))
}

#[test]
fn prior_knowledge_speaks_h2c() {
    let server = server(true, false);
    let client = client(Http2Mode::PriorKnowledge);
    for path in [
        "/bytes/202",
        "/chunked/100000",
        "/bytes/3000000",
        "/bytes/0",
    ] {
        let (version, status, body) =
            request(&client, "GET", &format!("{}{path}", server.url()), None).unwrap();
        assert_eq!((version, status), (Version::Http2, 200), "{path}");
        let n: usize = path.rsplit('/').next().unwrap().parse().unwrap();
        assert_eq!(body, pattern(n), "{path}");
    }
    let (_, status, body) = request(
        &client,
        "POST",
        &format!("{}/echo", server.url()),
        Some(b"hello h2"),
    )
    .unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"hello h2"[..]));
    let (_, status, body) =
        request(&client, "HEAD", &format!("{}/bytes/50", server.url()), None).unwrap();
    assert_eq!((status, body.len()), (200, 0));
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn exact_and_streamed_reads_over_h2() {
    let server = server(true, false);
    let client = client(Http2Mode::PriorKnowledge);
    for n in [202usize, 200_000] {
        let url = format!("{}/bytes/{n}", server.url());
        let prepared = client
            .prepare(&RequestParts {
                method: "GET",
                url: &url,
                headers: &[],
                body: None,
            })
            .unwrap();
        let mut exchange = client
            .send(&prepared, None, timeouts(), &NeverInterrupt)
            .unwrap();
        assert_eq!(exchange.content_length(), Some(n as u64));
        let mut dst = vec![0; n];
        exchange.read_exact_into(&mut dst, &NeverInterrupt).unwrap();
        assert_eq!(dst, pattern(n));
        exchange.finish();

        let mut exchange = client
            .send(&prepared, None, timeouts(), &NeverInterrupt)
            .unwrap();
        let mut out = Vec::new();
        let mut piece = [0u8; 7000];
        loop {
            let got = exchange.read_some(&mut piece, &NeverInterrupt).unwrap();
            if got == 0 {
                break;
            }
            out.extend_from_slice(&piece[..got]);
        }
        assert!(exchange.is_complete());
        assert_eq!(out, pattern(n));
    }
}

#[test]
fn alpn_negotiates_h2_over_tls() {
    let server = server(true, true);
    let client = client(Http2Mode::Negotiate);
    let (version, status, body) =
        request(&client, "GET", &format!("{}/bytes/202", server.url()), None).unwrap();
    assert_eq!((version, status, body.len()), (Version::Http2, 200, 202));
    let (version, _, _) =
        request(&client, "GET", &format!("{}/site/", server.url()), None).unwrap();
    assert_eq!(version, Version::Http2);
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn alpn_falls_back_to_http1_and_reuses_the_negotiated_connection() {
    let server = server(false, true);
    let client = client(Http2Mode::Negotiate);
    for _ in 0..3 {
        let (version, status, body) =
            request(&client, "GET", &format!("{}/bytes/202", server.url()), None).unwrap();
        assert_eq!((version, status, body.len()), (Version::Http11, 200, 202));
    }
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn http_urls_stay_on_http1_when_negotiating() {
    let server = server(true, false);
    let client = client(Http2Mode::Negotiate);
    let (version, _, _) =
        request(&client, "GET", &format!("{}/bytes/1", server.url()), None).unwrap();
    assert_eq!(version, Version::Http11);
}

#[test]
fn threads_multiplex_over_one_connection() {
    let server = server(true, false);
    let client = Arc::new(client(Http2Mode::PriorKnowledge));
    let url = format!("{}/bytes/202", server.url());
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let client = Arc::clone(&client);
            let url = url.clone();
            thread::spawn(move || {
                for _ in 0..20 {
                    let (version, status, body) = request(&client, "GET", &url, None).unwrap();
                    assert_eq!((version, status), (Version::Http2, 200));
                    assert_eq!(body, pattern(202));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(server.requests_served(), 16 * 20);
    assert_eq!(server.connections_accepted(), 1);
}
