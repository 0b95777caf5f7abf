//! The async HTTP/1.1 driver (`nodelay_core::aio`) on the process runtime:
//! against the embedded server (reuse, framings, decoding whole and
//! streamed, many tasks on one client) and against scripted raw sockets
//! (truncated bodies, timeouts on time, stale keep-alive, pool timeout,
//! cancellation that closes a half-used connection). Loopback only.

#[path = "support/scripted.rs"]
mod scripted;
mod support;

use std::io::Write as _;
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use nodelay_core::aio::{AsyncBodyStream, AsyncClient};
use nodelay_core::{prepare, runtime, Error, ErrorKind, RequestParts, Timeouts};
use nodelay_server::{pattern, ServerConfig, ServerHandle};
use scripted::Step::*;
use scripted::{ok, write, Server, Step};

fn server() -> ServerHandle {
    support::embedded_server()
}

fn client_with(max_connections: Option<usize>) -> AsyncClient {
    AsyncClient::new(support::pool(max_connections, 20))
}

fn client() -> AsyncClient {
    client_with(Some(100))
}

fn timeouts() -> Timeouts {
    support::each_phase_within(Duration::from_secs(5))
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    runtime::handle().block_on(f)
}

async fn fetch_with(
    client: &AsyncClient,
    method: &str,
    url: &str,
    body: Option<&[u8]>,
    t: Timeouts,
) -> Result<(u16, Vec<u8>), Error> {
    let prepared = prepare(&RequestParts {
        method,
        url,
        headers: &[],
        body,
    })?;
    let exchange = client.send(&prepared, body, t).await?;
    let status = exchange.status();
    let content = exchange.read_whole(1 << 30).await?.body;
    Ok((status, content))
}

async fn get(client: &AsyncClient, url: &str) -> Result<(u16, Vec<u8>), Error> {
    fetch_with(client, "GET", url, None, timeouts()).await
}

async fn stream(client: &AsyncClient, url: &str, decode: bool) -> Result<Vec<Vec<u8>>, Error> {
    let prepared = prepare(&RequestParts {
        method: "GET",
        url,
        headers: &[("Accept-Encoding", "gzip, deflate, br, zstd")],
        body: None,
    })?;
    let exchange = client.send(&prepared, None, timeouts()).await?;
    let codings = if decode {
        exchange.content_codings()?.unwrap_or_default()
    } else {
        Vec::new()
    };
    let mut body = AsyncBodyStream::new(exchange, &codings, 1 << 30)?;
    let mut pieces = Vec::new();
    loop {
        let piece = body.read(256 * 1024, 64 * 1024).await?;
        if piece.is_empty() {
            return Ok(pieces);
        }
        pieces.push(piece);
    }
}

// ---------------------------------------------------------------- embedded server

#[test]
fn a_small_body_ends_with_its_one_piece() {
    // The last bytes of a Content-Length body end it at once: the stream
    // reports its end and the connection is back in the pool, no read left.
    let server = server();
    let client = client();
    let url = format!("{}/bytes/202", server.url());
    block_on(async {
        let prepared = prepare(&RequestParts {
            method: "GET",
            url: &url,
            headers: &[],
            body: None,
        })
        .unwrap();
        let exchange = client.send(&prepared, None, timeouts()).await.unwrap();
        let mut body = AsyncBodyStream::new(exchange, &[], 1 << 30).unwrap();
        assert!(!body.is_ended());
        let piece = body.read(256 * 1024, 64 * 1024).await.unwrap();
        assert_eq!(piece, pattern(202));
        assert!(body.is_ended());
        assert_eq!(client.idle_connections(), 1);
        assert!(body.read(256 * 1024, 64 * 1024).await.unwrap().is_empty());
    });
}

#[test]
fn sequential_gets_reuse_one_connection() {
    let server = server();
    let client = client();
    let url = format!("{}/bytes/202", server.url());
    block_on(async {
        for _ in 0..50 {
            let (status, body) = get(&client, &url).await.unwrap();
            assert_eq!(status, 200);
            assert_eq!(body, pattern(202));
        }
    });
    assert_eq!(server.connections_accepted(), 1);
    assert_eq!(client.idle_connections(), 1);
}

