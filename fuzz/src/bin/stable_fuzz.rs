//! Stable-toolchain fallback for the `response_parser` fuzz target: no libFuzzer,
//! no coverage feedback, just a seeded xorshift generator mutating the seed
//! corpus for a fixed time. Deterministic for a given `--seed` (the sequence of
//! inputs is; how far it gets in `--seconds` depends on the machine).
//!
//! ```text
//! cargo run --release --no-default-features --bin stable_fuzz -- \
//!     [--seconds 60] [--seed 1] [--corpus DIR] [--artifacts DIR] [FILE...]
//! ```
//! Given FILEs, it only replays them (to reproduce a crash). On a failed
//! property it writes the input to `--artifacts` and exits with status 1.

use std::panic;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nodelay_fuzz::{response_parser, CONTROL_BYTES};

/// Largest input a mutation may build: room for a head past `MAX_HEAD_BYTES`.
const MAX_INPUT_BYTES: usize = 400 * 1024;

/// Tokens a blind mutator would rarely guess but the parser cares about.
const DICTIONARY: &[&[u8]] = &[
    b"\r\n",
    b"\n",
    b"\r",
    b"\r\n\r\n",
    b"HTTP/1.1 ",
    b"HTTP/1.0 ",
    b"HTTP/2.0 ",
    b"200 OK",
    b"HTTP/1.1 100 Continue\r\n\r\n",
    b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
    b"204 No Content",
    b"304 Not Modified",
    b"Content-Length: ",
    b"Content-Length: 5, 5",
    b"Transfer-Encoding: chunked",
    b"Transfer-Encoding: gzip, chunked",
    b"Transfer-Encoding: chunked, chunked",
    b"Connection: close",
    b"Connection: keep-alive",
    b"0\r\n\r\n",
    b"5\r\nhello\r\n",
    b";name=value",
    b";",
    b" ",
    b"\t",
    b"\0",
    b"\x7f",
    b"\xff",
    b":",
    b" :",
    b"ffffffffffffffff",
    b"10000000000000000",
    b"-1",
    b"+5",
    b"0x10",
    b"1e3",
    b"99999999999999999999",
    b"X-Trailer: 1\r\n",
];

struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // xorshift must not start at zero; mix the seed so 0, 1, 2... differ well.
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

