//! The heap's chunk headers by address, as glibc reads them from the heap
//! itself: a page table over the simulated heap, one table of 256 slots (one
//! per 16 bytes) for each 4 KiB page a chunk has begun in, each slot the
//! size and bin of the chunk that begins there packed in 32 bits. A look-up
//! is two indexings, and chunks side by side share cache lines, where a
//! hash map would scatter them; a million chunks of a 200 MiB heap take
//! 50 MiB here. A free chunk's links are kept apart (`Malloc::links`).

use super::addr::BuildAddrHasher;
use super::links::{Chunk, State};
use super::{ALIGN, HEAP_BASE, PAGE};
use std::collections::HashMap;

const SLOTS: usize = (PAGE / ALIGN) as usize;
/// A slot: the size in 16-byte units above 7 bits of bin (0: in use).
const BIN_BITS: u32 = 7;
const BIN_MASK: u32 = (1 << BIN_BITS) - 1;
/// Units that mark a size too large for the slot, kept in `large`.
const LARGE: u32 = u32::MAX >> BIN_BITS;

#[derive(Debug, Clone, Default)]
pub(super) struct Chunks {
    pages: Vec<Option<Box<[u32; SLOTS]>>>,
    /// Sizes of 512 MiB and more (merged free chunks of a large heap).
    large: HashMap<u64, u64, BuildAddrHasher>,
}

fn place(addr: u64) -> (usize, usize) {
    let offset = addr - HEAP_BASE;
    ((offset / PAGE) as usize, ((offset % PAGE) / ALIGN) as usize)
}

fn bin_bits(state: State) -> u32 {
    match state {
        State::InUse => 0,
        State::Binned(bin) => bin as u32,
    }
}

impl Chunks {
    fn slot(&self, addr: u64) -> u32 {
        let (page, slot) = place(addr);
        self.pages
            .get(page)
            .and_then(|p| p.as_ref())
            .map_or(0, |p| p[slot])
    }

    fn slot_mut(&mut self, addr: u64) -> &mut u32 {
        let (page, slot) = place(addr);
        if self.pages.len() <= page {
            self.pages.resize_with(page + 1, || None);
        }
        &mut self.pages[page].get_or_insert_with(|| Box::new([0; SLOTS]))[slot]
    }

    fn unpack(&self, addr: u64, v: u32) -> Chunk {
        let units = v >> BIN_BITS;
        let size = if units == LARGE {
            self.large[&addr]
        } else {
            u64::from(units) * ALIGN
        };
        let state = match v & BIN_MASK {
            0 => State::InUse,
            bin => State::Binned(bin as usize),
        };
        Chunk { size, state }
    }

    /// The slot for `chunk` at `addr`, whose slot is `old`.
    fn pack(&mut self, addr: u64, chunk: Chunk, old: u32) -> u32 {
        let units = chunk.size / ALIGN;
        let units = if units >= u64::from(LARGE) {
            self.large.insert(addr, chunk.size);
            LARGE
        } else {
            if old >> BIN_BITS == LARGE {
                self.large.remove(&addr);
            }
            units as u32
        };
        units << BIN_BITS | bin_bits(chunk.state)
    }

    #[inline]
    pub(super) fn get(&self, addr: &u64) -> Option<Chunk> {
        let v = self.slot(*addr);
        (v != 0).then(|| self.unpack(*addr, v))
    }

    /// The size of the chunk at `addr`, which must be one.
    #[inline]
    pub(super) fn size(&self, addr: u64) -> u64 {
        self.get(&addr).expect("a chunk at that address").size
    }

    pub(super) fn set_size(&mut self, addr: u64, size: u64) {
        let old = self.slot(addr);
        debug_assert!(old != 0, "a chunk at that address");
        let state = self.unpack(addr, old).state;
        let v = self.pack(addr, Chunk { size, state }, old);
        *self.slot_mut(addr) = v;
    }

    pub(super) fn set_state(&mut self, addr: u64, state: State) {
        let v = self.slot_mut(addr);
        debug_assert!(*v != 0, "a chunk at that address");
        *v = (*v & !BIN_MASK) | bin_bits(state);
    }

    /// Sets the chunk at `addr` (a new one, or in place of the one there).
    pub(super) fn insert(&mut self, addr: u64, chunk: Chunk) {
        let old = self.slot(addr);
        let v = self.pack(addr, chunk, old);
        *self.slot_mut(addr) = v;
    }

    pub(super) fn remove(&mut self, addr: &u64) -> Option<Chunk> {
        let old = self.slot(*addr);
        if old == 0 {
            return None;
        }
        let chunk = self.unpack(*addr, old);
        if old >> BIN_BITS == LARGE {
            self.large.remove(addr);
        }
        *self.slot_mut(*addr) = 0;
        Some(chunk)
    }

    /// Every chunk, lowest first.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, Chunk)> + '_ {
        self.pages
            .iter()
            .enumerate()
            .flat_map(move |(page, slots)| {
                slots.iter().flat_map(move |slots| {
                    slots
                        .iter()
                        .enumerate()
                        .filter(|(_, &v)| v != 0)
                        .map(move |(slot, &v)| {
                            let addr = HEAP_BASE + page as u64 * PAGE + slot as u64 * ALIGN;
                            (addr, self.unpack(addr, v))
                        })
                })
            })
    }
}
