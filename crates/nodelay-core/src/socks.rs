//! The SOCKS handshake as a sans-IO state machine: SOCKS5 (RFC 1928) with
//! username/password authentication (RFC 1929), SOCKS4 and its 4A extension
//! (the SOCKS4 and SOCKS4A protocol notes, NEC/Ying-Da Lee; no RFC).
//!
//! [`Handshake`] says what to do next ([`Next`]): send these bytes, or read
//! exactly this many. The blocking driver (`tunnel.rs`) and the tokio driver
//! (`aconnect.rs`) move the bytes; every decision is made here, once. It
//! never asks for more bytes than the proxy's reply holds, so nothing the
//! origin sends after the tunnel opens is read by mistake. Once it says
//! [`Next::Done`] the connection is a byte stream to the target.

use std::fmt;
use std::net::IpAddr;

/// SOCKS protocol version byte of SOCKS5 messages (RFC 1928 §3).
const SOCKS5: u8 = 0x05;
/// SOCKS protocol version byte of a SOCKS4 request.
const SOCKS4: u8 = 0x04;
/// Version byte of a SOCKS4 reply ("VN is the version of the reply code and
/// should be 0").
const SOCKS4_REPLY_VERSION: u8 = 0x00;
/// Version of the username/password subnegotiation (RFC 1929 §2).
const USERPASS_VERSION: u8 = 0x01;

/// RFC 1928 §3 method: no authentication required.
const METHOD_NONE: u8 = 0x00;
/// RFC 1928 §3 method: username/password (RFC 1929).
const METHOD_USERPASS: u8 = 0x02;
/// RFC 1928 §3: "NO ACCEPTABLE METHODS".
const METHOD_NONE_ACCEPTABLE: u8 = 0xff;

/// CONNECT, the one command we send (RFC 1928 §4; SOCKS4 CD = 1).
const CMD_CONNECT: u8 = 0x01;
/// RFC 1928 §5 address types.
const ATYP_IPV4: u8 = 0x01;
const ATYP_DOMAIN: u8 = 0x03;
const ATYP_IPV6: u8 = 0x04;
/// RFC 1928 §6: "X'00' succeeded".
const SOCKS5_SUCCEEDED: u8 = 0x00;
/// SOCKS4 CD 90: "request granted".
const SOCKS4_GRANTED: u8 = 0x5a;

/// Longest username and password: RFC 1929 §2 gives each a one-octet
/// length (ULEN, PLEN), so 255 bytes.
pub const MAX_CREDENTIAL_BYTES: usize = 255;
/// Longest target host name: a SOCKS5 DOMAINNAME carries its length in one
/// octet (RFC 1928 §5). The same bound applies to the NUL-terminated SOCKS4A
/// name, which has none of its own (a DNS name is at most 253 bytes).
pub const MAX_HOST_NAME_BYTES: usize = 255;
/// Longest SOCKS4 USERID: the protocol has no bound; we keep it to the
/// SOCKS5 username's.
pub const MAX_SOCKS4_USERID_BYTES: usize = MAX_CREDENTIAL_BYTES;
/// The longest single read the handshake asks for: a SOCKS5 reply with a
/// domain-name bound address (4 + 1 + 255 + 2 bytes, RFC 1928 §6).
pub const MAX_REPLY_BYTES: usize = 4 + 1 + 255 + 2;

/// Length of the fixed part of a SOCKS5 reply: VER, REP, RSV, ATYP.
const SOCKS5_REPLY_HEAD: usize = 4;
/// Length of a SOCKS4 reply: VN, CD, DSTPORT (2), DSTIP (4).
const SOCKS4_REPLY: usize = 8;
/// Length of a method-selection or username/password status message.
const TWO_BYTE_REPLY: usize = 2;

/// The SOCKS dialect of a proxy URL's scheme (curl's names, which
/// requests/PySocks and httpx share).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SocksVersion {
    /// `socks4://`: the client resolves the name, sends an IPv4 address.
    V4,
    /// `socks4a://`: the proxy resolves the name (SOCKS4A).
    V4a,
    /// `socks5://`: the client resolves the name, sends an IP address.
    V5,
    /// `socks5h://`: the proxy resolves the name (ATYP DOMAINNAME).
    V5h,
}

