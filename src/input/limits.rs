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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The default `--max-decompressed`: far above any OMMX instance seen in
/// practice (a million-term LP is 20 MB), low enough that a bomb is stopped
/// within seconds.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 4 << 30;

pub use crate::pass::DEFAULT_MAX_ELEMENT;

/// Limits that apply to one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes one gzip stream may decompress to (`--max-decompressed`).
    pub max_decompressed: u64,
    /// The longest element held whole where nothing else bounds it
    /// (`--max-element`).
    pub max_element: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_decompressed: DEFAULT_MAX_DECOMPRESSED,
            max_element: DEFAULT_MAX_ELEMENT,
        }
    }
}

/// The message of a stream stopped at the limit.
pub fn decompressed_too_large(limit: u64) -> String {
    format!(
        "gzip data decompresses to more than {}, the --max-decompressed limit; \
         raise it if the input is trusted",
        crate::units::size_text(limit)
    )
}

/// The message of a pipe or stdin stopped at the limit.
pub fn stream_too_long(limit: u64) -> String {
    format!(
        "the input stream is longer than {}, the --max-decompressed limit (which also bounds \
         input from a pipe); raise it if the input is trusted",
        crate::units::size_text(limit)
    )
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
