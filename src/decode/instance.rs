//! Streams one `ommx.v1.Instance` and visits it as OMMX 2.9.3 would hold it.
//!
//! The repeated entity fields (variables, constraints, removed constraints,
//! named functions) are decoded one element at a time, checked, visited and
//! dropped. What remains in memory is what OMMX's cross-entity rules need:
//! the set of variable ids, the constraint ids (and which are removed), the
//! references to variables not defined yet, and the small singular fields
//! (objective, hints, dependencies, ...), which protobuf allows to be split
//! and merged anywhere in the stream and so are decoded at the end.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::sync::mpsc;

use prost::{encoding, Message};

use super::objective::{Singulars, WireObjective};
use super::terms;
use super::wire::{FieldReader, WireError, WireType};
use crate::model::function::Shape;
use crate::model::{
    AcyclicAssignments, Annotations, Constraint, ConstraintHints, DecisionVariable, Description,
    FileWaste, Function, ModelError, OneHot, Parameters, RemovedConstraint, Sos1,
};
use crate::ommx_v1 as pb;
use crate::profile::collections::{leaf, BTREE_MAP, ENUM, SCALAR_8};
use crate::profile::family::{family_frame, GroupBy};
use crate::profile::wire::{self as wire_view, TopLevelField};
use crate::profile::{Aggregate, Frame, LogicalMemoryProfile, LogicalMemoryVisitor, Path};
use crate::trace::{self, Laps, Phase};

/// Why an instance could not be profiled.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("malformed protobuf in {field} (element ending at byte {offset}): {source}")]
    Decode {
        field: &'static str,
        offset: u64,
        source: prost::DecodeError,
    },
    #[error("field {field} has wire type {found:?}, expected {expected:?}")]
    WireType {
        field: u32,
        found: WireType,
        expected: WireType,
    },
    #[error("OMMX 2.9.3 rejects this instance: {0}")]
    Rejected(#[from] ModelError),
    #[error(
        "more than {cap} distinct variable ids are used before they are defined, memprof's \
         limit (OMMX writers store the variables first)"
    )]
    TooManyPending { cap: usize },
    #[error(
        "the instance's singular fields (objective, hints, parameters, ...) together are more \
         than {}, the --max-element limit; raise it if the input is trusted",
        super::limits::size_text(*.limit)
    )]
    SingularTooLarge { limit: u64 },
    #[error(
        "--group-by name: the entities have more than {MAX_FAMILIES} distinct names (or more \
         than 1 MiB of them), memprof's limit; a name that differs for every entity (x_1_2 \
         rather than x with subscripts [1, 2]) is a family of its own"
    )]
    TooManyFamilies,
}

/// Counts a caller may want to show next to the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct InstanceSummary {
    pub variables: u64,
    pub constraints: u64,
    pub removed_constraints: u64,
    pub named_functions: u64,
    /// Stored monomials over the objective, constraints and removed constraints.
    pub terms: u64,
    /// Bytes of the encoded instance.
    pub wire_bytes: u64,
}

/// What a pass produces besides OMMX's logical profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProfileOptions {
    /// Family frames under the entity containers (`--group-by`).
    pub group_by: GroupBy,
    /// Also account the encoded bytes per path (the wire view).
    pub wire: bool,
}

/// The profiles one pass accumulates: the logical one and, when asked, the
/// wire one. Each decoding thread fills its own; they are merged at the end.
#[derive(Debug, Clone)]
pub struct Accounts {
    pub memory: Aggregate,
    /// Encoded bytes per path; `None` unless [`ProfileOptions::wire`].
    pub wire: Option<Aggregate>,
    group_by: GroupBy,
}

impl Accounts {
    pub fn new(options: ProfileOptions) -> Self {
        Self {
            memory: Aggregate::new(),
            wire: options.wire.then(Aggregate::new),
            group_by: options.group_by,
        }
    }

    fn options(&self) -> ProfileOptions {
        ProfileOptions {
            group_by: self.group_by,
            wire: self.wire.is_some(),
        }
    }

    fn merge(&mut self, other: &Accounts) {
        self.memory.merge_under(&[], &other.memory);
        if let (Some(mine), Some(theirs)) = (&mut self.wire, &other.wire) {
            mine.merge_under(&[], theirs);
        }
    }

    /// The family frame of an entity named `name`, when grouping.
    fn family(&self, name: Option<&str>) -> Option<Frame> {
        match self.group_by {
            GroupBy::None => None,
            GroupBy::Name => Some(family_frame(name)),
        }
    }
}

/// A cheap hasher for integer ids (a multiply and a rotate).
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A set of ids: a bitmap for the dense low ids that real instances use
/// (one bit each, about 1 ns a lookup), a hash set for the rest.
#[derive(Default, Clone)]
pub struct IdSet {
    bits: Vec<u64>,
    others: HashSet<u64, BuildHasherDefault<IdHasher>>,
}

