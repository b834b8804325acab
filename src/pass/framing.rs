//! The stream cut into batches of top-level elements (framing, on one
//! thread at a time, in stream order) and each batch decoded, normalized
//! and accounted (on any thread).

use std::io::Read;

use prost::{encoding, Message};

use super::accounts::{account_entity, Accounts};
use super::counted::{count_entity, decode_spooled_constraint};
use super::observer::NamedFunction;
use super::Cost;
use crate::model::{
    Constraint, DecisionVariable, FileWaste, Function, ModelError, RemovedConstraint,
};
use crate::ommx_v1 as pb;
use crate::pass::objective::{Part, Spooler};
use crate::pass::terms;
use crate::pass::terms::spooled::{SpooledArm, SpooledFunction};
use crate::pass::InstanceError;
use crate::profile::wire::{self as wire_view, TopLevelField};
use crate::profile::{LogicalMemoryVisitor, Path};
use crate::report::Terms;
use crate::trace::{self, Laps, Phase};
use crate::wire::fields::instance;
use crate::wire::{FieldReader, WireType};

/// Decodes, normalizes and visits (into `aggregate`) every element of a
/// batch, leaving `raw` without elements (its bytes stay until the next
/// batch is framed). Decoding stops at the first error, which ends the
/// batch.
pub(super) fn decode_batch(raw: &mut RawBatch, accounts: &mut Accounts) -> Batch {
    let mut path = Path::new();
    let mut laps = Laps::start();
    let mut items = Vec::with_capacity(raw.elements.len() + 1);
    let last = raw.last.take();
    for element in raw.elements.drain(..) {
        let item = match element {
            RawElement::Rest {
                bytes,
                field,
                value_start,
                tag_bytes,
                wire_bytes,
            } => {
                if let Some(wire) = &mut accounts.wire {
                    let element = TopLevelField {
                        number: field,
                        tag_bytes,
                        wire_bytes,
                        body: value_start.map(|start| &bytes[start..]),
                    };
                    wire_view::visit_top_level(element, None, &mut path, wire);
                }
                Ok(Item::Rest(Part::Field(bytes)))
            }
            RawElement::Spooled(part) => {
                debug_assert!(
                    accounts.wire.is_none(),
                    "spooled only without the wire view"
                );
                Ok(Item::Rest(part))
            }
            RawElement::SpooledConstraint {
                body,
                offset,
                tag_bytes,
                wire_bytes,
            } => decode_spooled_constraint(
                &body,
                offset,
                (tag_bytes, wire_bytes),
                &mut path,
                accounts,
                &mut laps,
            ),
            RawElement::Unknown { wire_bytes } => {
                if let Some(wire) = &mut accounts.wire {
                    let unknown = path.with(wire_view::UNKNOWN);
                    wire.visit_leaf(&unknown, wire_bytes as usize);
                }
                continue;
            }
            RawElement::Entity {
                field,
                start,
                end,
                offset,
                tag_bytes,
                wire_bytes,
            } => decode_entity(
                TopLevelField {
                    number: field,
                    tag_bytes,
                    wire_bytes,
                    body: Some(&raw.arena[start..end]),
                },
                offset,
                &mut path,
                accounts,
                &mut laps,
            ),
        };
        let failed = item.is_err();
        items.push(item);
        if failed {
            break;
        }
    }
    laps.finish();
    raw.elements.clear();
    if !items.last().is_some_and(Result::is_err) {
        match last {
            None => {}
            Some(Ok(offset)) => items.push(Ok(Item::End(offset))),
            Some(Err(e)) => items.push(Err(e)),
        }
    }
    items
}

