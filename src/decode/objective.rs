//! The instance's singular fields as the stream carried them, and the
//! objective read from them on the wire.
//!
//! protobuf lets a singular field come in pieces anywhere in the stream,
//! merged in order, so they are kept until the end. Each piece is kept as it
//! was framed (no copy into one buffer); at the end the objective's pieces
//! are read by [`crate::decode::terms`] and the other fields, small, are
//! decoded by prost. Whatever the wire reader does not vouch for is decoded
//! by prost as one message, as before, for the same result or error.

use prost::Message;

use crate::decode::terms::{self, Arm};
use crate::ommx_v1 as pb;

/// The singular fields (and map entries) of an Instance, each re-encoded as
/// an Instance field, in stream order.
#[derive(Default)]
pub struct Singulars {
    parts: Vec<Vec<u8>>,
    len: usize,
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
    /// Decoded by prost.
    Decoded(pb::Function),
}

impl Singulars {
    /// Bytes held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, part: Vec<u8>) {
        self.len += part.len();
        self.parts.push(part);
    }

    /// The objective's body, when `part` is an objective field.
    fn objective_body(part: &[u8]) -> Option<&[u8]> {
        // Key 3 << 3 | 2 is one byte; the length is a varint.
        if part.first() != Some(&0x1a) {
            return None;
        }
        let mut pos = 1;
        let mut len = 0u64;
        for i in 0..10 {
            let byte = *part.get(pos)?;
            pos += 1;
            len |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                break;
            }
        }
        (part.len() - pos == usize::try_from(len).ok()?).then(|| &part[pos..])
    }

    /// Decodes the Instance's singular fields (its entity lists empty) and
    /// its objective. `Err` is prost's error for the whole of them.
    pub fn decode(&self) -> Result<(pb::Instance, WireObjective<'_>), prost::DecodeError> {
        if let Some(read) = self.decode_on_wire() {
            return Ok(read);
        }
        let mut all = Vec::with_capacity(self.len);
        for part in &self.parts {
            all.extend_from_slice(part);
        }
        let mut instance = pb::Instance::decode(all.as_slice())?;
        let objective = match instance.objective.take() {
            None => WireObjective::Missing,
            Some(f) => WireObjective::Decoded(f),
        };
        Ok((instance, objective))
    }

    fn decode_on_wire(&self) -> Option<(pb::Instance, WireObjective<'_>)> {
        let mut pieces = Vec::new();
        let mut others = Vec::new();
        for part in &self.parts {
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
                terms::check(arm).ok()?;
            }
            WireObjective::Pieces { arm, pieces }
        };
        let instance = pb::Instance::decode(others.as_slice()).ok()?;
        Some((instance, objective))
    }
}