/// Ids below this go to the bitmap (at most 16 MiB of bits).
const BITMAP_IDS: u64 = 1 << 27;

impl IdSet {
    pub fn contains(&self, id: &u64) -> bool {
        let id = *id;
        if id < BITMAP_IDS {
            self.bits
                .get((id / 64) as usize)
                .is_some_and(|w| w & (1 << (id % 64)) != 0)
        } else {
            self.others.contains(&id)
        }
    }

    /// Adds `id`; false if it was already there.
    pub fn insert(&mut self, id: u64) -> bool {
        if id < BITMAP_IDS {
            let word = (id / 64) as usize;
            if word >= self.bits.len() {
                // Grow geometrically so a long ascending run stays linear.
                self.bits.resize((word + 1).max(self.bits.len() * 2), 0);
            }
            let mask = 1 << (id % 64);
            let fresh = self.bits[word] & mask == 0;
            self.bits[word] |= mask;
            fresh
        } else {
            self.others.insert(id)
        }
    }
}

/// Who used a variable, for the error message when it turns out undefined.
#[derive(Debug, Clone, Copy)]
enum User {
    Objective,
    Constraint(u64),
    NamedFunction(u64),
}

impl std::fmt::Display for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            User::Objective => write!(f, "the objective"),
            User::Constraint(id) => write!(f, "constraint {id}"),
            User::NamedFunction(id) => write!(f, "named function {id}"),
        }
    }
}

#[derive(Default)]
struct State {
    variables: IdSet,
    constraints: IdSet,
    removed: IdSet,
    named_functions: IdSet,
    /// Variables used before (or without) their definition: each distinct
    /// id once, with its first user, in order of first use.
    pending: Vec<(User, u64)>,
    pending_ids: IdSet,
    summary: InstanceSummary,
}

/// Distinct entity names with `--group-by name`: each is a family frame
/// under its container, with a subtree of its own, in every thread's
/// aggregate and in every output, so they are capped (in stream order, the
/// same whatever the threads).
pub const MAX_FAMILIES: usize = 65_536;
/// Bytes of those distinct names.
pub const MAX_FAMILY_BYTES: usize = 1 << 20;

/// The distinct names seen so far, when grouping by name.
struct Families {
    names: Option<HashSet<Box<str>>>,
    bytes: usize,
}

impl Families {
    fn new(group_by: GroupBy) -> Self {
        Self {
            names: (group_by == GroupBy::Name).then(HashSet::new),
            bytes: 0,
        }
    }

    fn see(&mut self, name: Option<&str>) -> Result<(), InstanceError> {
        let (Some(names), Some(name)) = (&mut self.names, name) else {
            return Ok(());
        };
        if !names.contains(name) {
            self.bytes += name.len();
            names.insert(name.into());
            if names.len() > MAX_FAMILIES || self.bytes > MAX_FAMILY_BYTES {
                return Err(InstanceError::TooManyFamilies);
            }
        }
        Ok(())
    }
}

/// Distinct variable ids that may wait for their definition: a hostile
/// stream of references to undefined variables costs memory per distinct
/// id, up to this.
pub const MAX_PENDING: usize = 1 << 18;

impl State {
    fn uses(&mut self, user: User, function: &Function) -> Result<(), InstanceError> {
        let mut fresh = false;
        function.for_each_variable(|id| {
            if !self.variables.contains(&id) && self.pending_ids.insert(id) {
                self.pending.push((user, id));
                fresh = true;
            }
        });
        if fresh && self.pending.len() > MAX_PENDING {
            // Those defined since no longer wait.
            let variables = &self.variables;
            self.pending.retain(|(_, id)| !variables.contains(id));
            if self.pending.len() > MAX_PENDING {
                return Err(InstanceError::TooManyPending { cap: MAX_PENDING });
            }
        }
        Ok(())
    }

    fn new_constraint(&mut self, id: u64) -> Result<(), ModelError> {
        if self.constraints.contains(&id) || self.removed.contains(&id) {
            return Err(ModelError::DuplicateConstraint(id));
        }
        Ok(())
    }
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
    use prost::bytes::Buf;
    let mut prefix = Vec::with_capacity(10);
    encoding::encode_varint(bytes.len() as u64, &mut prefix);
    let mut buf = Buf::chain(prefix.as_slice(), bytes);
    let mut message = M::default();
    encoding::message::merge(
        encoding::WireType::LengthDelimited,
        &mut message,
        &mut buf,
        encoding::DecodeContext::default(),
    )
    .map_err(|source| InstanceError::Decode {
        field,
        offset,
        source,
    })?;
    Ok(message)
}

/// What one accepted entity costs, for an [`EntityObserver`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Logical bytes under OMMX 2.9.3's accounting, the entity's map key
    /// included (named functions: 0, as 2.9.3 does not count them).
    pub bytes: u64,
    /// Bytes of the encoded element in the file: tag, length prefix and body.
    pub wire_bytes: u64,
    /// What normalizing the entity's function dropped or merged from the
    /// file's terms (zero for variables).
    pub waste: FileWaste,
}

