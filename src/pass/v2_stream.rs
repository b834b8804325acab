//! An `ommx.v2` payload from a stream (standard input, gzip data, a
//! compressed archive layer), spooled: copied to an unlinked temporary file
//! as it arrives, a bounded buffer at a time, by the pass's [`Spooler`], so
//! that [`super::v2_file`] reads it a table entry at a time as it reads a
//! regular file.
//!
//! What that reading declines is read whole, as the stream would have been,
//! from an [`Arrival`]: what is held, then the copy, then what the stream
//! still holds, or the error it stopped on: the same bytes in the same
//! order, with the same error at their end, so the same answer (the stream
//! is never held beside its copy). Short payloads are held and read whole:
//! spooling them costs more than it saves. The copy is unlinked from its
//! making, so nothing is left behind, however the reading ends.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use super::objective::Spooler;
use super::v2_file::{v1_misfit, V1_WALK};
use crate::wire::stream::FieldReader;

/// Whether `ommx.v1.Instance` certainly refuses the payload `reader` starts
/// (by the rule a regular file's payload is held to, `v2_file`'s
/// `v1_refuses`): one of its first top-level fields is of a wire type v1's
/// schema does not allow for its number. The fields' bodies are read past,
/// none held; a field longer than `max_element`, or any error, leaves the
/// answer to the readings (false).
pub(super) fn v1_refuses(reader: &mut (dyn Read + Send), max_element: Option<u64>) -> bool {
    let mut fields = FieldReader::new(reader, None).with_max_len(max_element);
    for _ in 0..V1_WALK {
        let Ok(Some((number, wire_type))) = fields.next_field() else {
            return false;
        };
        if v1_misfit(number, wire_type) {
            return true;
        }
        if fields.skip(number, wire_type).is_err() {
            return false;
        }
    }
    false
}

/// Payloads from a stream up to this long (or the pass's spool threshold,
/// when lower: `MEMPROF_SPOOL_ABOVE`, which the tests set to 0) are held
/// and read whole: the whole reading holds them once (no more than the
/// table-entry reading's read-ahead, a MiB, holds on one thread), where
/// spooling would add a temporary file and copy them twice.
pub(super) const HELD_UP_TO: u64 = 1 << 20;

/// Bytes copied from the stream to the temporary file at a time.
const BUFFER: u64 = 256 << 10;

/// A payload as it arrived from its stream: held (short, or when no
/// temporary file could be made or written), or spooled; and how the stream
/// ended. Reads as the stream did, from its start.
pub(super) struct Arrival<'r> {
    held: io::Cursor<Vec<u8>>,
    /// The copy, read from its start (`len` bytes), and `len`.
    spooled: Option<(io::Take<File>, u64)>,
    tail: Tail<'r>,
}

/// What follows what arrived.
enum Tail<'r> {
    /// The stream's end.
    Ended,
    /// The error the stream stopped on (`None` once told).
    Failed(Option<io::Error>),
    /// The rest of the stream, unread: past the limit, the whole reading
    /// refuses it after reading no more than it needs.
    Rest(&'r mut (dyn Read + Send)),
}

