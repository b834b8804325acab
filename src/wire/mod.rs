//! Protobuf's wire format as OMMX's messages use it, below every floor that
//! reads an instance: one way to read a field's key ([`key`]), one varint
//! rule ([`varint`]), and one field reader with an adapter per kind of
//! source:
//! - [`slice::Fields`]: a message body held in memory (the hot path of the
//!   pass, the wire view);
//! - [`stream::FieldReader`]: the top level of an instance streamed from any
//!   `Read`, no length trusted before its bytes arrive;
//! - [`file::FileFields`] and [`file::Window`]: a message copied to a
//!   temporary file, read a window at a time;
//!
//! and one reading of the record most read, a linear term as writers emit
//! it ([`term::common_term`]).
//!
//! [`fields`] is the one table of OMMX's field numbers; everything that
//! reads or writes a field by its number names it from there.

pub mod fields;
pub mod file;
pub mod index;
pub mod packed;
pub mod slice;
pub mod stream;
pub mod term;
mod varint;

pub use slice::{Fields, Unsupported, Value, Wire};
pub use stream::{FieldReader, LenPrefix, WireError};
pub use varint::{varint, varint_byte};

/// Protobuf wire types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    Varint,
    Fixed64,
    Len,
    /// The start of a (deprecated) group: fields up to the matching end.
    StartGroup,
    EndGroup,
    Fixed32,
}

impl WireType {
    /// The wire type of a key's three low bits; `None` for 6 and 7.
    #[inline(always)]
    pub fn from_bits(bits: u64) -> Option<Self> {
        Some(match bits & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            _ => return None,
        })
    }

    /// The three bits a key ends with.
    pub const fn bits(self) -> u64 {
        match self {
            WireType::Varint => 0,
            WireType::Fixed64 => 1,
            WireType::Len => 2,
            WireType::StartGroup => 3,
            WireType::EndGroup => 4,
            WireType::Fixed32 => 5,
        }
    }
}

/// How deep prost (and so OMMX) lets unknown groups nest: every skipped
/// field costs one level of its recursion budget of 100, counted from the
/// message whose field it is; a field at depth 100 is refused.
pub const GROUP_DEPTH_LIMIT: u32 = 100;

/// Why a key is not one prost reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadKey {
    /// Wire type 6 or 7, which do not exist.
    WireType { field: u64, wire_type: u8 },
    /// Field number 0, or one past 2^29 - 1.
    Number(u64),
}

/// A field's key read as prost reads it: its number (1 to 2^29 - 1) and its
/// wire type.
#[inline(always)]
pub fn key(raw: u64) -> Result<(u32, WireType), BadKey> {
    let field = raw >> 3;
    let Some(wire_type) = WireType::from_bits(raw) else {
        return Err(BadKey::WireType {
            field,
            wire_type: (raw & 7) as u8,
        });
    };
    if field == 0 || field > u64::from(u32::MAX >> 3) {
        return Err(BadKey::Number(field));
    }
    Ok((field as u32, wire_type))
}

/// The one-byte key of field `number` (below 16) with `wire_type`, as
/// writers emit it: what the readers of the usual encodings compare bytes
/// with.
pub const fn tag(number: u32, wire_type: WireType) -> u8 {
    assert!(number > 0 && number < 16, "a one-byte key");
    ((number as u64) << 3 | wire_type.bits()) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_as_prost_reads_them() {
        for raw in (0..64u64).chain([u64::from(u32::MAX), u64::from(u32::MAX) + 1, u64::MAX]) {
            let mut buf = Vec::new();
            prost::encoding::encode_varint(raw, &mut buf);
            let theirs = prost::encoding::decode_key(&mut &buf[..]).ok();
            let ours = key(raw).ok().map(|(n, t)| (n, t.bits()));
            let theirs = theirs.map(|(n, t)| (n, t as u64));
            assert_eq!(ours, theirs, "{raw}");
        }
        assert_eq!(tag(1, WireType::Varint), 0x08);
        assert_eq!(tag(3, WireType::Len), 0x1a);
        assert_eq!(tag(8, WireType::Fixed64), 0x41);
    }
}