/// A named function as the stream carried it (2.9.3 checks it but does not
/// keep it, so it has no model type of its own).
#[derive(Debug, Clone)]
pub struct NamedFunction {
    pub id: u64,
    pub function: Function,
    pub name: Option<String>,
    pub subscripts: Vec<i64>,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

/// The instance-wide parts, once the stream has ended and they were checked.
pub struct Singular<'a> {
    pub objective: &'a Function,
    /// Logical bytes of the objective.
    pub objective_bytes: u64,
    /// What normalizing the objective dropped or merged from the file.
    pub objective_waste: FileWaste,
    pub hints: &'a ConstraintHints,
    pub dependency: &'a AcyclicAssignments,
    pub parameters: &'a Parameters,
    pub description: &'a Description,
    pub annotations: &'a Annotations,
}

/// An analysis riding on the streaming pass: it sees every entity once,
/// in stream order, after OMMX's checks accepted it, with what it costs.
/// Nothing is kept for it; what it keeps is its own business.
pub trait EntityObserver {
    /// Called before each instance: `layer` is its position among the
    /// archive's instance layers (`None` for raw input).
    fn begin(&mut self, _layer: Option<usize>) {}
    fn variable(&mut self, _variable: &DecisionVariable, _cost: Cost) {}
    fn constraint(&mut self, _constraint: &Constraint, _cost: Cost) {}
    fn removed_constraint(&mut self, _removed: &RemovedConstraint, _cost: Cost) {}
    fn named_function(&mut self, _named: &NamedFunction, _cost: Cost) {}
    /// Called once, after every entity, when the whole instance is accepted.
    fn finish(&mut self, _singular: &Singular<'_>) {}
    /// The analysis' name when it needs ommx.v1 entities (OMMX 2.9.3's
    /// layout); instances counted with OMMX 3.0's accounting are refused.
    fn v1_analysis(&self) -> Option<&'static str> {
        None
    }
    /// How the pass reads instances (raw input's schema, v1's accounting);
    /// set by wrapping the observer in [`super::schema::Reading::with`].
    fn reading(&self) -> super::schema::Reading {
        super::schema::Reading::default()
    }
    /// True when the observer looks at no objective: the pass may then count
    /// the objective's terms on the wire without building it, and does not
    /// call [`EntityObserver::finish`].
    fn counts_only(&self) -> bool {
        false
    }
}

/// The observer of a plain profile: sees nothing.
impl EntityObserver for () {
    fn counts_only(&self) -> bool {
        true
    }
}

/// One decoded top-level element, in stream order.
enum Item {
    Variable(DecisionVariable, Cost),
    Constraint(Constraint, Cost),
    Removed(RemovedConstraint, Cost),
    Named(NamedFunction, Cost),
    /// Singular fields and map entries, re-encoded as Instance fields.
    Rest(Vec<u8>),
    /// The end of the stream, at this offset.
    End(u64),
}

/// Elements per batch handed from the framing to the decoding step.
const BATCH: usize = 512;
/// Encoded bytes per batch, so a few huge elements do not pile up.
const BATCH_BYTES: usize = 4 << 20;

/// One framed but undecoded element of a batch.
enum RawElement {
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
    /// A field the schema does not know, skipped (`wire_bytes` in all).
    Unknown { wire_bytes: u64 },
}

/// Consecutive elements of the stream, framed by one thread and decoded by
/// another. The last batch ends with the end of the stream or an error.
#[derive(Default)]
struct RawBatch {
    arena: Vec<u8>,
    elements: Vec<RawElement>,
    last: Option<Result<u64, InstanceError>>,
}

