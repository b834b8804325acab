//! The walks of `ranges.rs` in chunk order: a chunk's first element
//! starts where the walk of the chunk before it ended, so each chunk waits
//! for its turn, and a walk that finds an element covering the chunks after
//! it lets the threads skip them at once.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The chunks handed out in order and their walks in chunk order. Chunk
/// `k` waits for its turn in slot `k % slots`. Turns are given one after
/// the other, each once the one before it was taken, so a slot is never
/// given a turn while the one it holds is still waited for (two chunks may
/// wait on one slot: each waits for its own turn).
pub(super) struct Chain {
    slots: Box<[Slot]>,
    /// The next chunk to take.
    next: AtomicUsize,
    /// Chunks no thread takes, covered by an element a walk found: the turn
    /// of the first goes to the chunk after them.
    skipped: Mutex<Range<usize>>,
    /// The furthest start passed on: no element starts before it.
    frontier: AtomicU64,
    stopped: AtomicBool,
}

/// One slot of the [`Chain`]: the chunk whose turn it holds, and where its
/// first element starts.
struct Slot {
    turn: Mutex<(usize, u64)>,
    moved: Condvar,
}

impl Chain {
    pub(super) fn new(slots: usize) -> Self {
        let slots = (0..slots.max(1))
            .map(|i| Slot {
                turn: Mutex::new((if i == 0 { 0 } else { usize::MAX }, 0)),
                moved: Condvar::new(),
            })
            .collect();
        Self {
            slots,
            next: AtomicUsize::new(0),
            skipped: Mutex::new(0..0),
            frontier: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// The next chunk for a thread to take.
    pub(super) fn take(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// After the walk of chunk `k`, which holds the turn: an element covers
    /// the chunks before `to`, so those not taken yet are skipped (else
    /// each would be taken, and its turn passed on, by the threads in
    /// turn); the chunks skipped.
    pub(super) fn cover(&self, k: usize, to: usize) -> Range<usize> {
        if to <= k + 1 {
            return 0..0;
        }
        let taken = self.next.fetch_max(to, Ordering::Relaxed);
        if taken >= to {
            return 0..0;
        }
        *self.skipped.lock().unwrap_or_else(|e| e.into_inner()) = taken..to;
        taken..to
    }

    /// No element starts before it.
    pub(super) fn frontier(&self) -> u64 {
        self.frontier.load(Ordering::Relaxed)
    }

    fn slot(&self, chunk: usize) -> &Slot {
        &self.slots[chunk % self.slots.len()]
    }

    /// Waits for chunk `chunk`'s turn: where its first element starts;
    /// `None` once the threads have given up.
    pub(super) fn wait(&self, chunk: usize) -> Option<u64> {
        let slot = self.slot(chunk);
        let mut turn = slot.turn.lock().unwrap_or_else(|e| e.into_inner());
        while turn.0 != chunk && !self.stopped() {
            turn = slot.moved.wait(turn).unwrap_or_else(|e| e.into_inner());
        }
        (!self.stopped()).then_some(turn.1)
    }

    /// Gives chunk `chunk` (or the chunk after those skipped from it) its
    /// turn, its first element starting at `start`.
    pub(super) fn pass(&self, chunk: usize, start: u64) {
        self.frontier.fetch_max(start, Ordering::Relaxed);
        let chunk = {
            let skipped = self.skipped.lock().unwrap_or_else(|e| e.into_inner());
            if chunk == skipped.start {
                skipped.end
            } else {
                chunk
            }
        };
        let slot = self.slot(chunk);
        *slot.turn.lock().unwrap_or_else(|e| e.into_inner()) = (chunk, start);
        slot.moved.notify_all();
    }

    /// Makes every thread give up.
    pub(super) fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        for slot in self.slots.iter() {
            let _turn = slot.turn.lock().unwrap_or_else(|e| e.into_inner());
            slot.moved.notify_all();
        }
    }

    pub(super) fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

/// Stops the other threads when this one panics, so that none waits for
/// a turn that will never come (and the panic reaches the caller).
pub(super) struct StopOnPanic<'c>(pub(super) &'c Chain);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}
