//! The hasher of the model's maps, keyed by chunk addresses and sizes: a
//! rotate, an xor and a multiply per word, and a rotate at the end, at the
//! cost of an instruction or two. The multiply leaves the low four bits of a
//! 16-byte-aligned address's hash zero, and hashbrown picks a bucket by the
//! low bits: without the last rotate (which brings the product's well-mixed
//! high bits down, as rustc-hash does) only one bucket in 16 starts a probe.
//! (memprof's own id hasher is the same function without it: ids are not
//! aligned; the model keeps its copy so that it depends on nothing.)

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(u64::from(b)));
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Builds [`AddrHasher`]s.
pub type BuildAddrHasher = BuildHasherDefault<AddrHasher>;