/// Reads up to one batch of elements, noting the end of the stream or the
/// error that stopped it.
fn frame_batch<R: Read>(fields: &mut FieldReader<R>, raw: &mut RawBatch) {
    let _span = trace::span(Phase::Read);
    while raw.elements.len() < BATCH && raw.arena.len() < BATCH_BYTES {
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
fn frame_one<R: Read>(
    fields: &mut FieldReader<R>,
    raw: &mut RawBatch,
) -> Result<bool, InstanceError> {
    let element_start = fields.offset();
    let Some((field, wire_type)) = fields.next_field()? else {
        return Ok(false);
    };
    let tag_bytes = fields.offset() - element_start;
    match field {
        2 | 4 | 8 | 10 => {
            expect(field, wire_type, WireType::Len)?;
            let start = raw.arena.len();
            fields.append_len(&mut raw.arena)?;
            raw.elements.push(RawElement::Entity {
                field,
                start,
                end: raw.arena.len(),
                offset: fields.offset(),
                tag_bytes,
                wire_bytes: fields.offset() - element_start,
            });
        }
        1 | 3 | 6 | 7 | 9 | 11 => {
            expect(field, wire_type, WireType::Len)?;
            // Read once, behind room for the key and length written after
            // it (a large objective is not copied into a second buffer).
            const ROOM: usize = 15;
            let mut rest = vec![0; ROOM];
            fields.append_len(&mut rest)?;
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
        5 | 100 => {
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

/// Passes leaves on to the aggregate and counts their bytes.
struct Counting<'a> {
    aggregate: &'a mut Aggregate,
    bytes: u64,
}

impl LogicalMemoryVisitor for Counting<'_> {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        self.bytes += bytes as u64;
        self.aggregate.visit_leaf(path, bytes);
    }
}

/// The leaves of one entity map entry (key and value) under its container
/// `frame` and, when grouping, its family frame.
pub fn visit_entity_entry<T: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    frame: &'static str,
    family: Option<Frame>,
    value: &T,
    path: &mut Path,
    visitor: &mut V,
) {
    let mut p = path.with(frame);
    match family {
        Some(f) => entry_leaves(value, &mut p.with(f), visitor),
        None => entry_leaves(value, &mut p, visitor),
    }
}

fn entry_leaves<T: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    value: &T,
    path: &mut Path,
    visitor: &mut V,
) {
    leaf(&path.with("BTreeMap[key]"), visitor, &SCALAR_8);
    value.visit_logical_memory(path, visitor);
}

/// Visits one entity into `accounts` (logical and, when asked, wire) and
/// returns its cost. `element` is the entity as it was encoded.
fn account_entity<T: LogicalMemoryProfile>(
    frame: &'static str,
    name: Option<&str>,
    value: &T,
    element: TopLevelField<'_>,
    path: &mut Path,
    accounts: &mut Accounts,
) -> Cost {
    let family = accounts.family(name);
    if let Some(wire) = &mut accounts.wire {
        wire_view::visit_top_level(element, family.clone(), path, wire);
    }
    let mut counting = Counting {
        aggregate: &mut accounts.memory,
        bytes: 0,
    };
    visit_entity_entry(frame, family, value, path, &mut counting);
    Cost {
        bytes: counting.bytes,
        wire_bytes: element.wire_bytes,
        waste: FileWaste::default(),
    }
}

/// Decodes, normalizes and visits (into `aggregate`) every element of a
/// batch, leaving `raw` empty for reuse. Decoding stops at the first error,
/// which ends the batch.
fn decode_batch(raw: &mut RawBatch, accounts: &mut Accounts) -> Batch {
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
                Ok(Item::Rest(bytes))
            }
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
    raw.arena.clear();
    if !items.last().is_some_and(Result::is_err) {
        match last {
            None => {}
            Some(Ok(offset)) => items.push(Ok(Item::End(offset))),
            Some(Err(e)) => items.push(Err(e)),
        }
    }
    items
}

