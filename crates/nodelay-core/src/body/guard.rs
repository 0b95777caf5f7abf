//! The bomb guards of docs/hostile.md B14: a cap on the decoded size and a bound
//! on the decoded/received ratio, checked on every write of decoded bytes so
//! a bomb stops at the limit with memory flat.

use crate::error::{Error, ErrorKind};

/// Default cap on a decoded body (docs/hostile.md defaults: 1 GiB).
pub const DEFAULT_MAX_DECODED_BYTES: u64 = 1 << 30;

/// Decoded/received ratio beyond which a large body counts as a bomb. Real
/// text compresses 5–20×; a run of zeros 1000×; bombs reach 10⁶×.
pub const MAX_DECODE_RATIO: u64 = 1000;

/// The ratio guard only applies past this decoded size, so small, very
/// compressible bodies (a page of spaces) always decode.
pub const RATIO_GUARD_FLOOR_BYTES: u64 = 16 * 1024 * 1024;

/// The limits one body is decoded under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guard {
    /// The cap on the output of any one layer.
    pub max_bytes: u64,
    /// Raw (still encoded, as received) body bytes so far. The ratio is
    /// taken against these, not against a layer's own input, so nested
    /// layers (gzip of gzip: each ~1000×, together 10⁶×) cannot hide a bomb.
    pub received: u64,
}

impl Guard {
    /// Whether a layer may have produced `produced` bytes in all: the
    /// smaller of the cap and what the ratio allows for the bytes received.
    pub fn check(&self, produced: u64) -> Result<(), Error> {
        let ratio_limit = self
            .received
            .saturating_mul(MAX_DECODE_RATIO)
            .max(RATIO_GUARD_FLOOR_BYTES);
        let limit = self.max_bytes.min(ratio_limit);
        if produced <= limit {
            return Ok(());
        }
        let reason = if limit == self.max_bytes {
            format!("decoded body exceeds the limit of {} bytes", self.max_bytes)
        } else {
            format!("decompression ratio above {MAX_DECODE_RATIO}:1 (a decompression bomb?)")
        };
        Err(Error::new(ErrorKind::Decoding, reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_names_the_limit_and_the_ratio_names_a_bomb() {
        let guard = Guard {
            max_bytes: 1 << 20,
            received: 10,
        };
        assert!(guard.check(1 << 20).is_ok());
        let e = guard.check((1 << 20) + 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Decoding);
        assert!(
            e.message().contains("exceeds the limit of 1048576 bytes"),
            "{e}"
        );

        let guard = Guard {
            max_bytes: 1 << 30,
            received: 32 * 1024,
        };
        // 32 KiB received allows 32 MiB (1000×, above the 16 MiB floor).
        assert!(guard.check(32 * 1024 * 1000).is_ok());
        let e = guard.check(32 * 1024 * 1000 + 1).unwrap_err();
        assert!(e.message().contains("ratio above 1000:1"), "{e}");
    }

    #[test]
    fn below_the_floor_any_ratio_decodes() {
        let guard = Guard {
            max_bytes: 1 << 30,
            received: 1,
        };
        assert!(guard.check(RATIO_GUARD_FLOOR_BYTES).is_ok());
        assert!(guard.check(RATIO_GUARD_FLOOR_BYTES + 1).is_err());
    }
}
