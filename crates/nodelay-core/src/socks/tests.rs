//! Byte-exact tests of the SOCKS handshake: every message we send and every
//! reply code, fed to the state machine one byte at a time.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::*;

fn credentials(user: &str, password: &str) -> Credentials {
    Credentials {
        user: user.as_bytes().to_vec(),
        password: password.as_bytes().to_vec(),
    }
}

/// Runs `handshake` against a scripted proxy: each `(expected, answer)`
/// pair is one message we must send and the proxy's reply to it, fed
/// one byte at a time (a proxy may split its reply anywhere).
fn converse(mut handshake: Handshake, script: &[(&[u8], &[u8])]) -> Result<Handshake, SocksError> {
    for (expected, answer) in script {
        assert_eq!(handshake.next(), Next::Send(expected));
        // Written in two parts: a short write leaves the rest to send.
        handshake.sent(1);
        assert_eq!(handshake.next(), Next::Send(&expected[1..]));
        handshake.sent(expected.len() - 1);
        for byte in answer.iter() {
            match handshake.next() {
                Next::Receive(n) => assert!(n >= 1),
                other => panic!("asked to {other:?} mid-reply"),
            }
            handshake.received(std::slice::from_ref(byte))?;
        }
    }
    Ok(handshake)
}

const V4_LOOPBACK: SocksTarget<'static> = SocksTarget::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST));

