//! The calls a process makes of malloc, as glibc enters them: the tcache
//! first where it serves the call, then glibc's steps (`mod.rs`). Each call
//! is counted and, when asked, recorded in `bench/alloc_trace.c`'s format, so
//! that a generated load reads like a traced one (`alloc_trace.py --steps`).

use super::MMAP_THRESHOLD_MAX;
use super::{request, tcache_index, Malloc, Ptr, ALIGN, HEAP_BASE, MINSIZE, PAGE, TCACHE_BINS};

impl Malloc {
    /// `malloc(bytes)`.
    pub fn malloc(&mut self, bytes: u64) -> Ptr {
        self.calls += 1;
        let p = self.serve_malloc(bytes);
        self.note(MALLOC, p.at, bytes, p);
        p
    }

    /// `calloc(n, size)` of `bytes` in all: glibc serves it without the
    /// tcache.
    pub fn calloc(&mut self, bytes: u64) -> Ptr {
        self.calls += 1;
        let p = self.serve_calloc(bytes);
        self.note(CALLOC, p.at, bytes, p);
        p
    }

    /// `posix_memalign` and kin.
    pub fn memalign(&mut self, alignment: u64, bytes: u64) -> Ptr {
        self.calls += 1;
        let p = self.serve_memalign(alignment, bytes);
        self.note(ALIGNED | alignment << 8, p.at, bytes, p);
        p
    }

    /// `free(p)`.
    pub fn free(&mut self, p: Ptr) {
        self.calls += 1;
        self.note(FREE, p.at, 0, p);
        self.serve_free(p);
        self.fix_break();
    }

    /// `realloc(p, bytes)` for `bytes` > 0.
    pub fn realloc(&mut self, p: Ptr, bytes: u64) -> Ptr {
        self.calls += 1;
        self.note(FREE, p.at, 1, p);
        let q = self.serve_realloc(p, bytes);
        self.note(REALLOC, q.at, bytes, q);
        q
    }

    /// `malloc_trim(pad)`.
    pub fn trim(&mut self, pad: u64) {
        self.calls += 1;
        self.serve_trim(pad);
        self.note(TRIM, 0, pad, Ptr { at: 0, size: 0 });
    }

    /// Records every call from now on (`bench/alloc_trace.c`'s records:
    /// op, pointer, size, the chunk's size field).
    pub fn record(&mut self) {
        self.log = Some(Vec::new());
    }

    /// A phase mark in the record (the phase, the break).
    pub fn mark(&mut self, phase: u64) {
        let brk = HEAP_BASE + self.brk();
        if let Some(log) = &mut self.log {
            log.push([MARK, 0, phase, brk]);
        }
    }

    /// The record so far.
    pub fn records(&self) -> &[[u64; 4]] {
        self.log.as_deref().unwrap_or_default()
    }

    /// Records a call: a free's size is the break after it
    /// (filled in by `fix_break`), its chunk the one freed.
    fn note(&mut self, op: u64, ptr: u64, size: u64, p: Ptr) {
        if self.log.is_none() {
            return;
        }
        let chunk = match p {
            Ptr { at: 0, .. } => HEAP_BASE + self.brk(),
            p if p.is_mapped() => p.size | IS_MAPPED,
            p => p.size,
        };
        if let Some(log) = &mut self.log {
            log.push([op, ptr, size, chunk]);
        }
    }

    /// A free's record takes the break after it.
    fn fix_break(&mut self) {
        let brk = HEAP_BASE + self.brk();
        if let Some(last) = self.log.as_mut().and_then(|l| l.last_mut()) {
            last[2] = brk;
        }
    }
}

/// `bench/alloc_trace.c`'s records: their kinds (an aligned allocation's
/// alignment above the kind's low byte), and the chunk flag a record's
/// size field carries for a mapped chunk. `bench/glibc_replay.rs` reads
/// them with these.
pub mod record {
    pub const MALLOC: u64 = 1;
    pub const FREE: u64 = 2;
    pub const CALLOC: u64 = 3;
    pub const REALLOC: u64 = 4;
    pub const ALIGNED: u64 = 5;
    pub const TRIM: u64 = 6;
    pub const MARK: u64 = 9;
    pub const IS_MAPPED: u64 = 2;
}

use record::{ALIGNED, CALLOC, FREE, IS_MAPPED, MALLOC, MARK, REALLOC, TRIM};

impl Malloc {
    /// `malloc(bytes)`.
    fn serve_malloc(&mut self, bytes: u64) -> Ptr {
        let nb = request(bytes);
        let t = tcache_index(nb);
        if t < TCACHE_BINS {
            if let Some(at) = self.tcache[t].pop() {
                self.touch(at, nb);
                return Ptr { at, size: nb };
            }
        }
        let p = self.int_malloc(nb);
        self.touch_ptr(p);
        p
    }

