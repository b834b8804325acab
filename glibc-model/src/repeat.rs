//! A sequence of calls made many times over, each time the same, that keeps
//! nothing it allocates (a check that builds a set and frees it, once per
//! entity): the model is deterministic, so once the heap comes back to a
//! state it was in before, it goes round the same cycle for good, and the
//! runs left are counted (and recorded, when recording) without being made.
//! A state is the whole model's but its count of calls and its record, and
//! "the same" is exact equality, so nothing is taken on trust.

use super::Malloc;

impl Malloc {
    /// `times` runs of `run`, which must make the same calls whenever it
    /// starts from the same heap and free what it allocates. The same as
    /// making every run; where the heap repeats itself (found by Brent's
    /// cycle search: the state at each power of two compared with every
    /// state after it, up to the next), the whole cycles left are counted,
    /// not made.
    pub fn repeat(&mut self, times: u64, mut run: impl FnMut(&mut Malloc)) {
        let mut done = 0;
        let mut saved = self.clone_heap();
        let mut power = 1;
        let mut since = 0;
        // The calls and records at each run since the state was saved.
        let mut marks = vec![(self.calls, self.log_len())];
        while done < times {
            run(self);
            done += 1;
            since += 1;
            marks.push((self.calls, self.log_len()));
            if self.same_heap(&saved) {
                self.skip_cycles(since, times - done, &marks);
                let left = (times - done) % since;
                (0..left).for_each(|_| run(self));
                return;
            }
            if since == power {
                saved = self.clone_heap();
                power *= 2;
                since = 0;
                marks.clear();
                marks.push((self.calls, self.log_len()));
            }
        }
    }

    /// Counts (and records) the whole cycles of `period` runs that fit in
    /// `left`: the last `period` runs' calls, made again from the same heap.
    fn skip_cycles(&mut self, period: u64, left: u64, marks: &[(u64, usize)]) {
        let cycles = left / period;
        let (calls_from, log_from) = marks[marks.len() - 1 - period as usize];
        let (calls_to, log_to) = marks[marks.len() - 1];
        self.calls += cycles * (calls_to - calls_from);
        if let Some(log) = &mut self.log {
            for _ in 0..cycles {
                log.extend_from_within(log_from..log_to);
            }
        }
    }

    fn log_len(&self) -> usize {
        self.log.as_ref().map_or(0, Vec::len)
    }

    /// Whether the model's heap is `other`'s: every field but the count of
    /// calls and the record, the cheap ones first.
    fn same_heap(&self, other: &Malloc) -> bool {
        let Malloc {
            slots,
            spare,
            starts,
            ends,
            sizes,
            nonempty,
            fast,
            tcache,
            top,
            top_size,
            last_remainder,
            mapped,
            next_mapping,
            mapped_bytes,
            mmap_threshold,
            trim_threshold,
            resident,
            resident_pages,
            calls: _,
            log: _,
        } = other;
        self.top == *top
            && self.top_size == *top_size
            && self.last_remainder == *last_remainder
            && self.nonempty == *nonempty
            && self.resident_pages == *resident_pages
            && self.next_mapping == *next_mapping
            && self.mapped_bytes == *mapped_bytes
            && self.mmap_threshold == *mmap_threshold
            && self.trim_threshold == *trim_threshold
            && self.spare.len() == spare.len()
            && self.starts.len() == starts.len()
            && self
                .tcache
                .iter()
                .map(Vec::len)
                .eq(tcache.iter().map(Vec::len))
            && self.fast.iter().map(Vec::len).eq(fast.iter().map(Vec::len))
            && self.tcache == *tcache
            && self.fast == *fast
            && self.spare == *spare
            && self.slots == *slots
            && self.starts == *starts
            && self.ends == *ends
            && self.sizes == *sizes
            && self.mapped == *mapped
            && self.resident == *resident
    }

    /// A copy of the model without its record (which only grows), for
    /// [`Malloc::same_heap`].
    fn clone_heap(&self) -> Malloc {
        Malloc {
            slots: self.slots.clone(),
            spare: self.spare.clone(),
            starts: self.starts.clone(),
            ends: self.ends.clone(),
            sizes: self.sizes.clone(),
            nonempty: self.nonempty,
            fast: self.fast.clone(),
            tcache: self.tcache.clone(),
            top: self.top,
            top_size: self.top_size,
            last_remainder: self.last_remainder,
            mapped: self.mapped.clone(),
            next_mapping: self.next_mapping,
            mapped_bytes: self.mapped_bytes,
            mmap_threshold: self.mmap_threshold,
            trim_threshold: self.trim_threshold,
            resident: self.resident.clone(),
            resident_pages: self.resident_pages,
            calls: self.calls,
            log: None,
        }
    }
}
