//! The field reader over a message body held in memory: the pass's hot
//! path (functions, variables, constraints read without prost) and the
//! wire view's walk.
//!
//! [`Fields`] vouches only for what it reads exactly as prost does: groups,
//! wire types 6 and 7, a truncated field or an overlong varint are
//! [`Unsupported`], and its caller leaves the message to prost, which
//! gives the same result or the same error. [`skip`] reads past any field,
//! groups included, as prost skips unknown ones.

use super::{WireType, GROUP_DEPTH_LIMIT};

/// An encoding this reader does not vouch for: leave it to prost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported;

/// What a reader that vouches only for some encodings answers.
pub type Wire<T> = Result<T, Unsupported>;

/// Reads a varint at `*pos` as prost does, moving `*pos` past it.
#[inline(always)]
pub fn varint(buf: &[u8], pos: &mut usize) -> Wire<u64> {
    super::varint(buf, pos).ok_or(Unsupported)
}

/// One field's value; `raw` is its encoded value (for a varint or a fixed
/// field, the bytes an element of a packed array would have).
#[derive(Clone, Copy)]
pub enum Value<'a> {
    Varint(u64, &'a [u8]),
    Fixed64(u64, &'a [u8]),
    Fixed32,
    Len(&'a [u8]),
}

/// The fields of one message body, in order.
pub struct Fields<'a> {
    buf: &'a [u8],
    /// Where the next field starts: readers of the usual encodings read
    /// ahead of [`Fields::next_field`] and move it themselves.
    pub pos: usize,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    #[inline(always)]
    pub fn next_field(&mut self) -> Wire<Option<(u32, Value<'a>)>> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let (number, wire_type) =
            super::key(varint(self.buf, &mut self.pos)?).map_err(|_| Unsupported)?;
        let start = self.pos;
        let value = match wire_type {
            WireType::Varint => {
                let v = varint(self.buf, &mut self.pos)?;
                Value::Varint(v, &self.buf[start..self.pos])
            }
            WireType::Fixed64 => {
                let raw = self.take(8)?;
                Value::Fixed64(u64::from_le_bytes(raw.try_into().expect("8 bytes")), raw)
            }
            WireType::Len => {
                let len = varint(self.buf, &mut self.pos)?;
                let len = usize::try_from(len).map_err(|_| Unsupported)?;
                Value::Len(self.take(len)?)
            }
            WireType::Fixed32 => {
                self.take(4)?;
                Value::Fixed32
            }
            WireType::StartGroup | WireType::EndGroup => return Err(Unsupported),
        };
        Ok(Some((number, value)))
    }

    pub fn take(&mut self, n: usize) -> Wire<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(Unsupported)?;
        let bytes = self.buf.get(self.pos..end).ok_or(Unsupported)?;
        self.pos = end;
        Ok(bytes)
    }
}

/// Moves `*pos` past the value of field `number` of `wire_type` whose key
/// was just read, groups included (to their end key, nested at most to
/// [`GROUP_DEPTH_LIMIT`] counting `depth` levels above); `None` when the
/// value does not end within `buf` or is malformed.
pub fn skip(
    buf: &[u8],
    pos: &mut usize,
    number: u64,
    wire_type: WireType,
    depth: u32,
) -> Option<()> {
    let advance = |pos: &mut usize, n: u64| {
        let end = pos.checked_add(usize::try_from(n).ok()?)?;
        (end <= buf.len()).then(|| *pos = end)
    };
    match wire_type {
        WireType::Varint => super::varint(buf, pos).map(drop),
        WireType::Fixed64 => advance(pos, 8),
        WireType::Fixed32 => advance(pos, 4),
        WireType::Len => {
            let len = super::varint(buf, pos)?;
            advance(pos, len)
        }
        WireType::StartGroup if depth < GROUP_DEPTH_LIMIT => loop {
            let key = super::varint(buf, pos)?;
            let inner_type = WireType::from_bits(key)?;
            if inner_type == WireType::EndGroup {
                return (key >> 3 == number).then_some(());
            }
            skip(buf, pos, key >> 3, inner_type, depth + 1)?;
        },
        WireType::StartGroup | WireType::EndGroup => None,
    }
}
