//! The field reader over a stream: the top level of a protobuf message
//! read from any `Read`, one field at a time, so that repeated fields are
//! decoded element by element without holding the whole message.
//!
//! No length read from the input is trusted: a length-delimited field is
//! checked against the bytes known to remain (when the total is known), and
//! is read incrementally in any case, so a hostile length can only fail with
//! "truncated", never take memory ahead of the data. (A known total is
//! itself only a claim: a sparse file, or a tar header, can declare far more
//! bytes than memory holds. A field that fits it is reserved whole, which
//! takes address space, not memory, until its bytes arrive; should the
//! allocator refuse, at most [`RESERVE_AHEAD`] is reserved.)
//! Where the length is only a claim, a field longer than the element limit,
//! known or skipped unknown, is refused as its length is read, neither held
//! nor read through ([`FieldReader::with_max_len`]): an endless stream that
//! claims an endless field (random bytes) ends there, not at the stream's
//! limit. A known total that the data ends short of is an error, not a
//! profile of what was read (a file cut short while it is read).

use std::fs::File;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::ops::Range;

use super::{BadKey, WireType, GROUP_DEPTH_LIMIT};

/// What a length prefix that fits the known total reserves before its bytes
/// arrive when the allocator refuses the whole; past this the buffer grows
/// as the data does.
pub const RESERVE_AHEAD: u64 = 64 << 20;

/// What went wrong at the wire level, with the byte offset where it did.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("truncated input: {what} at byte {offset} runs past the end of the data")]
    Truncated { what: &'static str, offset: u64 },
    #[error("malformed protobuf at byte {offset}: {what}")]
    Malformed { what: String, offset: u64 },
    #[error("read failed at byte {offset}: {source}")]
    Io { offset: u64, source: io::Error },
    #[error("{}", crate::units::element_too_large(&format!("a length-delimited field at byte {offset}"), *.len, *.limit))]
    TooLarge { len: u64, limit: u64, offset: u64 },
    #[error("truncated input: the data ends at byte {offset}, before the {total} bytes its file or container declares (was it cut short while being read?)")]
    EndedEarly { offset: u64, total: u64 },
}

/// Bytes read ahead from the input at a time: tags, lengths and short
/// fields are then read from memory, not through a call to the reader each.
const BUFFER: usize = 64 << 10;

/// The length of a length-delimited field, and where its prefix starts.
#[derive(Debug, Clone, Copy)]
pub struct LenPrefix {
    pub len: u64,
    start: u64,
}

pub struct FieldReader<R> {
    reader: R,
    /// Read ahead; `buf[pos..end]` is not consumed yet.
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Bytes consumed.
    offset: u64,
    /// Total bytes in the message, when the container says so.
    total: Option<u64>,
    /// The longest length-delimited field held in memory, when the input's
    /// length is only a claim (`--max-element`).
    max_len: Option<u64>,
    /// How `reader` reads a long body on several threads, if it can
    /// ([`FieldReader::with_ahead`]).
    ahead: Option<Ahead<R>>,
    /// How `reader` leaves a body unread where it lies, if it can
    /// ([`FieldReader::with_leave`]).
    leave: Option<Leave<R>>,
}

/// Fills the slice with the reader's next bytes, every one of them, on
/// several threads where they lie, and moves the reader past them; false,
/// reading nothing, when fewer bytes are left than the slice holds.
pub type Ahead<R> = fn(&mut R, &mut [MaybeUninit<u8>]) -> io::Result<bool>;

/// Moves the reader past bytes it does not read, where they lie in a
/// file: `len` bytes that start `behind` bytes before its position (read
/// ahead already): that file (a handle of its own) and their range in it;
/// `None`, having moved nothing, where the reader cannot.
pub type Leave<R> = fn(&mut R, u64, u64) -> io::Result<Option<(File, Range<u64>)>>;

