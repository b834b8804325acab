//! The two small encodings several floors read: protobuf varints (one rule,
//! prost's, for slices and streams alike) and the hashing of integer keys,
//! with the one set of ids built on it.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Adds the `i`-th byte (from 0) of a varint to `value`, as prost reads
/// varints: at most ten bytes, the tenth at most 1. `Some(true)` when the
/// varint ends with this byte, `Some(false)` when more follow, `None` when
/// it is longer than 64 bits.
#[inline(always)]
pub fn varint_byte(value: &mut u64, i: usize, byte: u8) -> Option<bool> {
    if i > 9 || (i == 9 && byte > 1) {
        return None;
    }
    *value |= u64::from(byte & 0x7f) << (7 * i);
    Some(byte < 0x80)
}

/// Reads a varint at `*pos`, moving `*pos` past it; `None` when `buf` ends
/// first or the varint is longer than 64 bits.
#[inline(always)]
pub fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *buf.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    // Two and three bytes (ids and lengths below 2^21), without the loop.
    let low = u64::from(first & 0x7f);
    match *buf.get(*pos + 1)? {
        second @ 0..0x80 => {
            *pos += 2;
            return Some(low | u64::from(second) << 7);
        }
        second => match buf.get(*pos + 2) {
            Some(&third) if third < 0x80 => {
                *pos += 3;
                return Some(low | u64::from(second & 0x7f) << 7 | u64::from(third) << 14);
            }
            _ => {}
        },
    }
    let mut value = 0u64;
    for i in 0..10 {
        if varint_byte(&mut value, i, *buf.get(*pos + i)?)? {
            *pos += i + 1;
            return Some(value);
        }
    }
    None
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_prost_reads_them() {
        for value in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            let mut buf = Vec::new();
            prost::encoding::encode_varint(value, &mut buf);
            buf.push(0xff);
            let mut pos = 0;
            assert_eq!(varint(&buf, &mut pos), Some(value));
            assert_eq!(pos, buf.len() - 1);
        }
        // Every varint of one to three bytes, and every cut of one, as prost
        // reads them, followed by a byte or not.
        let mut bytes = Vec::new();
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                for c in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                    for len in 0..=3 {
                        bytes.clear();
                        bytes.extend_from_slice(&[a, b, c][..len]);
                        let mut pos = 0;
                        let ours = varint(&bytes, &mut pos).map(|v| (v, pos));
                        let mut rest = &bytes[..];
                        let theirs = prost::encoding::decode_varint(&mut rest)
                            .ok()
                            .map(|v| (v, bytes.len() - rest.len()));
                        assert_eq!(ours, theirs, "{bytes:?}");
                    }
                }
            }
        }
        // Truncated, and a tenth byte above 1.
        assert_eq!(varint(&[0x80, 0x80], &mut 0), None);
        let mut long = vec![0xff; 9];
        long.push(0x02);
        assert_eq!(varint(&long, &mut 0), None);
    }
}
