//! `nodelay-server [--host H] [--port N] [--workers N] [--h2] [--tls]`: runs the embedded server
//! until SIGINT or SIGTERM. Prints `listening on URL` once bound, for the
//! benchmark lab (or a person) to read.

use std::io::Write as _;
use std::process::ExitCode;

use nodelay_server::{run_until, ServerConfig, TlsIdentity};

const USAGE: &str = "usage: nodelay-server [--host H] [--port N] [--workers N] [--h2] [--tls]";

fn main() -> ExitCode {
    let config = match parse_args(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("nodelay-server: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let announce = |url: &str| {
        let mut stdout = std::io::stdout().lock();
        // The reader waits for this line; if stdout is gone nobody is waiting.
        let _ = writeln!(stdout, "listening on {url}");
        let _ = stdout.flush();
    };
    match run_until(config, announce, termination()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("nodelay-server: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM (what `kill` and process
/// managers send).
async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            // Without a SIGTERM handler, SIGTERM still ends the process (by default).
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<ServerConfig, String> {
    let mut config = ServerConfig::default();
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        // Flags without a value.
        match flag.as_str() {
            "--h2" => {
                config.http2 = true;
                continue;
            }
            "--tls" => {
                config.tls = Some(TlsIdentity::localhost());
                continue;
            }
            _ => {}
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--host" => config.host = value,
            "--port" => config.port = value.parse().map_err(|_| format!("bad port: {value}"))?,
            "--workers" => {
                config.workers = value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("bad worker count: {value}"))?;
            }
            _ => return Err(format!("unknown argument: {flag}")),
        }
    }
    Ok(config)
}
