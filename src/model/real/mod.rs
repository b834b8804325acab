//! The real memory of an instance: an estimate of what a Python process
//! loading it with OMMX holds afterwards (resident) and at most while loading
//! (load peak), beyond the interpreter. OMMX's logical profile counts `len`;
//! this counts what the allocations really are: vector and hash-table
//! capacities as they grow, `BTreeMap` nodes, glibc's chunks and mappings,
//! the transient messages of the load, the Python `bytes`.
//!
//! It is derived from how OMMX allocates (`ommx29`: ommx 2.9.3's source,
//! its debug information and allocation traces) and calibrated only where
//! that cannot say (upb's arena, the heap's fragmentation); its measured
//! error is in `docs/real-memory.md`, against `bench/real_memory.json`.

pub mod alloc;
pub mod facts;
#[cfg(test)]
mod fixtures;
pub mod glibc;
pub mod load29;
mod mem;
mod ommx29;
mod ommx30;

use crate::profile::Aggregate;
use crate::report::real::{Held, RealMemory, Runtime};
use crate::report::{Accounting, InstanceSummary};

pub use facts::Facts;
use mem::Mem;

/// Resident and load-peak bytes, and the resident's part the instance's
/// own allocations take, by owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub resident: u64,
    pub load_peak: u64,
    pub held: Held,
}

/// One moment of a load: what is live at a phase's largest point, and
/// whether the heap it grows stays grown. A phase whose last allocation is
/// still on the heap when it ends pins what it grew; otherwise, once freed,
/// what it grew the heap by is given back when that reaches glibc's trim
/// threshold.
#[derive(Debug, Clone, Copy)]
struct Moment {
    live: Mem,
    pinned: bool,
}

/// The estimate from the moments of a load, in order, and what stays
/// (`held`): the heap grows to the largest moment's heap and keeps it (freed
/// chunks are reused, not given back) unless an unpinned moment's growth
/// reaches `trim`; `fragmentation_percent` more for the holes between live
/// chunks; mapped allocations come and go. The input `bytes` (mapped) is
/// there throughout the load and freed after.
fn settle(
    moments: &[Moment],
    held: Mem,
    by_owner: Held,
    input: u64,
    trim: u64,
    fragmentation_percent: u64,
) -> Estimate {
    let scaled = |heap: u64| heap + heap * fragmentation_percent / 100;
    let (mut extent, mut kept, mut peak) = (0, 0, 0);
    for moment in moments {
        extent = extent.max(moment.live.heap);
        peak = peak.max(scaled(extent) + moment.live.mapped);
        if moment.pinned || extent - kept < trim {
            kept = extent;
        } else {
            // Given back: the heap is as it was, for the moments after too.
            extent = kept;
        }
    }
    let resident = scaled(kept.max(held.heap)) + held.mapped;
    Estimate {
        resident,
        load_peak: input + peak.max(resident),
        held: by_owner,
    }
}

/// The estimate for the runtime whose accounting the profile follows.
pub fn real_memory(
    aggregate: &Aggregate,
    summary: &InstanceSummary,
    accounting: Accounting,
) -> RealMemory {
    let facts = Facts::of(aggregate, summary);
    let (runtime, estimate) = match accounting {
        Accounting::Ommx29 => (Runtime::Ommx29Python, ommx29::estimate(&facts)),
        Accounting::Ommx30 => (Runtime::Ommx30Python, ommx30::estimate(&facts)),
    };
    RealMemory {
        runtime,
        resident_bytes: estimate.resident,
        load_peak_bytes: estimate.load_peak,
        held_bytes: estimate.held,
    }
}
