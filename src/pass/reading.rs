//! An `ommx.v2` payload read a top-level field at a time, and how far raw
//! bytes read as either schema before they fail.
//!
//! A v2 payload is decoded whole (it is one message), but not read whole
//! first: each top-level field is merged into the message as soon as its
//! last byte arrives (protobuf's merge of consecutive fields is what
//! decoding the whole does, errors included), so bytes that are no v2
//! message are refused at the first field that is not one, without reading
//! on: an endless stream of zeros or random bytes stops in its first bytes.
//!
//! When raw bytes are neither v1 nor v2, the reading that got further is
//! the one reported: [`reach`] is where a reading of the bytes as a schema
//! stops, the start of the first top-level field that does not decode as
//! that schema's field (framing is the wire format's, the same for both;
//! decoding a field's contents is the schema's).

use std::io::{self, Read};

use prost::Message;

use crate::wire::{key, varint, WireType, GROUP_DEPTH_LIMIT};

/// What a look at one top-level field found.
#[derive(Debug, PartialEq)]
enum Frame {
    /// The field ends at this offset.
    Ends(usize),
    /// The bytes so far end inside it; `Some(n)`: it ends at `n`.
    Short(Option<usize>),
    /// It cannot be a field, however many bytes follow.
    Bad,
}

/// Reads a varint at `*pos`: `Err(Short)` when `buf` ends inside it.
fn varint_at(buf: &[u8], pos: &mut usize) -> Result<u64, Frame> {
    match varint(&buf[*pos..], &mut 0) {
        Some(_) => {
            let mut len = 0;
            let value = varint(&buf[*pos..], &mut len).expect("just read");
            *pos += len;
            Ok(value)
        }
        // Ten bytes without an end, or a tenth byte past 64 bits: never a varint.
        None if buf.len() - *pos >= 10 => Err(Frame::Bad),
        None => Err(Frame::Short(None)),
    }
}

/// A top-level message read a field at a time.
pub(super) trait TopLevel: Message + Default {
    /// Its map fields, which prost reads as a length prefix and an entry
    /// whatever wire type their key says (`wire::fields`' `MAPS`).
    const MAPS: &'static [u32];
}

impl TopLevel for crate::ommx_v1::Instance {
    const MAPS: &'static [u32] = &crate::wire::fields::instance::MAPS;
}

impl TopLevel for crate::ommx_v2::Instance {
    const MAPS: &'static [u32] = &crate::wire::fields::v2::instance::MAPS;
}

/// Where the field whose key starts at `start` ends, groups nested at most
/// [`GROUP_DEPTH_LIMIT`] deep counting `depth` levels above; at the top
/// level, a field of one of the message's `maps` is a length prefix and an
/// entry whatever its key's wire type, as prost reads it.
fn frame_at(buf: &[u8], start: usize, depth: u32, maps: &[u32]) -> Frame {
    let mut pos = start;
    let inner = |pos: &mut usize| -> Result<Frame, Frame> {
        let (number, wire_type) = key(varint_at(buf, pos)?).map_err(|_| Frame::Bad)?;
        let need = |pos: &usize, n: u64| {
            let end = usize::try_from(n)
                .ok()
                .and_then(|n| pos.checked_add(n))
                .ok_or(Frame::Bad)?;
            Ok(if end <= buf.len() {
                Frame::Ends(end)
            } else {
                Frame::Short(Some(end))
            })
        };
        if depth == 0 && maps.contains(&number) {
            let len = varint_at(buf, pos)?;
            return need(pos, len);
        }
        match wire_type {
            WireType::Varint => {
                varint_at(buf, pos)?;
                Ok(Frame::Ends(*pos))
            }
            WireType::Fixed64 => need(pos, 8),
            WireType::Fixed32 => need(pos, 4),
            WireType::Len => {
                let len = varint_at(buf, pos)?;
                need(pos, len)
            }
            WireType::StartGroup if depth < GROUP_DEPTH_LIMIT => loop {
                let at = *pos;
                let mut peek = at;
                let (inner, inner_type) =
                    key(varint_at(buf, &mut peek)?).map_err(|_| Frame::Bad)?;
                if inner_type == WireType::EndGroup {
                    return if inner == number {
                        Ok(Frame::Ends(peek))
                    } else {
                        Err(Frame::Bad)
                    };
                }
                match frame_at(buf, at, depth + 1, &[]) {
                    Frame::Ends(end) => *pos = end,
                    Frame::Short(_) => return Err(Frame::Short(None)),
                    Frame::Bad => return Err(Frame::Bad),
                }
            },
            WireType::StartGroup | WireType::EndGroup => Err(Frame::Bad),
        }
    };
    match inner(&mut pos) {
        Ok(frame) | Err(frame) => frame,
    }
}