pub(super) fn decode_entity(
    element: TopLevelField<'_>,
    offset: u64,
    path: &mut Path,
    accounts: &mut Accounts,
    laps: &mut Laps,
) -> Result<Item, InstanceError> {
    let bytes = element.body.unwrap_or_default();
    if let Some(counted) = count_entity(element.number, bytes, path, accounts, laps) {
        return counted;
    }
    Ok(match element.number {
        instance::DECISION_VARIABLES => {
            let v = decode("decision_variables", bytes, offset)?;
            laps.lap(Phase::Decode);
            let v = DecisionVariable::from_wire(v)?;
            laps.lap(Phase::Normalize);
            let frame = "Instance.decision_variables";
            let cost = account_entity(frame, v.name.as_deref(), &v, element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Variable(Box::new(v), cost)
        }
        instance::CONSTRAINTS => {
            // The function read on the wire, the rest by prost; prost alone
            // for what the wire reader leaves to it.
            let read = terms::constraint(bytes, terms::decode_field::<pb::Constraint>);
            let (c, waste) = match read {
                Ok(read) => {
                    laps.lap(Phase::Decode);
                    read?
                }
                Err(terms::Unsupported) => {
                    let c = decode("constraints", bytes, offset)?;
                    laps.lap(Phase::Decode);
                    Constraint::from_wire_measured(c)?
                }
            };
            laps.lap(Phase::Normalize);
            let frame = "Instance.constraints";
            let cost = account_entity(frame, c.name.as_deref(), &c, element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Constraint(Box::new(c), Cost { waste, ..cost })
        }
        instance::REMOVED_CONSTRAINTS => {
            let r = decode("removed_constraints", bytes, offset)?;
            laps.lap(Phase::Decode);
            let (r, waste) = RemovedConstraint::from_wire_measured(r)?;
            laps.lap(Phase::Normalize);
            let frame = "Instance.removed_constraints";
            let name = r.constraint.name.as_deref();
            let cost = account_entity(frame, name, &r, element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Removed(Box::new(r), Cost { waste, ..cost })
        }
        _ => {
            let mut wire: pb::NamedFunction = decode("named_functions", bytes, offset)?;
            laps.lap(Phase::Decode);
            let function = wire
                .function
                .take()
                .ok_or_else(|| ModelError::MissingFunction {
                    what: format!("named function {}", wire.id),
                })?;
            let normalized = Function::from_wire(&function)?;
            let mut waste = FileWaste::of(&function, &normalized);
            if waste.bytes > 0 {
                waste = waste.within(crate::model::waste::named_rest(&wire));
            }
            let pb::NamedFunction {
                id,
                function: _,
                subscripts,
                parameters,
                name,
                description,
            } = wire;
            let named = NamedFunction {
                id,
                function: normalized,
                name,
                subscripts,
                parameters: parameters.into_iter().collect(),
                description,
            };
            laps.lap(Phase::Normalize);
            // 2.9.3 does not count named functions in memory; their bytes
            // are in the file all the same.
            if let Some(wire) = &mut accounts.wire {
                wire_view::visit_top_level(element, None, path, wire);
            }
            laps.lap(Phase::Aggregate);
            Item::Named(
                Box::new(named),
                Cost {
                    bytes: 0,
                    wire_bytes: element.wire_bytes,
                    waste,
                },
            )
        }
    })
}

pub(super) type Batch = Vec<Result<Item, InstanceError>>;

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
            RawElement::Spooled(_)
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

/// One decoded top-level element, in stream order.
pub(super) enum Item {
    // Boxed: items move twice between threads, and most are small.
    Variable(Box<DecisionVariable>, Cost),
    Constraint(Box<Constraint>, Cost),
    Removed(Box<RemovedConstraint>, Cost),
    Named(Box<NamedFunction>, Cost),
    /// A variable counted on the wire (its id).
    CountedVariable(u64),
    /// A constraint counted on the wire: its id, the variables of its
    /// stored terms, each once (in any order for a `linear` function, else
    /// in the order its normalized terms first use them), and the number of
    /// its stored terms.
    CountedConstraint {
        id: u64,
        ids: Vec<u64>,
        linear: bool,
        terms: Terms,
    },
    /// A constraint counted from the file it was spooled to: its id, where
    /// it ends in the stream, its function (whose variables are still to
    /// be checked; every stored term's is below `ids_below`), and the number
    /// of its stored terms.
    SpooledConstraint {
        id: u64,
        offset: u64,
        function: Option<Box<SpooledArm>>,
        ids_below: u64,
        terms: Terms,
    },
    /// A singular field or map entry.
    Rest(Part),
    /// The end of the stream, at this offset.
    End(u64),
}

/// Elements per batch handed from the framing to the decoding step.
pub(super) const BATCH: usize = 4096;
/// Elements larger than this are decoded one at a time ([`LargeToken`]).
const BATCH_BYTES: usize = 4 << 20;
/// Encoded entity bytes per batch, so a few large elements do not pile up.
const BATCH_FILL: usize = 256 << 10;

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
    /// A large objective field, spooled to a temporary file as it was
    /// read (never with the wire view, which reads its bytes).
    Spooled(Part),
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
    arena: Vec<u8>,
    elements: Vec<RawElement>,
    pub(super) last: Option<Result<u64, InstanceError>>,
    /// Objective fields longer than this are spooled (`None`: none is).
    spool_above: Option<u64>,
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
        // The singular fields (and maps) that are messages.
        instance::DESCRIPTION
        | instance::OBJECTIVE
        | instance::PARAMETERS
        | instance::CONSTRAINT_HINTS
        | instance::DECISION_VARIABLE_DEPENDENCY
        | instance::ANNOTATIONS => {
            expect(field, wire_type, WireType::Len)?;
            let prefix = fields.len_prefix()?;
            if field == instance::OBJECTIVE
                && raw.spool_above.is_some_and(|above| prefix.len > above)
            {
                if let Some(mut spooler) = Spooler::new() {
                    fields.stream_body(prefix, &mut |bytes| spooler.write(bytes))?;
                    let part = spooler.finish().map_err(InstanceError::Spool)?;
                    raw.elements.push(RawElement::Spooled(part));
                    return Ok(true);
                }
            }
            // Read once, behind room for the key and length written after
            // it (a large objective is not copied into a second buffer).
            const ROOM: usize = 15;
            let mut rest = vec![0; ROOM];
            fields.append_body(prefix, &mut rest)?;
            let mut header = Vec::with_capacity(ROOM);
            encoding::encode_key(field, encoding::WireType::LengthDelimited, &mut header);
            encoding::encode_varint((rest.len() - ROOM) as u64, &mut header);
            rest[ROOM - header.len()..ROOM].copy_from_slice(&header);
            rest.drain(..ROOM - header.len());
            let value_start = Some(header.len());
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

/// Decodes the body of one of the Instance's fields as OMMX does: as a
/// field of the Instance, one level down prost's recursion budget, so that
/// unknown groups inside it may nest exactly as deep as OMMX lets them.
fn decode<M: Message + Default>(
    field: &'static str,
    bytes: &[u8],
    offset: u64,
) -> Result<M, InstanceError> {
    terms::decode_field(bytes).map_err(|source| InstanceError::Decode {
        field,
        offset,
        source,
    })
}