fn decode_entity(
    element: TopLevelField<'_>,
    offset: u64,
    path: &mut Path,
    accounts: &mut Accounts,
    laps: &mut Laps,
) -> Result<Item, InstanceError> {
    let bytes = element.body.unwrap_or_default();
    Ok(match element.number {
        2 => {
            let v = decode("decision_variables", bytes, offset)?;
            laps.lap(Phase::Decode);
            let v = DecisionVariable::from_wire(v)?;
            laps.lap(Phase::Normalize);
            let frame = "Instance.decision_variables";
            let cost = account_entity(frame, v.name.as_deref(), &v, element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Variable(v, cost)
        }
        4 => {
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
            Item::Constraint(c, Cost { waste, ..cost })
        }
        8 => {
            let r = decode("removed_constraints", bytes, offset)?;
            laps.lap(Phase::Decode);
            let (r, waste) = RemovedConstraint::from_wire_measured(r)?;
            laps.lap(Phase::Normalize);
            let frame = "Instance.removed_constraints";
            let name = r.constraint.name.as_deref();
            let cost = account_entity(frame, name, &r, element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Removed(r, Cost { waste, ..cost })
        }
        _ => {
            let pb::NamedFunction {
                id,
                function,
                subscripts,
                parameters,
                name,
                description,
            } = decode("named_functions", bytes, offset)?;
            laps.lap(Phase::Decode);
            let function = function.ok_or_else(|| ModelError::MissingFunction {
                what: format!("named function {id}"),
            })?;
            let normalized = Function::from_wire(&function)?;
            let waste = FileWaste::of(&function, &normalized);
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
                named,
                Cost {
                    bytes: 0,
                    wire_bytes: element.wire_bytes,
                    waste,
                },
            )
        }
    })
}

type Batch = Vec<Result<Item, InstanceError>>;

/// Whether a batch holding an element larger than [`BATCH_BYTES`] is being
/// decoded or checked somewhere in the process: one such batch at a time,
/// however many threads and inputs there are, since a decoded element can
/// take many times its encoded size (up to `--max-element`).
static LARGE_BUSY: (std::sync::Mutex<bool>, std::sync::Condvar) =
    (std::sync::Mutex::new(false), std::sync::Condvar::new());

/// The right to decode a large element, held until its batch is checked.
struct LargeToken;

impl LargeToken {
    /// Waits for the right when `raw` holds a large element.
    fn for_batch(raw: &RawBatch) -> Option<Self> {
        let largest = raw.elements.iter().map(|e| match e {
            RawElement::Entity { start, end, .. } => end - start,
            RawElement::Rest { bytes, .. } => bytes.len(),
            RawElement::Unknown { .. } => 0,
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

/// Instances smaller than this decode on the calling thread by default:
/// starting threads would cost more than they save (an archive of a
/// thousand small layers ran twice as long with them).
const SMALL_INSTANCE: u64 = 1 << 20;

/// How many threads decode: `MEMPROF_THREADS` if set (1 = everything on the
/// calling thread), else the machine's parallelism for instances that are
/// not known to be small. Every setting gives the same output and the same
/// error; the switch exists to check that and to measure the difference.
fn decoding_threads(total: Option<u64>) -> usize {
    let threads = match std::env::var("MEMPROF_THREADS") {
        Ok(v) => v.trim().parse().unwrap_or(1).clamp(1, 64),
        Err(_) if total.is_some_and(|t| t < SMALL_INSTANCE) => 1,
        Err(_) => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
    };
    match THREAD_LIMIT.load(std::sync::atomic::Ordering::Relaxed) {
        0 => threads,
        limit => threads.min(limit),
    }
}

/// A cap on [`decoding_threads`] (0: none), set while several inputs are
/// processed at once.
static THREAD_LIMIT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Caps the threads each instance decodes with (0 lifts the cap).
pub fn limit_threads(limit: usize) {
    THREAD_LIMIT.store(limit, std::sync::atomic::Ordering::Relaxed);
}

/// The framing side, shared by the decoding threads: whoever holds it reads
/// the next batch, so batches are framed in stream order and numbered.
struct Framer<R> {
    fields: FieldReader<R>,
    /// One ticket per batch that may be framed before the checking side has
    /// taken it, so memory stays bounded however uneven the batches are.
    tickets: mpsc::Receiver<()>,
    next: u64,
    done: bool,
}

/// Streams an instance from `reader` (of `total` bytes, when known), adds its
/// leaves to `aggregate` and shows each accepted entity to `observer`.
///
/// With several threads, each takes the next batch of encoded elements in
/// turn, decodes, normalizes and visits it into an aggregate of its own; the
/// calling thread checks the entities in stream order (ids, references) and
/// shows them to the observer, so the result and the error reported are
/// those of a sequential run. Leaf sums do not depend on the order they are
/// added in, and every output sorts, so merging the per-thread aggregates at
/// the end changes no output byte.
pub fn profile_instance<R: Read + Send, O: EntityObserver + ?Sized>(
    reader: R,
    total: Option<u64>,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceSummary, InstanceError> {
    let max_element = total.is_none().then(super::limits::max_element);
    profile_instance_within(reader, total, max_element, accounts, observer)
}

/// [`profile_instance`] refusing any element (and the singular fields
/// together) longer than `max_element`. A stream of unknown length, or one
/// whose `total` is only a container's claim (a tar header inside gzip data),
/// needs the limit: nothing else bounds what one element may make memprof
/// hold. A file read as stored needs none: its elements are no larger than
/// the file.
pub fn profile_instance_within<R: Read + Send, O: EntityObserver + ?Sized>(
    reader: R,
    total: Option<u64>,
    max_element: Option<u64>,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceSummary, InstanceError> {
    let threads = decoding_threads(total);
    let group_by = accounts.group_by;
    let mut fields = FieldReader::new(reader, total).with_max_len(max_element);
    if threads == 1 {
        let mut raw = RawBatch::default();
        // The previous batch has been checked when the next is asked for.
        let mut large: Option<LargeToken> = None;
        let batches = std::iter::from_fn(|| {
            drop(large.take());
            frame_batch(&mut fields, &mut raw);
            large = LargeToken::for_batch(&raw);
            Some(decode_batch(&mut raw, accounts))
        });
        // The borrow of `accounts` by the batches ends with `consume`'s
        // stream phase; the singular fields are visited into a second one.
        let mut singular = Aggregate::new();
        let summary = consume(batches, 1, max_element, group_by, &mut singular, observer)?;
        accounts.memory.merge_under(&[], &singular);
        return Ok(summary);
    }
    let in_flight = 2 * threads + 2;
    let (ticket_tx, tickets) = mpsc::sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        ticket_tx
            .send(())
            .expect("the channel has room for every ticket");
    }
    let options = accounts.options();
    let framer = std::sync::Mutex::new(Framer {
        fields,
        tickets,
        next: 0,
        done: false,
    });
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<(u64, Batch, Option<LargeToken>)>(in_flight);
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let tx = tx.clone();
                let framer = &framer;
                scope.spawn(move || {
                    let mut local = Accounts::new(options);
                    let mut raw = RawBatch::default();
                    loop {
                        let (seq, large) = {
                            let mut f = framer.lock().unwrap_or_else(|e| e.into_inner());
                            // No ticket: the checking side has stopped.
                            if f.done || f.tickets.recv().is_err() {
                                break;
                            }
                            frame_batch(&mut f.fields, &mut raw);
                            f.done = raw.last.is_some();
                            f.next += 1;
                            // Taken before the framer is let go, so that no
                            // other large element is framed meanwhile.
                            (f.next - 1, LargeToken::for_batch(&raw))
                        };
                        let batch = decode_batch(&mut raw, &mut local);
                        // A closed channel: the checking side stopped on an error.
                        if tx.send((seq, batch, large)).is_err() {
                            break;
                        }
                    }
                    local
                })
            })
            .collect();
        drop(tx);
        // Batches arrive in any order; hand them on in sequence.
        let mut pending = BTreeMap::new();
        let mut next = 0u64;
        let mut rx = rx.into_iter();
        // The previous batch has been checked when the next is asked for.
        let mut large: Option<LargeToken> = None;
        let in_order = std::iter::from_fn(move || loop {
            drop(large.take());
            if let Some((batch, token)) = pending.remove(&next) {
                next += 1;
                large = token;
                // Taken: another batch may be framed. (Sending fails only
                // once every worker has stopped.)
                let _ = ticket_tx.send(());
                return Some(batch);
            }
            let (seq, batch, token) = rx.next()?;
            pending.insert(seq, (batch, token));
        });
        let result = consume(
            in_order,
            threads,
            max_element,
            group_by,
            &mut accounts.memory,
            observer,
        );
        // On an error the receiver is gone by now, so no worker stays
        // blocked on a full channel; on success they have all finished.
        for worker in workers {
            let local = worker
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            if result.is_ok() {
                let _span = trace::span(Phase::Aggregate);
                accounts.merge(&local);
            }
        }
        result
    })
}

fn consume<O: EntityObserver + ?Sized>(
    mut batches: impl Iterator<Item = Batch>,
    threads: usize,
    max_element: Option<u64>,
    group_by: GroupBy,
    aggregate: &mut Aggregate,
    observer: &mut O,
) -> Result<InstanceSummary, InstanceError> {
    let mut state = State::default();
    let mut families = Families::new(group_by);
    // The singular fields and maps, re-encoded in stream order: decoded at the
    // end as an Instance whose entity lists are empty, prost applying
    // protobuf's merge and last-entry-wins rules.
    let mut rest = Singulars::default();
    let end = 'stream: loop {
        let Some(batch) = batches.next() else {
            unreachable!("the stream always ends with End or an error")
        };
        let _span = trace::span(Phase::Check);
        for item in batch {
            match item? {
                Item::Variable(v, cost) => {
                    if !state.variables.insert(v.id) {
                        return Err(ModelError::DuplicateVariable(v.id).into());
                    }
                    state.summary.variables += 1;
                    families.see(v.name.as_deref())?;
                    observer.variable(&v, cost);
                }
                Item::Constraint(c, cost) => {
                    state.new_constraint(c.id)?;
                    state.constraints.insert(c.id);
                    state.uses(User::Constraint(c.id), &c.function)?;
                    state.summary.constraints += 1;
                    families.see(c.name.as_deref())?;
                    state.summary.terms += c.function.stored_terms() as u64;
                    observer.constraint(&c, cost);
                }
                Item::Removed(r, cost) => {
                    let id = r.constraint.id;
                    state.new_constraint(id)?;
                    state.removed.insert(id);
                    // 2.9.3 does not check the variables of removed constraints.
                    state.summary.removed_constraints += 1;
                    families.see(r.constraint.name.as_deref())?;
                    state.summary.terms += r.constraint.function.stored_terms() as u64;
                    observer.removed_constraint(&r, cost);
                }
                Item::Named(n, cost) => {
                    if !state.named_functions.insert(n.id) {
                        return Err(ModelError::DuplicateNamedFunction(n.id).into());
                    }
                    state.uses(User::NamedFunction(n.id), &n.function)?;
                    state.summary.named_functions += 1;
                    observer.named_function(&n, cost);
                }
                Item::Rest(bytes) => {
                    // Merged, they are decoded as one message: one element.
                    if let Some(limit) =
                        max_element.filter(|&limit| (rest.len() + bytes.len()) as u64 > limit)
                    {
                        return Err(InstanceError::SingularTooLarge { limit });
                    }
                    rest.push(bytes)
                }
                Item::End(offset) => break 'stream offset,
            }
        }
    };
    drop(batches);
    let _span = trace::span(Phase::Check);
    state.summary.wire_bytes = end;
    let (instance, objective) = rest.decode().map_err(|source| InstanceError::Decode {
        field: "the instance's singular fields",
        offset: end,
        source,
    })?;
    let pb::Instance {
        description,
        decision_variables: _,
        objective: _, // taken by `rest.decode`
        constraints: _,
        sense: _, // any value is accepted (unknown ones read as minimize); it costs 1 byte
        parameters,
        constraint_hints,
        removed_constraints: _,
        decision_variable_dependency,
        named_functions: _,
        annotations,
        format_version,
    } = instance;

    if format_version > 0 {
        return Err(ModelError::FormatVersion(format_version).into());
    }

    let objective = match objective {
        WireObjective::Missing => return Err(ModelError::MissingObjective.into()),
        WireObjective::Decoded(wire) => {
            let objective = Function::from_wire(&wire)?;
            let waste = FileWaste::of(&wire, &objective);
            Objective::Built(objective, waste)
        }
        WireObjective::Pieces { arm, pieces } => {
            let variables = &state.variables;
            let defined = |id| variables.contains(&id);
            let counted = if observer.counts_only() {
                // Checked in full by `rest.decode`.
                terms::count(arm.as_ref(), &defined, threads).unwrap_or(None)
            } else {
                None
            };
            match counted {
                Some(shape) => Objective::Counted(shape),
                None => match terms::normalize(&pieces) {
                    Ok(read) => {
                        let (objective, waste) = read?;
                        Objective::Built(objective, waste)
                    }
                    // Checked already; should prost read it otherwise,
                    // prost decides.
                    Err(terms::Unsupported) => {
                        let wire =
                            pb::Function::decode(pieces.concat().as_slice()).map_err(|source| {
                                InstanceError::Decode {
                                    field: "the instance's singular fields",
                                    offset: end,
                                    source,
                                }
                            })?;
                        let objective = Function::from_wire(&wire)?;
                        let waste = FileWaste::of(&wire, &objective);
                        Objective::Built(objective, waste)
                    }
                },
            }
        }
    };
    drop(rest);
    match &objective {
        Objective::Built(f, _) => {
            state.uses(User::Objective, f)?;
            state.summary.terms += f.stored_terms() as u64;
        }
        // Counted only when every variable it uses is defined.
        Objective::Counted(shape) => state.summary.terms += shape.stored_terms as u64,
    }
    if let Some((user, id)) = state
        .pending
        .iter()
        .find(|(_, id)| !state.variables.contains(id))
    {
        return Err(ModelError::UndefinedVariable {
            owner: user.to_string(),
            id: *id,
        }
        .into());
    }
    let hints = check_hints(constraint_hints.unwrap_or_default(), &state)?;
    let dependency = check_dependency(decision_variable_dependency, &state)?;
    let parameters = Parameters(parameters.map(|p| p.entries));
    let description = Description(description);
    let annotations = Annotations::from_wire(annotations)?;

    match objective {
        Objective::Built(objective, objective_waste) => {
            let singular = Singular {
                objective: &objective,
                objective_bytes: objective.bytes() as u64,
                objective_waste,
                hints: &hints,
                dependency: &dependency,
                parameters: &parameters,
                description: &description,
                annotations: &annotations,
            };
            visit_instance_parts(&singular, aggregate);
            observer.finish(&singular);
        }
        Objective::Counted(shape) => visit_parts(
            &shape,
            &hints,
            &dependency,
            &parameters,
            &description,
            &annotations,
            aggregate,
        ),
    }
    Ok(state.summary)
}

/// The objective once read: built, or only counted (for an observer that
/// [counts only](EntityObserver::counts_only)).
enum Objective {
    Built(Function, FileWaste),
    Counted(Shape),
}

/// The leaves of everything but the entities: the entity containers' own
/// stack parts, the sense and the singular fields.
pub fn visit_instance_parts<V: LogicalMemoryVisitor>(singular: &Singular<'_>, visitor: &mut V) {
    let Singular {
        objective,
        objective_bytes: _,
        objective_waste: _,
        hints,
        dependency,
        parameters,
        description,
        annotations,
    } = singular;
    visit_parts(
        *objective,
        hints,
        dependency,
        parameters,
        description,
        annotations,
        visitor,
    );
}

/// [`visit_instance_parts`] with an objective that may be only counted.
fn visit_parts<F: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    objective: &F,
    hints: &ConstraintHints,
    dependency: &AcyclicAssignments,
    parameters: &Parameters,
    description: &Description,
    annotations: &Annotations,
    visitor: &mut V,
) {
    let mut path = Path::new();
    // Entity containers: their stack part is there even when empty.
    for frame in [
        "Instance.decision_variables",
        "Instance.constraints",
        "Instance.removed_constraints",
    ] {
        leaf(
            &path.with(frame).with("BTreeMap[stack]"),
            visitor,
            &BTREE_MAP,
        );
    }
    leaf(&path.with("Instance.sense"), visitor, &ENUM);
    objective.visit_logical_memory(&mut path.with("Instance.objective"), visitor);
    hints.visit_logical_memory(&mut path.with("Instance.constraint_hints"), visitor);
    dependency.visit_logical_memory(
        &mut path.with("Instance.decision_variable_dependency"),
        visitor,
    );
    parameters.visit_logical_memory(&mut path.with("Instance.parameters"), visitor);
    description.visit_logical_memory(&mut path.with("Instance.description"), visitor);
    annotations.visit_logical_memory(&mut path.with("Instance.annotations"), visitor);
}