#[test]
fn socks5_no_auth_ipv4() {
    let h = Handshake::new(SocksVersion::V5, None, V4_LOOPBACK, 8080).unwrap();
    let h = converse(
        h,
        &[
            (b"\x05\x01\x00", b"\x05\x00"),
            (
                b"\x05\x01\x00\x01\x7f\x00\x00\x01\x1f\x90",
                b"\x05\x00\x00\x01\x0a\x00\x00\x02\x04\x38",
            ),
        ],
    )
    .unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn socks5h_sends_the_name_and_reads_a_domain_bound_address() {
    let h = Handshake::new(
        SocksVersion::V5h,
        None,
        SocksTarget::Name("example.com"),
        443,
    )
    .unwrap();
    let h = converse(
        h,
        &[
            (b"\x05\x01\x00", b"\x05\x00"),
            (
                b"\x05\x01\x00\x03\x0bexample.com\x01\xbb",
                b"\x05\x00\x00\x03\x05proxy\x00\x50",
            ),
        ],
    )
    .unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn socks5_ipv6_target_and_bound_address() {
    let h = Handshake::new(
        SocksVersion::V5,
        None,
        SocksTarget::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        80,
    )
    .unwrap();
    let mut reply = b"\x05\x00\x00\x04".to_vec();
    reply.extend_from_slice(&[0; 16]);
    reply.extend_from_slice(b"\x00\x50");
    let mut request = b"\x05\x01\x00\x04".to_vec();
    request.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
    request.extend_from_slice(b"\x00\x50");
    let h = converse(h, &[(b"\x05\x01\x00", b"\x05\x00"), (&request, &reply)]).unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn receive_never_asks_past_the_reply() {
    let mut h = Handshake::new(SocksVersion::V5h, None, SocksTarget::Name("a.b"), 1).unwrap();
    h.sent(3);
    assert_eq!(h.next(), Next::Receive(2));
    h.received(b"\x05\x00").unwrap();
    h.sent(10);
    assert_eq!(h.next(), Next::Receive(4));
    h.received(b"\x05\x00\x00\x03").unwrap();
    assert_eq!(h.next(), Next::Receive(1));
    h.received(b"\x03").unwrap();
    assert_eq!(h.next(), Next::Receive(5));
    h.received(b"abc\x00").unwrap();
    assert_eq!(h.next(), Next::Receive(1));
    h.received(b"\x50").unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn socks5_username_password() {
    let c = credentials("user", "secret");
    let h = Handshake::new(SocksVersion::V5h, Some(&c), SocksTarget::Name("a.test"), 80).unwrap();
    let h = converse(
        h,
        &[
            (b"\x05\x02\x00\x02", b"\x05\x02"),
            (b"\x01\x04user\x06secret", b"\x01\x00"),
            (
                b"\x05\x01\x00\x03\x06a.test\x00\x50",
                b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00",
            ),
        ],
    )
    .unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn socks5_credentials_offered_but_not_needed() {
    let c = credentials("user", "secret");
    let h = Handshake::new(SocksVersion::V5, Some(&c), V4_LOOPBACK, 80).unwrap();
    let h = converse(
        h,
        &[
            (b"\x05\x02\x00\x02", b"\x05\x00"),
            (
                b"\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50",
                b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00",
            ),
        ],
    )
    .unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn socks5_auth_rejected() {
    let c = credentials("user", "wrong");
    let h = Handshake::new(SocksVersion::V5, Some(&c), V4_LOOPBACK, 80).unwrap();
    let e = converse(
        h,
        &[
            (b"\x05\x02\x00\x02", b"\x05\x02"),
            (b"\x01\x04user\x05wrong", b"\x01\x01"),
        ],
    )
    .err()
    .unwrap();
    assert_eq!(e, SocksError::AuthRejected(1));
    assert!(e.to_string().contains("rejected the username and password"));
}

#[test]
fn socks5_no_acceptable_method() {
    let h = Handshake::new(SocksVersion::V5, None, V4_LOOPBACK, 80).unwrap();
    let e = converse(h, &[(b"\x05\x01\x00", b"\x05\xff")])
        .err()
        .unwrap();
    assert_eq!(
        e,
        SocksError::NoAcceptableMethod {
            offered_password: false
        }
    );
    assert!(e.to_string().contains("requires authentication"), "{e}");
    let c = credentials("u", "p");
    let h = Handshake::new(SocksVersion::V5, Some(&c), V4_LOOPBACK, 80).unwrap();
    let e = converse(h, &[(b"\x05\x02\x00\x02", b"\x05\xff")])
        .err()
        .unwrap();
    assert_eq!(
        e,
        SocksError::NoAcceptableMethod {
            offered_password: true
        }
    );
}

#[test]
fn socks5_method_not_offered() {
    let h = Handshake::new(SocksVersion::V5, None, V4_LOOPBACK, 80).unwrap();
    let e = converse(h, &[(b"\x05\x01\x00", b"\x05\x02")])
        .err()
        .unwrap();
    assert_eq!(e, SocksError::UnofferedMethod(2));
    let h = Handshake::new(SocksVersion::V5, None, V4_LOOPBACK, 80).unwrap();
    let e = converse(h, &[(b"\x05\x01\x00", b"\x05\x01")])
        .err()
        .unwrap();
    assert_eq!(e, SocksError::UnofferedMethod(1));
}

#[test]
fn every_socks5_refusal_code_is_named() {
    let names = [
        (0x01, "general SOCKS server failure"),
        (0x02, "connection not allowed by ruleset"),
        (0x03, "network unreachable"),
        (0x04, "host unreachable"),
        (0x05, "connection refused"),
        (0x06, "TTL expired"),
        (0x07, "command not supported"),
        (0x08, "address type not supported"),
        (0x09, "unassigned reply code"),
        (0xff, "unassigned reply code"),
    ];
    for (code, name) in names {
        let h = Handshake::new(SocksVersion::V5, None, V4_LOOPBACK, 80).unwrap();
        let reply = [SOCKS5, code, 0, ATYP_IPV4];
        let e = converse(
            h,
            &[
                (b"\x05\x01\x00", b"\x05\x00"),
                (b"\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50", &reply),
            ],
        )
        .err()
        .unwrap();
        assert_eq!(e, SocksError::Refused5(code));
        assert_eq!(e.to_string(), format!("{name} (SOCKS5 reply {code:#04x})"));
    }
}

#[test]
fn socks5_bad_replies() {
    let h = Handshake::new(SocksVersion::V5, None, V4_LOOPBACK, 80).unwrap();
    let e = converse(h, &[(b"\x05\x01\x00", b"\x04\x00")])
        .err()
        .unwrap();
    assert_eq!(
        e,
        SocksError::BadVersion {
            expected: 5,
            got: 4
        }
    );
    let h = Handshake::new(SocksVersion::V5, None, V4_LOOPBACK, 80).unwrap();
    let e = converse(
        h,
        &[
            (b"\x05\x01\x00", b"\x05\x00"),
            (
                b"\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50",
                b"\x05\x00\x00\x02",
            ),
        ],
    )
    .err()
    .unwrap();
    assert_eq!(e, SocksError::BadAddressType(2));
    let c = credentials("u", "p");
    let h = Handshake::new(SocksVersion::V5, Some(&c), V4_LOOPBACK, 80).unwrap();
    let e = converse(
        h,
        &[
            (b"\x05\x02\x00\x02", b"\x05\x02"),
            (b"\x01\x01u\x01p", b"\x05\x00"),
        ],
    )
    .err()
    .unwrap();
    assert_eq!(
        e,
        SocksError::BadVersion {
            expected: 1,
            got: 5
        }
    );
}

#[test]
fn socks4_ipv4_with_user_id() {
    let c = credentials("alice", "ignored");
    let h = Handshake::new(
        SocksVersion::V4,
        Some(&c),
        SocksTarget::Ip(IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3))),
        443,
    )
    .unwrap();
    let h = converse(
        h,
        &[(
            b"\x04\x01\x01\xbb\x0a\x01\x02\x03alice\x00",
            b"\x00\x5a\x00\x00\x00\x00\x00\x00",
        )],
    )
    .unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn socks4a_sends_the_name() {
    let h = Handshake::new(SocksVersion::V4a, None, SocksTarget::Name("a.test"), 80).unwrap();
    let h = converse(
        h,
        &[(
            b"\x04\x01\x00\x50\x00\x00\x00\x01\x00a.test\x00",
            b"\x00\x5a\x00\x50\x7f\x00\x00\x01",
        )],
    )
    .unwrap();
    assert_eq!(h.next(), Next::Done);
}

#[test]
fn every_socks4_refusal_code_is_named() {
    let names = [
        (0x5b, "request rejected or failed"),
        (
            0x5c,
            "request rejected because the SOCKS server cannot connect to identd on the client",
        ),
        (
            0x5d,
            "request rejected because the client program and identd report different user-ids",
        ),
        (0x00, "unknown reply code"),
    ];
    for (code, name) in names {
        let h = Handshake::new(SocksVersion::V4a, None, SocksTarget::Name("a.test"), 80).unwrap();
        let reply = [0, code, 0, 0, 0, 0, 0, 0];
        let e = converse(
            h,
            &[(b"\x04\x01\x00\x50\x00\x00\x00\x01\x00a.test\x00", &reply)],
        )
        .err()
        .unwrap();
        assert_eq!(e, SocksError::Refused4(code));
        assert_eq!(e.to_string(), format!("{name} (SOCKS4 reply {code:#04x})"));
    }
    let h = Handshake::new(SocksVersion::V4, None, V4_LOOPBACK, 80).unwrap();
    let e = converse(
        h,
        &[(
            b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00",
            b"\x04\x5a\x00\x00\x00\x00\x00\x00",
        )],
    )
    .err()
    .unwrap();
    assert_eq!(
        e,
        SocksError::BadVersion {
            expected: 0,
            got: 4
        }
    );
}

#[test]
fn limits_are_checked_before_anything_is_sent() {
    let long = "x".repeat(MAX_CREDENTIAL_BYTES + 1);
    let at_limit = "x".repeat(MAX_CREDENTIAL_BYTES);
    assert!(Handshake::new(
        SocksVersion::V5,
        Some(&credentials(&at_limit, &at_limit)),
        V4_LOOPBACK,
        1
    )
    .is_ok());
    for (user, password, what) in [(long.as_str(), "p", "username"), ("u", &long, "password")] {
        let e = Handshake::new(
            SocksVersion::V5,
            Some(&credentials(user, password)),
            V4_LOOPBACK,
            1,
        )
        .err()
        .unwrap();
        assert_eq!(e, SocksError::CredentialTooLong { what });
    }
    let e = Handshake::new(
        SocksVersion::V4,
        Some(&credentials(&long, "")),
        V4_LOOPBACK,
        1,
    )
    .err()
    .unwrap();
    assert_eq!(e, SocksError::CredentialTooLong { what: "user id" });
    let name = "n".repeat(MAX_HOST_NAME_BYTES + 1);
    for version in [SocksVersion::V5h, SocksVersion::V4a] {
        let e = Handshake::new(version, None, SocksTarget::Name(&name), 1)
            .err()
            .unwrap();
        assert_eq!(e, SocksError::HostNameTooLong);
    }
    let e = Handshake::new(
        SocksVersion::V4,
        None,
        SocksTarget::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        1,
    )
    .err()
    .unwrap();
    assert_eq!(e, SocksError::Socks4NeedsIpv4);
    let e = Handshake::new(
        SocksVersion::V4a,
        Some(&credentials("a\0b", "")),
        SocksTarget::Name("a.test"),
        1,
    )
    .err()
    .unwrap();
    assert_eq!(e, SocksError::NulInField);
}

#[test]
fn credentials_never_show_in_debug() {
    let c = credentials("user", "secret");
    assert!(!format!("{c:?}").contains("secret"));
}
