//! The heap's resident pages: written when a chunk is handed out, given
//! back by a trim of the top or by `malloc_trim` inside free chunks.

use super::{Malloc, Ptr, HEAP_BASE, PAGE};

impl Malloc {
    pub(super) fn touch_ptr(&mut self, p: Ptr) {
        if !p.is_mapped() {
            self.touch(p.at, p.size);
        }
    }

    /// A chunk handed out is written over its whole length.
    pub(super) fn touch(&mut self, addr: u64, size: u64) {
        let first = (addr - HEAP_BASE) / PAGE;
        let last = (addr + size - 1 - HEAP_BASE) / PAGE;
        let words = (last / 64 + 1) as usize;
        if self.resident.len() < words {
            self.resident.resize(words, 0);
        }
        for page in first..=last {
            let (w, b) = ((page / 64) as usize, page % 64);
            if self.resident[w] & (1 << b) == 0 {
                self.resident[w] |= 1 << b;
                self.resident_pages += 1;
            }
        }
    }

    /// Pages `[from, to)` given back to the kernel.
    pub(super) fn evict(&mut self, from: u64, to: u64) {
        let first = (from - HEAP_BASE) / PAGE;
        let last = (to - HEAP_BASE) / PAGE;
        for page in first..last {
            let (w, b) = ((page / 64) as usize, page % 64);
            if w < self.resident.len() && self.resident[w] & (1 << b) != 0 {
                self.resident[w] &= !(1 << b);
                self.resident_pages -= 1;
            }
        }
    }
}
