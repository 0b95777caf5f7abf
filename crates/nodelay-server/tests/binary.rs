//! The `nodelay-server` binary: announces its URL, serves, stops on SIGTERM.

#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::Conn;

#[test]
fn binary_announces_serves_and_stops_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nodelay-server"))
        .args(["--port", "0", "--workers", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn nodelay-server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim_end()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let mut conn = Conn::open(url.parse().unwrap());
    assert_eq!(conn.get("/bytes/4").body, b"abcd");

    // SIGTERM right away: the handler is installed before the line is printed.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "exit status {exit:?}");
}

#[test]
fn binary_rejects_unknown_arguments() {
    let output = Command::new(env!("CARGO_BIN_EXE_nodelay-server"))
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}
