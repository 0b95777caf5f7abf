//! The embedded HTTP/1.1 and HTTP/2 server of nodelay (h2c on a plain port,
//! `h2` by ALPN over TLS, both opt-in), shared by the tests and the benchmark lab.
//!
//! Built for speed rather than features: static payloads are built once and shared
//! as `Bytes`, every socket gets `TCP_NODELAY`, keep-alive is on, and nothing is
//! logged per request. Every input is bounded by a constant in [`limits`].
//!
//! ```no_run
//! let server = nodelay_server::start(nodelay_server::ServerConfig::default())?;
//! println!("GET {}/bytes/1024", server.url());
//! server.shutdown();
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Routes (GET and HEAD unless noted; an unknown path is `404`):
//! `/bytes/{n}`, `/chunked/{n}`, `/json/{n}`, `/echo` and `/count` (any method),
//! `/anything*` (any method), `/headers`, `/status/{code}`, `/delay/{ms}`,
//! `/redirect/{n}`, `/redirect-to?url=U&status_code=C` (any method),
//! `/cookies/set?name=value`, `/cookies`, `/stats`, `/site/` and
//! `/site/{n}.html` (a generated site of linked pages for crawl benchmarks).

mod body;
mod config;
mod counted;
mod handle;
mod json;
pub mod limits;
mod listener;
mod payload;
mod response;
mod routes;
mod server;
mod state;
mod stats;
mod tls;

pub use config::{ServerConfig, DEFAULT_HOST, DEFAULT_WORKERS};
pub use handle::{start, ServerHandle};
pub use payload::{json_document, pattern, PATTERN};
pub use server::run_until;
pub use tls::{TlsIdentity, TEST_CA_PEM};
