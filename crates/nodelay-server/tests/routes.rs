//! Echo, introspection, status, redirect and cookie routes.

mod common;

use std::time::{Duration, Instant};

use common::{get, server, Conn};

#[test]
fn echo_returns_a_post_body_verbatim() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(
        b"POST /echo HTTP/1.1\r\nHost: test\r\nContent-Type: text/x-test\r\nContent-Length: 12\r\n\r\nhello\r\nworld",
    );
    let response = conn.read_response(false);
    assert_eq!(response.status, 200);
    assert_eq!(response.body, b"hello\r\nworld");
    assert_eq!(response.header("content-type"), Some("text/x-test"));
    assert_eq!(response.header("x-echo-method"), Some("POST"));
    assert_eq!(response.header("content-length"), Some("12"));
}

#[test]
fn echo_accepts_a_chunked_upload() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(b"PUT /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
    let response = conn.read_response(false);
    assert_eq!(response.body, b"abcde");
    assert_eq!(response.header("x-echo-method"), Some("PUT"));
    assert_eq!(response.header("content-type"), None);
}

#[test]
fn anything_describes_the_request() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(b"PATCH /anything/x?a=1&b=%20 HTTP/1.1\r\nHost: test\r\nX-One: 1\r\nContent-Length: 4\r\n\r\nq\"\\z");
    let text = conn.read_response(false).text();
    assert!(text.starts_with(r#"{"method": "PATCH", "path": "/anything/x", "query": "a=1&b=%20", "headers": [["host", "test"], ["x-one", "1"], ["content-length", "4"]]"#), "{text}");
    assert!(
        text.ends_with(r#""body": "q\"\\z", "body_len": 4}"#),
        "{text}"
    );
}

#[test]
fn headers_joins_repeated_names() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(b"GET /headers HTTP/1.1\r\nHost: test\r\nX-A: 1\r\nx-a: 2\r\n\r\n");
    let text = conn.read_response(false).text();
    assert_eq!(text, r#"{"headers": {"host": "test", "x-a": "1, 2"}}"#);
}

#[test]
fn status_204_and_304_have_no_body_and_no_content_length() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    for code in [204, 304] {
        let response = conn.get(&format!("/status/{code}"));
        assert_eq!(response.status, code);
        assert_eq!(response.header("content-length"), None, "{code}");
        assert_eq!(response.header("transfer-encoding"), None, "{code}");
    }
    // Had either sent body bytes, this answer would not parse.
    assert_eq!(conn.get("/status/418").status, 418);
    assert_eq!(conn.get("/status/100").status, 400);
    assert_eq!(conn.get("/status/600").status, 400);
}

#[test]
fn redirect_2_points_to_redirect_1_and_0_answers_json() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    let response = conn.get("/redirect/2");
    assert_eq!(response.status, 302);
    assert_eq!(response.header("location"), Some("/redirect/1"));
    let last = conn.get("/redirect/0");
    assert_eq!(last.status, 200);
    assert_eq!(last.text(), r#"{"redirected": true}"#);
    assert_eq!(conn.get("/redirect/101").status, 400);
}

#[test]
fn redirect_to_uses_the_decoded_url_and_status() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    let response =
        conn.get("/redirect-to?url=http%3A%2F%2Fexample.test%2Fa%3Fb%3Dc&status_code=307");
    assert_eq!(response.status, 307);
    assert_eq!(
        response.header("location"),
        Some("http://example.test/a?b=c")
    );
    assert_eq!(conn.get("/redirect-to?url=/x").status, 302);
    assert_eq!(conn.get("/redirect-to?url=/x&status_code=200").status, 400);
    assert_eq!(conn.get("/redirect-to").status, 400);
}

#[test]
fn cookies_set_sends_one_set_cookie_per_pair() {
    let server = server();
    let response = get(&server, "/cookies/set?a=1&b=two%20words");
    assert_eq!(response.status, 200);
    assert_eq!(
        response.headers_named("set-cookie"),
        ["a=1; Path=/", "b=two words; Path=/"]
    );
    assert_eq!(
        response.text(),
        r#"{"cookies": {"a": "1", "b": "two words"}}"#
    );
}

