//! The stream cut into batches of top-level elements (framing, on one
//! thread at a time, in stream order), each batch then read on any thread
//! (`decode.rs`); which elements are spooled to a file or read in place
//! rather than held ([`Spooling`]).

use std::io::Read;

use prost::encoding;

use super::accounts::Accounts;
use super::objective::{Part, Spooler};
use super::observer::EntityObserver;
use super::terms::spooled::SpooledFunction;
use super::InstanceError;
use crate::trace::{self, Phase};
use crate::wire::fields::{function, instance};
use crate::wire::{tag, FieldReader, WireType};

/// Whether a batch holding an element larger than [`BATCH_BYTES`] is being
/// decoded or checked somewhere in the process: one such batch at a time,
/// however many threads and inputs there are, since a decoded element can
/// take many times its encoded size (up to `--max-element`).
static LARGE_BUSY: (std::sync::Mutex<bool>, std::sync::Condvar) =
    (std::sync::Mutex::new(false), std::sync::Condvar::new());

/// The right to decode a large element, held until its batch is checked.
pub(super) struct LargeToken;

impl LargeToken {
    /// Waits for the right when `raw` holds a large element.
    pub(super) fn for_batch(raw: &RawBatch) -> Option<Self> {
        let largest = raw.elements.iter().map(|e| match e {
            RawElement::Entity { start, end, .. } => end - start,
            RawElement::Rest { bytes, .. } => bytes.len(),
            RawElement::Spooled { .. }
            | RawElement::SpooledConstraint { .. }
            | RawElement::Unknown { .. } => 0,
        });
        if largest.max().unwrap_or(0) <= BATCH_BYTES {
            return None;
        }
        let (busy, freed) = &LARGE_BUSY;
        let mut busy = busy.lock().unwrap_or_else(|e| e.into_inner());
        while *busy {
            busy = freed.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy = true;
        Some(LargeToken)
    }
}

impl Drop for LargeToken {
    fn drop(&mut self) {
        let (busy, freed) = &LARGE_BUSY;
        *busy.lock().unwrap_or_else(|e| e.into_inner()) = false;
        freed.notify_one();
    }
}

/// Which elements are copied to, or left in, a file and counted there
/// rather than held: objective fields and constraints longer than these
/// (`None`: none).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Spooling {
    pub(super) objective: Option<u64>,
    pub(super) constraints: Option<u64>,
    /// An objective field whose first field is a quadratic part, longer
    /// than this, too (only where it is read in place, [`Spooling::in_file`]).
    pub(super) quadratic: Option<u64>,
}

impl Spooling {
    /// The objective, counted for the analyses too (`finish.rs`), is read
    /// from a file, a window at a time: memory does not hold a large one
    /// (the wire view reads it there too). So is a constraint, when
    /// constraints are counted (no analysis looks at them, nor the wire
    /// view).
    pub(super) fn of<O: EntityObserver + ?Sized>(accounts: &Accounts, observer: &O) -> Self {
        let objective = Some(accounts.spool_above);
        let counted =
            observer.counts_only() && accounts.counting.is_some() && accounts.wire.is_none();
        Self {
            objective,
            constraints: objective.filter(|_| counted),
            quadratic: None,
        }
    }

    /// The thresholds for a regular file read on every thread: what would
    /// be spooled is read in place (nothing is copied: see `ranges.rs`), and
    /// so is a quadratic objective longer than `in_place_above`, whose
    /// buffer would cost more than reading it a window at a time on every
    /// thread (a linear one, held, is read in one pass, not two).
    pub(super) fn in_file(self, in_place_above: u64) -> Self {
        Self {
            quadratic: self.objective.map(|above| above.min(in_place_above)),
            ..self
        }
    }

    pub(super) fn batch(self) -> RawBatch {
        RawBatch {
            quadratic_above: self.quadratic,
            ..RawBatch::spooling_above(self.objective, self.constraints)
        }
    }
}

/// Elements per batch handed from the framing to the decoding step.
pub(super) const BATCH: usize = 4096;
/// Elements larger than this are decoded one at a time ([`LargeToken`]).
const BATCH_BYTES: usize = 4 << 20;
/// Encoded entity bytes per batch, so a few large elements do not pile up.
/// With 512 KiB rather than 256, `report` on the 198 MB LP hands a batch
/// between threads half as often and takes 0.96 of the time, for 4 MiB
/// more at its peak.
const BATCH_FILL: usize = 512 << 10;

