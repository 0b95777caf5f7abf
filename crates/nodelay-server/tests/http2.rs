//! HTTP/2: h2c prior knowledge next to HTTP/1.1 on a plain port, `h2` and
//! `http/1.1` by ALPN on a TLS port, many streams on one connection, and the
//! generated crawl site.

mod common;

use std::sync::Arc;

use bytes::Bytes;
use nodelay_server::{start, ServerConfig, ServerHandle, TlsIdentity, TEST_CA_PEM};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

fn h2_server(tls: bool) -> ServerHandle {
    start(ServerConfig {
        http2: true,
        tls: tls.then(TlsIdentity::localhost),
        ..ServerConfig::default()
    })
    .expect("server starts")
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async move {
            tokio::time::timeout(common::READ_TIMEOUT, f)
                .await
                .expect("test finished in time")
        })
}

async fn tls_connect(
    server: &ServerHandle,
    alpn: &[&[u8]],
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(TEST_CA_PEM.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = TcpStream::connect(server.addr()).await.unwrap();
    TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .expect("handshake with the built-in test certificate")
}

/// Sends `count` GETs of `path` at once on one h2 connection; returns the bodies.
async fn h2_gets<T: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    io: T,
    path: &str,
    count: usize,
) -> Vec<(u16, http::HeaderMap, Vec<u8>)> {
    let (client, connection) = h2::client::handshake(io).await.expect("h2 handshake");
    tokio::spawn(connection);
    let mut pending = Vec::new();
    for _ in 0..count {
        let mut client = client.clone().ready().await.unwrap();
        let request = http::Request::get(format!("http://localhost{path}"))
            .body(())
            .unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        pending.push(response);
    }
    let mut out = Vec::new();
    for response in pending {
        let response = response.await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk: Bytes = chunk.unwrap();
            let _ = body.flow_control().release_capacity(chunk.len());
            bytes.extend_from_slice(&chunk);
        }
        out.push((status, headers, bytes));
    }
    out
}

#[test]
fn h2c_prior_knowledge_multiplexes_on_one_connection() {
    let server = h2_server(false);
    let responses = block_on(async {
        let tcp = TcpStream::connect(server.addr()).await.unwrap();
        h2_gets(tcp, "/bytes/202", 20).await
    });
    assert_eq!(responses.len(), 20);
    for (status, _, body) in &responses {
        assert_eq!(*status, 200);
        assert_eq!(body.len(), 202);
    }
    assert_eq!(server.connections_accepted(), 1);
    assert_eq!(server.requests_served(), 20);
}

#[test]
fn http1_still_works_on_an_h2c_port() {
    let server = h2_server(false);
    let mut conn = common::Conn::open(server.addr());
    let response = conn.get("/bytes/10");
    assert_eq!(response.status, 200);
    assert_eq!(response.body.len(), 10);
    // Keep-alive works after the protocol sniffing.
    assert_eq!(conn.get("/bytes/3").body.len(), 3);
}

#[test]
fn tls_alpn_chooses_h2() {
    let server = h2_server(true);
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let responses = block_on(async {
        let tls = tls_connect(&server, &[b"h2", b"http/1.1"]).await;
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        // 3 × 20000 stays inside the default 64 KiB connection window, which
        // this test reads stream by stream.
        h2_gets(tls, "/chunked/20000", 3).await
    });
    for (status, _, body) in responses {
        assert_eq!(status, 200);
        assert_eq!(body.len(), 20_000);
    }
}

#[test]
fn tls_alpn_falls_back_to_http1() {
    let server = h2_server(true);
    let head = block_on(async {
        let mut tls = tls_connect(&server, &[b"http/1.1"]).await;
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
        tls.write_all(b"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut out = Vec::new();
        tls.read_to_end(&mut out).await.unwrap_or_default();
        String::from_utf8_lossy(&out).into_owned()
    });
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
}

#[test]
fn tls_without_http2_offers_only_http1() {
    let server = start(ServerConfig {
        tls: Some(TlsIdentity::localhost()),
        ..ServerConfig::default()
    })
    .unwrap();
    block_on(async {
        let tls = tls_connect(&server, &[b"h2", b"http/1.1"]).await;
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    });
}

#[test]
fn site_pages_link_to_each_other_with_cache_headers() {
    let server = h2_server(false);
    let responses = block_on(async {
        let tcp = TcpStream::connect(server.addr()).await.unwrap();
        h2_gets(tcp, "/site/", 1).await
    });
    let (status, headers, body) = &responses[0];
    assert_eq!(*status, 200);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["cache-control"], "public, max-age=3600");
    assert!(headers.contains_key("etag") && headers.contains_key("last-modified"));
    let html = String::from_utf8_lossy(body);
    assert_eq!(
        html.matches("<a href=\"/site/").count(),
        10 + 1,
        "home and ten pages"
    );
    assert!(html.contains("href=\"/site/1.html\""));

    // Over HTTP/1.1 too, and a matching If-None-Match is answered 304.
    let mut conn = common::Conn::open(server.addr());
    let page = conn.get("/site/499.html");
    assert_eq!(page.status, 200);
    let etag = page.header("etag").unwrap().to_owned();
    conn.send(
        format!("GET /site/499.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n")
            .as_bytes(),
    );
    assert_eq!(conn.read_response(false).status, 304);
    assert_eq!(conn.get("/site/500.html").status, 404);
}
