//! glibc 2.36's malloc, as far as it decides where a chunk lies and how
//! much of the heap stays resident: one thread's main arena, its
//! per-thread cache (tcache), fast bins, the unsorted, small and large bins,
//! the top chunk grown by `sbrk` and trimmed in `free`, the dynamic mmap
//! threshold, and `malloc_trim`. No bytes are stored: a chunk is an address
//! and a size, and the heap's resident pages are a bitmap. Only the free
//! chunks in the bins are kept (in a slab, with their sizes and links, found
//! by address through the maps of their starts and ends); a chunk handed
//! out is known by its pointer ([`Ptr`] carries its size), and one in the
//! tcache or a fast bin by its list (each holds one size), so the model's
//! memory follows the heap's free chunks, not its live ones.
//!
//! The rules are glibc's (`malloc/malloc.c`), restated: each place that
//! decides a placement is named after the step it models. It is checked by
//! replaying allocation traces of whole Python processes, where every chunk
//! must land at the address glibc gave it (`bench/glibc_replay.rs`).

use std::collections::{BTreeMap, HashMap};

mod addr;
use addr::BuildAddrHasher;

mod calls;
pub use calls::record;
mod links;
mod pages;
mod repeat;
mod snapshot;
#[cfg(test)]
mod tests;

use links::{Free, Slot};

/// glibc's threshold above which a request is served by its own `mmap` at
/// most: the dynamic threshold starts at [`MMAP_THRESHOLD_MIN`] and rises to
/// the largest mapped chunk freed so far, up to this
/// (`DEFAULT_MMAP_THRESHOLD_MAX` on 64-bit).
pub const MMAP_THRESHOLD_MAX: u64 = 32 << 20;
/// glibc's initial mmap threshold (`DEFAULT_MMAP_THRESHOLD`).
pub const MMAP_THRESHOLD_MIN: u64 = 128 << 10;
/// A page.
pub const PAGE: u64 = 4096;

/// The smallest chunk, and the alignment of every chunk.
const MINSIZE: u64 = 32;
const ALIGN: u64 = 16;
/// Chunks up to this size go to a fast bin when freed (`DEFAULT_MXFAST`).
const MAX_FAST: u64 = 128;
/// The smallest chunk of a large bin.
const MIN_LARGE: u64 = 1024;
/// tcache: 64 bins of chunks from 32 to 1,040 bytes, 7 chunks each.
const TCACHE_BINS: usize = 64;
const TCACHE_COUNT: usize = 7;
/// A free that leaves a chunk this large consolidates the fast bins and may
/// trim the heap.
const CONSOLIDATION_THRESHOLD: u64 = 64 << 10;
/// What `sbrk` asks for beyond the request, and what a trim leaves.
const TOP_PAD: u64 = 128 << 10;
/// Bins: 1 is the unsorted bin, 2..64 the small bins (one size each), 64..127
/// the large ones (ranges of sizes, sorted).
const NBINS: usize = 128;
const UNSORTED: usize = 1;
/// glibc stops sorting the unsorted bin after this many chunks per request.
const MAX_ITERS: u32 = 10_000;

/// Where the heap begins in the simulation; mapped chunks are numbered from
/// far above it.
const HEAP_BASE: u64 = 1 << 32;
const MAPPED_BASE: u64 = 1 << 46;

/// The chunk glibc carves for a request of `bytes` (the request, an 8-byte
/// header, rounded up to 16, at least 32).
pub const fn request(bytes: u64) -> u64 {
    let rounded = (bytes + 8 + ALIGN - 1) & !(ALIGN - 1);
    if rounded < MINSIZE {
        MINSIZE
    } else {
        rounded
    }
}

const fn tcache_index(size: u64) -> usize {
    (size - MINSIZE).div_ceil(ALIGN) as usize
}

const fn fast_index(size: u64) -> usize {
    ((size >> 4) - 2) as usize
}

/// The size of the chunks of fast bin `f` (and of tcache bin `t`: each
/// holds one size).
const fn fast_size(f: usize) -> u64 {
    ((f as u64) + 2) << 4
}

const fn tcache_size(t: usize) -> u64 {
    MINSIZE + t as u64 * ALIGN
}

