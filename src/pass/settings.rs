//! How the pass reads, as distinct from what it produces
//! ([`super::ProfileOptions`]): how many threads, where an element is
//! spooled, how large a chunk of a file read on every thread is. `api`
//! builds them from its options; the environment's overrides, meant for
//! tests and measurements, are read here and nowhere else
//! ([`Settings::from_environment`], listed in docs/development.md).

use super::objective::SPOOL_ABOVE;
use super::ranges::CHUNK;

/// The pass's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Threads one instance decodes with (`MEMPROF_THREADS`, 1 to 64);
    /// `None`: the machine's parallelism, at most
    /// [`MAX_THREADS`](super::MAX_THREADS), for instances not known to be
    /// small. Every setting gives the same output and the same error.
    pub threads: Option<usize>,
    /// The most threads one instance may take: a command reading several
    /// inputs at once divides the cores between them (`None`: no cap).
    pub cap: Option<usize>,
    /// An element longer than this is spooled when only counted
    /// (`MEMPROF_SPOOL_ABOVE`, in bytes); an `ommx.v2` payload from a
    /// stream, when longer than this or a MiB (`pass::v2_stream`).
    pub spool_above: u64,
    /// Bytes per chunk of a regular file read on every thread
    /// (`MEMPROF_CHUNK_BYTES`; at least 1).
    pub chunk_bytes: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            threads: None,
            cap: None,
            spool_above: SPOOL_ABOVE,
            chunk_bytes: CHUNK,
        }
    }
}

impl Settings {
    /// The defaults with the environment's overrides. An override that is
    /// empty or not a number is ignored (an empty or mistyped
    /// `MEMPROF_THREADS` once meant one thread, silently).
    pub fn from_environment() -> Self {
        let number = |name: &str| -> Option<u64> { std::env::var(name).ok()?.trim().parse().ok() };
        let defaults = Self::default();
        Self {
            threads: number("MEMPROF_THREADS").map(|n| n.clamp(1, 64) as usize),
            cap: None,
            spool_above: number("MEMPROF_SPOOL_ABOVE").unwrap_or(defaults.spool_above),
            chunk_bytes: number("MEMPROF_CHUNK_BYTES").map_or(defaults.chunk_bytes, |n| n.max(1)),
        }
    }
}