/// One framed but undecoded element of a batch.
pub(super) enum RawElement {
    /// An entity field's body, `arena[start..end]`, ending at stream `offset`.
    Entity {
        field: u32,
        start: usize,
        end: usize,
        offset: u64,
        tag_bytes: u64,
        wire_bytes: u64,
    },
    /// A singular field, re-encoded as an Instance field (`bytes`, whose
    /// value starts at `value_start` for a length-delimited field), with
    /// the size of its original encoding.
    Rest {
        bytes: Vec<u8>,
        field: u32,
        value_start: Option<usize>,
        tag_bytes: u64,
        wire_bytes: u64,
    },
    /// A large objective field, left where it lies in a regular file or
    /// spooled to a temporary file as it was read (held, should spooling
    /// fail), with the size of its encoding.
    Spooled {
        part: Part,
        tag_bytes: u64,
        wire_bytes: u64,
    },
    /// A large constraint's body, spooled to a temporary file as it was
    /// read (only when constraints are counted), ending at stream `offset`.
    SpooledConstraint {
        body: SpooledFunction,
        offset: u64,
        tag_bytes: u64,
        wire_bytes: u64,
    },
    /// A field the schema does not know, skipped (`wire_bytes` in all).
    Unknown { wire_bytes: u64 },
}

/// Consecutive elements of the stream, framed by one thread and decoded by
/// another. The last batch ends with the end of the stream or an error.
#[derive(Default)]
pub(super) struct RawBatch {
    /// The entities' bytes, which [`RawElement::Entity`] ranges index.
    pub(super) arena: Vec<u8>,
    pub(super) elements: Vec<RawElement>,
    pub(super) last: Option<Result<u64, InstanceError>>,
    /// Objective fields longer than this are spooled, or left where they
    /// lie in a regular file (`None`: none is).
    spool_above: Option<u64>,
    /// Objective fields that start with a quadratic part and are longer
    /// than this are left where they lie in a regular file (`None`: none).
    quadratic_above: Option<u64>,
    /// Constraints longer than this are spooled (`None`: none is).
    spool_constraints_above: Option<u64>,
}

impl RawBatch {
    /// Batches framed elsewhere over the bytes `arena` (their elements
    /// pushed with [`RawBatch::push`]).
    pub(super) fn over(arena: Vec<u8>) -> Self {
        Self {
            arena,
            ..Self::default()
        }
    }

    /// The bytes the elements are framed over.
    pub(super) fn arena(&mut self) -> &mut Vec<u8> {
        &mut self.arena
    }

    /// Adds an element framed elsewhere.
    pub(super) fn push(&mut self, element: RawElement) {
        self.elements.push(element);
    }

    /// Spooling objective fields and constraints longer than these.
    pub(super) fn spooling_above(objective: Option<u64>, constraints: Option<u64>) -> Self {
        Self {
            spool_above: objective,
            spool_constraints_above: constraints,
            ..Self::default()
        }
    }
}

/// Reads up to one batch of elements, noting the end of the stream or the
/// error that stopped it.
pub(super) fn frame_batch<R: Read>(fields: &mut FieldReader<R>, raw: &mut RawBatch) {
    let _span = trace::span(Phase::Read);
    raw.arena.clear();
    while raw.elements.len() < BATCH && raw.arena.len() < BATCH_FILL {
        match frame_one(fields, raw) {
            Ok(true) => {}
            Ok(false) => {
                raw.last = Some(Ok(fields.offset()));
                return;
            }
            Err(e) => {
                raw.last = Some(Err(e));
                return;
            }
        }
    }
}

