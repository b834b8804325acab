//! The instance's singular fields as the stream carried them, and the
//! objective read from them on the wire.
//!
//! protobuf lets a singular field come in pieces anywhere in the stream,
//! merged in order, so they are kept until the end. Each piece is kept as it
//! was framed (no copy into one buffer), except a large objective piece,
//! which a [`Spooler`] copies to an unlinked temporary file as it is read,
//! so that memory does not hold it. At the end the objective's pieces are
//! read by [`crate::pass::terms`] (from the file, a window at a time, for
//! a spooled one) and the other fields, small, are decoded by prost.
//! Whatever the wire reader does not vouch for is decoded by prost as one
//! message, as before, for the same result or error (spooled pieces are
//! then read back).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use prost::{encoding, Message};

use crate::ommx_v1 as pb;
use crate::pass::terms::spooled::{SpooledArm, SpooledFunction};
use crate::pass::terms::{self, Arm};
use crate::wire::fields::instance;
use crate::wire::{tag, WireType};

/// Objective pieces longer than this are spooled to a temporary file when
/// the pass only counts the objective (the environment variable
/// `pass::Settings::spool_above` moves it; tests set it low).
pub const SPOOL_ABOVE: u64 = 32 << 20;

/// Where the input is a regular file read on every thread, an objective
/// piece (or constraint) that would be spooled is read in place, in the
/// input file, a window at a time, above this lower threshold: holding it
/// costs a fresh buffer of its size, whose pages the kernel must zero
/// (qubo_2m's 23.8 MB objective: 6,000 page faults).
pub const IN_PLACE_ABOVE: u64 = 4 << 20;

/// The singular fields (and map entries) of an Instance, in stream order.
#[derive(Default)]
pub struct Singulars {
    parts: Vec<Part>,
    len: usize,
}

/// One singular field.
pub enum Part {
    /// Re-encoded as an Instance field.
    Field(Vec<u8>),
    /// The body of an objective field, in a temporary file.
    Spooled(SpooledFunction),
}

impl Part {
    /// Whether it is an objective field (a spooled part always is).
    fn is_objective(&self) -> bool {
        self.held()
            .is_none_or(|b| Singulars::objective_body(b).is_some())
    }

    /// Its bytes as an Instance field, when held.
    fn held(&self) -> Option<&[u8]> {
        match self {
            Part::Field(bytes) => Some(bytes),
            Part::Spooled(_) => None,
        }
    }

    /// Its length encoded as an Instance field.
    pub fn encoded_len(&self) -> usize {
        match self {
            Part::Field(_) => self.held().map_or(0, <[u8]>::len),
            Part::Spooled(s) => {
                1 + encoding::encoded_len_varint(s.len())
                    + usize::try_from(s.len()).unwrap_or(usize::MAX)
            }
        }
    }
}

/// The objective as the wire gave it.
pub enum WireObjective<'a> {
    /// No objective field at all.
    Missing,
    /// Read on the wire: the final arm (checked in full) and its pieces.
    Pieces {
        arm: Option<Arm<'a>>,
        pieces: Vec<&'a [u8]>,
    },
    /// Spooled, and read there: its final arm, checked in full.
    Spooled(SpooledArm),
    /// Decoded by prost.
    Decoded(pb::Function),
}

/// Why the singular fields could not be decoded.
pub enum SingularsError {
    /// prost's error for the whole of them.
    Decode(prost::DecodeError),
    /// A spooled objective piece could not be read back.
    Spool(io::Error),
}

/// Copies the body of a large objective (or constraint) field, or an
/// `ommx.v2` payload from a stream (`pass::v2_stream`), to an unlinked
/// temporary file as the stream goes by; should writing fail, it holds the
/// rest.
pub struct Spooler {
    file: Option<File>,
    written: u64,
    held: Vec<u8>,
    failed: Option<io::Error>,
}

impl Spooler {
    /// `None` when no temporary file can be made.
    pub fn new() -> Option<Self> {
        Some(Self {
            file: Some(tempfile::tempfile().ok()?),
            written: 0,
            held: Vec::new(),
            failed: None,
        })
    }

