//! `/bytes`, `/chunked` and `/json`: exact bodies and framing.

mod common;

use common::{get, pattern, server, Conn};

#[test]
fn bytes_202_has_exact_body_and_content_length() {
    let server = server();
    let response = get(&server, "/bytes/202");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-length"), Some("202"));
    assert_eq!(
        response.header("content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(response.header("transfer-encoding"), None);
    assert_eq!(response.body, pattern(202));
}

#[test]
fn bytes_0_and_large_sizes() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    let empty = conn.get("/bytes/0");
    assert_eq!(empty.header("content-length"), Some("0"));
    assert!(empty.body.is_empty());
    // Past the prebuilt 1 MiB buffer, so the shared pattern grows.
    let n = (1 << 20) + 37;
    assert_eq!(conn.get(&format!("/bytes/{n}")).body, pattern(n));
    assert_eq!(conn.get("/bytes/40").body, pattern(40));
}

#[test]
fn chunked_20000_arrives_chunked_and_dechunks_to_the_pattern() {
    let server = server();
    let response = get(&server, "/chunked/20000");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("transfer-encoding"), Some("chunked"));
    assert_eq!(response.header("content-length"), None);
    assert!(
        response.chunk_sizes.len() >= 3,
        "{:?}",
        response.chunk_sizes
    );
    assert!(response.chunk_sizes.iter().all(|&n| n <= 8192));
    assert_eq!(response.body, pattern(20000));
}

#[test]
fn json_is_at_least_n_bytes_with_ok_key() {
    let server = server();
    let response = get(&server, "/json/1000");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let text = response.text();
    assert!(text.len() >= 1000);
    assert!(text.starts_with(
        r#"{"id": 1, "ok": true, "items": [{"i":0,"name":"item-0","tags":["a","b"]}"#
    ));
    assert!(text.ends_with("]}"));
    // Cached documents are identical.
    assert_eq!(get(&server, "/json/1000").body, response.body);
}

#[test]
fn sizes_beyond_the_limits_are_400() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    for path in [
        "/bytes/1073741825",
        "/chunked/99999999999999999999",
        "/json/67108865",
        "/bytes/+5",
        "/bytes/x",
    ] {
        assert_eq!(conn.get(path).status, 400, "{path}");
    }
}
