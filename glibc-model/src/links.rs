//! The bins' doubly linked lists, as glibc links its free chunks: each
//! binned chunk a slot of a slab (its address, size, bin and forward and
//! back links, which are slots), the bins' heads its first slots, found by
//! address through two maps (a chunk's start, for the chunk after a freed
//! one, and its end, for the one before). Taking a chunk out, sorting one
//! into its bin and splitting one move it between lists without touching
//! the maps: only a chunk that becomes free or stops being free does.

use super::{bin_index, tcache_size, Malloc, Ptr, HEAP_BASE, MIN_LARGE, NBINS, UNSORTED};

/// A slot of the slab: a bin's head (the first [`NBINS`]) or a chunk in a
/// bin.
pub(super) type Slot = u32;

/// A chunk in a bin: its address and size, which bin, and its links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Free {
    pub(super) at: u64,
    pub(super) size: u64,
    pub(super) bin: u32,
    pub(super) fd: Slot,
    pub(super) bk: Slot,
}

pub(super) fn is_head(slot: Slot) -> bool {
    (slot as usize) < NBINS
}

/// The slab's first slots: each bin's head, linked to itself.
pub(super) fn heads() -> Vec<Free> {
    (0..NBINS as Slot)
        .map(|bin| Free {
            at: 0,
            size: 0,
            bin,
            fd: bin,
            bk: bin,
        })
        .collect()
}

impl Malloc {
    pub(super) fn tail(&self, bin: usize) -> Option<Slot> {
        let bk = self.slots[bin].bk;
        (!is_head(bk)).then_some(bk)
    }

    pub(super) fn slot(&self, slot: Slot) -> &Free {
        &self.slots[slot as usize]
    }

    fn slot_mut(&mut self, slot: Slot) -> &mut Free {
        &mut self.slots[slot as usize]
    }

    /// The binned chunk that starts at `addr`, if any.
    pub(super) fn binned_at(&self, addr: u64) -> Option<Slot> {
        self.starts.get(&addr).copied()
    }

    pub(super) fn push_head(&mut self, bin: usize, addr: u64, size: u64) -> Slot {
        self.link_after(bin, bin as Slot, addr, size)
    }

    /// The free chunk at `addr` of `size` bytes, linked into `bin` after
    /// `after`.
    pub(super) fn link_after(&mut self, bin: usize, after: Slot, addr: u64, size: u64) -> Slot {
        let free = Free {
            at: addr,
            size,
            bin: bin as u32,
            fd: 0,
            bk: 0,
        };
        let slot = match self.spare.pop() {
            Some(s) => {
                self.slots[s as usize] = free;
                s
            }
            None => {
                self.slots.push(free);
                (self.slots.len() - 1) as Slot
            }
        };
        self.starts.insert(addr, slot);
        self.ends.insert(addr + size, slot);
        self.attach(bin, after, slot);
        slot
    }

    /// A chunk taken out of its list put into `bin`'s, after `after`.
    fn attach(&mut self, bin: usize, after: Slot, slot: Slot) {
        let next = self.slot(after).fd;
        let s = self.slot_mut(slot);
        s.bin = bin as u32;
        s.fd = next;
        s.bk = after;
        self.slot_mut(after).fd = slot;
        self.slot_mut(next).bk = slot;
        self.nonempty |= 1 << bin;
    }

    /// A chunk taken out of its list (its large bin's size list too), still
    /// free.
    pub(super) fn detach(&mut self, slot: Slot) {
        let Free {
            size, bin, fd, bk, ..
        } = *self.slot(slot);
        let bin = bin as usize;
        if bin >= 64 && self.sizes[bin].get(&size) == Some(&slot) {
            if !is_head(fd) && self.slot(fd).size == size {
                self.sizes[bin].insert(size, fd);
            } else {
                self.sizes[bin].remove(&size);
            }
        }
        self.slot_mut(bk).fd = fd;
        self.slot_mut(fd).bk = bk;
        if is_head(self.slots[bin].fd) {
            self.nonempty &= !(1 << bin);
        }
    }

