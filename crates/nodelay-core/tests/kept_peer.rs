//! `Client::kept_peer`: the peer of the connection the latest request used,
//! while that connection is kept for the next request (HTTP::Tiny's
//! `connected`), against a scripted server.

#[path = "support/scripted.rs"]
mod scripted;
mod support;

use std::net::SocketAddr;
use std::time::Duration;

use nodelay_core::{Client, NeverInterrupt, RequestParts};
use scripted::Step::*;
use scripted::{ok, write, Server};

fn client() -> Client {
    Client::new(support::pool(Some(10), 10))
}

/// Sends a GET and reads its body (`read`: else the exchange is dropped
/// with the body unread).
fn get(client: &Client, url: &str, read: bool) {
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url,
            headers: &[],
            body: None,
        })
        .expect("valid request");
    let timeouts = support::each_phase_within(Duration::from_secs(3));
    let mut exchange = client
        .send(&prepared, None, timeouts, &NeverInterrupt)
        .expect("a response");
    if read {
        let mut body = Vec::new();
        exchange.read_to_end(&mut body, &NeverInterrupt).unwrap();
        exchange.finish();
    }
}

fn local(server: &Server) -> Option<SocketAddr> {
    Some(SocketAddr::from(([127, 0, 0, 1], server.port())))
}

#[test]
fn the_kept_connection_s_peer_until_one_is_closed() {
    let close = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi";
    let server = Server::start(vec![vec![
        ReadRequest,
        write(ok("one")),
        ReadRequest,
        write(ok("two")),
        ReadRequest,
        write(close),
        Close,
    ]]);
    let client = client();
    assert_eq!(client.kept_peer(), None, "no request yet");
    get(&client, &server.url("/1"), true);
    assert_eq!(client.kept_peer(), local(&server));
    get(&client, &server.url("/2"), true);
    assert_eq!(client.kept_peer(), local(&server), "the reused connection");
    get(&client, &server.url("/3"), true);
    assert_eq!(client.kept_peer(), None, "Connection: close");
}

#[test]
fn none_after_a_request_that_could_not_connect() {
    let server = Server::start(vec![vec![ReadRequest, write(ok("kept")), Hang]]);
    let refused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refused_url = format!("http://{}/", refused.local_addr().unwrap());
    drop(refused);
    let client = client();
    get(&client, &server.url("/1"), true);
    assert_eq!(client.kept_peer(), local(&server));
    let prepared = client
        .prepare(&RequestParts {
            method: "GET",
            url: &refused_url,
            headers: &[],
            body: None,
        })
        .unwrap();
    let timeouts = support::each_phase_within(Duration::from_secs(3));
    assert!(client
        .send(&prepared, None, timeouts, &NeverInterrupt)
        .is_err());
    assert_eq!(
        client.kept_peer(),
        None,
        "the latest request has no connection"
    );
    assert_eq!(client.idle_connections(), 1, "the first one is still idle");
}

#[test]
fn none_for_a_connection_closed_with_its_body_unread() {
    let server = Server::start(vec![vec![
        ReadRequest,
        write(ok("kept")),
        ReadRequest,
        write(ok("unread")),
        Hang,
    ]]);
    let client = client();
    get(&client, &server.url("/1"), true);
    assert_eq!(client.kept_peer(), local(&server));
    // The kept connection carries the next request, whose body is not read:
    // it is closed, and no connection is kept.
    get(&client, &server.url("/2"), false);
    assert_eq!(client.kept_peer(), None);
    assert_eq!(client.idle_connections(), 0);
}