const fn bin_index(size: u64) -> usize {
    if size < MIN_LARGE {
        (size >> 4) as usize
    } else if size >> 6 <= 48 {
        48 + (size >> 6) as usize
    } else if size >> 9 <= 20 {
        91 + (size >> 9) as usize
    } else if size >> 12 <= 10 {
        110 + (size >> 12) as usize
    } else if size >> 15 <= 4 {
        119 + (size >> 15) as usize
    } else if size >> 18 <= 2 {
        124 + (size >> 18) as usize
    } else {
        126
    }
}

/// A pointer `malloc` returned: a heap chunk's address or a mapped one's,
/// with the chunk's size (what glibc reads from the chunk's header when it is
/// freed or reallocated). Two are equal when they point at the same place.
#[derive(Debug, Clone, Copy)]
pub struct Ptr {
    at: u64,
    size: u64,
}

impl PartialEq for Ptr {
    fn eq(&self, other: &Ptr) -> bool {
        self.at == other.at
    }
}

impl Eq for Ptr {}

impl std::hash::Hash for Ptr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.at.hash(state);
    }
}

impl Ptr {
    /// Its offset from the start of the simulated heap (mapped chunks lie
    /// far above).
    pub fn offset(self) -> u64 {
        self.at - HEAP_BASE
    }

    pub fn is_mapped(self) -> bool {
        self.at >= MAPPED_BASE
    }

    /// The chunk's size (a mapping's, for a mapped one).
    pub fn size(self) -> u64 {
        self.size
    }
}

/// One arena of glibc malloc, single-threaded.
#[derive(Debug, Clone)]
pub struct Malloc {
    /// The bins' heads (the first [`NBINS`] slots), then binned chunks:
    /// their addresses, sizes, bins and links; slots of chunks no longer
    /// binned are reused (`spare`).
    slots: Vec<Free>,
    spare: Vec<Slot>,
    /// Binned chunks by their start, to find a free chunk after another,
    /// and by their end, to find one before.
    starts: HashMap<u64, Slot, BuildAddrHasher>,
    ends: HashMap<u64, Slot, BuildAddrHasher>,
    /// For each large bin, its sizes and the first chunk of each (glibc's
    /// `fd_nextsize` list).
    sizes: Vec<BTreeMap<u64, Slot>>,
    /// Bins that hold chunks (glibc's binmap, kept exact).
    nonempty: u128,
    /// Fast bins and the tcache: chunks' addresses (each list holds chunks
    /// of one size).
    fast: [Vec<u64>; 7],
    tcache: Vec<Vec<u64>>,
    top: u64,
    top_size: u64,
    last_remainder: u64,
    /// Mapped chunks: their sizes.
    mapped: HashMap<u64, u64, BuildAddrHasher>,
    next_mapping: u64,
    mapped_bytes: u64,
    mmap_threshold: u64,
    trim_threshold: u64,
    /// Heap pages that have been written and not given back.
    resident: Vec<u64>,
    resident_pages: u64,
    /// Calls made of it (malloc, free, realloc, ...).
    calls: u64,
    /// The calls, when recorded (`calls.rs`).
    log: Option<Vec<[u64; 4]>>,
}

impl Default for Malloc {
    fn default() -> Malloc {
        Malloc::new()
    }
}

impl Malloc {
    /// An empty heap, as a process starts: both thresholds at glibc's
    /// defaults of 128 KiB.
    pub fn new() -> Malloc {
        Malloc::after_mapping(MMAP_THRESHOLD_MIN)
    }

    /// An empty heap whose mmap threshold the process already raised to
    /// `mmap_threshold` by freeing a mapped chunk of that size, and so its
    /// trim threshold to twice that (the defaults, if it is the default).
    pub fn after_mapping(mmap_threshold: u64) -> Malloc {
        let trim_threshold = if mmap_threshold > MMAP_THRESHOLD_MIN {
            2 * mmap_threshold
        } else {
            MMAP_THRESHOLD_MIN
        };
        Malloc {
            slots: links::heads(),
            spare: Vec::new(),
            starts: HashMap::default(),
            ends: HashMap::default(),
            sizes: vec![BTreeMap::new(); NBINS],
            nonempty: 0,
            fast: Default::default(),
            tcache: vec![Vec::new(); TCACHE_BINS],
            top: HEAP_BASE,
            top_size: 0,
            last_remainder: 0,
            mapped: HashMap::default(),
            next_mapping: MAPPED_BASE,
            mapped_bytes: 0,
            mmap_threshold,
            trim_threshold,
            resident: Vec::new(),
            resident_pages: 0,
            calls: 0,
            log: None,
        }
    }