    /// The free chunk of `slot`, taken out of its list, grown by the
    /// `size` bytes at `addr` (just before it or just after it) and put at
    /// the head of the unsorted bin. Returns its new size.
    pub(super) fn merge_into(&mut self, slot: Slot, addr: u64, size: u64) -> u64 {
        let Free { at, size: own, .. } = *self.slot(slot);
        if addr < at {
            self.starts.remove(&at);
            self.starts.insert(addr, slot);
        } else {
            self.ends.remove(&(at + own));
            self.ends.insert(at + own + size, slot);
        }
        let s = self.slot_mut(slot);
        s.at = at.min(addr);
        s.size = own + size;
        self.attach(UNSORTED, UNSORTED as Slot, slot);
        own + size
    }

    /// Takes a chunk out of its bin: it is no longer free. Returns its
    /// address and size.
    pub(super) fn unlink(&mut self, slot: Slot) -> (u64, u64) {
        self.detach(slot);
        let Free { at, size, .. } = *self.slot(slot);
        self.starts.remove(&at);
        self.ends.remove(&(at + size));
        self.spare.push(slot);
        (at, size)
    }

    /// Splits the chunk of `slot` at `nb`, once taken out of its bin: the
    /// first `nb` bytes are handed out, the rest goes to the head of the
    /// unsorted bin (in the same slot: it ends where the chunk did).
    /// Returns the chunk's address and the rest's.
    pub(super) fn split(&mut self, slot: Slot, nb: u64) -> (u64, u64) {
        self.detach(slot);
        let s = self.slot_mut(slot);
        let at = s.at;
        s.at += nb;
        s.size -= nb;
        self.starts.remove(&at);
        self.starts.insert(at + nb, slot);
        self.attach(UNSORTED, UNSORTED as Slot, slot);
        (at, at + nb)
    }

    /// The smallest chunk of a large bin that holds `nb`, not the first of
    /// its size when another of that size follows it.
    pub(super) fn best_fit(&self, idx: usize, nb: u64) -> Option<Slot> {
        let (&size, &first) = self.sizes[idx].range(nb..).next()?;
        let second = self.slot(first).fd;
        if !is_head(second) && self.slot(second).size == size {
            Some(second)
        } else {
            Some(first)
        }
    }

    /// Sorts a chunk from the unsorted bin into its bin: a small
    /// bin at its head; a large bin in order of size, largest first, a
    /// chunk of a size already there right after the first of that size.
    pub(super) fn place(&mut self, slot: Slot) {
        self.detach(slot);
        let size = self.slot(slot).size;
        let bin = bin_index(size);
        if size < MIN_LARGE {
            self.attach(bin, bin as Slot, slot);
            return;
        }
        if let Some(&first) = self.sizes[bin].get(&size) {
            self.attach(bin, first, slot);
        } else {
            // Before the largest chunk smaller than it, or last.
            let before = match self.sizes[bin].range(..size).next_back() {
                Some((_, &smaller)) => self.slot(smaller).bk,
                None => self.slots[bin].bk,
            };
            self.attach(bin, before, slot);
            self.sizes[bin].insert(size, slot);
        }
    }

    /// Every binned chunk: its address and size, in no order.
    pub(super) fn binned(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.starts
            .iter()
            .map(|(&at, &slot)| (at, self.slot(slot).size))
    }

    /// The chunks glibc counts as in use but no caller holds: the tcache's
    /// and the fast bins' (address, size).
    pub(super) fn cached(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let tcache = self.tcache.iter().enumerate();
        let tcache = tcache.flat_map(|(t, l)| l.iter().map(move |&at| (at, tcache_size(t))));
        let fast = self.fast.iter().enumerate();
        let fast = fast.flat_map(|(f, l)| l.iter().map(move |&at| (at, super::fast_size(f))));
        tcache.chain(fast)
    }

    /// The highest heap chunks glibc counts as in use (`live`, the chunks
    /// the caller holds, and those the tcache or a fast bin holds), highest
    /// first: their offsets and sizes. A trim of the top stops above the
    /// first.
    pub fn highest_in_use(&self, live: impl IntoIterator<Item = Ptr>, n: usize) -> Vec<(u64, u64)> {
        let held = live.into_iter().filter(|p| !p.is_mapped());
        let mut used: Vec<(u64, u64)> = held
            .map(|p| (p.at, p.size))
            .chain(self.cached())
            .map(|(at, size)| (at - HEAP_BASE, size))
            .collect();
        used.sort_unstable_by(|a, b| b.cmp(a));
        used.truncate(n);
        used
    }
}
