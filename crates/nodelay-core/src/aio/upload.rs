//! Streamed request bodies on the async driver: the sync path's framing
//! (`upload.rs`: exact `Content-Length`, or chunked coding for a body of
//! unknown size) with the body pulled from a [`BodySource`] that runs on the
//! runtime's blocking pool ([`BodyPump`]): a source may block (a file read,
//! a Python iterator taking the GIL) without stalling the runtime's workers.
//! The HTTP/2 driver pulls the same pump (`h2/upload.rs`).

use std::future::Future;
use std::io::IoSlice;
use std::os::fd::RawFd;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use nodelay_proto::{BodyWriter, CHUNK_SIZE_LINE_BYTES};

use crate::aio::conn::poll_readable;
use crate::aio::pool::AsyncPooled;
use crate::deadline::{poll_once, Deadlines};
use crate::error::Error;
use crate::limits::UPLOAD_CHUNK_BYTES;
use crate::sequence::Sent;
use crate::upload::{borrowed, frame_parts, local, BodySource, StreamFraming, FRAME_PARTS};

/// A request for the thread that serves a [`BodySource`].
enum Command {
    Next(oneshot::Sender<Result<Option<Vec<u8>>, Error>>),
    Rewind(oneshot::Sender<Result<bool, Error>>),
    Trailers(oneshot::Sender<Result<Vec<(String, String)>, Error>>),
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
                Command::Trailers(reply) => {
                    let trailers = source.trailers();
                    if trailers.is_err() {
                        on_error(source);
                    }
                    let _ = reply.send(trailers);
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
                Command::Trailers(reply) => drop(reply.send(Err(error()))),
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

    /// The next piece of the body (`None` at its end), pulled by the
    /// serving thread.
    pub(crate) async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
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

    /// The source's trailer fields (see [`BodySource::trailers`]), asked
    /// after its last piece.
    pub(crate) async fn trailers(&mut self) -> Result<Vec<(String, String)>, Error> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Trailers(reply))
            .await
            .map_err(|_| pump_gone())?;
        answer.await.map_err(|_| pump_gone())?
    }
}

/// Writes `wire` (the head) and the whole body from `pump`, framed as
/// `framing` says (the async `upload::send_streamed`: the head leaves with
/// the first piece). Returns whether the whole body went out: `Ok(false)`
/// means the server answered before the end (a 413, a 401) and the rest was
/// not sent (read the answer with [`receive_early_answer`]). Write failures
/// are marked "nothing received" (the caller may replay on a fresh
/// connection when the pump rewinds).
pub(crate) async fn send_streamed(
    pooled: &mut AsyncPooled,
    wire: &[u8],
    framing: StreamFraming,
    pump: &mut BodyPump,
    deadlines: &Deadlines,
) -> Result<bool, Error> {
    let conn = pooled.conn();
    let fd = conn.raw_fd();
    let mut writer = BodyWriter::new(framing);
    let mut size_line = [0u8; CHUNK_SIZE_LINE_BYTES];
    let mut head: Option<&[u8]> = Some(wire);
    // The last chunk with its trailer fields, when the source has some.
    let mut end = Vec::new();
    loop {
        let chunk = pump.next_chunk().await?;
        if chunk.as_ref().is_some_and(Vec::is_empty) {
            continue;
        }
        // Once the head is out, a readable socket before the next piece
        // means the server answered (or gave up) early (as on the sync path:
        // one zero-timeout poll per piece).
        // A body of announced length whose every byte is out is a whole
        // request: the answer that follows it is the response, not an
        // early one.
        if head.is_none() && !writer.is_complete() && !conn.is_reusable() {
            return Ok(false);
        }
        let frame = match chunk {
            Some(_) => writer.frame(chunk.as_deref(), &mut size_line),
            None => {
                let trailers = pump.trailers().await?;
                writer.finish_with_trailers(&borrowed(&trailers), &mut end, &mut size_line)
            }
        }
        .map_err(local)?;
        let mut parts = [IoSlice::new(&[]); FRAME_PARTS];
        let count = frame_parts(head.take().unwrap_or_default(), &frame, &mut parts);
        let parts = &mut parts[..count];
        if frame.last {
            // The end of the body: nothing more to hold back for an answer.
            if count > 0 {
                conn.write_parts(parts, deadlines)
                    .await
                    .map_err(Error::before_response)?;
            }
            return Ok(true);
        }
        let written = unless_answered(conn.write_parts(parts, deadlines), fd).await;
        if !written.map_err(Error::before_response)? {
            return Ok(false);
        }
    }
}

/// How often a body write that waits for the socket (the server is not
/// reading) looks whether the server answered instead: the longest an early
/// answer (a 413 before the body) waits behind a stalled write. One
/// zero-timeout `poll(2)` per interval, only while a write is blocked.
const ANSWER_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Runs one body write; `Ok(false)` when, while it waited for the socket,
/// the server answered (or closed): the rest of the body is then not sent.
async fn unless_answered(
    write: impl Future<Output = Result<(), Error>>,
    fd: RawFd,
) -> Result<bool, Error> {
    let mut write = std::pin::pin!(write);
    if let Some(done) = poll_once(write.as_mut()).await {
        return done.map(|()| true);
    }
    loop {
        match tokio::time::timeout(ANSWER_POLL_INTERVAL, write.as_mut()).await {
            Ok(done) => return done.map(|()| true),
            Err(_) if poll_readable(fd) => return Ok(false),
            Err(_) => {}
        }
    }
}

/// The body of a request on the tokio driver, as `AsyncClient::drive`
/// writes it behind the head, with the step's outcome for the exchange
/// sequence (`sequence.rs`).
pub(crate) enum AsyncOutgoing<'a> {
    /// Bytes not inlined in the head's write (`None`: none, or inlined).
    Bytes(Option<&'a [u8]>),
    /// Pulled from a [`BodyPump`].
    Pumped {
        pump: &'a mut BodyPump,
        framing: StreamFraming,
    },
}

impl AsyncOutgoing<'_> {
    /// Writes `wire` (the head, with a small body) and the body on `pooled`.
    pub(crate) async fn send(
        &mut self,
        pooled: &mut AsyncPooled,
        wire: &[u8],
        deadlines: &Deadlines,
    ) -> Sent {
        match self {
            AsyncOutgoing::Bytes(body) => {
                match pooled.conn().write_all(wire, *body, deadlines).await {
                    Ok(()) => Sent::Whole,
                    // A failed write of bytes received nothing of a response.
                    Err(e) => Sent::Failed(e.before_response()),
                }
            }
            AsyncOutgoing::Pumped { pump, framing } => {
                match send_streamed(pooled, wire, *framing, pump, deadlines).await {
                    Ok(true) => Sent::Whole,
                    Ok(false) => Sent::Cut,
                    Err(e) => Sent::Failed(e),
                }
            }
        }
    }

    /// Starts the body over for a retry: bytes always can, a pump when its
    /// source rewinds.
    pub(crate) async fn rewind(&mut self) -> Result<bool, Error> {
        match self {
            AsyncOutgoing::Bytes(_) => Ok(true),
            AsyncOutgoing::Pumped { pump, .. } => pump.rewind().await,
        }
    }

    /// Whether the body is streamed (a retry must rewind it first).
    pub(crate) fn is_streamed(&self) -> bool {
        matches!(self, AsyncOutgoing::Pumped { .. })
    }
}
