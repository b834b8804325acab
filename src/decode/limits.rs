//! Resource limits on what an input may make memprof do.
//!
//! Most limits are fixed caps on things no genuine OMMX artifact comes near
//! (layer counts, the size of `index.json`); they live beside the code they
//! guard. The one a genuine input can reach, the decompressed size of gzip
//! data, is configurable: [`Limits::max_decompressed`], the
//! `--max-decompressed` option.
//!
//! A gzip stream is counted as it is decompressed ([`Capped`]), so a
//! decompression bomb is stopped as soon as it passes the limit, before its
//! output is held or processed further. The same limit bounds what is read
//! from stdin or a pipe, whose size is not known in advance: an endless
//! stream ends in an error.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Distinct entity names with `--group-by name`: each is a family frame
/// under its container, with a subtree of its own, in every thread's
/// aggregate and in every output, so they are capped (in stream order, the
/// same whatever the threads).
pub const MAX_FAMILIES: usize = 65_536;
/// Bytes of those distinct names.
pub const MAX_FAMILY_BYTES: usize = 1 << 20;

/// The default `--max-decompressed`: far above any OMMX instance seen in
/// practice (a million-term LP is 20 MB), low enough that a bomb is stopped
/// within seconds.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 4 << 30;

/// The default `--max-element`: the largest one top-level element of an
/// instance read from gzip data or a stream may be (one variable,
/// constraint or named function, or the singular fields such as the
/// objective together). An element is held whole while it is decoded, and
/// decoded it takes a few times its encoded size (at worst about sixteen
/// times, for a monomial of millions of one-byte ids), so this bounds what
/// a small compressed file can make memprof hold. Files read as stored need
/// no such limit: an element is no larger than the file. A 2,000-variable
/// dense QUBO's objective is 24 MB.
pub const DEFAULT_MAX_ELEMENT: u64 = 32 << 20;

static MAX_ELEMENT: AtomicU64 = AtomicU64::new(DEFAULT_MAX_ELEMENT);

/// Sets the element limit every instance is read under (`--max-element`).
pub fn set_max_element(bytes: u64) {
    MAX_ELEMENT.store(bytes, Ordering::Relaxed);
}

/// The element limit in force.
pub fn max_element() -> u64 {
    MAX_ELEMENT.load(Ordering::Relaxed)
}

/// The message of an element over the limit.
pub fn element_too_large(what: &str, len: u64, limit: u64) -> String {
    format!(
        "{what} is {len} bytes, more than {}, the --max-element limit; \
         raise it if the input is trusted",
        size_text(limit)
    )
}

/// Limits that apply to one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes one gzip stream may decompress to.
    pub max_decompressed: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_decompressed: DEFAULT_MAX_DECOMPRESSED,
        }
    }
}

/// Parses a byte size: a whole number with an optional unit, `B`, binary
/// `KiB` `MiB` `GiB` `TiB` or decimal `kB` `MB` `GB` `TB` (case-insensitive,
/// space allowed before the unit).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(format!(
            "{text:?} is not a size: expected a whole number with an optional unit (64GiB, 500MB, 1048576)"
        ));
    }
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit {other:?}: use B, KiB, MiB, GiB, TiB, kB, MB, GB or TB"
            ))
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// The message of a stream stopped at the limit.
pub fn decompressed_too_large(limit: u64) -> String {
    format!(
        "gzip data decompresses to more than {}, the --max-decompressed limit; \
         raise it if the input is trusted",
        size_text(limit)
    )
}

/// The message of a pipe or stdin stopped at the limit.
pub fn stream_too_long(limit: u64) -> String {
    format!(
        "the input stream is longer than {}, the --max-decompressed limit (which also bounds \
         input from a pipe); raise it if the input is trusted",
        size_text(limit)
    )
}

/// A limit as it would be typed: the largest binary unit that divides it.
pub fn size_text(bytes: u64) -> String {
    for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes != 0 && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// Counts the bytes read through it and fails once they pass `limit`,
/// raising `tripped` so that whatever error the reader's user makes of the
/// failure can be reported as the limit it is.
pub struct Capped<R> {
    inner: R,
    read: u64,
    limit: u64,
    tripped: Arc<AtomicBool>,
}

impl<R> Capped<R> {
    pub fn new(inner: R, limit: u64, tripped: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            read: 0,
            limit,
            tripped,
        }
    }

    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read > self.limit {
            return Err(io::Error::other(decompressed_too_large(self.limit)));
        }
        // One byte past the limit is enough to know the stream is longer.
        let room = (self.limit - self.read).saturating_add(1);
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.read += n as u64;
        if self.read > self.limit {
            self.tripped.store(true, Ordering::Relaxed);
            return Err(io::Error::other(decompressed_too_large(self.limit)));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("64GiB"), Ok(64 << 30));
        assert_eq!(parse_size("64 gib"), Ok(64 << 30));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("3b"), Ok(3));
        assert!(parse_size("GiB").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("1.5GiB").unwrap_err().contains("unit"));
        assert!(parse_size("20000000TiB").unwrap_err().contains("too large"));
        for text in ["4GiB", "64MiB", "3KiB", "1000 bytes"] {
            assert_eq!(
                size_text(parse_size(text.trim_end_matches("ytes")).unwrap()),
                text
            );
        }
    }

    #[test]
    fn capped_passes_exactly_the_limit_and_trips_past_it() {
        let tripped = Arc::new(AtomicBool::new(false));
        let mut out = Vec::new();
        Capped::new(&[7u8; 100][..], 100, tripped.clone())
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out.len(), 100);
        assert!(!tripped.load(Ordering::Relaxed));

        let err = Capped::new(&[7u8; 101][..], 100, tripped.clone())
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert!(err.to_string().contains("--max-decompressed"), "{err}");
        assert!(tripped.load(Ordering::Relaxed));
    }
}