/// Frames the next element into `raw`; false at the end of the stream.
pub(super) fn frame_one<R: Read>(
    fields: &mut FieldReader<R>,
    raw: &mut RawBatch,
) -> Result<bool, InstanceError> {
    let element_start = fields.offset();
    let Some((field, wire_type)) = fields.next_field()? else {
        return Ok(false);
    };
    let tag_bytes = fields.offset() - element_start;
    match field {
        // The entities, one element each.
        instance::DECISION_VARIABLES
        | instance::CONSTRAINTS
        | instance::REMOVED_CONSTRAINTS
        | instance::NAMED_FUNCTIONS => {
            expect(field, wire_type, WireType::Len)?;
            let prefix = fields.len_prefix()?;
            let start = raw.arena.len();
            if field == instance::CONSTRAINTS
                && raw
                    .spool_constraints_above
                    .is_some_and(|above| prefix.len > above)
            {
                if let Some(mut spooler) = Spooler::new() {
                    fields.stream_body(prefix, &mut |bytes| spooler.write(bytes))?;
                    match spooler.finish_body().map_err(InstanceError::Spool)? {
                        Ok(body) => {
                            raw.elements.push(RawElement::SpooledConstraint {
                                body,
                                offset: fields.offset(),
                                tag_bytes,
                                wire_bytes: fields.offset() - element_start,
                            });
                            return Ok(true);
                        }
                        Err(held) => raw.arena.extend_from_slice(&held),
                    }
                } else {
                    fields.append_body(prefix, &mut raw.arena)?;
                }
            } else {
                fields.append_body(prefix, &mut raw.arena)?;
            }
            raw.elements.push(RawElement::Entity {
                field,
                start,
                end: raw.arena.len(),
                offset: fields.offset(),
                tag_bytes,
                wire_bytes: fields.offset() - element_start,
            });
        }
        // The singular fields (and maps) that are messages: a map's value
        // is length-delimited whatever its key's wire type, as prost reads it.
        instance::DESCRIPTION
        | instance::OBJECTIVE
        | instance::PARAMETERS
        | instance::CONSTRAINT_HINTS
        | instance::DECISION_VARIABLE_DEPENDENCY
        | instance::ANNOTATIONS => {
            if !instance::MAPS.contains(&field) {
                expect(field, wire_type, WireType::Len)?;
            }
            let prefix = fields.len_prefix()?;
            let long = |above: Option<u64>| above.is_some_and(|above| prefix.len > above);
            let objective = field == instance::OBJECTIVE;
            let quadratic = |fields: &mut FieldReader<R>| {
                let key = tag(function::QUADRATIC, WireType::Len);
                Ok::<_, InstanceError>(fields.peek()? == Some(key))
            };
            if objective
                && (long(raw.spool_above) || long(raw.quadratic_above) && quadratic(fields)?)
            {
                if let Some((file, range)) = fields.leave_body(prefix)? {
                    raw.elements.push(RawElement::Spooled {
                        part: Part::Spooled(SpooledFunction::within(file, range)),
                        tag_bytes,
                        wire_bytes: fields.offset() - element_start,
                    });
                    return Ok(true);
                }
            }
            if objective && long(raw.spool_above) {
                if let Some(mut spooler) = Spooler::new() {
                    fields.stream_body(prefix, &mut |bytes| spooler.write(bytes))?;
                    raw.elements.push(RawElement::Spooled {
                        part: spooler.finish().map_err(InstanceError::Spool)?,
                        tag_bytes,
                        wire_bytes: fields.offset() - element_start,
                    });
                    return Ok(true);
                }
            }
            // Read once, behind its key and length (a large objective is
            // neither copied into a second buffer nor moved).
            let mut rest = Vec::new();
            encoding::encode_key(field, encoding::WireType::LengthDelimited, &mut rest);
            encoding::encode_varint(prefix.len, &mut rest);
            let value_start = Some(rest.len());
            fields.append_body(prefix, &mut rest)?;
            raw.elements.push(RawElement::Rest {
                bytes: rest,
                field,
                value_start,
                tag_bytes,
                wire_bytes: fields.offset() - element_start,
            });
        }
        instance::SENSE | instance::FORMAT_VERSION => {
            expect(field, wire_type, WireType::Varint)?;
            let value = fields.read_varint()?;
            let mut rest = Vec::with_capacity(12);
            encoding::encode_key(field, encoding::WireType::Varint, &mut rest);
            encoding::encode_varint(value, &mut rest);
            raw.elements.push(RawElement::Rest {
                bytes: rest,
                field,
                value_start: None,
                tag_bytes,
                wire_bytes: fields.offset() - element_start,
            });
        }
        _ => {
            fields.skip(field, wire_type)?;
            raw.elements.push(RawElement::Unknown {
                wire_bytes: fields.offset() - element_start,
            });
        }
    }
    Ok(true)
}

fn expect(field: u32, found: WireType, expected: WireType) -> Result<(), InstanceError> {
    if found == expected {
        Ok(())
    } else {
        Err(InstanceError::WireType {
            field,
            found,
            expected,
        })
    }
}
