//! The async driver's view of the client's pool (`crate::pool`, whose tokio
//! face is `pool/asynchronous.rs`).

pub(crate) use crate::pool::asynchronous::AsyncPooled;
