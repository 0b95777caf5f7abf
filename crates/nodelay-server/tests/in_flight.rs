//! `/stats/in-flight`: the requests the server answers at once, as a
//! client's concurrency tests read it.

mod common;

use std::thread;

use common::{server, Conn};

#[test]
fn the_peak_counts_requests_answered_together() {
    let server = server();
    let addr = server.addr();
    let mut conn = Conn::open(addr);
    assert_eq!(
        conn.get("/stats/in-flight").text(),
        r#"{"in_flight": 1, "peak_in_flight": 1}"#,
        "the asking request counts itself"
    );
    // Three slow requests on three connections overlap; a fourth comes after.
    let slow: Vec<_> = (0..3)
        .map(|_| thread::spawn(move || Conn::open(addr).get("/delay/300").status))
        .collect();
    for request in slow {
        assert_eq!(request.join().unwrap(), 200);
    }
    assert_eq!(conn.get("/delay/1").status, 200);
    assert_eq!(
        conn.get("/stats/in-flight").text(),
        r#"{"in_flight": 1, "peak_in_flight": 3}"#
    );
}
