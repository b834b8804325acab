//! The bins' doubly linked lists, as glibc links its free chunks: a chunk's
//! forward and back links, a bin's head, taking a chunk out, sorting one
//! into its bin and finding the best fit in a large bin.

use super::{bin_index, Malloc, HEAP_BASE, MIN_LARGE, NBINS, UNSORTED};

/// What a heap chunk is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// Handed out, or held by the tcache or a fast bin (glibc counts those
    /// as in use: their neighbours do not merge with them).
    InUse,
    /// In bin `n`, linked.
    Binned(usize),
}

/// A chunk's header: its size and what it is doing (a binned one's links
/// are in `Malloc::links`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunk {
    pub(super) size: u64,
    pub(super) state: State,
}

impl Chunk {
    pub(super) fn used(size: u64) -> Chunk {
        Chunk {
            size,
            state: State::InUse,
        }
    }
}

/// A list link: a chunk's address, or a bin's head (its index, below any
/// address).
pub(super) type Link = u64;

pub(super) fn is_head(link: Link) -> bool {
    link < NBINS as u64
}

impl Malloc {
    pub(super) fn tail(&self, bin: usize) -> Option<u64> {
        let bk = self.heads[bin].1;
        (!is_head(bk)).then_some(bk)
    }

    pub(super) fn fd(&self, link: Link) -> Link {
        if is_head(link) {
            self.heads[link as usize].0
        } else {
            self.links[&link].0
        }
    }

    pub(super) fn set_fd(&mut self, link: Link, to: Link) {
        if is_head(link) {
            self.heads[link as usize].0 = to;
        } else {
            self.links.get_mut(&link).expect("a binned chunk").0 = to;
        }
    }

    pub(super) fn set_bk(&mut self, link: Link, to: Link) {
        if is_head(link) {
            self.heads[link as usize].1 = to;
        } else {
            self.links.get_mut(&link).expect("a binned chunk").1 = to;
        }
    }

    pub(super) fn push_head(&mut self, bin: usize, addr: u64) {
        self.link_after(bin, bin as u64, addr);
    }

    pub(super) fn link_after(&mut self, bin: usize, after: Link, addr: u64) {
        let next = self.fd(after);
        self.links.insert(addr, (next, after));
        self.chunks.set_state(addr, State::Binned(bin));
        let size = self.chunks.size(addr);
        self.set_fd(after, addr);
        self.set_bk(next, addr);
        self.free_ends.insert(addr + size, addr);
        self.nonempty |= 1 << bin;
    }

    /// Takes a chunk out of its bin (its large bin's size list too).
    pub(super) fn unlink(&mut self, addr: u64) {
        let c = self.chunks.get(&addr).expect("a chunk at that address");
        let State::Binned(bin) = c.state else {
            panic!("unlink of a chunk in no bin")
        };
        let (fd, bk) = self.links.remove(&addr).expect("a binned chunk");
        if bin >= 64 && self.sizes[bin].get(&c.size) == Some(&addr) {
            if !is_head(fd) && self.chunks.size(fd) == c.size {
                self.sizes[bin].insert(c.size, fd);
            } else {
                self.sizes[bin].remove(&c.size);
            }
        }
        self.set_fd(bk, fd);
        self.set_bk(fd, bk);
        self.free_ends.remove(&(addr + c.size));
        self.chunks.set_state(addr, State::InUse);
        if is_head(self.heads[bin].0) {
            self.nonempty &= !(1 << bin);
        }
    }

    pub(super) fn mark_used(&mut self, addr: u64) {
        self.chunks.set_state(addr, State::InUse);
    }

    /// Splits `victim` (already taken out of its bin) at `nb`: the rest goes
    /// to the head of the unsorted bin. Returns the rest's address.
    pub(super) fn split(&mut self, victim: u64, nb: u64) -> u64 {
        let size = self.chunks.size(victim);
        self.chunks.set_size(victim, nb);
        let rest = victim + nb;
        self.chunks.insert(rest, Chunk::used(size - nb));
        self.push_head(UNSORTED, rest);
        rest
    }

    /// The smallest chunk of a large bin that holds `nb`, not the first of
    /// its size when another of that size follows it.
    pub(super) fn best_fit(&self, idx: usize, nb: u64) -> Option<u64> {
        let (&size, &first) = self.sizes[idx].range(nb..).next()?;
        let second = self.links[&first].0;
        if !is_head(second) && self.chunks.size(second) == size {
            Some(second)
        } else {
            Some(first)
        }
    }

    /// Sorts a chunk from the unsorted bin into its bin: a small bin at its
    /// head; a large bin in order of size, largest first, a chunk of a
    /// size already there right after the first of that size.
    pub(super) fn place(&mut self, addr: u64, size: u64) {
        let bin = bin_index(size);
        if size < MIN_LARGE {
            self.push_head(bin, addr);
            return;
        }
        if let Some(&first) = self.sizes[bin].get(&size) {
            self.link_after(bin, first, addr);
        } else {
            // Before the largest chunk smaller than it, or last.
            match self.sizes[bin].range(..size).next_back() {
                Some((_, &smaller)) => {
                    let before = self.links[&smaller].1;
                    self.link_after(bin, before, addr);
                }
                None => {
                    let last = self.heads[bin].1;
                    self.link_after(bin, last, addr);
                }
            }
            self.sizes[bin].insert(size, addr);
        }
    }

    /// The highest heap chunks glibc counts as in use (handed out, or held
    /// by the tcache or a fast bin), highest first: their offsets and sizes.
    /// A trim of the top stops above the first.
    pub fn highest_in_use(&self, n: usize) -> Vec<(u64, u64)> {
        let mut used: Vec<(u64, u64)> = self
            .chunks
            .iter()
            .filter(|(_, c)| c.state == State::InUse)
            .map(|(at, c)| (at - HEAP_BASE, c.size))
            .collect();
        used.sort_unstable_by(|a, b| b.cmp(a));
        used.truncate(n);
        used
    }
}
