//! Streamed request bodies on the async driver: the sync path's framing
//! (`upload.rs`: exact `Content-Length`, or chunked coding for a body of
//! unknown size) with the body pulled from a [`BodySource`] that runs on the
//! runtime's blocking pool ([`BodyPump`]): a source may block (a file read,
//! a Python iterator taking the GIL) without stalling the runtime's workers.

use std::io::IoSlice;

use tokio::sync::{mpsc, oneshot};

use crate::aio::pool::AsyncPooled;
use crate::deadline::Deadlines;
use crate::error::Error;
use crate::limits::UPLOAD_CHUNK_BYTES;
use crate::upload::{
    chunk_size_line, length_mismatch, BodySource, StreamFraming, CRLF, LAST_CHUNK,
};

/// A request for the thread that serves a [`BodySource`].
enum Command {
    Next(oneshot::Sender<Result<Option<Vec<u8>>, Error>>),
    Rewind(oneshot::Sender<Result<bool, Error>>),
}

/// The async side of a [`BodySource`] served on the blocking pool (see
/// [`BodyPump::spawn`]). Dropping it (a request done or cancelled) ends the
/// serving thread's loop.
pub struct BodyPump {
    commands: mpsc::Sender<Command>,
    server: tokio::task::JoinHandle<()>,
}

/// The serving side handed to the closure given to [`BodyPump::spawn`].
pub struct PumpServer {
    commands: mpsc::Receiver<Command>,
}

impl PumpServer {
    /// Answers the driver's requests from `source` until the request is done
    /// with it (returns then). `on_error` runs on the source right after one
    /// of its calls failed, before the driver hears of it (to keep the
    /// source's own error for the caller).
    pub fn serve<S: BodySource>(mut self, source: &mut S, mut on_error: impl FnMut(&mut S)) {
        let mut buf = Vec::with_capacity(UPLOAD_CHUNK_BYTES);
        while let Some(command) = self.commands.blocking_recv() {
            match command {
                Command::Next(reply) => {
                    let piece = source
                        .next_chunk(&mut buf)
                        .map(|piece| piece.map(<[u8]>::to_vec));
                    if piece.is_err() {
                        on_error(source);
                    }
                    let _ = reply.send(piece);
                }
                Command::Rewind(reply) => {
                    let rewound = source.rewind();
                    if rewound.is_err() {
                        on_error(source);
                    }
                    let _ = reply.send(rewound);
                }
            }
        }
    }

    /// Answers every request with `error` (the source could not be made).
    pub fn fail(mut self, error: impl Fn() -> Error) {
        while let Some(command) = self.commands.blocking_recv() {
            match command {
                Command::Next(reply) => drop(reply.send(Err(error()))),
                Command::Rewind(reply) => drop(reply.send(Err(error()))),
            }
        }
    }
}

fn pump_gone() -> Error {
    Error::body_source("the request body's source stopped".to_owned())
}

impl BodyPump {
    /// Runs `serve` on the runtime's blocking pool; it makes the source and
    /// calls [`PumpServer::serve`] with it.
    pub fn spawn(serve: impl FnOnce(PumpServer) + Send + 'static) -> BodyPump {
        // One request in flight at a time: the driver asks for the next
        // piece only once it wrote the previous one.
        let (commands, receiver) = mpsc::channel(1);
        let server = crate::runtime::handle()
            .spawn_blocking(move || serve(PumpServer { commands: receiver }));
        BodyPump { commands, server }
    }

    /// Ends the pump and waits until its serving side let go of the source
    /// (so a redirect or retry that sends the same body again finds it free).
    pub async fn finish(self) {
        drop(self.commands);
        let _ = self.server.await;
    }

    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Next(reply))
            .await
            .map_err(|_| pump_gone())?;
        answer.await.map_err(|_| pump_gone())?
    }

    /// Goes back to the first byte of the body; false when the source
    /// cannot (see [`BodySource::rewind`]).
    pub async fn rewind(&mut self) -> Result<bool, Error> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Rewind(reply))
            .await
            .map_err(|_| pump_gone())?;
        answer.await.map_err(|_| pump_gone())?
    }
}

/// Writes `wire` (the head) and the whole body from `pump`, framed as
/// `framing` says (the async `upload::send_streamed`: the head leaves with
/// the first piece). Write failures are marked "nothing received" (the
/// caller may replay on a fresh connection when the pump rewinds).
pub(crate) async fn send_streamed(
    pooled: &mut AsyncPooled,
    wire: &[u8],
    framing: StreamFraming,
    pump: &mut BodyPump,
    deadlines: &Deadlines,
) -> Result<(), Error> {
    let conn = pooled.conn();
    let mut head: Option<&[u8]> = Some(wire);
    let mut sent: u64 = 0;
    loop {
        let chunk = pump.next_chunk().await?;
        if chunk.as_ref().is_some_and(Vec::is_empty) {
            continue;
        }
        let head_part = IoSlice::new(head.take().unwrap_or_default());
        let written = match (framing, chunk.as_deref()) {
            (StreamFraming::Length(expected), Some(data)) => {
                sent += data.len() as u64;
                if sent > expected {
                    return Err(length_mismatch(expected, "more"));
                }
                conn.write_parts(&mut [head_part, IoSlice::new(data)], deadlines)
                    .await
            }
            (StreamFraming::Length(expected), None) => {
                if sent != expected {
                    return Err(length_mismatch(expected, &sent.to_string()));
                }
                return conn
                    .write_parts(&mut [head_part], deadlines)
                    .await
                    .map_err(Error::before_response);
            }
            (StreamFraming::Chunked, Some(data)) => {
                let mut size = [0u8; 18];
                let size = chunk_size_line(data.len(), &mut size);
                conn.write_parts(
                    &mut [
                        head_part,
                        IoSlice::new(size),
                        IoSlice::new(data),
                        IoSlice::new(CRLF),
                    ],
                    deadlines,
                )
                .await
            }
            (StreamFraming::Chunked, None) => {
                return conn
                    .write_parts(&mut [head_part, IoSlice::new(LAST_CHUNK)], deadlines)
                    .await
                    .map_err(Error::before_response);
            }
        };
        written.map_err(Error::before_response)?;
    }
}
