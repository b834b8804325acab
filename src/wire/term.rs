//! A `Linear.terms` record as every writer emits it, read in place rather
//! than field by field: the bytes most read of a v1 instance (every term of
//! every linear function), read so by the pass as it builds each function
//! and by the wire view as it counts them.

use super::fields::{linear, linear_term};
use super::{tag, WireType};

/// The one-byte keys of a term record (field `Linear.terms`) and of its
/// two fields.
pub const TERM_KEY: u8 = tag(linear::TERMS, WireType::Len);
pub const ID_KEY: u8 = tag(linear_term::ID, WireType::Varint);
pub const COEFFICIENT_KEY: u8 = tag(linear_term::COEFFICIENT, WireType::Fixed64);

/// One common term record ([`common_term`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommonTerm {
    pub id: u64,
    /// Bytes of the id's varint.
    pub id_bytes: usize,
    pub coefficient: f64,
    /// Where the record ends.
    pub end: usize,
}

/// The term record at `at` in `bytes` when it is what every writer emits:
/// its key, a one-byte length, the id (its key, a varint read as prost reads
/// it), the coefficient (its key, eight bytes), nothing else. `None` for
/// anything else, which the general reader reads.
///
/// (Reading the varint eight bytes at a time, its length known from the
/// record's, took a quarter longer than [`super::varint`]'s one to three
/// bytes, whose branches ids below 2^21 all take alike.)
#[inline(always)]
pub fn common_term(bytes: &[u8], at: usize) -> Option<CommonTerm> {
    let rest = bytes.get(at..)?;
    // The shortest record: key, length, id key, one id byte, coefficient
    // key, eight bytes.
    if rest.len() < 13 || rest[0] != TERM_KEY || rest[1] >= 0x80 || rest[2] != ID_KEY {
        return None;
    }
    let end = 2 + usize::from(rest[1]);
    let record = rest.get(..end)?;
    let mut pos = 3;
    let id = super::varint(record, &mut pos)?;
    if pos + 9 != end || record[pos] != COEFFICIENT_KEY {
        return None;
    }
    let coefficient = f64::from_le_bytes(record[pos + 1..].try_into().expect("eight bytes"));
    Some(CommonTerm {
        id,
        id_bytes: pos - 3,
        coefficient,
        end: at + end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::encoding;

    /// A record as written: its id's varint as given (canonical or not).
    fn record(id_varint: &[u8], coefficient: f64) -> Vec<u8> {
        let mut body = vec![ID_KEY];
        body.extend_from_slice(id_varint);
        body.push(COEFFICIENT_KEY);
        body.extend_from_slice(&coefficient.to_le_bytes());
        let mut out = vec![TERM_KEY, body.len() as u8];
        out.extend_from_slice(&body);
        out
    }

    fn canonical(id: u64) -> Vec<u8> {
        let mut v = Vec::new();
        encoding::encode_varint(id, &mut v);
        v
    }

    /// The record read by the general field reader, its keys and length
    /// one byte each.
    fn slowly(bytes: &[u8], at: usize) -> Option<CommonTerm> {
        use crate::wire::{Fields, Value};
        let rest = bytes.get(at..)?;
        let mut outer = Fields::new(rest);
        let Some((linear::TERMS, Value::Len(body))) = outer.next_field().ok()? else {
            return None;
        };
        if rest[0] != TERM_KEY || outer.pos != 2 + body.len() {
            return None;
        }
        let mut inner = Fields::new(body);
        let Some((linear_term::ID, Value::Varint(id, _))) = inner.next_field().ok()? else {
            return None;
        };
        let id_end = inner.pos;
        let Some((linear_term::COEFFICIENT, Value::Fixed64(bits, _))) = inner.next_field().ok()?
        else {
            return None;
        };
        let keys = body[0] == ID_KEY && body[id_end] == COEFFICIENT_KEY;
        (keys && inner.pos == body.len()).then(|| CommonTerm {
            id,
            id_bytes: id_end - 1,
            coefficient: f64::from_bits(bits),
            end: at + outer.pos,
        })
    }

    #[test]
    fn records_read_as_field_by_field() {
        // Every varint length: each power of two and the one below it.
        let mut ids: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
        ids.extend([u64::MAX, 300, 1 << 21, 1_000_000]);
        for id in ids {
            let bytes = record(&canonical(id), -2.5);
            let read = common_term(&bytes, 0).expect("a common record");
            assert_eq!(read, slowly(&bytes, 0).unwrap(), "id {id}");
            assert_eq!(
                (read.id, read.coefficient, read.end),
                (id, -2.5, bytes.len())
            );
        }
        // Not canonical, as prost reads them: 0 in two bytes, 1 in ten.
        let padded = [
            &[0x80, 0x00][..],
            &[0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
        ];
        for varint in padded {
            let bytes = record(varint, 1.0);
            assert_eq!(common_term(&bytes, 0), slowly(&bytes, 0));
            assert!(common_term(&bytes, 0).is_some());
        }
    }

    #[test]
    fn anything_else_is_left_to_the_general_reader() {
        let good = record(&canonical(1234), 3.0);
        // Every byte changed to every value, every truncation, and junk
        // around the record: always what reading field by field gives.
        for i in 0..good.len() {
            for value in 0..=255u8 {
                let mut bytes = good.clone();
                bytes[i] = value;
                assert_eq!(
                    common_term(&bytes, 0),
                    slowly(&bytes, 0),
                    "byte {i} = {value}"
                );
            }
        }
        for cut in 0..good.len() {
            assert_eq!(common_term(&good[..cut], 0), None);
        }
        let mut shifted = vec![7u8; 5];
        shifted.extend_from_slice(&good);
        assert_eq!(common_term(&shifted, 5).map(|t| t.end), Some(shifted.len()));
        assert_eq!(common_term(&shifted, 99), None);
        // An eleventh varint byte, a tenth past one bit, a length that is
        // no term's.
        let long = record(
            &[0xff; 10].iter().copied().chain([0x01]).collect::<Vec<_>>(),
            1.0,
        );
        assert_eq!(common_term(&long, 0), None);
        let wide = record(
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
            1.0,
        );
        assert_eq!(common_term(&wide, 0), None);
        assert_eq!(slowly(&wide, 0), None);
    }
}