#[test]
fn cookies_parses_the_cookie_headers() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(b"GET /cookies HTTP/1.1\r\nHost: test\r\nCookie: a=1; b=2\r\nCookie: c=3\r\n\r\n");
    let response = conn.read_response(false);
    assert_eq!(
        response.text(),
        r#"{"cookies": {"a": "1", "b": "2", "c": "3"}}"#
    );
    assert_eq!(conn.get("/cookies").text(), r#"{"cookies": {}}"#);
}

#[test]
fn login_sets_a_new_session_cookie_per_post() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    let login = b"POST /login HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 19\r\n\r\nuser=bench&pass=pw1";
    conn.send(login);
    let first = conn.read_response(false);
    assert_eq!(first.status, 200);
    let cookie = first.headers_named("set-cookie");
    assert_eq!(cookie.len(), 1);
    let value = cookie[0]
        .strip_prefix("session=")
        .and_then(|rest| rest.strip_suffix("; Path=/"))
        .expect("session cookie");
    assert!(value.starts_with("bench-"), "{value}");
    assert_eq!(
        first.text(),
        format!(r#"{{"cookies": {{"session": "{value}"}}}}"#)
    );
    conn.send(login);
    let second = conn.read_response(false);
    assert_ne!(second.headers_named("set-cookie"), cookie);
}

#[test]
fn login_refuses_get_a_missing_user_and_a_bad_value() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    let refused = conn.get("/login");
    assert_eq!(refused.status, 405);
    assert_eq!(refused.header("allow"), Some("POST"));
    conn.send(b"POST /login HTTP/1.1\r\nHost: test\r\nContent-Length: 6\r\n\r\npass=x");
    assert_eq!(conn.read_response(false).status, 400);
    conn.send(b"POST /login HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nuser=a%3Bb");
    assert_eq!(conn.read_response(false).status, 400);
}

#[test]
fn delay_50_takes_at_least_50_ms() {
    let server = server();
    let started = Instant::now();
    let response = get(&server, "/delay/50");
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(response.text(), "delayed");
    assert_eq!(get(&server, "/delay/60001").status, 400);
}

#[test]
fn delay_does_not_block_other_connections() {
    let server = server();
    let mut slow = Conn::open(server.addr());
    slow.send(b"GET /delay/1000 HTTP/1.1\r\nHost: test\r\n\r\n");
    let started = Instant::now();
    assert_eq!(get(&server, "/bytes/1").status, 200);
    assert!(started.elapsed() < Duration::from_millis(900));
}

#[test]
fn drip_sends_events_apart_with_chunked_framing() {
    let server = server();
    let started = Instant::now();
    let response = get(&server, "/drip/3?ms=60");
    // Two pauses between three pieces.
    assert!(started.elapsed() >= Duration::from_millis(120));
    assert_eq!(response.status, 200);
    assert_eq!(response.text(), "data: 0\n\ndata: 1\n\ndata: 2\n\n");
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert_eq!(response.header("transfer-encoding"), Some("chunked"));
    assert_eq!(get(&server, "/drip/0").text(), "");
    for bad in ["/drip/1001", "/drip/x", "/drip/2?ms=60001", "/drip/2?ms=-1"] {
        assert_eq!(get(&server, bad).status, 400, "{bad}");
    }
}

#[test]
fn unknown_paths_are_404_and_wrong_methods_405() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    let response = conn.get("/nope");
    assert_eq!(response.status, 404);
    assert!(!response.body.is_empty());
    conn.send(b"DELETE /bytes/3 HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n");
    let response = conn.read_response(false);
    assert_eq!(response.status, 405);
    assert_eq!(response.header("allow"), Some("GET, HEAD"));
}

#[test]
fn head_gets_headers_without_body() {
    let server = server();
    let mut conn = Conn::open(server.addr());
    conn.send(b"HEAD /bytes/10 HTTP/1.1\r\nHost: test\r\n\r\n");
    let response = conn.read_response(true);
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-length"), Some("10"));
    // The next answer starts right away: no body bytes were sent.
    assert_eq!(conn.get("/bytes/3").body, b"abc");
}
