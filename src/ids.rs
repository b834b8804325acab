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

/// An empty slot of [`distinct_in_table`]'s table: an id it cannot tell
/// apart from an empty slot.
pub const EMPTY_SLOT: u64 = u64::MAX;

/// How long [`distinct_in_table`]'s table is for `n` ids: at most half
/// full, and at least 16 slots.
pub const fn table_len(n: usize) -> usize {
    let half_full = 2 * n;
    if half_full < 16 {
        16
    } else {
        half_full.next_power_of_two()
    }
}

/// Whether `ids` name no id twice, told by an open-addressing table that a
/// short list's ids fill within the processor's nearest cache: `table` all
/// [`EMPTY_SLOT`], its length a power of two of at least [`table_len`] of
/// the ids. False, too, for an id of [`EMPTY_SLOT`]. The table is left as
/// the ids filled it.
pub fn distinct_in_table(ids: impl IntoIterator<Item = u64>, table: &mut [u64]) -> bool {
    debug_assert!(table.len().is_power_of_two());
    let bits = table.len().trailing_zeros();
    let mask = table.len() - 1;
    for id in ids {
        if id == EMPTY_SLOT {
            return false;
        }
        let mut slot = (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize;
        loop {
            match table[slot] {
                EMPTY_SLOT => {
                    table[slot] = id;
                    break;
                }
                seen if seen == id => return false,
                _ => slot = (slot + 1) & mask,
            }
        }
    }
    true
}

/// The one set of ids (or of any integer keys, such as the index of a pair
/// of ids): a bitmap for the dense low ids that real instances use (one bit
/// each, about 1 ns a lookup), a hash set for the rest. It grows as ids come
/// ([`IdSet::default`]), or is sized once for ids up to a known bound
/// ([`IdSet::for_ids`]), when several threads may fill its bitmap at once
/// ([`IdSet::shared`]).
#[derive(Debug)]
pub struct IdSet {
    /// The bitmap: never longer than `limit` ids, so that an id it covers
    /// is in the set exactly when its bit is set.
    bits: Vec<AtomicU64>,
    /// Ids below this go to the bitmap (a multiple of 64).
    limit: u64,
    others: HashSet<u64, BuildIdHasher>,
}

/// The bitmap of an [`IdSet`] sized for a bound, filled from several
/// threads.
#[derive(Debug, Clone, Copy)]
pub struct SharedBits<'a>(&'a [AtomicU64]);

impl SharedBits<'_> {
    /// Adds `id`, which is within the bound the set was sized for; false
    /// when it was there.
    #[inline]
    pub fn insert(self, id: u64) -> bool {
        let mask = 1 << (id % 64);
        self.0[(id / 64) as usize].fetch_or(mask, Ordering::Relaxed) & mask == 0
    }
}

/// Ids a growing set keeps in its bitmap (at most 16 MiB of bits).
const BITMAP_IDS: u64 = 1 << 27;

/// The most bits a set sized for a bound takes as a bitmap whatever the
/// number of ids (8 MiB); past this it takes at most 16 bits an id.
pub const BITMAP_FLOOR: u64 = 1 << 26;

/// A copy of the set as it is now (no thread may be filling it).
impl Clone for IdSet {
    fn clone(&self) -> Self {
        Self {
            bits: self
                .bits
                .iter()
                .map(|b| AtomicU64::new(b.load(Ordering::Relaxed)))
                .collect(),
            limit: self.limit,
            others: self.others.clone(),
        }
    }
}

impl Default for IdSet {
    fn default() -> Self {
        Self {
            bits: Vec::new(),
            limit: BITMAP_IDS,
            others: HashSet::default(),
        }
    }
}

impl IdSet {
    /// A set for `n` ids none of which is past `max`: a bitmap over
    /// `0..=max` when that is small next to `n`, a hash set otherwise.
    pub fn for_ids(max: u64, n: usize) -> Self {
        let bits = max.saturating_add(1);
        if bits <= BITMAP_FLOOR.max(16 * n as u64) {
            let words = bits.div_ceil(64);
            Self {
                bits: (0..words).map(|_| AtomicU64::new(0)).collect(),
                limit: words * 64,
                others: HashSet::default(),
            }
        } else {
            Self {
                bits: Vec::new(),
                limit: 0,
                others: HashSet::with_capacity_and_hasher(n, Default::default()),
            }
        }
    }

