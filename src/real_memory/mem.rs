//! Bytes split by where glibc puts them: heap chunks, which a process keeps
//! once touched (freed chunks are reused, seldom returned), and mapped
//! allocations, returned to the system when freed.

use std::ops::{Add, AddAssign, Mul, Sub};

use crate::model::alloc::{chunk, mapped};
use glibc_model::{MMAP_THRESHOLD_MAX, MMAP_THRESHOLD_MIN};

/// The mmap threshold a Python process with `ommx` imported starts a load
/// with: its imports freed mapped chunks, which raised it from glibc's
/// 128 KiB (measured: the smallest request `malloc` maps, after the imports
/// and the warm-up load of `bench/real_memory.py measure`).
pub const INTERPRETER_THRESHOLD: u64 = 640 << 10;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mem {
    pub heap: u64,
    pub mapped: u64,
}

impl Mem {
    pub fn total(self) -> u64 {
        self.heap + self.mapped
    }

    /// The larger of two, by total.
    pub fn max(self, other: Mem) -> Mem {
        if other.total() > self.total() {
            other
        } else {
            self
        }
    }
}

impl Add for Mem {
    type Output = Mem;
    fn add(self, o: Mem) -> Mem {
        Mem {
            heap: self.heap + o.heap,
            mapped: self.mapped + o.mapped,
        }
    }
}

impl AddAssign for Mem {
    fn add_assign(&mut self, o: Mem) {
        *self = *self + o;
    }
}

/// Never below zero: what is taken away was counted in what it is taken from.
impl Sub for Mem {
    type Output = Mem;
    fn sub(self, o: Mem) -> Mem {
        Mem {
            heap: self.heap.saturating_sub(o.heap),
            mapped: self.mapped.saturating_sub(o.mapped),
        }
    }
}

impl Mul<u64> for Mem {
    type Output = Mem;
    fn mul(self, n: u64) -> Mem {
        Mem {
            heap: self.heap * n,
            mapped: self.mapped * n,
        }
    }
}

/// glibc's placement of requests: below the mmap threshold a heap chunk,
/// from it on a mapping of its own.
#[derive(Debug, Clone, Copy)]
pub struct Allocator {
    threshold: u64,
}

impl Allocator {
    /// The threshold after the largest mapped chunk freed so far was
    /// `freed` bytes (glibc raises it to that, within its bounds).
    pub fn after_freeing(freed: u64) -> Allocator {
        Allocator {
            threshold: freed.clamp(MMAP_THRESHOLD_MIN, MMAP_THRESHOLD_MAX),
        }
    }

    /// The threshold once a request of `bytes` is freed: a mapped chunk
    /// larger than the threshold raises it to its size, unless it is larger
    /// than glibc's maximum (then it leaves it as it was).
    pub fn after_free(self, bytes: u64) -> Allocator {
        let size = mapped(bytes);
        if bytes >= self.threshold && size > self.threshold && size <= MMAP_THRESHOLD_MAX {
            Allocator { threshold: size }
        } else {
            self
        }
    }

    /// glibc's trim threshold: twice the mmap threshold once that moved.
    pub fn trim_threshold(self) -> u64 {
        2 * self.threshold
    }

    /// One request of `bytes`.
    pub fn one(self, bytes: u64) -> Mem {
        if bytes >= self.threshold {
            Mem {
                heap: 0,
                mapped: mapped(bytes),
            }
        } else {
            Mem {
                heap: chunk(bytes),
                mapped: 0,
            }
        }
    }

    /// `count` requests of `bytes` each.
    pub fn many(self, count: u64, bytes: u64) -> Mem {
        self.one(bytes) * count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc raises the threshold to a freed mapped chunk's size, up to its
    /// maximum; a heap chunk, or a mapped one larger than the maximum,
    /// leaves it.
    #[test]
    fn freeing_a_mapped_chunk_raises_the_threshold() {
        let a = Allocator::after_freeing(INTERPRETER_THRESHOLD);
        assert_eq!(a.after_free(4 << 20).trim_threshold(), 2 * mapped(4 << 20));
        assert_eq!(a.after_free(64 << 10).trim_threshold(), a.trim_threshold());
        assert_eq!(a.after_free(40 << 20).trim_threshold(), a.trim_threshold());
    }
}