#[test]
fn every_framing_and_size_reads_whole() {
    let server = server();
    let client = client();
    block_on(async {
        for n in [0, 1, 202, 65_535, 65_536, 300_000, 3 << 20] {
            for route in ["bytes", "chunked"] {
                let url = format!("{}/{route}/{n}", server.url());
                let (status, body) = get(&client, &url).await.unwrap();
                assert_eq!(status, 200, "{url}");
                assert_eq!(body.len(), n, "{url}");
                assert!(body == pattern(n), "{url}: body differs");
            }
        }
    });
}

#[test]
fn post_bodies_small_and_large_are_echoed() {
    let server = server();
    let client = client();
    let url = format!("{}/echo", server.url());
    block_on(async {
        for n in [0, 10, 64 * 1024, 64 * 1024 + 1, 1 << 20] {
            let sent = pattern(n);
            let (status, body) = fetch_with(&client, "POST", &url, Some(&sent), timeouts())
                .await
                .unwrap();
            assert_eq!(status, 200);
            assert!(body == sent, "echo of {n} bytes differs");
        }
    });
}

#[test]
fn compressed_bodies_decode_whole_and_streamed() {
    let server = server();
    let client = client();
    block_on(async {
        for coding in ["gzip", "deflate", "brotli", "zstd"] {
            for n in [10, 100_000, 2 << 20] {
                let url = format!("{}/{coding}/{n}", server.url());
                let prepared = prepare(&RequestParts {
                    method: "GET",
                    url: &url,
                    headers: &[("Accept-Encoding", "gzip, deflate, br, zstd")],
                    body: None,
                })
                .unwrap();
                let exchange = client.send(&prepared, None, timeouts()).await.unwrap();
                let whole = exchange.read_whole(1 << 30).await.unwrap().body;
                assert!(whole == pattern(n), "{url}: whole body differs");

                let pieces = stream(&client, &url, true).await.unwrap();
                let streamed: Vec<u8> = pieces.concat();
                assert!(streamed == pattern(n), "{url}: streamed body differs");
                let raw = stream(&client, &url, false).await.unwrap().concat();
                assert!(raw.len() < n || n < 100, "{url}: raw body is encoded");
            }
        }
    });
    // Every stream was read to the end: their connections were reused.
    assert!(client.idle_connections() >= 1);
}

#[test]
fn streamed_pieces_are_big_while_the_body_keeps_coming() {
    let server = server();
    let client = client();
    let url = format!("{}/bytes/{}", server.url(), 4 << 20);
    let pieces = block_on(stream(&client, &url, true)).unwrap();
    assert!(pieces
        .iter()
        .all(|p| !p.is_empty() && p.len() <= 256 * 1024));
    // A piece is what has arrived (a server that falls behind for a moment
    // gives a smaller one), grown towards 64 KiB with what is already there.
    let mean = (4 << 20) / pieces.len();
    assert!(mean >= 64 * 1024, "mean piece {mean} bytes");
    assert_eq!(pieces.concat(), pattern(4 << 20));
}

#[test]
fn hundred_concurrent_tasks_share_one_client() {
    let server = nodelay_server::start(ServerConfig {
        workers: 2,
        ..ServerConfig::default()
    })
    .unwrap();
    let client = client_with(Some(32));
    let rt = runtime::handle();
    let results = rt.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..100 {
            let client = client.clone();
            let url = format!("{}/bytes/{}", server.url(), 100 + i);
            tasks.push(tokio::spawn(async move {
                let (status, body) = get(&client, &url).await?;
                Ok::<_, Error>((i, status, body))
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap().unwrap());
        }
        out
    });
    for (i, status, body) in results {
        assert_eq!(status, 200);
        assert_eq!(body, pattern(100 + i), "response {i} crossed");
    }
    assert!(server.connections_accepted() <= 32);
}

// ---------------------------------------------------------------- scripted server

/// The scripted server, each connection held open once its script ends (until
/// the test ends), as a kept-alive connection of a real server is.
fn scripted(scripts: Vec<Vec<Step>>) -> Server {
    Server::start(
        scripts
            .into_iter()
            .map(|mut script| {
                script.push(Hang);
                script
            })
            .collect(),
    )
}