/// Checks a list of ids for repeats and undefined members.
fn check_ids(
    ids: &[u64],
    known: impl Fn(u64) -> bool,
    hint: &dyn Fn() -> String,
    undefined: impl Fn(String, u64) -> ModelError,
    duplicate: impl Fn(String, u64) -> ModelError,
) -> Result<(), ModelError> {
    let mut seen = BTreeSet::new();
    for &id in ids {
        if !known(id) {
            return Err(undefined(hint(), id));
        }
        if !seen.insert(id) {
            return Err(duplicate(hint(), id));
        }
    }
    Ok(())
}

/// OMMX's hint rules: every referenced constraint and variable must exist and
/// appear once; a hint on a removed constraint is dropped.
fn check_hints(hints: pb::ConstraintHints, state: &State) -> Result<ConstraintHints, ModelError> {
    let known_constraint = |id| state.constraints.contains(&id) || state.removed.contains(&id);
    let constraints = |ids: &[u64], hint: &dyn Fn() -> String| {
        check_ids(
            ids,
            known_constraint,
            hint,
            |hint, id| ModelError::UnknownHintConstraint { hint, id },
            |hint, id| ModelError::DuplicateHintConstraint { hint, id },
        )
    };
    let variables = |ids: &[u64], hint: &dyn Fn() -> String| {
        check_ids(
            ids,
            |id| state.variables.contains(&id),
            hint,
            |owner, id| ModelError::UndefinedVariable { owner, id },
            |hint, id| ModelError::DuplicateHintVariable { hint, id },
        )
    };

    let mut out = ConstraintHints::default();
    for h in hints.one_hot_constraints {
        let name = || format!("one-hot hint on constraint {}", h.constraint_id);
        constraints(&[h.constraint_id], &name)?;
        variables(&h.decision_variables, &name)?;
        if !state.removed.contains(&h.constraint_id) {
            out.one_hot.push(OneHot {
                constraint_id: h.constraint_id,
                variables: h.decision_variables,
            });
        }
    }
    for h in hints.sos1_constraints {
        let name = || format!("SOS1 hint on constraint {}", h.binary_constraint_id);
        constraints(&[h.binary_constraint_id], &name)?;
        constraints(&h.big_m_constraint_ids, &name)?;
        variables(&h.decision_variables, &name)?;
        let removed = std::iter::once(&h.binary_constraint_id)
            .chain(&h.big_m_constraint_ids)
            .any(|id| state.removed.contains(id));
        if !removed {
            out.sos1.push(Sos1 {
                binary_constraint_id: h.binary_constraint_id,
                big_m_constraint_ids: h.big_m_constraint_ids,
                variables: h.decision_variables,
            });
        }
    }
    Ok(out)
}

