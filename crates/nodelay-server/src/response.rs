//! Small constructors for the responses routes return, so each route reads as
//! "status, headers, body" without repeating header boilerplate.

use bytes::Bytes;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use crate::body::ResponseBody;

/// The response type of every route.
pub(crate) type Reply = Response<ResponseBody>;

/// `Content-Type` of plain-text answers (errors, `/delay`).
const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
/// `Content-Type` of JSON answers.
pub(crate) const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
/// `Content-Type` of binary payloads.
pub(crate) const OCTET_STREAM: HeaderValue = HeaderValue::from_static("application/octet-stream");
/// Methods a read-only route accepts (hyper drops the body of a HEAD answer).
const GET_HEAD: HeaderValue = HeaderValue::from_static("GET, HEAD");
/// The method a POST-only route (`/login`) accepts.
const POST: HeaderValue = HeaderValue::from_static("POST");

/// A response with `status`, a body and (optionally) a content type.
pub(crate) fn with_body(
    status: StatusCode,
    content_type: Option<HeaderValue>,
    body: ResponseBody,
) -> Reply {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    if let Some(value) = content_type {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    response
}

/// A plain-text response.
pub(crate) fn text(status: StatusCode, message: &'static str) -> Reply {
    with_body(
        status,
        Some(TEXT_PLAIN),
        ResponseBody::full(Bytes::from_static(message.as_bytes())),
    )
}

/// A `200 OK` JSON response.
pub(crate) fn json(document: impl Into<Bytes>) -> Reply {
    with_body(
        StatusCode::OK,
        Some(APPLICATION_JSON),
        ResponseBody::full(document),
    )
}

/// `400 Bad Request` with a short reason.
pub(crate) fn bad_request(reason: &'static str) -> Reply {
    text(StatusCode::BAD_REQUEST, reason)
}

/// `404 Not Found` for a path no route serves.
pub(crate) fn not_found() -> Reply {
    text(StatusCode::NOT_FOUND, "not found\n")
}

/// `405 Method Not Allowed` for a read-only route asked to do something else.
pub(crate) fn get_only() -> Reply {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    response.headers_mut().insert(ALLOW, GET_HEAD);
    response
}

/// `405 Method Not Allowed` for a POST-only route asked to do something else.
pub(crate) fn post_only() -> Reply {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    response.headers_mut().insert(ALLOW, POST);
    response
}