impl<'r> Arrival<'r> {
    /// Reads `reader` to its end, or past `cap` bytes (`--max-element`:
    /// the whole reading refuses a payload from a stream past it), or to
    /// its error, spooling it when it is longer than `held_up_to`.
    pub(super) fn take(
        reader: &'r mut (dyn Read + Send),
        held_up_to: u64,
        cap: Option<u64>,
    ) -> Self {
        let mut held = Vec::new();
        let head = (&mut *reader).take(held_up_to + 1).read_to_end(&mut held);
        let arrived = |held, tail| Self {
            held: io::Cursor::new(held),
            spooled: None,
            tail,
        };
        match head {
            Err(e) => return arrived(held, Tail::Failed(Some(e))),
            Ok(_) if held.len() as u64 <= held_up_to => return arrived(held, Tail::Ended),
            Ok(_) => {}
        }
        let Some(mut spooler) = Spooler::new() else {
            return arrived(held, Tail::Rest(reader));
        };
        spooler.write(&held);
        let mut len = held.len() as u64;
        drop(held);
        let mut buf = vec![0; BUFFER as usize];
        let tail = loop {
            let room = cap.map_or(BUFFER, |c| (c + 1).saturating_sub(len).min(BUFFER));
            if room == 0 {
                break Tail::Rest(reader);
            }
            match reader.read(&mut buf[..room as usize]) {
                Ok(0) => break Tail::Ended,
                Ok(n) => {
                    spooler.write(&buf[..n]);
                    len += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Tail::Failed(Some(e)),
            }
        };
        let rewound = |(mut file, len): (File, u64)| {
            file.seek(SeekFrom::Start(0))?;
            Ok::<_, io::Error>((file.take(len), len))
        };
        let finished = spooler.finish_file().and_then(|f| match f {
            Ok(spooled) => rewound(spooled).map(Ok),
            Err(held) => Ok(Err(held)),
        });
        match finished {
            Ok(Ok(spooled)) => Self {
                held: io::Cursor::new(Vec::new()),
                spooled: Some(spooled),
                tail,
            },
            Ok(Err(held)) => arrived(held, tail),
            // The copy cannot be read back: the payload is lost with it.
            Err(e) => arrived(Vec::new(), Tail::Failed(Some(e))),
        }
    }

    /// The copy and its length, when it is the whole payload: the stream
    /// ended within the limit, without an error.
    pub(super) fn spooled(&self) -> Option<(&File, u64)> {
        match (&self.spooled, &self.tail) {
            (Some((file, len)), Tail::Ended) => Some((file.get_ref(), *len)),
            _ => None,
        }
    }
}

impl Read for Arrival<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.held.read(buf)?;
        if n > 0 || buf.is_empty() {
            return Ok(n);
        }
        if let Some((file, _)) = &mut self.spooled {
            let n = file.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
        }
        match &mut self.tail {
            Tail::Ended => Ok(0),
            Tail::Failed(e) => Err(e
                .take()
                .unwrap_or_else(|| io::Error::other("the stream failed"))),
            Tail::Rest(reader) => reader.read(buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_v1_certainly_refuses_is_told_by_its_first_fields() {
        use crate::wire::fields::instance as v1;
        use prost::encoding::{bytes, uint64};
        let read = |bytes: &[u8], max: Option<u64>| v1_refuses(&mut io::Cursor::new(bytes), max);
        // Every raw v2 fixture 3.0 wrote, and no v1 one.
        for path in crate::fixtures::raw_v2() {
            let payload = std::fs::read(&path).unwrap();
            let written_by_3 = !payload.is_empty();
            assert_eq!(read(&payload, None), written_by_3, "{}", path.display());
        }
        let oracle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oracle");
        for entry in std::fs::read_dir(oracle).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "pb") {
                let payload = std::fs::read(&path).unwrap();
                assert!(!read(&payload, None), "{}", path.display());
            }
        }
        // A varint as v1's `parameters` (a message), after a long field
        // whose body is read past, not held.
        let mut payload = Vec::new();
        bytes::encode(v1::CONSTRAINTS, &vec![0x0a; 3 << 20], &mut payload);
        uint64::encode(v1::PARAMETERS, &1, &mut payload);
        assert!(read(&payload, None));
        // Unless it is past the element limit, or the stream ends first.
        assert!(!read(&payload, Some(1 << 20)));
        assert!(!read(&payload[..1_000], None));
        // Only the first fields are looked at.
        let mut late = Vec::new();
        for _ in 0..V1_WALK {
            bytes::encode(v1::DECISION_VARIABLES, &vec![8, 1], &mut late);
        }
        uint64::encode(v1::PARAMETERS, &1, &mut late);
        assert!(!read(&late, None));
    }

    /// A stream of `data` that fails after it when `fails`.
    struct Stream {
        data: io::Cursor<Vec<u8>>,
        fails: bool,
    }

    impl Read for Stream {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.data.read(buf)? {
                0 if self.fails && !buf.is_empty() => Err(io::Error::other("broken")),
                n => Ok(n),
            }
        }
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn arrive(len: usize, fails: bool, cap: Option<u64>) -> (Vec<u8>, Option<u64>, String) {
        let mut stream = Stream {
            data: io::Cursor::new(data(len)),
            fails,
        };
        let mut arrival = Arrival::take(&mut stream, HELD_UP_TO, cap);
        let spooled = arrival.spooled().map(|(_, len)| len);
        let mut again = Vec::new();
        let end = match arrival.read_to_end(&mut again) {
            Ok(_) => "ended".to_string(),
            Err(e) => e.to_string(),
        };
        (again, spooled, end)
    }

    #[test]
    fn short_payloads_are_held() {
        let (again, spooled, end) = arrive(1000, false, None);
        assert_eq!((again, spooled, end.as_str()), (data(1000), None, "ended"));
    }

    #[test]
    fn long_payloads_are_spooled_and_read_again_whole() {
        let len = 3 << 20;
        let (again, spooled, end) = arrive(len, false, Some(4 << 20));
        assert_eq!(spooled, Some(len as u64));
        assert_eq!((again == data(len), end.as_str()), (true, "ended"));
    }

    #[test]
    fn below_the_threshold_payloads_are_spooled_when_the_pass_spools_all() {
        let mut stream = io::Cursor::new(data(1000));
        let arrival = Arrival::take(&mut stream, 0, None);
        assert_eq!(arrival.spooled().map(|(_, len)| len), Some(1000));
    }

    #[test]
    fn a_failed_stream_reads_again_to_its_error() {
        for len in [10, 3 << 20] {
            let (again, spooled, end) = arrive(len, true, None);
            assert_eq!(spooled, None, "not the whole payload");
            assert_eq!((again == data(len), end.as_str()), (true, "broken"));
        }
    }

    #[test]
    fn past_the_limit_the_rest_stays_in_the_stream() {
        let len = 3 << 20;
        let (again, spooled, end) = arrive(len, false, Some(2 << 20));
        assert_eq!(spooled, None, "refused by the whole reading");
        assert_eq!((again == data(len), end.as_str()), (true, "ended"));
    }
}