/// OMMX's dependency rules: assigned variables must exist (the variables on
/// the right-hand side need not), and the assignments must not form a cycle.
fn check_dependency(
    entries: BTreeMap<u64, pb::Function>,
    state: &State,
) -> Result<AcyclicAssignments, ModelError> {
    let mut assignments = BTreeMap::new();
    let mut graph: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    let mut nodes: BTreeSet<u64> = BTreeSet::new();
    for (key, function) in entries {
        if !state.variables.contains(&key) {
            return Err(ModelError::UndefinedDependencyKey(key));
        }
        let function = Function::from_wire(&function)?;
        let mut uses = BTreeSet::new();
        function.for_each_variable(|id| {
            uses.insert(id);
        });
        nodes.insert(key);
        nodes.extend(uses.iter().copied());
        graph.insert(key, uses);
        assignments.insert(key, function);
    }
    // Depth-first search for a cycle, iteratively (hostile inputs can be deep).
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Active,
        Done,
    }
    let mut marks: BTreeMap<u64, Mark> = BTreeMap::new();
    for &start in graph.keys() {
        if marks.contains_key(&start) {
            continue;
        }
        let mut stack: Vec<(u64, Vec<u64>)> =
            vec![(start, graph[&start].iter().copied().collect())];
        marks.insert(start, Mark::Active);
        while let Some((node, next)) = stack.last_mut() {
            match next.pop() {
                Some(child) => match marks.get(&child) {
                    Some(Mark::Active) => return Err(ModelError::CyclicDependency(child)),
                    Some(Mark::Done) => {}
                    None => {
                        marks.insert(child, Mark::Active);
                        let children = graph
                            .get(&child)
                            .map(|s| s.iter().copied().collect())
                            .unwrap_or_default();
                        stack.push((child, children));
                    }
                },
                None => {
                    marks.insert(*node, Mark::Done);
                    stack.pop();
                }
            }
        }
    }
    let edges = graph.values().map(BTreeSet::len).sum();
    Ok(AcyclicAssignments {
        assignments,
        nodes: nodes.len(),
        edges,
    })
}