impl SocksVersion {
    /// The version a proxy URL scheme names, if it is a SOCKS one.
    pub fn from_scheme(scheme: &str) -> Option<SocksVersion> {
        match scheme {
            "socks4" => Some(SocksVersion::V4),
            "socks4a" => Some(SocksVersion::V4a),
            "socks5" => Some(SocksVersion::V5),
            "socks5h" => Some(SocksVersion::V5h),
            _ => None,
        }
    }

    /// The URL scheme, for messages.
    pub fn scheme(self) -> &'static str {
        match self {
            SocksVersion::V4 => "socks4",
            SocksVersion::V4a => "socks4a",
            SocksVersion::V5 => "socks5",
            SocksVersion::V5h => "socks5h",
        }
    }

    /// Whether the client resolves the target's name before the handshake
    /// (a name that is an IP literal is sent as an address either way).
    pub fn resolves_locally(self) -> bool {
        matches!(self, SocksVersion::V4 | SocksVersion::V5)
    }

    fn is_v5(self) -> bool {
        matches!(self, SocksVersion::V5 | SocksVersion::V5h)
    }

    fn label(self) -> &'static str {
        if self.is_v5() {
            "SOCKS5"
        } else {
            "SOCKS4"
        }
    }
}

/// The username and password of a proxy URL, percent-decoded. For SOCKS4 the
/// username is the USERID and the password is not sent. Never displayed.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Credentials {
    /// RFC 1929 UNAME / SOCKS4 USERID.
    pub user: Vec<u8>,
    /// RFC 1929 PASSWD.
    pub password: Vec<u8>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credentials(<masked>)")
    }
}

/// Where the proxy is asked to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SocksTarget<'a> {
    /// An address (resolved by us, or an IP literal in the URL).
    Ip(IpAddr),
    /// A name the proxy resolves (`socks5h`, `socks4a`).
    Name(&'a str),
}

/// What the driver does next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next<'a> {
    /// Write these bytes, then say how many went with [`Handshake::sent`].
    Send(&'a [u8]),
    /// Read at most this many bytes (at least one) and pass them to
    /// [`Handshake::received`]; never more, so no byte of the target's is read.
    Receive(usize),
    /// The tunnel is open.
    Done,
}

/// Why a handshake failed, before or during the exchange with the proxy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SocksError {
    /// A username or password (or SOCKS4 USERID) over its limit; `what`
    /// names which.
    CredentialTooLong {
        /// "username", "password" or "user id".
        what: &'static str,
    },
    /// A target name longer than [`MAX_HOST_NAME_BYTES`].
    HostNameTooLong,
    /// A NUL in a SOCKS4 USERID or SOCKS4A name (it ends the field on the wire).
    NulInField,
    /// SOCKS4 carries IPv4 addresses only.
    Socks4NeedsIpv4,
    /// A reply with the wrong version byte.
    BadVersion {
        /// The version we expected.
        expected: u8,
        /// The version received.
        got: u8,
    },
    /// RFC 1928 §3: the proxy accepted none of the methods offered.
    NoAcceptableMethod {
        /// Whether we offered username/password.
        offered_password: bool,
    },
    /// The proxy chose a method we did not offer.
    UnofferedMethod(u8),
    /// RFC 1929 §2: a non-zero STATUS, the credentials were refused.
    AuthRejected(u8),
    /// A SOCKS5 reply with REP other than succeeded (RFC 1928 §6).
    Refused5(u8),
    /// A SOCKS4 reply other than 90 (request granted).
    Refused4(u8),
    /// A SOCKS5 reply with an address type RFC 1928 §5 does not define.
    BadAddressType(u8),
}

impl fmt::Display for SocksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SocksError::CredentialTooLong { what } => {
                write!(f, "the {what} is longer than {MAX_CREDENTIAL_BYTES} bytes")
            }
            SocksError::HostNameTooLong => write!(
                f,
                "the target host name is longer than {MAX_HOST_NAME_BYTES} bytes"
            ),
            SocksError::NulInField => f.write_str("a NUL byte in the user id or host name"),
            SocksError::Socks4NeedsIpv4 => f.write_str(
                "SOCKS4 carries IPv4 addresses only and the target has none \
                 (socks5:// or socks5h:// reach IPv6 targets)",
            ),
            SocksError::BadVersion { expected, got } => write!(
                f,
                "invalid reply: version {got:#04x} where {expected:#04x} was expected"
            ),
            SocksError::NoAcceptableMethod {
                offered_password: true,
            } => f.write_str(
                "authentication failed: the proxy accepts neither no authentication \
                 nor username/password (RFC 1928 method 0xff)",
            ),
            SocksError::NoAcceptableMethod {
                offered_password: false,
            } => f.write_str(
                "the proxy requires authentication (RFC 1928 method 0xff): \
                 give a username and password in the proxy URL",
            ),
            SocksError::UnofferedMethod(m) => write!(
                f,
                "invalid reply: the proxy chose authentication method {m:#04x}, which was not offered"
            ),
            SocksError::AuthRejected(status) => write!(
                f,
                "authentication failed: the proxy rejected the username and password \
                 (RFC 1929 status {status:#04x})"
            ),
            SocksError::Refused5(code) => write!(
                f,
                "{} (SOCKS5 reply {code:#04x})",
                socks5_reply_meaning(*code)
            ),
            SocksError::Refused4(code) => write!(
                f,
                "{} (SOCKS4 reply {code:#04x})",
                socks4_reply_meaning(*code)
            ),
            SocksError::BadAddressType(t) => {
                write!(f, "invalid reply: unknown address type {t:#04x}")
            }
        }
    }
}

