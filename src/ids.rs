//! Integer keys: the one hasher of ids (and id pairs, fingerprints) and the
//! one set of ids built on it, plus the tests' random numbers.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The one hasher for integer keys (ids, id pairs, fingerprints): a
/// multiply and a rotate per word.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    /// 128-bit keys (advise's fingerprints): both halves mixed in.
    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }
}

/// Builds [`IdHasher`]s, for maps and sets keyed by integers.
pub type BuildIdHasher = BuildHasherDefault<IdHasher>;

/// A set of ids: a bitmap for the dense low ids that real instances use
/// (one bit each, about 1 ns a lookup), a hash set for the rest.
#[derive(Debug, Default, Clone)]
pub struct IdSet {
    bits: Vec<u64>,
    others: HashSet<u64, BuildIdHasher>,
}

/// Ids below this go to the bitmap (at most 16 MiB of bits).
const BITMAP_IDS: u64 = 1 << 27;

impl IdSet {
    pub fn contains(&self, id: &u64) -> bool {
        let id = *id;
        if id < BITMAP_IDS {
            self.bits
                .get((id / 64) as usize)
                .is_some_and(|w| w & (1 << (id % 64)) != 0)
        } else {
            self.others.contains(&id)
        }
    }

    /// Adds `id`; false if it was already there.
    pub fn insert(&mut self, id: u64) -> bool {
        if id < BITMAP_IDS {
            let word = (id / 64) as usize;
            if word >= self.bits.len() {
                // Grow geometrically so a long ascending run stays linear.
                self.bits.resize((word + 1).max(self.bits.len() * 2), 0);
            }
            let mask = 1 << (id % 64);
            let fresh = self.bits[word] & mask == 0;
            self.bits[word] |= mask;
            fresh
        } else {
            self.others.insert(id)
        }
    }

    /// Takes `id` out.
    pub fn remove(&mut self, id: u64) {
        if id < BITMAP_IDS {
            if let Some(word) = self.bits.get_mut((id / 64) as usize) {
                *word &= !(1 << (id % 64));
            }
        } else {
            self.others.remove(&id);
        }
    }
}

/// [`IdSet`] shared by several threads: ids added and looked up from any of
/// them, each added by exactly one [`SharedIdSet::insert`] that returns
/// true. The bitmap below [`BITMAP_IDS`] is made of pages allocated when
/// first written (memory follows the ids in use, as the [`IdSet`]'s does);
/// ids above go to hash sets behind a few locks.
pub struct SharedIdSet {
    pages: Box<[OnceLock<Box<[AtomicU64]>>]>,
    others: [Mutex<HashSet<u64, BuildIdHasher>>; SHARDS],
}

/// Ids per page of a [`SharedIdSet`]'s bitmap (32 KiB of bits).
const PAGE_IDS: u64 = 1 << 18;
/// Locks over a [`SharedIdSet`]'s ids past the bitmap.
const SHARDS: usize = 16;

impl Default for SharedIdSet {
    fn default() -> Self {
        Self {
            pages: (0..BITMAP_IDS / PAGE_IDS)
                .map(|_| OnceLock::new())
                .collect(),
            others: Default::default(),
        }
    }
}

impl SharedIdSet {
    /// Adds `id`; false if it was already there (added by whichever thread).
    #[inline]
    pub fn insert(&self, id: u64) -> bool {
        if id < BITMAP_IDS {
            let page = self.pages[(id / PAGE_IDS) as usize]
                .get_or_init(|| (0..PAGE_IDS / 64).map(|_| AtomicU64::new(0)).collect());
            let mask = 1 << (id % 64);
            page[((id % PAGE_IDS) / 64) as usize].fetch_or(mask, Ordering::Relaxed) & mask == 0
        } else {
            self.shard(id).insert(id)
        }
    }

    /// Whether `id` was added. Exact for what every other thread added
    /// before this one last synchronized with it (a join, a lock); an id
    /// being added meanwhile may be seen or not.
    #[inline]
    pub fn contains(&self, id: u64) -> bool {
        if id < BITMAP_IDS {
            self.pages[(id / PAGE_IDS) as usize]
                .get()
                .is_some_and(|page| {
                    let word = page[((id % PAGE_IDS) / 64) as usize].load(Ordering::Relaxed);
                    word & (1 << (id % 64)) != 0
                })
        } else {
            self.shard(id).contains(&id)
        }
    }

    #[cold]
    fn shard(&self, id: u64) -> std::sync::MutexGuard<'_, HashSet<u64, BuildIdHasher>> {
        let i = (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60) as usize % SHARDS;
        self.others[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The ids added, as an [`IdSet`] (for the one thread left).
    pub fn into_set(self) -> IdSet {
        let pages: Vec<Option<Box<[AtomicU64]>>> = self
            .pages
            .into_vec()
            .into_iter()
            .map(OnceLock::into_inner)
            .collect();
        let used = pages
            .iter()
            .rposition(Option::is_some)
            .map_or(0, |last| last + 1);
        let mut bits = Vec::with_capacity(used * (PAGE_IDS / 64) as usize);
        for page in pages.into_iter().take(used) {
            match page {
                Some(words) => bits.extend(words.into_vec().into_iter().map(AtomicU64::into_inner)),
                None => bits.resize(bits.len() + (PAGE_IDS / 64) as usize, 0),
            }
        }
        let mut others = HashSet::default();
        for shard in self.others {
            others.extend(shard.into_inner().unwrap_or_else(|e| e.into_inner()));
        }
        IdSet { bits, others }
    }
}

/// SplitMix64, for the tests' random inputs: deterministic, no dependency.
#[cfg(test)]
pub struct SplitMix64(pub u64);

#[cfg(test)]
impl SplitMix64 {
    // Never ending and never `None`: not an `Iterator`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_set_adds_each_id_once_whichever_thread_adds_it() {
        // Low ids (the bitmap, over pages), ids past it (the hash sets) and
        // repeats, added by four threads each over the same list.
        let mut rng = SplitMix64(31);
        let ids: Vec<u64> = (0..20_000)
            .map(|i| match i % 4 {
                0 => rng.below(1 << 20),
                1 => BITMAP_IDS + rng.below(1 << 40),
                2 => rng.below(64),
                _ => BITMAP_IDS - 1 - rng.below(3),
            })
            .collect();
        let shared = SharedIdSet::default();
        let fresh: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| ids.iter().filter(|&&id| shared.insert(id)).count()))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        let mut alone = IdSet::default();
        let distinct = ids.iter().filter(|&&id| alone.insert(id)).count();
        assert_eq!(fresh, distinct, "each id is fresh to exactly one insert");
        assert!(ids.iter().all(|&id| shared.contains(id)));
        let set = shared.into_set();
        for probe in ids
            .iter()
            .copied()
            .chain((0..5_000).map(|_| rng.below(1 << 21)))
        {
            assert_eq!(set.contains(&probe), alone.contains(&probe), "{probe}");
        }
    }
}
