//! Integer keys: the one hasher of ids (and id pairs, fingerprints) and the
//! one set of ids built on it, plus the tests' random numbers.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

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
