//! 128-bit fingerprints, so the analyses keep one small entry per distinct
//! string or function instead of the value itself.
//!
//! Two values are taken to be equal when their 128-bit fingerprints are:
//! with n distinct values the chance of a false match is about n² / 2¹²⁹,
//! far below anything observable. The mixing is a folded 64×64→128-bit
//! multiply (as in wyhash); it is fast, not cryptographic, and nothing here
//! needs more: a crafted collision could only make a recommendation wrong.

const K: [u64; 4] = [
    0x9e37_79b9_7f4a_7c15,
    0xd6e8_feb8_6659_fd93,
    0xa076_1d64_78bd_642f,
    0xe703_7ed1_a0b4_28db,
];

/// Multiplies and folds the 128-bit product.
pub fn mix(a: u64, b: u64) -> u64 {
    let r = u128::from(a).wrapping_mul(u128::from(b));
    (r as u64) ^ ((r >> 64) as u64)
}

/// A fingerprint of a byte string.
pub fn bytes128(bytes: &[u8]) -> u128 {
    let mut lanes = [K[0] ^ bytes.len() as u64, K[1] ^ bytes.len() as u64];
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        lanes[0] = mix(lanes[0] ^ word, K[2]);
        lanes[1] = mix(lanes[1] ^ word, K[3]);
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    let word = u64::from_le_bytes(last);
    let a = mix(lanes[0] ^ word, K[2]);
    let b = mix(lanes[1] ^ word, K[3]);
    (u128::from(mix(a, K[1])) << 64) | u128::from(mix(b, K[0]))
}

/// Fingerprints of one monomial (sorted variable ids) with each of two
/// coefficients (given as bits), its ids mixed once. Summing these over a
/// function's terms fingerprints the function independently of the order
/// the terms are stored in.
pub fn terms128(ids: &[u64], coefficients: [u64; 2]) -> [u128; 2] {
    let ids = monomial(ids);
    coefficients.map(|c| with_coefficient(ids, c))
}

/// The lanes of a monomial's ids, before its coefficient.
fn monomial(ids: &[u64]) -> [u64; 2] {
    let mut a = K[0] ^ ids.len() as u64;
    let mut b = K[1] ^ ids.len() as u64;
    for &id in ids {
        a = mix(a ^ id, K[2]);
        b = mix(b ^ id, K[3]);
    }
    [a, b]
}

fn with_coefficient([a, b]: [u64; 2], coefficient: u64) -> u128 {
    let a = mix(a ^ coefficient, K[3]);
    let b = mix(b ^ coefficient, K[2]);
    (u128::from(a) << 64) | u128::from(b)
}

/// The final fingerprint of a sum of term fingerprints over `terms` terms.
pub fn finish128(sum: u128, terms: u64) -> u128 {
    let a = mix((sum >> 64) as u64 ^ terms, K[0]);
    let b = mix(sum as u64 ^ terms, K[1]);
    (u128::from(a) << 64) | u128::from(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_tell_values_apart() {
        assert_eq!(bytes128(b"abc"), bytes128(b"abc"));
        assert_ne!(bytes128(b"abc"), bytes128(b"abd"));
        assert_ne!(bytes128(b""), bytes128(b"\0"));
        assert_ne!(bytes128(b"12345678"), bytes128(b"123456789"));
        let x = 2.0f64.to_bits();
        let term128 = |ids: &[u64], c: u64| terms128(ids, [c, 0])[0];
        assert_eq!(terms128(&[1, 2], [x, x])[0], terms128(&[1, 2], [x, x])[1]);
        assert_ne!(term128(&[1], x), term128(&[1], 3.0f64.to_bits()));
        assert_ne!(term128(&[1, 2], x), term128(&[2, 1], x));
        assert_ne!(term128(&[1], x), term128(&[1, 1], x));
        // Order of terms does not matter once summed.
        let (p, q) = (term128(&[1], x), term128(&[2], x));
        assert_eq!(
            finish128(p.wrapping_add(q), 2),
            finish128(q.wrapping_add(p), 2)
        );
    }
}