fn mutate(rng: &mut XorShift, input: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    if input.len() < CONTROL_BYTES {
        input.resize(CONTROL_BYTES, 0);
    }
    let len = input.len();
    match rng.below(11) {
        0 => {
            let i = rng.below(len);
            input[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = rng.below(len);
            input[i] = rng.next() as u8;
        }
        2 => {
            let i = rng.below(len + 1);
            input.insert(i, rng.next() as u8);
        }
        3 => {
            let i = CONTROL_BYTES + rng.below(len - CONTROL_BYTES + 1);
            let n = rng.below(len - i + 1).min(1 + rng.below(64));
            input.drain(i..i + n);
        }
        4 => {
            // Copy a range somewhere else.
            let i = rng.below(len);
            let n = (1 + rng.below(128)).min(len - i);
            let piece = input[i..i + n].to_vec();
            let at = CONTROL_BYTES + rng.below(len - CONTROL_BYTES + 1);
            input.splice(at..at, piece);
        }
        5 | 6 => {
            let token = DICTIONARY[rng.below(DICTIONARY.len())];
            let at = CONTROL_BYTES + rng.below(len - CONTROL_BYTES + 1);
            if rng.chance(3) && at + token.len() <= len {
                input[at..at + token.len()].copy_from_slice(token);
            } else {
                input.splice(at..at, token.iter().copied());
            }
        }
        7 => {
            // Splice: our head, another seed's tail.
            let other = &seeds[rng.below(seeds.len())];
            if other.len() > CONTROL_BYTES {
                let cut = CONTROL_BYTES + rng.below(len - CONTROL_BYTES + 1);
                let from = CONTROL_BYTES + rng.below(other.len() - CONTROL_BYTES);
                input.truncate(cut);
                input.extend_from_slice(&other[from..]);
            }
        }
        8 => {
            // New read sizes / flags.
            let i = rng.below(CONTROL_BYTES);
            input[i] = rng.next() as u8;
        }
        9 => {
            // Repeat a small range many times: floods of headers, chunks,
            // extensions, trailers, and heads past the size limits.
            let i = CONTROL_BYTES + rng.below(len - CONTROL_BYTES + 1);
            let n = (1 + rng.below(32)).min(len - i);
            if n > 0 {
                let piece = input[i..i + n].to_vec();
                let most = if rng.chance(8) { 20_000 } else { 200 };
                let times = 1 + rng.below(most);
                let mut grown = Vec::with_capacity(piece.len() * times);
                for _ in 0..times {
                    grown.extend_from_slice(&piece);
                }
                input.splice(i..i, grown);
            }
        }
        _ => {
            // A random number where the parser expects one.
            let at = CONTROL_BYTES + rng.below(len - CONTROL_BYTES + 1);
            let n = rng.next() >> rng.below(64);
            let text = if rng.chance(2) {
                format!("{n:x}")
            } else {
                format!("{n}")
            };
            input.splice(at..at, text.into_bytes());
        }
    }
    input.truncate(MAX_INPUT_BYTES);
}

fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Runs one input; on a panic saves it and returns false.
fn run(input: &[u8], artifacts: &Path) -> bool {
    if panic::catch_unwind(|| response_parser(input)).is_ok() {
        return true;
    }
    let _ = std::fs::create_dir_all(artifacts);
    let path = artifacts.join(format!("crash-{:016x}", fnv1a(input)));
    match std::fs::write(&path, input) {
        Ok(()) => eprintln!("stable_fuzz: failing input saved to {}", path.display()),
        Err(e) => eprintln!("stable_fuzz: could not save failing input: {e}"),
    }
    false
}

struct Args {
    seconds: u64,
    seed: u64,
    corpus: PathBuf,
    artifacts: PathBuf,
    replay: Vec<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = Args {
        seconds: 60,
        seed: 1,
        corpus: root.join("corpus/response_parser"),
        artifacts: root.join("artifacts/stable"),
        replay: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => {
                args.seconds = value("--seconds")?.parse().map_err(|e| format!("{e}"))?
            }
            "--seed" => args.seed = value("--seed")?.parse().map_err(|e| format!("{e}"))?,
            "--corpus" => args.corpus = value("--corpus")?.into(),
            "--artifacts" => args.artifacts = value("--artifacts")?.into(),
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            file => args.replay.push(file.into()),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("stable_fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    if !args.replay.is_empty() {
        for file in &args.replay {
            let data = std::fs::read(file).expect("readable input file");
            if !run(&data, &args.artifacts) {
                return ExitCode::FAILURE;
            }
            println!("stable_fuzz: {} ok", file.display());
        }
        return ExitCode::SUCCESS;
    }

    let mut entries: Vec<PathBuf> = std::fs::read_dir(&args.corpus)
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort(); // directory order is not deterministic; the run should be
    let seeds: Vec<Vec<u8>> = entries
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    if seeds.is_empty() {
        eprintln!("stable_fuzz: no seeds in {}", args.corpus.display());
        return ExitCode::from(2);
    }
    for seed in &seeds {
        if !run(seed, &args.artifacts) {
            return ExitCode::FAILURE;
        }
    }

    let mut rng = XorShift::new(args.seed);
    let started = Instant::now();
    let limit = Duration::from_secs(args.seconds);
    let mut executions: u64 = 0;
    let mut bytes: u64 = 0;
    while started.elapsed() < limit {
        // A batch between clock reads.
        for _ in 0..64 {
            let mut input = seeds[rng.below(seeds.len())].clone();
            for _ in 0..1 + rng.below(8) {
                mutate(&mut rng, &mut input, &seeds);
            }
            executions += 1;
            bytes += input.len() as u64;
            if !run(&input, &args.artifacts) {
                eprintln!("stable_fuzz: failed after {executions} executions (seed {})", args.seed);
                return ExitCode::FAILURE;
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "stable_fuzz: {executions} executions in {secs:.1} s ({:.0}/s, {:.1} MB), {} seeds, seed {}: no failure",
        executions as f64 / secs,
        bytes as f64 / 1e6,
        seeds.len(),
        args.seed
    );
    ExitCode::SUCCESS
}