/// Where a reading of `bytes` as the message `M` stops: the start of the
/// first top-level field that does not decode as `M`'s, or the end.
pub(super) fn reach<M: TopLevel>(bytes: &[u8]) -> usize {
    let mut message = M::default();
    let mut pos = 0;
    while pos < bytes.len() {
        match frame_at(bytes, pos, 0, M::MAPS) {
            Frame::Ends(end) if message.merge(&bytes[pos..end]).is_ok() => pos = end,
            _ => return pos,
        }
    }
    pos
}

/// Why a payload read by [`read_fields`] stopped.
#[derive(Debug)]
pub(super) enum Stop {
    Io(io::Error),
    /// A field does not decode: prost's error.
    Decode(String),
    /// A stream longer than the element limit.
    TooLarge(u64),
}

/// A payload read field by field: the bytes read, and how far they decoded.
pub(super) struct Fields<M> {
    pub bytes: Vec<u8>,
    pub message: M,
    /// Where the reading stopped: the end, or the start of the field that
    /// did not decode.
    pub reached: usize,
}

/// Bytes asked of the reader at a time, at least.
const CHUNK: usize = 64 << 10;

/// Reads a message `M` from `reader` (of `total` bytes when known; longer
/// than `cap` bytes refused), merging each top-level field as it completes.
/// On failure, what was read and where it stopped come with the reason.
pub(super) fn read_fields<M: TopLevel>(
    reader: &mut dyn Read,
    total: Option<u64>,
    cap: Option<u64>,
) -> Result<Fields<M>, (Fields<M>, Stop)> {
    let mut read = Fields {
        bytes: Vec::with_capacity(total.unwrap_or(0).min(1 << 26) as usize),
        message: M::default(),
        reached: 0,
    };
    let mut ended = false;
    loop {
        let pos = read.reached;
        let held = read.bytes.len();
        let frame = match frame_at(&read.bytes, pos, 0, M::MAPS) {
            _ if pos == held => Frame::Short(None),
            // Past what the container holds: cut short, whatever follows.
            Frame::Short(Some(end)) if total.is_some_and(|t| end as u64 > t) => Frame::Bad,
            frame => frame,
        };
        match frame {
            Frame::Ends(end) => match read.message.merge(&read.bytes[pos..end]) {
                Ok(()) => read.reached = end,
                Err(e) => return Err((read, Stop::Decode(e.to_string()))),
            },
            Frame::Short(_) if pos == held && ended => return Ok(read),
            Frame::Short(need) if !ended => {
                // Longer than the limit, or a field claiming to end past it:
                // refused without reading on.
                let past = need.map_or(held as u64, |n| n as u64);
                if let Some(cap) = cap.filter(|&c| past > c) {
                    return Err((read, Stop::TooLarge(cap)));
                }
                // The field's end when known, else twice what is held (a
                // group): a field is looked at a bounded number of times.
                let want = need.unwrap_or(0).max(held * 2).saturating_sub(held);
                let room = cap.map_or(u64::MAX, |c| c + 1 - held as u64);
                let more = (want.max(CHUNK) as u64).min(room);
                match reader.take(more).read_to_end(&mut read.bytes) {
                    Ok(n) => ended = (n as u64) < more,
                    Err(e) => return Err((read, Stop::Io(e))),
                }
            }
            // Not a field, or cut short by the end of the data: prost says why.
            Frame::Short(_) | Frame::Bad => {
                let why = match read.message.merge(&read.bytes[pos..]) {
                    Err(e) => e.to_string(),
                    // The framing above reads as prost does; should they
                    // ever part, the field is still refused.
                    Ok(()) => format!("the field at byte {pos} is malformed"),
                };
                return Err((read, Stop::Decode(why)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ommx_v1 as pb1;
    use crate::ommx_v2 as pb2;

    /// Hands out one byte at a time, counting what it gave.
    struct Trickle<'a> {
        bytes: &'a [u8],
        given: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some(&b) = self.bytes.get(self.given) else {
                return Ok(0);
            };
            buf[0] = b;
            self.given += 1;
            Ok(1)
        }
    }

    fn some_v2() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/v2/oracle/everything.pb"
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_payload_read_field_by_field_is_the_payload_decoded_whole() {
        let bytes = some_v2();
        let whole = pb2::Instance::decode(bytes.as_slice()).unwrap();
        for total in [None, Some(bytes.len() as u64)] {
            let mut trickle = Trickle {
                bytes: &bytes,
                given: 0,
            };
            let read = read_fields::<pb2::Instance>(&mut trickle, total, None)
                .map_err(|(_, stop)| stop)
                .unwrap();
            assert_eq!(read.message, whole);
            assert_eq!((read.bytes, read.reached), (bytes.clone(), bytes.len()));
        }
        // An unknown group, nested, is skipped as prost skips it.
        let grouped = [&bytes[..], &[0x7b, 0x7b, 0x08, 0x01, 0x7c, 0x7c]].concat();
        let read = read_fields::<pb2::Instance>(&mut &grouped[..], None, None)
            .map_err(|(_, stop)| stop)
            .unwrap();
        assert_eq!(read.message, whole);
    }

    /// prost reads a map field's value as a length prefix and an entry
    /// whatever wire type its key gives (OMMX then accepts it): so does the
    /// framing, for both schemas' top-level maps.
    #[test]
    fn a_top_level_map_is_length_delimited_whatever_its_key_says() {
        use crate::wire::fields::{instance, v2};
        // A dependency's entry (variable 7, an empty function), and an
        // annotation's ("k", "v").
        let entries: [&[u8]; 2] = [
            &[0x08, 0x07, 0x12, 0x00],
            &[0x0a, 0x01, b'k', 0x12, 0x01, b'v'],
        ];
        let bytes = some_v2();
        for wire_type in [0, 1, 3, 4, 5] {
            for (&number, entry) in v2::instance::MAPS.iter().zip(entries) {
                let key = (number << 3 | wire_type) as u8;
                let payload = [&bytes[..], &[key, entry.len() as u8], entry].concat();
                let whole = pb2::Instance::decode(payload.as_slice()).unwrap();
                let read = read_fields::<pb2::Instance>(&mut &payload[..], None, None)
                    .map_err(|(_, stop)| stop)
                    .unwrap();
                assert_eq!((read.message, read.reached), (whole, payload.len()));
                assert_eq!(reach::<pb2::Instance>(&payload), payload.len());
            }
            let entry = entries[1];
            let key = (instance::ANNOTATIONS << 3 | wire_type) as u8;
            let v1 = [&[key, entry.len() as u8][..], entry].concat();
            pb1::Instance::decode(v1.as_slice()).unwrap();
            assert_eq!(reach::<pb1::Instance>(&v1), v1.len());
        }
    }

    #[test]
    fn a_reading_stops_at_the_first_field_that_is_not_one() {
        // Zeros forever: field number 0 at byte 0, after one chunk.
        let mut zeros = io::repeat(0).take(1 << 30);
        let (read, stop) = read_fields::<pb2::Instance>(&mut zeros, None, Some(32 << 20))
            .err()
            .unwrap();
        assert_eq!(read.reached, 0);
        assert!(read.bytes.len() <= CHUNK, "{}", read.bytes.len());
        assert!(matches!(stop, Stop::Decode(ref why) if why.contains("invalid tag value: 0")));
        // A length past the element limit: refused before its bytes.
        let mut long = io::Cursor::new([0x12, 0xff, 0xff, 0xff, 0x7f]).chain(io::repeat(1));
        let (read, stop) = read_fields::<pb2::Instance>(&mut long, None, Some(1 << 20))
            .err()
            .unwrap();
        assert!(matches!(stop, Stop::TooLarge(_)));
        assert!(read.bytes.len() <= CHUNK, "{}", read.bytes.len());
        // Cut short: prost's own words.
        let bytes = some_v2();
        let cut = &bytes[..bytes.len() - 1];
        let (_, stop) = read_fields::<pb2::Instance>(&mut &cut[..], Some(cut.len() as u64), None)
            .err()
            .unwrap();
        let prost = pb2::Instance::decode(cut).unwrap_err().to_string();
        assert!(
            matches!(stop, Stop::Decode(ref why) if *why == prost),
            "{stop:?}"
        );
    }

    #[test]
    fn reach_is_where_a_schema_stops_decoding_top_level_fields() {
        // A v2 description holding created_by, an empty variable table, then
        // an objective: as v1, a variable (whose name is that string), an
        // empty objective, then a constraint whose field 2 has the wrong
        // wire type.
        let bytes = hex::decode("12032201631a00220f120d0a0b080511000000000000f03f3001").unwrap();
        assert_eq!(reach::<pb2::Instance>(&bytes), bytes.len());
        assert_eq!(reach::<pb1::Instance>(&bytes), 7);
        assert_eq!(reach::<pb1::Instance>(&[0, 1, 2]), 0);
        assert_eq!(reach::<pb1::Instance>(&[]), 0);
    }
}