/// The meaning of a SOCKS5 REP code, as RFC 1928 §6 names it.
pub fn socks5_reply_meaning(code: u8) -> &'static str {
    match code {
        0x00 => "succeeded",
        0x01 => "general SOCKS server failure",
        0x02 => "connection not allowed by ruleset",
        0x03 => "network unreachable",
        0x04 => "host unreachable",
        0x05 => "connection refused",
        0x06 => "TTL expired",
        0x07 => "command not supported",
        0x08 => "address type not supported",
        _ => "unassigned reply code",
    }
}

/// The meaning of a SOCKS4 CD reply code, as the SOCKS4 protocol note names it.
pub fn socks4_reply_meaning(code: u8) -> &'static str {
    match code {
        0x5a => "request granted",
        0x5b => "request rejected or failed",
        0x5c => "request rejected because the SOCKS server cannot connect to identd on the client",
        0x5d => "request rejected because the client program and identd report different user-ids",
        _ => "unknown reply code",
    }
}

/// What the handshake waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Awaiting {
    /// SOCKS5 method selection: VER METHOD.
    Method,
    /// RFC 1929 status: VER STATUS.
    AuthStatus,
    /// SOCKS5 reply, `len` bytes in all once known.
    Reply5,
    /// SOCKS4 reply: 8 bytes.
    Reply4,
    /// Nothing: the tunnel is open.
    Nothing,
}

/// One SOCKS handshake for one connection (see the module docs).
pub struct Handshake {
    version: SocksVersion,
    /// Bytes to write before the next read (empty: none).
    out: Vec<u8>,
    /// The username/password message, sent if the proxy picks that method.
    auth: Option<Vec<u8>>,
    /// The CONNECT request, sent once authentication is settled (SOCKS5).
    request: Vec<u8>,
    awaiting: Awaiting,
    /// The reply read so far.
    reply: Vec<u8>,
    /// How many bytes the reply being read has in all (grows as a SOCKS5
    /// reply's address type and length come in).
    reply_len: usize,
}

impl Handshake {
    /// A handshake asking the proxy to connect to `target`:`port`, with
    /// `credentials` when the proxy URL has them. Fails on input no proxy
    /// could accept (over-long fields, an IPv6 target for SOCKS4), before
    /// anything is sent.
    pub fn new(
        version: SocksVersion,
        credentials: Option<&Credentials>,
        target: SocksTarget<'_>,
        port: u16,
    ) -> Result<Handshake, SocksError> {
        let mut handshake = Handshake {
            version,
            out: Vec::new(),
            auth: None,
            request: Vec::new(),
            awaiting: Awaiting::Nothing,
            reply: Vec::with_capacity(SOCKS4_REPLY),
            reply_len: 0,
        };
        if version.is_v5() {
            handshake.request = socks5_request(target, port)?;
            handshake.auth = credentials.map(userpass_message).transpose()?;
            // RFC 1928 §3: the methods we support, in one message; username/
            // password only when we have some (as curl and PySocks offer).
            handshake.out = if handshake.auth.is_some() {
                vec![SOCKS5, 2, METHOD_NONE, METHOD_USERPASS]
            } else {
                vec![SOCKS5, 1, METHOD_NONE]
            };
            handshake.expect(Awaiting::Method, TWO_BYTE_REPLY);
        } else {
            handshake.out = socks4_request(credentials, target, port)?;
            handshake.expect(Awaiting::Reply4, SOCKS4_REPLY);
        }
        Ok(handshake)
    }

