//! `/gzip/{n}`, `/deflate/{n}`, `/brotli/{n}`, `/zstd/{n}`: the `/bytes/{n}`
//! pattern sent with that `Content-Encoding`, for the client's decoders.

use std::io::Write;

use bytes::Bytes;
use hyper::header::{HeaderValue, CONTENT_ENCODING};
use hyper::StatusCode;

use super::parse_u64;
use crate::body::ResponseBody;
use crate::limits::MAX_ENCODED_PAYLOAD_BYTES;
use crate::response::{self, Reply, OCTET_STREAM};
use crate::state::State;

/// Compression level for all codings: fast; ratio is not what tests measure.
const LEVEL: u32 = 1;

/// The content codings the server can apply.
#[derive(Clone, Copy)]
pub(super) enum Coding {
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    pub(super) fn from_route(name: &str) -> Option<Coding> {
        match name {
            "gzip" => Some(Coding::Gzip),
            "deflate" => Some(Coding::Deflate),
            "brotli" => Some(Coding::Brotli),
            "zstd" => Some(Coding::Zstd),
            _ => None,
        }
    }

    fn token(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }

    fn encode(self, data: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Coding::Gzip => {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(LEVEL));
                e.write_all(data)?;
                e.finish()
            }
            Coding::Deflate => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(LEVEL));
                e.write_all(data)?;
                e.finish()
            }
            Coding::Brotli => {
                let mut out = Vec::new();
                let params = brotli::enc::BrotliEncoderParams {
                    quality: LEVEL as i32,
                    ..Default::default()
                };
                brotli::BrotliCompress(&mut &data[..], &mut out, &params)?;
                Ok(out)
            }
            Coding::Zstd => zstd::encode_all(data, LEVEL as i32),
        }
    }
}

/// `/{coding}/{n}`: `n` pattern bytes, encoded.
pub(super) fn encoded(coding: Coding, n: &str, state: &State) -> Reply {
    let Some(n) = parse_u64(n).filter(|&n| n <= MAX_ENCODED_PAYLOAD_BYTES) else {
        return response::bad_request("n must be an integer in 0..=67108864\n");
    };
    let plain = state.payloads.bytes(n as usize);
    let Ok(body) = coding.encode(&plain) else {
        return response::text(StatusCode::INTERNAL_SERVER_ERROR, "encoding failed\n");
    };
    let mut reply = response::with_body(
        StatusCode::OK,
        Some(OCTET_STREAM),
        ResponseBody::full(Bytes::from(body)),
    );
    reply
        .headers_mut()
        .insert(CONTENT_ENCODING, HeaderValue::from_static(coding.token()));
    reply
}