#[test]
fn get_sends_exactly_the_prepared_bytes_in_one_buffer() {
    let server = scripted(vec![vec![ReadRequest, Write(ok("hi").into_bytes())]]);
    let client = client();
    let url = server.url("/a?b=c");
    let (status, body) = block_on(get(&client, &url)).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"hi"[..]));
    let expected = format!(
        "GET /a?b=c HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        server.port()
    );
    assert_eq!(server.requests(), vec![(0, expected.into_bytes())]);
}

#[test]
fn body_shorter_than_content_length_then_close_is_an_error() {
    let server = scripted(vec![vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
        Close,
    ]]);
    let client = client();
    let e = block_on(get(&client, &server.url("/"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol);
    assert!(e.message().contains("received 3 of 10 bytes"), "{e}");
    assert_eq!(client.idle_connections(), 0);
}

#[test]
fn chunked_body_cut_mid_chunk_is_an_error_streamed_too() {
    let script = vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"),
        Close,
    ];
    let server = scripted(vec![script.clone(), script]);
    let client = client();
    let e = block_on(get(&client, &server.url("/"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol);
    let e = block_on(stream(&client, &server.url("/"), true)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RemoteProtocol);
    assert_eq!(client.idle_connections(), 0);
}

#[test]
fn server_that_never_answers_is_a_read_timeout_on_time() {
    let server = scripted(vec![vec![ReadRequest, Hang]]);
    let client = client();
    let mut t = timeouts();
    t.read = Some(Duration::from_millis(200));
    let started = Instant::now();
    let e = block_on(fetch_with(&client, "GET", &server.url("/"), None, t)).unwrap_err();
    let took = started.elapsed();
    assert_eq!(e.kind(), ErrorKind::ReadTimeout, "{e}");
    assert!(
        took >= Duration::from_millis(190) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[test]
fn total_deadline_bounds_a_dripping_body() {
    let mut script = vec![
        ReadRequest,
        write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"),
    ];
    for _ in 0..100 {
        script.push(write("x"));
        script.push(Sleep(Duration::from_millis(50)));
    }
    let server = scripted(vec![script]);
    let client = client();
    let mut t = timeouts();
    t.total = Some(Duration::from_millis(300));
    let started = Instant::now();
    let e = block_on(fetch_with(&client, "GET", &server.url("/"), None, t)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ReadTimeout, "{e}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn connect_refused_is_a_connect_error() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let client = client();
    let e = block_on(get(&client, &format!("http://127.0.0.1:{port}/"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connect, "{e}");
}

#[test]
fn stale_keep_alive_get_is_retried_once_on_a_fresh_connection() {
    let server = scripted(vec![
        vec![
            ReadRequest,
            Write(ok("one").into_bytes()),
            Sleep(Duration::from_millis(50)),
            Close,
        ],
        vec![ReadRequest, Write(ok("two").into_bytes())],
    ]);
    let client = client();
    block_on(async {
        assert_eq!(get(&client, &server.url("/")).await.unwrap().1, b"one");
        // Let the server close the idle connection; the liveness check may
        // see it or not (the retry rule covers both).
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(get(&client, &server.url("/")).await.unwrap().1, b"two");
    });
    assert_eq!(server.accepted(), 2);
}

#[test]
fn stale_connection_post_fails_without_replay() {
    // The first connection accepts the second request, then closes without
    // answering: a POST may have had effects, so it is not sent again.
    let server = scripted(vec![
        vec![
            ReadRequest,
            Write(ok("one").into_bytes()),
            ReadRequest,
            Close,
        ],
        vec![ReadRequest, Write(ok("two").into_bytes())],
    ]);
    let client = client();
    block_on(async {
        get(&client, &server.url("/")).await.unwrap();
        let e = fetch_with(&client, "POST", &server.url("/"), Some(b"x"), timeouts())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RemoteProtocol, "{e}");
    });
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.accepted(), 1);
}

#[test]
fn pool_timeout_when_the_only_connection_is_busy() {
    let server = scripted(vec![vec![ReadRequest, Hang]]);
    let client = client_with(Some(1));
    let url = server.url("/");
    let rt = runtime::handle();
    let busy = {
        let (client, url) = (client.clone(), url.clone());
        rt.spawn(async move { get(&client, &url).await })
    };
    thread::sleep(Duration::from_millis(100));
    let mut t = timeouts();
    t.pool = Some(Duration::from_millis(200));
    let started = Instant::now();
    let e = rt
        .block_on(fetch_with(&client, "GET", &url, None, t))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PoolTimeout, "{e}");
    assert!(started.elapsed() >= Duration::from_millis(190));
    busy.abort();
}

#[test]
fn cancelled_request_closes_its_connection_and_frees_its_slot() {
    let server = scripted(vec![
        // Head sent, body never finished: the request is cancelled mid-body.
        vec![
            ReadRequest,
            write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
            Hang,
        ],
        vec![ReadRequest, Write(ok("next").into_bytes())],
    ]);
    let client = client_with(Some(1));
    let url = server.url("/");
    let rt = runtime::handle();
    rt.block_on(async {
        let cancelled = tokio::time::timeout(Duration::from_millis(200), get(&client, &url)).await;
        assert!(cancelled.is_err(), "the request should still be waiting");
        // The half-read connection was closed, not pooled; its slot is free
        // (max_connections=1), so the next request opens a new connection.
        assert_eq!(client.idle_connections(), 0);
        let (_, body) = get(&client, &url).await.unwrap();
        assert_eq!(body, b"next");
    });
    assert_eq!(server.accepted(), 2);
}

#[test]
fn extra_bytes_after_the_body_are_never_the_next_response() {
    let server = scripted(vec![
        vec![
            ReadRequest,
            Write(format!("{}{}", ok("one"), ok("fake")).into_bytes()),
        ],
        vec![ReadRequest, Write(ok("two").into_bytes())],
    ]);
    let client = client();
    block_on(async {
        assert_eq!(get(&client, &server.url("/")).await.unwrap().1, b"one");
        assert_eq!(client.idle_connections(), 0);
        assert_eq!(get(&client, &server.url("/")).await.unwrap().1, b"two");
    });
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// A response whose framing is complete but whose gzip stream is cut short.
fn truncated_gzip_response() -> Vec<u8> {
    let encoded = gzip(&pattern(100_000));
    let cut = &encoded[..encoded.len() / 2];
    let mut wire = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        cut.len()
    )
    .into_bytes();
    wire.extend_from_slice(cut);
    wire
}

#[test]
fn truncated_encoded_stream_is_a_decoding_error_whole_and_streamed() {
    let script = vec![ReadRequest, Write(truncated_gzip_response())];
    let server = scripted(vec![script.clone(), script]);
    let client = client();
    let e = block_on(get(&client, &server.url("/"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Decoding, "{e}");
    let e = block_on(stream(&client, &server.url("/"), true)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Decoding, "{e}");
}

#[test]
fn streamed_gzip_bomb_stops_at_the_cap() {
    // 64 MiB of zeros compress to ~64 KiB: far beyond a 1 MiB cap.
    let encoded = gzip(&vec![0u8; 64 << 20]);
    let mut wire = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        encoded.len()
    )
    .into_bytes();
    wire.extend_from_slice(&encoded);
    let server = scripted(vec![vec![ReadRequest, Write(wire)]]);
    let client = client();
    let e = block_on(async {
        let prepared = prepare(&RequestParts {
            method: "GET",
            url: &server.url("/"),
            headers: &[],
            body: None,
        })?;
        let exchange = client.send(&prepared, None, timeouts()).await?;
        let codings = exchange.content_codings()?.unwrap_or_default();
        let mut body = AsyncBodyStream::new(exchange, &codings, 1 << 20)?;
        let mut total = 0;
        loop {
            let piece = body.read(256 * 1024, 64 * 1024).await?;
            if piece.is_empty() {
                return Ok::<usize, Error>(total);
            }
            total += piece.len();
        }
    })
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Decoding, "{e}");
    assert!(e.message().contains("exceeds the limit"), "{e}");
}