    /// The next thing the driver must do.
    pub fn next(&self) -> Next<'_> {
        if !self.out.is_empty() {
            Next::Send(&self.out)
        } else if self.awaiting == Awaiting::Nothing {
            Next::Done
        } else {
            Next::Receive(self.reply_len - self.reply.len())
        }
    }

    /// `n` bytes of [`Next::Send`] were written (the rest is sent next).
    pub fn sent(&mut self, n: usize) {
        self.out.drain(..n.min(self.out.len()));
    }

    /// Bytes read from the proxy (no more than [`Next::Receive`] asked for).
    pub fn received(&mut self, bytes: &[u8]) -> Result<(), SocksError> {
        debug_assert!(
            self.out.is_empty() && bytes.len() <= self.reply_len - self.reply.len(),
            "read past what the handshake asked for"
        );
        self.reply.extend_from_slice(bytes);
        if self.reply.len() < self.reply_len {
            return Ok(());
        }
        match self.awaiting {
            Awaiting::Method => self.on_method(),
            Awaiting::AuthStatus => self.on_auth_status(),
            Awaiting::Reply5 => self.on_reply5(),
            Awaiting::Reply4 => self.on_reply4(),
            Awaiting::Nothing => Ok(()),
        }
    }

    /// Whether the handshake has read some of the reply it waits for (for
    /// the message of a proxy that closed the connection).
    pub fn mid_reply(&self) -> bool {
        !self.reply.is_empty()
    }

    /// The protocol's name, for messages ("SOCKS5", "SOCKS4").
    pub fn label(&self) -> &'static str {
        self.version.label()
    }

    fn expect(&mut self, awaiting: Awaiting, len: usize) {
        self.awaiting = awaiting;
        self.reply.clear();
        self.reply_len = len;
    }

    fn check_version(&self, expected: u8) -> Result<(), SocksError> {
        match self.reply[0] {
            got if got == expected => Ok(()),
            got => Err(SocksError::BadVersion { expected, got }),
        }
    }

    fn send_request(&mut self) {
        self.out = std::mem::take(&mut self.request);
        self.expect(Awaiting::Reply5, SOCKS5_REPLY_HEAD);
    }

    fn on_method(&mut self) -> Result<(), SocksError> {
        self.check_version(SOCKS5)?;
        match self.reply[1] {
            METHOD_NONE => self.send_request(),
            METHOD_USERPASS => match self.auth.take() {
                Some(auth) => {
                    self.out = auth;
                    self.expect(Awaiting::AuthStatus, TWO_BYTE_REPLY);
                }
                None => return Err(SocksError::UnofferedMethod(METHOD_USERPASS)),
            },
            METHOD_NONE_ACCEPTABLE => {
                return Err(SocksError::NoAcceptableMethod {
                    offered_password: self.auth.is_some(),
                })
            }
            other => return Err(SocksError::UnofferedMethod(other)),
        }
        Ok(())
    }

    fn on_auth_status(&mut self) -> Result<(), SocksError> {
        self.check_version(USERPASS_VERSION)?;
        // RFC 1929 §2: "A STATUS field of X'00' indicates success."
        match self.reply[1] {
            0 => {
                self.send_request();
                Ok(())
            }
            status => Err(SocksError::AuthRejected(status)),
        }
    }

    fn on_reply5(&mut self) -> Result<(), SocksError> {
        if self.reply_len == SOCKS5_REPLY_HEAD {
            self.check_version(SOCKS5)?;
            // A refusal is final: its address fields carry nothing we use,
            // and proxies often close right after sending the code.
            if self.reply[1] != SOCKS5_SUCCEEDED {
                return Err(SocksError::Refused5(self.reply[1]));
            }
            // RFC 1928 §6: BND.ADDR, then BND.PORT (2 bytes).
            self.reply_len = match self.reply[3] {
                ATYP_IPV4 => SOCKS5_REPLY_HEAD + 4 + 2,
                ATYP_IPV6 => SOCKS5_REPLY_HEAD + 16 + 2,
                // The length octet first, then the name and port.
                ATYP_DOMAIN => SOCKS5_REPLY_HEAD + 1,
                other => return Err(SocksError::BadAddressType(other)),
            };
            return Ok(());
        }
        if self.reply[3] == ATYP_DOMAIN && self.reply_len == SOCKS5_REPLY_HEAD + 1 {
            self.reply_len += usize::from(self.reply[SOCKS5_REPLY_HEAD]) + 2;
            return Ok(());
        }
        // The bound address is the proxy's side of its connection to the
        // target: a CONNECT client has no use for it (RFC 1928 §6).
        self.expect(Awaiting::Nothing, 0);
        Ok(())
    }

    fn on_reply4(&mut self) -> Result<(), SocksError> {
        self.check_version(SOCKS4_REPLY_VERSION)?;
        match self.reply[1] {
            SOCKS4_GRANTED => {
                self.expect(Awaiting::Nothing, 0);
                Ok(())
            }
            code => Err(SocksError::Refused4(code)),
        }
    }
}