/// Bodies at least this long are read by [`Ahead`], where there is one.
const AHEAD_FROM: u64 = 4 << 20;

impl<R: Read> FieldReader<R> {
    pub fn new(reader: R, total: Option<u64>) -> Self {
        // No larger than a small input needs.
        let size = total.map_or(BUFFER, |t| (t as usize).clamp(16, BUFFER));
        Self {
            reader,
            buf: vec![0; size].into_boxed_slice(),
            pos: 0,
            end: 0,
            offset: 0,
            total,
            max_len: None,
            ahead: None,
            leave: None,
        }
    }

    /// Reads a long body (4 MiB or more, where the input's length is known)
    /// with `ahead` rather than in turn: `reader` is a regular file, which
    /// several threads read faster than one.
    pub fn with_ahead(mut self, ahead: Ahead<R>) -> Self {
        self.ahead = Some(ahead);
        self
    }

    /// Leaves a body unread where [`FieldReader::leave_body`] is asked to,
    /// with `leave`: `reader` is a regular file.
    pub fn with_leave(mut self, leave: Leave<R>) -> Self {
        self.leave = Some(leave);
        self
    }

    /// Refuses length-delimited fields longer than `max_len` (none: no limit
    /// beyond the total).
    pub fn with_max_len(mut self, max_len: Option<u64>) -> Self {
        self.max_len = max_len;
        self
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads ahead once all that was read is consumed; false at the end of
    /// the input.
    fn fill(&mut self) -> Result<bool, WireError> {
        debug_assert_eq!(self.pos, self.end);
        loop {
            match self.reader.read(&mut self.buf) {
                Ok(n) => {
                    (self.pos, self.end) = (0, n);
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(WireError::Io {
                        offset: self.offset,
                        source,
                    })
                }
            }
        }
    }

    #[inline]
    fn read_byte(&mut self) -> Result<Option<u8>, WireError> {
        if self.pos == self.end && !self.fill()? {
            return Ok(None);
        }
        let byte = self.buf[self.pos];
        self.pos += 1;
        self.offset += 1;
        Ok(Some(byte))
    }

    /// Consumes up to `n` read-ahead bytes, passing them to `take`; returns
    /// how many.
    #[inline]
    fn consume(&mut self, n: u64, take: impl FnOnce(&[u8])) -> u64 {
        let have = (self.end - self.pos).min(usize::try_from(n).unwrap_or(usize::MAX));
        take(&self.buf[self.pos..self.pos + have]);
        self.pos += have;
        self.offset += have as u64;
        have as u64
    }

    /// Reads a varint; `Ok(None)` only at a clean end of input before its first byte.
    fn varint(&mut self, what: &'static str, eof_ok: bool) -> Result<Option<u64>, WireError> {
        let start = self.offset;
        // Whole in the read-ahead: read in place (a varint it cannot read
        // there is read byte by byte below, for the error).
        if self.end - self.pos >= 10 {
            let mut len = 0;
            if let Some(value) = super::varint(&self.buf[self.pos..self.end], &mut len) {
                self.pos += len;
                self.offset += len as u64;
                return Ok(Some(value));
            }
        }
        let mut value: u64 = 0;
        for i in 0..10 {
            let Some(byte) = self.read_byte()? else {
                if i == 0 && eof_ok {
                    return Ok(None);
                }
                return Err(WireError::Truncated {
                    what,
                    offset: start,
                });
            };
            match super::varint_byte(&mut value, i, byte) {
                Some(true) => return Ok(Some(value)),
                Some(false) => {}
                None => {
                    return Err(WireError::Malformed {
                        what: format!("{what} is longer than 64 bits"),
                        offset: start,
                    })
                }
            }
        }
        unreachable!("the tenth byte either ends the varint or is rejected")
    }

    /// The next field's number and wire type, or `None` at the end of input.
    pub fn next_field(&mut self) -> Result<Option<(u32, WireType)>, WireError> {
        let start = self.offset;
        let Some(key) = self.varint("field tag", true)? else {
            // A clean end before the declared length: the file shrank
            // while it was read, or its container lied.
            if let Some(total) = self.total.filter(|&t| t > start) {
                return Err(WireError::EndedEarly {
                    offset: start,
                    total,
                });
            }
            return Ok(None);
        };
        let (field, wire_type) = super::key(key).map_err(|bad| WireError::Malformed {
            what: match bad {
                BadKey::WireType { field, wire_type } => {
                    format!("unsupported wire type {wire_type} in tag of field {field}")
                }
                BadKey::Number(field) => format!("invalid field number {field}"),
            },
            offset: start,
        })?;
        Ok(Some((field, wire_type)))
    }

    pub fn read_varint(&mut self) -> Result<u64, WireError> {
        Ok(self.varint("varint", false)?.expect("eof_ok is false"))
    }

    /// Reads the body of a length-delimited field into `buf` (replacing its contents).
    pub fn read_len_into(&mut self, buf: &mut Vec<u8>) -> Result<(), WireError> {
        buf.clear();
        self.append_len(buf)
    }

    /// Appends the body of a length-delimited field to `buf`.
    pub fn append_len(&mut self, buf: &mut Vec<u8>) -> Result<(), WireError> {
        let prefix = self.len_prefix()?;
        self.append_body(prefix, buf)
    }

    /// Reads the length of a length-delimited field, refusing one longer
    /// than the input or the element limit. Its body is read next, by
    /// [`FieldReader::append_body`] or [`FieldReader::stream_body`].
    pub fn len_prefix(&mut self) -> Result<LenPrefix, WireError> {
        let start = self.offset;
        let len = self
            .varint("length prefix", false)?
            .expect("eof_ok is false");
        if let Some(total) = self.total {
            if len > total.saturating_sub(self.offset) {
                return Err(WireError::Truncated {
                    what: "a length-delimited field",
                    offset: start,
                });
            }
        }
        self.within_limit(len, start)?;
        Ok(LenPrefix { len, start })
    }

    /// Refuses a length past the element limit at once, neither held nor
    /// read through: a stream cut inside such a field is refused as too
    /// large, not as truncated, and an endless one that claims an endless
    /// field is refused at its claim.
    fn within_limit(&self, len: u64, start: u64) -> Result<(), WireError> {
        if let Some(limit) = self.max_len.filter(|&limit| len > limit) {
            return Err(WireError::TooLarge {
                len,
                limit,
                offset: start,
            });
        }
        Ok(())
    }

    /// Passes the body of the field whose prefix was just read to `sink`, a
    /// piece at a time, without holding it.
    pub fn stream_body(
        &mut self,
        LenPrefix { len, start }: LenPrefix,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), WireError> {
        let mut got = self.consume(len, &mut *sink);
        while got < len && self.fill()? {
            got += self.consume(len - got, &mut *sink);
        }
        if got < len {
            return Err(WireError::Truncated {
                what: "a length-delimited field",
                offset: start,
            });
        }
        Ok(())
    }

    /// The first byte of the body of the field whose prefix was just read
    /// (which is not empty), without consuming it; `None` at the end of the
    /// input.
    pub fn peek(&mut self) -> Result<Option<u8>, WireError> {
        if self.pos == self.end && !self.fill()? {
            return Ok(None);
        }
        Ok(Some(self.buf[self.pos]))
    }

    /// Moves past the body of the field whose prefix was just read without
    /// reading what is not read ahead yet, where the input is a file of
    /// known length ([`FieldReader::with_leave`]): the file and the body's
    /// range in it. `None`, having read nothing, for a body already read
    /// ahead whole, or an input that cannot.
    pub fn leave_body(
        &mut self,
        LenPrefix { len, .. }: LenPrefix,
    ) -> Result<Option<(File, Range<u64>)>, WireError> {
        let behind = (self.end - self.pos) as u64;
        let Some(leave) = self.leave.filter(|_| self.total.is_some() && len > behind) else {
            return Ok(None);
        };
        let left = leave(&mut self.reader, behind, len).map_err(|source| WireError::Io {
            offset: self.offset,
            source,
        })?;
        if left.is_some() {
            self.pos = self.end;
            self.offset += len;
        }
        Ok(left)
    }

    /// Appends the body of the field whose prefix was just read to `buf`.
    pub fn append_body(
        &mut self,
        LenPrefix { len, start }: LenPrefix,
        buf: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        if self.total.is_some() {
            // Claimed to be present: reserved whole up front, so that a large
            // field is not copied as its buffer grows (which holds it about
            // twice over for a moment: a 74 MiB objective peaked at 148 MiB).
            // Reserved pages cost memory only as the bytes arrive; a
            // reservation the allocator refuses (a claim far past memory)
            // falls back to a bounded one.
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            let room = buf.capacity();
            if buf.try_reserve(len).is_err() {
                buf.reserve(len.min(RESERVE_AHEAD as usize));
            }
            // Advised once, as it is allocated: a buffer kept for the next
            // batch is not advised again with every field it takes.
            if buf.capacity() != room {
                crate::pages::prefer_huge(buf);
            }
        }
        let before = buf.len();
        let mut got = self.consume(len, |bytes| buf.extend_from_slice(bytes));
        let rest = len - got;
        if let Some(ahead) = self
            .ahead
            .filter(|_| rest >= AHEAD_FROM && self.total.is_some())
        {
            let n = usize::try_from(rest).unwrap_or(usize::MAX);
            if buf.try_reserve(n).is_ok() {
                let filled = ahead(&mut self.reader, &mut buf.spare_capacity_mut()[..n]).map_err(
                    |source| WireError::Io {
                        offset: self.offset,
                        source,
                    },
                )?;
                if filled {
                    // SAFETY: `ahead` wrote every one of the `n` bytes past
                    // the length, within the capacity reserved above.
                    unsafe { buf.set_len(buf.len() + n) };
                    self.offset += rest;
                    got += rest;
                }
            }
        }
        if len - got >= BUFFER as u64 {
            // Long: straight into `buf`.
            let read = (&mut self.reader)
                .take(len - got)
                .read_to_end(buf)
                .map_err(|source| WireError::Io {
                    offset: self.offset,
                    source,
                })?;
            self.offset += read as u64;
            got += read as u64;
        } else {
            while got < len && self.fill()? {
                got += self.consume(len - got, |bytes| buf.extend_from_slice(bytes));
            }
        }
        if got < len {
            buf.truncate(before);
            return Err(WireError::Truncated {
                what: "a length-delimited field",
                offset: start,
            });
        }
        Ok(())
    }

    /// Skips a field of the given wire type (a top-level field of the
    /// message: groups inside it may nest to [`GROUP_DEPTH_LIMIT`]).
    pub fn skip(&mut self, field: u32, wire_type: WireType) -> Result<(), WireError> {
        self.skip_within(field, wire_type, GROUP_DEPTH_LIMIT)
    }

    fn skip_within(
        &mut self,
        field: u32,
        wire_type: WireType,
        depth_left: u32,
    ) -> Result<(), WireError> {
        let start = self.offset;
        if depth_left == 0 {
            return Err(WireError::Malformed {
                what: format!("groups nested deeper than {GROUP_DEPTH_LIMIT} levels"),
                offset: start,
            });
        }
        let n = match wire_type {
            WireType::Varint => {
                self.read_varint()?;
                return Ok(());
            }
            WireType::Fixed64 => 8,
            WireType::Fixed32 => 4,
            WireType::Len => {
                let len = self
                    .varint("length prefix", false)?
                    .expect("eof_ok is false");
                // An unknown field is skipped, not held, but one longer than
                // the element limit is refused as a known one is.
                self.within_limit(len, start)?;
                len
            }
            WireType::StartGroup => loop {
                let Some((inner, inner_type)) = self.next_field()? else {
                    return Err(WireError::Truncated {
                        what: "a group",
                        offset: start,
                    });
                };
                if inner_type == WireType::EndGroup {
                    if inner != field {
                        return Err(end_group_mismatch(self.offset, inner));
                    }
                    return Ok(());
                }
                self.skip_within(inner, inner_type, depth_left - 1)?;
            },
            WireType::EndGroup => return Err(end_group_mismatch(start, field)),
        };
        self.skip_bytes(n, start, "a field")
    }

    /// Reads `n` bytes through without keeping them.
    fn skip_bytes(&mut self, n: u64, start: u64, what: &'static str) -> Result<(), WireError> {
        let mut skipped = self.consume(n, |_| {});
        if skipped < n {
            let read = io::copy(&mut (&mut self.reader).take(n - skipped), &mut io::sink())
                .map_err(|source| WireError::Io {
                    offset: self.offset,
                    source,
                })?;
            self.offset += read;
            skipped += read;
        }
        if skipped < n {
            return Err(WireError::Truncated {
                what,
                offset: start,
            });
        }
        Ok(())
    }
}

fn end_group_mismatch(offset: u64, field: u32) -> WireError {
    WireError::Malformed {
        what: format!("end of group {field} without its start"),
        offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_groups_as_prost_does() {
        // group 16 { varint 1 = 8, group 15 {} } then field 3 (LEN) ""
        let data = [0x83, 0x01, 0x08, 0x08, 0x7b, 0x7c, 0x84, 0x01, 0x1a, 0x00];
        let mut r = FieldReader::new(&data[..], None);
        assert_eq!(r.next_field().unwrap(), Some((16, WireType::StartGroup)));
        r.skip(16, WireType::StartGroup).unwrap();
        assert_eq!(r.next_field().unwrap(), Some((3, WireType::Len)));

        let skip_all = |data: &[u8]| {
            let mut r = FieldReader::new(data, None);
            while let Some((field, wire_type)) = r.next_field()? {
                r.skip(field, wire_type)?;
            }
            Ok::<_, WireError>(())
        };
        // An end without a start, an end of another group, an unended group.
        assert!(skip_all(&[0x7c]).is_err());
        assert!(skip_all(&[0x7b, 0x84, 0x01]).is_err());
        assert!(skip_all(&[0x7b, 0x08, 0x01]).is_err());
        // 100 nested groups are read; a field inside the 100th is not.
        let nested = |depth: usize, inner: &[u8]| {
            let mut d = vec![0x7b; depth];
            d.extend_from_slice(inner);
            d.extend(std::iter::repeat_n(0x7c, depth));
            d
        };
        assert!(skip_all(&nested(100, &[])).is_ok());
        assert!(skip_all(&nested(100, &[0x08, 0x01])).is_err());
        assert!(skip_all(&nested(99, &[0x08, 0x01])).is_ok());
    }

    #[test]
    fn reads_fields_and_rejects_lengths_past_the_end() {
        // field 2 (LEN) "ab", field 5 varint 1
        let data = [0x12, 2, b'a', b'b', 0x28, 1];
        let mut r = FieldReader::new(&data[..], Some(data.len() as u64));
        assert_eq!(r.next_field().unwrap(), Some((2, WireType::Len)));
        let mut buf = Vec::new();
        r.read_len_into(&mut buf).unwrap();
        assert_eq!(buf, b"ab");
        assert_eq!(r.next_field().unwrap(), Some((5, WireType::Varint)));
        assert_eq!(r.read_varint().unwrap(), 1);
        assert_eq!(r.next_field().unwrap(), None);

        let bad = [0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, b'a'];
        for total in [Some(bad.len() as u64), None] {
            let mut r = FieldReader::new(&bad[..], total);
            r.next_field().unwrap();
            let err = r.read_len_into(&mut buf).unwrap_err();
            assert!(
                matches!(err, WireError::Truncated { offset: 1, .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn data_ending_before_the_declared_length_is_truncated() {
        // A file stat'ed at 8 bytes that holds 6 when read: cut short at an
        // element boundary.
        let data = [0x12, 2, b'a', b'b', 0x28, 1];
        let mut r = FieldReader::new(&data[..], Some(8));
        let mut buf = Vec::new();
        r.next_field().unwrap();
        r.read_len_into(&mut buf).unwrap();
        r.next_field().unwrap();
        r.read_varint().unwrap();
        let err = r.next_field().unwrap_err();
        assert!(
            matches!(
                err,
                WireError::EndedEarly {
                    offset: 6,
                    total: 8
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_field_past_the_reserve_ahead_is_read_into_one_buffer() {
        // A field longer than RESERVE_AHEAD behind a few bytes already held
        // (as the objective is, behind room for its key): read whole, into
        // a buffer reserved once rather than doubled as it fills (which
        // copied it and held it twice over for a moment).
        let len = RESERVE_AHEAD as usize + (16 << 20);
        let mut data = vec![0x1a];
        prost::encoding::encode_varint(len as u64, &mut data);
        let body_at = data.len();
        data.extend((0..len).map(|i| i as u8));
        let mut r = FieldReader::new(&data[..], Some(data.len() as u64));
        assert_eq!(r.next_field().unwrap(), Some((3, WireType::Len)));
        let mut buf = vec![7u8; 15];
        r.append_len(&mut buf).unwrap();
        assert_eq!(buf[..15], [7; 15]);
        assert!(buf[15..] == data[body_at..]);
        assert!(buf.capacity() < buf.len() + (RESERVE_AHEAD as usize) / 2);
    }

    #[test]
    fn a_length_over_the_element_limit_is_refused_unbuffered() {
        // 1 KiB claimed, 2 KiB present; a limit of 100 bytes.
        let mut data = vec![0x12, 0x80, 0x08];
        data.extend([0u8; 2048]);
        for total in [Some(data.len() as u64), None] {
            let mut r = FieldReader::new(&data[..], total).with_max_len(Some(100));
            r.next_field().unwrap();
            let mut buf = Vec::new();
            let err = r.read_len_into(&mut buf).unwrap_err();
            assert!(
                matches!(err, WireError::TooLarge { len: 1024, .. }),
                "{err}"
            );
            assert!(buf.capacity() < 1024);
        }
        // Cut inside the element: truncated where the total says so; a
        // stream cannot tell, and is refused at the claim, unread.
        let mut r = FieldReader::new(&data[..500], Some(500)).with_max_len(Some(100));
        r.next_field().unwrap();
        let err = r.read_len_into(&mut Vec::new()).unwrap_err();
        assert!(matches!(err, WireError::Truncated { .. }), "{err}");
        let mut endless = io::Cursor::new(&data[..3]).chain(io::repeat(0));
        let mut r = FieldReader::new(&mut endless, None).with_max_len(Some(100));
        r.next_field().unwrap();
        let err = r.read_len_into(&mut Vec::new()).unwrap_err();
        assert!(matches!(err, WireError::TooLarge { .. }), "{err}");
        assert_eq!(r.offset(), 3, "nothing read past the claim");
        // An unknown field alike, skipped or not.
        let mut endless = io::Cursor::new([0xa2, 0x01, 0x80, 0x08]).chain(io::repeat(0));
        let mut r = FieldReader::new(&mut endless, None).with_max_len(Some(100));
        let (field, wire_type) = r.next_field().unwrap().unwrap();
        let err = r.skip(field, wire_type).unwrap_err();
        assert!(
            matches!(err, WireError::TooLarge { len: 1024, .. }),
            "{err}"
        );
    }
}