    /// `calloc(n, size)` of `bytes` in all: glibc serves it without the
    /// tcache.
    fn serve_calloc(&mut self, bytes: u64) -> Ptr {
        let p = self.int_malloc(request(bytes));
        self.touch_ptr(p);
        p
    }

    /// `posix_memalign` and kin: glibc 2.36 serves an alignment above 16
    /// without the tcache, from a chunk large enough to align within, and
    /// frees what lies before the aligned chunk and beyond it.
    fn serve_memalign(&mut self, alignment: u64, bytes: u64) -> Ptr {
        if alignment <= ALIGN {
            return self.serve_malloc(bytes);
        }
        let alignment = alignment.max(MINSIZE).next_power_of_two();
        let nb = request(bytes);
        // `_int_malloc` takes this as a request, not a chunk size.
        let p = self.int_malloc(request(nb + alignment + MINSIZE));
        if p.is_mapped() {
            return p;
        }
        let Ptr { mut at, mut size } = p;
        let mem = at + 16;
        if mem % alignment != 0 {
            let mut aligned = mem.next_multiple_of(alignment) - 16;
            if aligned - at < MINSIZE {
                aligned += alignment;
            }
            let lead = aligned - at;
            self.int_free(at, lead);
            at = aligned;
            size -= lead;
        }
        if size > nb + MINSIZE {
            self.int_free(at + nb, size - nb);
            size = nb;
        }
        self.touch(at, size);
        Ptr { at, size }
    }

    /// `free(p)`.
    fn serve_free(&mut self, p: Ptr) {
        if p.is_mapped() {
            let size = self.mapped.remove(&p.at).expect("a live mapping");
            self.mapped_bytes -= size;
            if size > self.mmap_threshold && size <= MMAP_THRESHOLD_MAX {
                self.mmap_threshold = size;
                self.trim_threshold = 2 * size;
            }
            return;
        }
        self.int_free(p.at, p.size);
    }

    /// `realloc(p, bytes)` for `bytes` > 0.
    fn serve_realloc(&mut self, p: Ptr, bytes: u64) -> Ptr {
        let nb = request(bytes);
        if p.is_mapped() {
            // mremap: the mapping resized, wherever it lands.
            let old = self.mapped.remove(&p.at).expect("a live mapping");
            let size = (nb + 8).next_multiple_of(PAGE);
            self.mapped.insert(p.at, size);
            self.mapped_bytes = self.mapped_bytes - old + size;
            return Ptr { at: p.at, size };
        }
        let Ptr {
            at: old,
            size: oldsize,
        } = p;
        let mut newsize = oldsize;
        if oldsize < nb {
            let next = old + oldsize;
            if next == self.top && oldsize + self.top_size >= nb + MINSIZE {
                // Grown into the top.
                self.top_size -= nb - oldsize;
                self.top = old + nb;
                self.touch(old, nb);
                return Ptr { at: old, size: nb };
            }
            match self.binned_at(next) {
                Some(s) if oldsize + self.slot(s).size >= nb => {
                    newsize = oldsize + self.unlink(s).1;
                }
                _ => {
                    let q = self.int_malloc(nb);
                    if q.at != next {
                        self.touch_ptr(q);
                        self.int_free(old, oldsize);
                        return q;
                    }
                    // The new chunk is the one after (the top, grown): one
                    // chunk of both.
                    newsize = oldsize + q.size;
                }
            }
        }
        // Shrink in place (or trim what the neighbour gave): a remainder of
        // a chunk or more is freed, into the tcache if it fits there.
        if newsize - nb >= MINSIZE {
            self.int_free(old + nb, newsize - nb);
            newsize = nb;
        }
        self.touch(old, newsize);
        Ptr {
            at: old,
            size: newsize,
        }
    }

    /// The first `malloc` of a process sets up the tcache: a 640-byte
    /// chunk, the heap's first.
    pub fn init_tcache(&mut self) {
        let p = self.int_malloc(request(640));
        self.touch_ptr(p);
    }

    /// `malloc_trim(pad)`: the fast bins consolidated, the pages inside
    /// every binned chunk given back, then the top trimmed to `pad`.
    fn serve_trim(&mut self, pad: u64) {
        self.consolidate();
        let binned: Vec<(u64, u64)> = self.binned().collect();
        for (addr, size) in binned {
            // glibc keeps the chunk's header and links (48 bytes).
            let from = (addr + 48).next_multiple_of(PAGE);
            let end = addr + size;
            if end > from + PAGE - 1 {
                let len = (end - from) & !(PAGE - 1);
                self.evict(from, from + len);
            }
        }
        self.systrim(pad);
    }
}