/// RFC 1928 §4: VER CMD RSV ATYP DST.ADDR DST.PORT.
fn socks5_request(target: SocksTarget<'_>, port: u16) -> Result<Vec<u8>, SocksError> {
    let mut request = Vec::with_capacity(7 + MAX_HOST_NAME_BYTES);
    request.extend_from_slice(&[SOCKS5, CMD_CONNECT, 0x00]);
    match target {
        SocksTarget::Ip(IpAddr::V4(ip)) => {
            request.push(ATYP_IPV4);
            request.extend_from_slice(&ip.octets());
        }
        SocksTarget::Ip(IpAddr::V6(ip)) => {
            request.push(ATYP_IPV6);
            request.extend_from_slice(&ip.octets());
        }
        SocksTarget::Name(name) => {
            let len = u8::try_from(name.len())
                .ok()
                .filter(|_| name.len() <= MAX_HOST_NAME_BYTES)
                .ok_or(SocksError::HostNameTooLong)?;
            request.push(ATYP_DOMAIN);
            request.push(len);
            request.extend_from_slice(name.as_bytes());
        }
    }
    request.extend_from_slice(&port.to_be_bytes());
    Ok(request)
}

/// RFC 1929 §2: VER ULEN UNAME PLEN PASSWD.
fn userpass_message(credentials: &Credentials) -> Result<Vec<u8>, SocksError> {
    let length = |field: &[u8], what| {
        u8::try_from(field.len())
            .ok()
            .filter(|_| field.len() <= MAX_CREDENTIAL_BYTES)
            .ok_or(SocksError::CredentialTooLong { what })
    };
    let ulen = length(&credentials.user, "username")?;
    let plen = length(&credentials.password, "password")?;
    let mut message = Vec::with_capacity(3 + credentials.user.len() + credentials.password.len());
    message.push(USERPASS_VERSION);
    message.push(ulen);
    message.extend_from_slice(&credentials.user);
    message.push(plen);
    message.extend_from_slice(&credentials.password);
    Ok(message)
}

/// SOCKS4: VN CD DSTPORT DSTIP USERID NUL; SOCKS4A puts 0.0.0.x (x ≠ 0) in
/// DSTIP and the name, NUL-terminated, after the USERID.
fn socks4_request(
    credentials: Option<&Credentials>,
    target: SocksTarget<'_>,
    port: u16,
) -> Result<Vec<u8>, SocksError> {
    let user = credentials.map_or(&[][..], |c| &c.user[..]);
    if user.len() > MAX_SOCKS4_USERID_BYTES {
        return Err(SocksError::CredentialTooLong { what: "user id" });
    }
    if user.contains(&0) {
        return Err(SocksError::NulInField);
    }
    let mut request = Vec::with_capacity(9 + user.len() + MAX_HOST_NAME_BYTES + 1);
    request.extend_from_slice(&[SOCKS4, CMD_CONNECT]);
    request.extend_from_slice(&port.to_be_bytes());
    let name = match target {
        SocksTarget::Ip(IpAddr::V4(ip)) => {
            request.extend_from_slice(&ip.octets());
            None
        }
        SocksTarget::Ip(IpAddr::V6(_)) => return Err(SocksError::Socks4NeedsIpv4),
        SocksTarget::Name(name) => {
            if name.len() > MAX_HOST_NAME_BYTES {
                return Err(SocksError::HostNameTooLong);
            }
            if name.as_bytes().contains(&0) {
                return Err(SocksError::NulInField);
            }
            // SOCKS4A: "an invalid IP address 0.0.0.x, with x nonzero".
            request.extend_from_slice(&[0, 0, 0, 1]);
            Some(name)
        }
    };
    request.extend_from_slice(user);
    request.push(0);
    if let Some(name) = name {
        request.extend_from_slice(name.as_bytes());
        request.push(0);
    }
    Ok(request)
}

#[cfg(test)]
mod tests;
