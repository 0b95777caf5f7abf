//! Counters, keep-alive, `Connection: close` and shutdown.

mod common;

use std::net::{TcpListener, TcpStream};

use common::{get, server, Conn};

#[test]
fn two_requests_on_one_connection_count_one_connection() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    assert_eq!(conn.get("/bytes/1").status, 200);
    assert_eq!(conn.get("/bytes/2").status, 200);
    assert_eq!(server.requests_served(), 2);
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn stats_reports_the_same_counters() {
    let server = server();
    let first = get(&server, "/bytes/1");
    let mut conn = Conn::open(server.addr());
    // The /stats request counts itself; bytes are counted on the socket: both
    // requests were read, only the first answer was written before /stats ran.
    let received = "GET /bytes/1 HTTP/1.1\r\nHost: test\r\n\r\n".len()
        + "GET /stats HTTP/1.1\r\nHost: test\r\n\r\n".len();
    let stats = conn.get("/stats").text();
    let prefix = format!(
        r#"{{"connections": 2, "requests": 2, "bytes_received": {received}, "bytes_sent": "#
    );
    assert!(stats.starts_with(&prefix), "{stats}");
    let sent: usize = stats[prefix.len()..stats.len() - 1].parse().unwrap();
    assert!(sent > first.body.len(), "{stats}");
    assert_eq!(server.requests_served(), 2);
}

#[test]
fn connection_close_is_honoured() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(b"GET /bytes/5 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    let response = conn.read_response(false);
    assert_eq!(response.body, b"abcde");
    assert_eq!(response.header("connection"), Some("close"));
    conn.expect_closed();
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\nGET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(conn.read_response(false).body, b"a");
    assert_eq!(conn.read_response(false).body, b"ab");
}

#[test]
fn url_names_the_bound_port() {
    let server = server();
    assert_ne!(server.addr().port(), 0);
    assert_eq!(
        server.url(),
        format!("http://127.0.0.1:{}", server.addr().port())
    );
}

#[test]
fn shutdown_closes_connections_frees_the_port_and_is_idempotent() {
    let server = server();
    let addr = server.addr();
    let mut idle = Conn::open(addr);
    assert_eq!(idle.get("/bytes/1").status, 200);
    server.shutdown();
    // The runtime thread has been joined: its connections are closed ...
    idle.expect_closed();
    // ... nothing listens any more ...
    assert!(TcpStream::connect(addr).is_err());
    // ... and the port can be bound again.
    drop(TcpListener::bind(addr).expect("port is free after shutdown"));
    server.shutdown();
}

#[test]
fn drop_shuts_down() {
    let addr = server().addr();
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn multi_worker_servers_serve_too() {
    let server = nodelay_server::start(nodelay_server::ServerConfig {
        workers: 2,
        ..Default::default()
    })
    .unwrap();
    let mut conn = Conn::open(server.addr());
    assert_eq!(conn.get("/bytes/7").body, b"abcdefg");
    server.shutdown();
    conn.expect_closed();
}

#[test]
fn bind_errors_surface_from_start() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let config = nodelay_server::ServerConfig {
        port: taken.local_addr().unwrap().port(),
        ..Default::default()
    };
    assert!(nodelay_server::start(config).is_err());
}

#[test]
fn handle_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<nodelay_server::ServerHandle>();
}