    #[inline]
    pub fn contains(&self, id: &u64) -> bool {
        let id = *id;
        match self.bits.get((id / 64) as usize) {
            Some(word) => word.load(Ordering::Relaxed) & (1 << (id % 64)) != 0,
            None if id < self.limit => false,
            None => self.others.contains(&id),
        }
    }

    /// Adds `id`; false if it was already there.
    #[inline]
    pub fn insert(&mut self, id: u64) -> bool {
        let word = (id / 64) as usize;
        if word >= self.bits.len() {
            if id >= self.limit {
                return self.others.insert(id);
            }
            // Grow geometrically so a long ascending run stays linear.
            let len = (word + 1).max(self.bits.len() * 2);
            let len = len.min((self.limit / 64) as usize);
            self.bits.resize_with(len, || AtomicU64::new(0));
        }
        let mask = 1 << (id % 64);
        let word = self.bits[word].get_mut();
        let fresh = *word & mask == 0;
        *word |= mask;
        fresh
    }

    /// The bitmap of a set sized with [`IdSet::for_ids`], which several
    /// threads may fill at once; `None` when the set is a hash set (which
    /// takes one thread at a time).
    pub fn shared(&self) -> Option<SharedBits<'_>> {
        (!self.bits.is_empty()).then_some(SharedBits(&self.bits))
    }

    /// Whether no id of `ids` is in the set nor repeated in `ids`; the set
    /// is left as it was (the ids are inserted up to the first one already
    /// there, then taken out again). `bound` is at least every id (their
    /// bitwise or, say): below the bitmap's limit it is grown once and the
    /// ids checked a bit test each, which is how a function's terms are
    /// checked for a repeated variable.
    pub fn all_fresh(&mut self, ids: &[u64], bound: u64) -> bool {
        if bound >= self.limit {
            let fresh = ids.iter().take_while(|&&id| self.insert(id)).count();
            for &id in &ids[..fresh] {
                self.remove(id);
            }
            // The first repeat, if any, was not inserted.
            return fresh == ids.len();
        }
        let words = (bound / 64) as usize + 1;
        if self.bits.len() < words {
            self.bits.resize_with(words, || AtomicU64::new(0));
        }
        let bits = &mut self.bits[..words];
        let mut fresh = 0;
        for &id in ids {
            let (word, mask) = ((id / 64) as usize, 1 << (id % 64));
            let word = bits[word].get_mut();
            if *word & mask != 0 {
                break;
            }
            *word |= mask;
            fresh += 1;
        }
        for &id in &ids[..fresh] {
            *bits[(id / 64) as usize].get_mut() &= !(1 << (id % 64));
        }
        fresh == ids.len()
    }

    /// Bytes the bitmap takes.
    pub fn bytes(&self) -> usize {
        8 * self.bits.len()
    }

    /// Adds every id of `other`; false when some id was in both.
    pub fn absorb(&mut self, other: IdSet) -> bool {
        let mut disjoint = true;
        let IdSet { bits, others, .. } = other;
        for (i, word) in bits.into_iter().enumerate() {
            let word = word.into_inner();
            if word == 0 {
                continue;
            }
            match self.bits.get_mut(i) {
                Some(mine) => {
                    disjoint &= *mine.get_mut() & word == 0;
                    *mine.get_mut() |= word;
                }
                None => {
                    for bit in 0..64 {
                        if word & (1 << bit) != 0 {
                            disjoint &= self.insert(64 * i as u64 + bit);
                        }
                    }
                }
            }
        }
        for id in others {
            disjoint &= self.insert(id);
        }
        disjoint
    }

    /// Whether `f` accepts every id in the set (asked in no particular
    /// order, up to the first it refuses).
    pub fn all(&self, mut f: impl FnMut(u64) -> bool) -> bool {
        let in_bitmap = self.bits.iter().enumerate().all(|(i, word)| {
            let mut word = word.load(Ordering::Relaxed);
            while word != 0 {
                let bit = u64::from(word.trailing_zeros());
                if !f(64 * i as u64 + bit) {
                    return false;
                }
                word &= word - 1;
            }
            true
        });
        in_bitmap && self.others.iter().all(|&id| f(id))
    }

    /// Calls `f` with every id in the set, in no particular order.
    pub fn for_each(&self, mut f: impl FnMut(u64)) {
        self.all(|id| {
            f(id);
            true
        });
    }

    /// Takes `id` out.
    pub fn remove(&mut self, id: u64) {
        match self.bits.get_mut((id / 64) as usize) {
            Some(word) => *word.get_mut() &= !(1 << (id % 64)),
            None if id < self.limit => {}
            None => {
                self.others.remove(&id);
            }
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

    /// [`SharedIdSet::insert`] for ids given again and again, from every
    /// thread (a function's variables): it looks first, so that an id
    /// already there costs a read, not a write to a line the other threads
    /// read.
    #[inline]
    pub fn note(&self, id: u64) {
        if !self.contains(id) {
            self.insert(id);
        }
    }

    /// Whether `id` was added. Exact for what every other thread added
    /// before this one last synchronized with it (a join, a lock); an id
    /// being added meanwhile may be seen or not. Always inlined: the
    /// checks of a file read on every thread look every variable up.
    #[inline(always)]
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

    /// The ids added, as a growing [`IdSet`] (for the one thread left).
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
                Some(words) => bits.extend(words.into_vec()),
                None => bits.resize_with(bits.len() + (PAGE_IDS / 64) as usize, Default::default),
            }
        }
        let mut others = HashSet::default();
        for shard in self.others {
            others.extend(shard.into_inner().unwrap_or_else(|e| e.into_inner()));
        }
        IdSet {
            bits,
            limit: BITMAP_IDS,
            others,
        }
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
    fn a_set_absorbs_another_and_says_whether_they_met() {
        let mut rng = SplitMix64(32);
        for round in 0..200 {
            let max = [1000, 1 << 40, BITMAP_IDS + 100][round % 3];
            let mut a = IdSet::for_ids(max, 50);
            let mut b = if round % 2 == 0 {
                IdSet::for_ids(max, 50)
            } else {
                IdSet::default()
            };
            let mut plain = HashSet::new();
            let mut met = false;
            for _ in 0..rng.below(40) {
                let x = rng.below(max + 1);
                a.insert(x);
                plain.insert(x);
            }
            for _ in 0..rng.below(40) {
                let x = rng.below(max + 1);
                if b.insert(x) {
                    met |= !plain.insert(x);
                }
            }
            assert_eq!(a.absorb(b), !met, "round {round}");
            for &x in &plain {
                assert!(a.contains(&x));
            }
        }
    }

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

    /// Inserts, removals and lookups answer as a plain hash set does, for a
    /// growing set and for sets sized for a bound (bitmap or hash), ids on
    /// either side of the bitmap's limit included; `all_fresh` and shared
    /// inserts too, leaving the set as it was.
    #[test]
    fn the_set_answers_as_a_hash_set_does() {
        let mut rng = SplitMix64(7);
        for round in 0..60 {
            let (mut set, max) = match round % 3 {
                0 => (IdSet::default(), BITMAP_IDS + 200),
                1 => (IdSet::for_ids(1000, 10), 1000),
                _ => (IdSet::for_ids(1 << 40, 10), 1 << 40),
            };
            let mut plain = HashSet::new();
            let id = |rng: &mut SplitMix64| {
                match rng.below(3) {
                    0 => rng.below(130),
                    1 => BITMAP_IDS - 64 + rng.below(128),
                    _ => rng.below(max + 1),
                }
                .min(max)
            };
            for _ in 0..2_000 {
                let x = id(&mut rng);
                match rng.below(4) {
                    0 => assert_eq!(set.insert(x), plain.insert(x), "insert {x}"),
                    1 => {
                        set.remove(x);
                        plain.remove(&x);
                    }
                    2 => {
                        let ids: Vec<u64> = (0..rng.below(6)).map(|_| id(&mut rng)).collect();
                        let bound = ids.iter().fold(0, |a, &b| a | b);
                        let fresh = ids
                            .iter()
                            .enumerate()
                            .all(|(i, x)| !plain.contains(x) && !ids[..i].contains(x));
                        assert_eq!(set.all_fresh(&ids, bound), fresh, "{ids:?}");
                    }
                    _ => assert_eq!(set.contains(&x), plain.contains(&x), "contains {x}"),
                }
            }
            for x in 0..200 {
                assert_eq!(set.contains(&x), plain.contains(&x), "{x}");
            }
        }
        let sized = IdSet::for_ids(300, 4);
        let shared = sized.shared().expect("a bitmap");
        assert!(shared.insert(299) && !shared.insert(299));
        assert!(sized.contains(&299) && !sized.contains(&298));
        assert!(IdSet::for_ids(1 << 40, 4).shared().is_none());
    }
}