    pub fn write(&mut self, bytes: &[u8]) {
        if let Some(file) = &mut self.file {
            if file.write_all(bytes).is_ok() {
                self.written += bytes.len() as u64;
                return;
            }
            // Hold what was written, and the rest.
            let mut file = self.file.take().expect("checked above");
            let read = file
                .seek(SeekFrom::Start(0))
                .and_then(|_| (&mut file).take(self.written).read_to_end(&mut self.held));
            if let Err(e) = read {
                self.failed = Some(e);
            }
        }
        if self.failed.is_none() {
            self.held.extend_from_slice(bytes);
        }
    }

    /// The objective field read.
    pub fn finish(self) -> io::Result<Part> {
        Ok(match self.finish_body()? {
            Ok(spooled) => Part::Spooled(spooled),
            Err(held) => {
                let mut field = objective_header(held.len() as u64);
                field.extend_from_slice(&held);
                Part::Field(field)
            }
        })
    }

    /// The body read: in the file, or held (`Err`) should writing have
    /// failed.
    pub fn finish_body(self) -> io::Result<Result<SpooledFunction, Vec<u8>>> {
        Ok(self
            .finish_file()?
            .map(|(file, len)| SpooledFunction::new(file, len)))
    }

    /// The bytes written: the file and their length, or held (`Err`)
    /// should writing have failed.
    pub fn finish_file(self) -> io::Result<Result<(File, u64), Vec<u8>>> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        Ok(match self.file {
            Some(file) => Ok((file, self.written)),
            None => Err(self.held),
        })
    }
}

/// The key and length of an objective field whose body is `len` bytes.
fn objective_header(len: u64) -> Vec<u8> {
    let mut field = Vec::with_capacity(11);
    encoding::encode_key(
        instance::OBJECTIVE,
        encoding::WireType::LengthDelimited,
        &mut field,
    );
    encoding::encode_varint(len, &mut field);
    field
}

impl Singulars {
    /// Bytes they take encoded.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the objective's fields as the stream carried them, tag and
    /// length included (a stream may repeat the field; prost merges them).
    pub fn objective_wire_bytes(&self) -> u64 {
        self.parts
            .iter()
            .filter(|p| p.is_objective())
            .map(|p| p.encoded_len() as u64)
            .sum()
    }

    pub fn push(&mut self, part: Part) {
        self.len += part.encoded_len();
        self.parts.push(part);
    }

    /// The objective's body, when `part` is an objective field.
    pub(super) fn objective_body(part: &[u8]) -> Option<&[u8]> {
        // The objective's key is one byte; the length is a varint.
        if part.first() != Some(&tag(instance::OBJECTIVE, WireType::Len)) {
            return None;
        }
        let mut pos = 1;
        let len = crate::wire::varint(part, &mut pos)?;
        (part.len() - pos == usize::try_from(len).ok()?).then(|| &part[pos..])
    }

    /// Decodes the Instance's singular fields (its entity lists empty) and
    /// its objective, a large one checked on up to `threads` threads.
    pub fn decode(
        &mut self,
        threads: usize,
    ) -> Result<(pb::Instance, WireObjective<'_>), SingularsError> {
        if self.parts.iter().any(|p| matches!(p, Part::Spooled(_))) {
            if let Some(read) = self
                .decode_spooled(threads)
                .map_err(SingularsError::Spool)?
            {
                return Ok(read);
            }
            self.load_spooled().map_err(SingularsError::Spool)?;
        }
        if let Some(read) = self.decode_on_wire(threads) {
            return Ok(read);
        }
        let mut all = Vec::with_capacity(self.len);
        for bytes in self.parts.iter().filter_map(Part::held) {
            all.extend_from_slice(bytes);
        }
        let mut instance = pb::Instance::decode(all.as_slice()).map_err(SingularsError::Decode)?;
        let objective = match instance.objective.take() {
            None => WireObjective::Missing,
            Some(f) => WireObjective::Decoded(f),
        };
        Ok((instance, objective))
    }

