//! A request in HTTP/2 form: pseudo-headers from the URL, the caller's fields
//! minus the connection-specific ones HTTP/2 forbids.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH};
use http::{HeaderMap, Method, Request, Uri};

use crate::error::{Error, ErrorKind};
use crate::target::Target;

/// A request ready to go on any HTTP/2 connection, any number of times.
pub struct H2Request {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    pub(crate) body: Option<Bytes>,
    pub(crate) is_head: bool,
    /// RFC 9110 §9.2.2: safe to send twice.
    pub(crate) idempotent: bool,
}

/// Connection-specific fields (RFC 9113 §8.2.2): a message carrying them is
/// malformed in HTTP/2, so they are dropped; `Host` becomes `:authority`.
fn is_connection_specific(name: &HeaderName, value: &str) -> bool {
    matches!(
        name.as_str(),
        "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade" | "host"
    ) || (name.as_str() == "te" && !value.eq_ignore_ascii_case("trailers"))
}

fn local(message: String) -> Error {
    Error::new(ErrorKind::LocalProtocol, message)
}

impl H2Request {
    /// A request whose body (if any) is `body`, in memory.
    pub(crate) fn new(
        method: &str,
        target: &Target,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        idempotent: bool,
    ) -> Result<H2Request, Error> {
        let length = body.map(|b| b.len() as u64);
        let mut request = Self::streamed(method, target, headers, length, idempotent)?;
        request.body = body.map(Bytes::copy_from_slice);
        Ok(request)
    }

    /// A request whose body will be streamed (sent with `send_streamed`),
    /// and the head [`H2Request::new`] adds an in-memory body to:
    /// `Content-Length` announces `length` when the size is known; otherwise
    /// nothing does (HTTP/2 frames the body itself, RFC 9113 §8.1).
    pub(crate) fn streamed(
        method: &str,
        target: &Target,
        headers: &[(&str, &str)],
        length: Option<u64>,
        idempotent: bool,
    ) -> Result<H2Request, Error> {
        let method = Method::from_bytes(method.as_bytes())
            .map_err(|_| local(format!("invalid method {method:?}")))?;
        // Concatenated by hand and parsed from the owned string (no copy):
        // `format!` and `str::parse` were a third of this function's cost.
        let (scheme, authority, path) = (
            target.origin.scheme,
            &target.authority,
            &target.path_and_query,
        );
        let mut uri = String::with_capacity(scheme.len() + 3 + authority.len() + path.len());
        for part in [scheme, "://", authority, path] {
            uri.push_str(part);
        }
        let uri = Uri::try_from(uri).map_err(|e| {
            local(format!(
                "invalid request target \"{scheme}://{authority}{path}\": {e}"
            ))
        })?;
        let mut map = HeaderMap::with_capacity(headers.len() + 1);
        for &(name, value) in headers {
            // HTTP/2 field names are lowercase (RFC 9113 §8.2.1): `from_bytes`
            // lowercases them.
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| local(format!("invalid header name {name:?}")))?;
            if is_connection_specific(&name, value) {
                continue;
            }
            let value = HeaderValue::from_str(value)
                .map_err(|_| local(format!("invalid value for header {name}")))?;
            map.append(name, value);
        }
        if let Some(length) = length {
            if !map.contains_key(CONTENT_LENGTH) {
                map.insert(CONTENT_LENGTH, HeaderValue::from(length));
            }
        }
        Ok(H2Request {
            is_head: method == Method::HEAD,
            method,
            uri,
            headers: map,
            body: None,
            idempotent,
        })
    }

    /// The head for one attempt (h2 takes it by value).
    pub(crate) fn head(&self) -> Request<()> {
        let mut request = Request::new(());
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }
}