    /// The heap's extent: the break, as an offset from its start.
    pub fn brk(&self) -> u64 {
        self.top + self.top_size - HEAP_BASE
    }

    /// The top chunk: its offset and size.
    pub fn top(&self) -> (u64, u64) {
        (self.top - HEAP_BASE, self.top_size)
    }

    /// Bytes of the heap resident (written and not given back), and of live
    /// mappings.
    pub fn resident_heap(&self) -> u64 {
        self.resident_pages * PAGE
    }

    pub fn mapped_bytes(&self) -> u64 {
        self.mapped_bytes
    }

    /// How many calls it has served.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    pub fn mmap_threshold(&self) -> u64 {
        self.mmap_threshold
    }

    /// The chunk size behind a pointer.
    pub fn size_of(&self, p: Ptr) -> u64 {
        p.size
    }

    // ---- glibc's steps ------------------------------------------------

    fn int_malloc(&mut self, nb: u64) -> Ptr {
        let t = tcache_index(nb);
        let cacheable = t < TCACHE_BINS;
        let chunk = |at: u64, size: u64| Ptr { at, size };
        if nb <= MAX_FAST {
            let f = fast_index(nb);
            if let Some(victim) = self.fast[f].pop() {
                while cacheable && self.tcache[t].len() < TCACHE_COUNT {
                    match self.fast[f].pop() {
                        Some(c) => self.tcache[t].push(c),
                        None => break,
                    }
                }
                return chunk(victim, nb);
            }
        }
        let mut idx = bin_index(nb);
        if nb < MIN_LARGE {
            // A small bin holds chunks of one size: `nb`.
            if let Some(victim) = self.tail(idx) {
                let (at, _) = self.unlink(victim);
                while cacheable && self.tcache[t].len() < TCACHE_COUNT {
                    match self.tail(idx) {
                        Some(c) => {
                            let (c, _) = self.unlink(c);
                            self.tcache[t].push(c);
                        }
                        None => break,
                    }
                }
                return chunk(at, nb);
            }
        } else if self.has_fast() {
            self.consolidate();
        }
        loop {
            let mut cached = false;
            let mut iters = 0;
            while let Some(victim) = self.tail(UNSORTED) {
                let Free { at, size, .. } = *self.slot(victim);
                if nb < MIN_LARGE
                    && self.slots[UNSORTED].fd == victim
                    && at == self.last_remainder
                    && size > nb + MINSIZE
                {
                    let (at, rest) = self.split(victim, nb);
                    self.last_remainder = rest;
                    return chunk(at, nb);
                }
                if size == nb {
                    self.unlink(victim);
                    if cacheable && self.tcache[t].len() < TCACHE_COUNT {
                        self.tcache[t].push(at);
                        cached = true;
                        continue;
                    }
                    return chunk(at, nb);
                }
                self.place(victim);
                iters += 1;
                if iters >= MAX_ITERS {
                    break;
                }
            }
            if cached {
                return chunk(self.tcache[t].pop().unwrap(), nb);
            }
            if nb >= MIN_LARGE {
                if let Some(victim) = self.best_fit(idx, nb) {
                    if self.slot(victim).size - nb >= MINSIZE {
                        return chunk(self.split(victim, nb).0, nb);
                    }
                    let (at, size) = self.unlink(victim);
                    return chunk(at, size);
                }
            }
            // The next bin up that holds anything.
            let above = if idx + 1 < NBINS {
                self.nonempty & !((1u128 << (idx + 1)) - 1)
            } else {
                0
            };
            if above != 0 {
                let bin = above.trailing_zeros() as usize;
                let victim = self.tail(bin).expect("a non-empty bin");
                if self.slot(victim).size - nb >= MINSIZE {
                    let (at, rest) = self.split(victim, nb);
                    if nb < MIN_LARGE {
                        self.last_remainder = rest;
                    }
                    return chunk(at, nb);
                }
                let (at, size) = self.unlink(victim);
                return chunk(at, size);
            }
            if self.top_size >= nb + MINSIZE {
                return chunk(self.carve_top(nb), nb);
            }
            if self.has_fast() {
                self.consolidate();
                idx = bin_index(nb);
                continue;
            }
            return self.sysmalloc(nb);
        }
    }

    /// The top cannot serve `nb`: a mapping of its own at or above the mmap
    /// threshold, else the heap grown by `sbrk`.
    fn sysmalloc(&mut self, nb: u64) -> Ptr {
        if nb >= self.mmap_threshold {
            let size = (nb + 8).next_multiple_of(PAGE);
            let at = self.next_mapping;
            self.next_mapping += size + PAGE;
            self.mapped.insert(at, size);
            self.mapped_bytes += size;
            return Ptr { at, size };
        }
        let grow = (nb + TOP_PAD + MINSIZE - self.top_size).next_multiple_of(PAGE);
        self.top_size += grow;
        Ptr {
            at: self.carve_top(nb),
            size: nb,
        }
    }

    fn carve_top(&mut self, nb: u64) -> u64 {
        let at = self.top;
        self.top += nb;
        self.top_size -= nb;
        at
    }

    /// The chunk at `addr` of `size` bytes freed.
    fn int_free(&mut self, addr: u64, size: u64) {
        let t = tcache_index(size);
        if t < TCACHE_BINS && self.tcache[t].len() < TCACHE_COUNT {
            self.tcache[t].push(addr);
            return;
        }
        if size <= MAX_FAST {
            self.fast[fast_index(size)].push(addr);
            return;
        }
        let merged = self.merge(addr, size);
        if merged >= CONSOLIDATION_THRESHOLD {
            if self.has_fast() {
                self.consolidate();
            }
            if self.top_size >= self.trim_threshold {
                self.systrim(TOP_PAD);
            }
        }
    }

    /// A freed chunk merged with free neighbours, into the unsorted bin or
    /// the top. Returns the size of what it became (the top's, if that).
    fn merge(&mut self, addr: u64, own: u64) -> u64 {
        let next = addr + own;
        let prev = self.ends.get(&addr).copied();
        if next == self.top {
            let (at, size) = match prev {
                Some(prev) => {
                    let (at, size) = self.unlink(prev);
                    (at, size + own)
                }
                None => (addr, own),
            };
            self.top = at;
            self.top_size += size;
            return self.top_size;
        }
        let after = self.binned_at(next);
        match (prev, after) {
            (None, None) => {
                self.push_head(UNSORTED, addr, own);
                own
            }
            (None, Some(after)) => {
                self.detach(after);
                self.merge_into(after, addr, own)
            }
            (Some(prev), after) => {
                // Unlinked in glibc's order: the chunk before, then after.
                self.detach(prev);
                let more = after.map_or(0, |after| self.unlink(after).1);
                self.merge_into(prev, addr, own + more)
            }
        }
    }

    /// glibc's `malloc_consolidate`: every fast-bin chunk, most recently
    /// freed first, bin by bin, merged with its free neighbours.
    fn consolidate(&mut self) {
        for f in 0..self.fast.len() {
            let list = std::mem::take(&mut self.fast[f]);
            let size = fast_size(f);
            for &addr in list.iter().rev() {
                self.merge(addr, size);
            }
        }
    }

    fn has_fast(&self) -> bool {
        self.fast.iter().any(|f| !f.is_empty())
    }

    fn systrim(&mut self, pad: u64) {
        let area = self.top_size.saturating_sub(MINSIZE + 1);
        if area <= pad {
            return;
        }
        let extra = (area - pad) & !(PAGE - 1);
        if extra == 0 {
            return;
        }
        self.top_size -= extra;
        let end = self.top + self.top_size;
        self.evict(end, end + extra);
    }
}
