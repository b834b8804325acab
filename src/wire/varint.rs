//! Protobuf varints, read by one rule (prost's: at most ten bytes, the
//! tenth at most 1) wherever they come from.

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