    /// With a spooled objective piece: the objective's pieces, held or
    /// spooled, as one spooled function read in the file. `None` when the
    /// file reader or prost does not vouch for them.
    fn decode_spooled(
        &self,
        threads: usize,
    ) -> io::Result<Option<(pb::Instance, WireObjective<'static>)>> {
        let mut others = Vec::new();
        let mut held = Vec::new();
        let mut spooled = Vec::new();
        for part in &self.parts {
            match part {
                Part::Field(bytes) => match Self::objective_body(bytes) {
                    Some(body) => held.push((spooled.len(), body)),
                    None => others.extend_from_slice(bytes),
                },
                Part::Spooled(s) => spooled.push(s),
            }
        }
        let function = match (held.as_slice(), spooled.as_slice()) {
            ([], [one]) => one.try_clone()?,
            _ => {
                // In stream order, into one file.
                let mut file = tempfile::tempfile()?;
                let mut len = 0;
                let mut held = held.iter().peekable();
                for i in 0..=spooled.len() {
                    while let Some((_, body)) = held.next_if(|(before, _)| *before == i) {
                        file.write_all(body)?;
                        len += body.len() as u64;
                    }
                    if let Some(s) = spooled.get(i) {
                        s.copy_to(&mut file)?;
                        len += s.len();
                    }
                }
                SpooledFunction::new(file, len)
            }
        };
        let Ok(arm) = function.scan(threads) else {
            return Ok(None);
        };
        let Ok(instance) = pb::Instance::decode(others.as_slice()) else {
            return Ok(None);
        };
        Ok(Some((instance, WireObjective::Spooled(arm))))
    }

    /// Reads the spooled pieces back into memory, in place.
    fn load_spooled(&mut self) -> io::Result<()> {
        for part in &mut self.parts {
            if let Part::Spooled(s) = part {
                let mut field = objective_header(s.len());
                s.append_to(&mut field)?;
                *part = Part::Field(field);
            }
        }
        Ok(())
    }

    fn decode_on_wire(&self, threads: usize) -> Option<(pb::Instance, WireObjective<'_>)> {
        let mut pieces = Vec::new();
        let mut others = Vec::new();
        for part in &self.parts {
            let part = part.held()?;
            match Self::objective_body(part) {
                Some(body) => pieces.push(body),
                None => others.extend_from_slice(part),
            }
        }
        let objective = if pieces.is_empty() {
            WireObjective::Missing
        } else {
            let arm = terms::scan(pieces.iter().copied()).ok()?;
            if let Some(arm) = &arm {
                terms::check_on(arm, threads).ok()?;
            }
            WireObjective::Pieces { arm, pieces }
        };
        let instance = pb::Instance::decode(others.as_slice()).ok()?;
        Some((instance, objective))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(part: &Part) -> Vec<u8> {
        match part {
            Part::Spooled(s) => s.load().unwrap(),
            Part::Field(field) => Singulars::objective_body(field).unwrap().to_vec(),
        }
    }

    #[test]
    fn a_spooler_keeps_every_byte_in_the_file_or_else_in_memory() {
        let pieces: [&[u8]; 3] = [b"\x12\x05", b"\x0a\x03", b"\x08\x01\x00"];
        let mut spooler = Spooler::new().expect("a temporary file");
        pieces.iter().for_each(|p| spooler.write(p));
        let part = spooler.finish().unwrap();
        assert!(matches!(part, Part::Spooled(_)));
        assert_eq!(body(&part), pieces.concat());
        assert_eq!(part.encoded_len(), 2 + 7);

        // A file every write to fails (no space left): held in memory.
        #[cfg(target_os = "linux")]
        {
            let full = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/full")
                .unwrap();
            let mut spooler = Spooler {
                file: Some(full),
                written: 0,
                held: Vec::new(),
                failed: None,
            };
            pieces.iter().for_each(|p| spooler.write(p));
            let part = spooler.finish().unwrap();
            assert!(matches!(part, Part::Field(_)));
            assert_eq!(body(&part), pieces.concat());
            assert_eq!(part.encoded_len(), 2 + 7);
        }
    }
}
