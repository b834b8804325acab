//! The bins' doubly linked lists, as glibc links its free chunks: a chunk's
//! size, bin and forward and back links, a bin's head, taking a chunk out,
//! sorting one into its bin and finding the best fit in a large bin.

use super::{bin_index, tcache_size, Malloc, Ptr, HEAP_BASE, MIN_LARGE, NBINS, UNSORTED};

/// A chunk in a bin: its size, which bin, and its links.
#[derive(Debug, Clone, Copy)]
pub(super) struct Free {
    pub(super) size: u64,
    pub(super) bin: usize,
    pub(super) fd: Link,
    pub(super) bk: Link,
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
            self.links[&link].fd
        }
    }

    pub(super) fn set_fd(&mut self, link: Link, to: Link) {
        if is_head(link) {
            self.heads[link as usize].0 = to;
        } else {
            self.links.get_mut(&link).expect("a binned chunk").fd = to;
        }
    }

    pub(super) fn set_bk(&mut self, link: Link, to: Link) {
        if is_head(link) {
            self.heads[link as usize].1 = to;
        } else {
            self.links.get_mut(&link).expect("a binned chunk").bk = to;
        }
    }

    pub(super) fn push_head(&mut self, bin: usize, addr: u64, size: u64) {
        self.link_after(bin, bin as u64, addr, size);
    }

    /// The free chunk at `addr` of `size` bytes, linked into `bin` after
    /// `after`.
    pub(super) fn link_after(&mut self, bin: usize, after: Link, addr: u64, size: u64) {
        let next = self.fd(after);
        self.links.insert(
            addr,
            Free {
                size,
                bin,
                fd: next,
                bk: after,
            },
        );
        self.set_fd(after, addr);
        self.set_bk(next, addr);
        self.free_ends.insert(addr + size, addr);
        self.nonempty |= 1 << bin;
    }

    /// Takes a chunk out of its bin (its large bin's size list too); returns
    /// its size.
    pub(super) fn unlink(&mut self, addr: u64) -> u64 {
        let Free { size, bin, fd, bk } = self.links.remove(&addr).expect("a binned chunk");
        if bin >= 64 && self.sizes[bin].get(&size) == Some(&addr) {
            if !is_head(fd) && self.links[&fd].size == size {
                self.sizes[bin].insert(size, fd);
            } else {
                self.sizes[bin].remove(&size);
            }
        }
        self.set_fd(bk, fd);
        self.set_bk(fd, bk);
        self.free_ends.remove(&(addr + size));
        if is_head(self.heads[bin].0) {
            self.nonempty &= !(1 << bin);
        }
        size
    }

    /// Splits `victim` of `size` bytes (already taken out of its bin) at
    /// `nb`: the rest goes to the head of the unsorted bin. Returns the
    /// rest's address.
    pub(super) fn split(&mut self, victim: u64, size: u64, nb: u64) -> u64 {
        let rest = victim + nb;
        self.push_head(UNSORTED, rest, size - nb);
        rest
    }

    /// The smallest chunk of a large bin that holds `nb`, not the first of
    /// its size when another of that size follows it.
    pub(super) fn best_fit(&self, idx: usize, nb: u64) -> Option<u64> {
        let (&size, &first) = self.sizes[idx].range(nb..).next()?;
        let second = self.links[&first].fd;
        if !is_head(second) && self.links[&second].size == size {
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
            self.push_head(bin, addr, size);
            return;
        }
        if let Some(&first) = self.sizes[bin].get(&size) {
            self.link_after(bin, first, addr, size);
        } else {
            // Before the largest chunk smaller than it, or last.
            match self.sizes[bin].range(..size).next_back() {
                Some((_, &smaller)) => {
                    let before = self.links[&smaller].bk;
                    self.link_after(bin, before, addr, size);
                }
                None => {
                    let last = self.heads[bin].1;
                    self.link_after(bin, last, addr, size);
                }
            }
            self.sizes[bin].insert(size, addr);
        }
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
