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

use super::wire::{FieldReader, WireError, WireType};
use crate::model::{
    AcyclicAssignments, Annotations, Constraint, ConstraintHints, DecisionVariable, Description,
    Function, ModelError, OneHot, Parameters, RemovedConstraint, Sos1,
};
use crate::ommx_v1 as pb;
use crate::profile::collections::{leaf, BTREE_STACK};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Path};

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
    /// Variables used before (or without) their definition.
    pending: Vec<(User, u64)>,
    summary: InstanceSummary,
}

impl State {
    fn uses(&mut self, user: User, function: &Function) {
        function.for_each_variable(|id| {
            if !self.variables.contains(&id) {
                self.pending.push((user, id));
            }
        });
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

fn decode<M: Message + Default>(
    field: &'static str,
    bytes: &[u8],
    offset: u64,
) -> Result<M, InstanceError> {
    M::decode(bytes).map_err(|source| InstanceError::Decode {
        field,
        offset,
        source,
    })
}

/// One decoded top-level element, in stream order.
enum Item {
    Variable(DecisionVariable),
    Constraint(Constraint),
    Removed(RemovedConstraint),
    /// Named functions are checked but not counted by 2.9.3.
    Named {
        id: u64,
        function: Function,
    },
    /// Singular fields and map entries, re-encoded as Instance fields.
    Rest(Vec<u8>),
    /// The end of the stream, at this offset.
    End(u64),
}

/// Elements per message between the decoding and the visiting thread.
const BATCH: usize = 512;

/// Stage one: frames the stream and decodes and normalizes each element.
struct Producer<R> {
    fields: FieldReader<R>,
    buf: Vec<u8>,
    done: bool,
}

type Batch = Vec<Result<Item, InstanceError>>;

impl<R: Read> Producer<R> {
    fn new(reader: R, total: Option<u64>) -> Self {
        Self {
            fields: FieldReader::new(reader, total),
            buf: Vec::new(),
            done: false,
        }
    }

    /// The next elements in stream order; the last batch ends with
    /// `Item::End` or an error. `None` after that.
    fn next_batch(&mut self) -> Option<Batch> {
        if self.done {
            return None;
        }
        let mut batch = Vec::with_capacity(BATCH);
        while batch.len() < BATCH {
            let item = next_item(&mut self.fields, &mut self.buf);
            let last = matches!(item, Ok(Item::End(_)) | Err(_));
            batch.push(item);
            if last {
                self.done = true;
                break;
            }
        }
        Some(batch)
    }
}

fn next_item<R: Read>(
    fields: &mut FieldReader<R>,
    buf: &mut Vec<u8>,
) -> Result<Item, InstanceError> {
    loop {
        let Some((field, wire_type)) = fields.next_field()? else {
            return Ok(Item::End(fields.offset()));
        };
        match field {
            2 | 4 | 8 | 10 => {
                expect(field, wire_type, WireType::Len)?;
                fields.read_len_into(buf)?;
                let at = fields.offset();
                return Ok(match field {
                    2 => Item::Variable(DecisionVariable::from_wire(decode(
                        "decision_variables",
                        buf,
                        at,
                    )?)?),
                    4 => Item::Constraint(Constraint::from_wire(decode("constraints", buf, at)?)?),
                    8 => Item::Removed(RemovedConstraint::from_wire(decode(
                        "removed_constraints",
                        buf,
                        at,
                    )?)?),
                    _ => {
                        let n: pb::NamedFunction = decode("named_functions", buf, at)?;
                        let function =
                            n.function
                                .as_ref()
                                .ok_or_else(|| ModelError::MissingFunction {
                                    what: format!("named function {}", n.id),
                                })?;
                        Item::Named {
                            id: n.id,
                            function: Function::from_wire(function)?,
                        }
                    }
                });
            }
            1 | 3 | 6 | 7 | 9 | 11 => {
                expect(field, wire_type, WireType::Len)?;
                fields.read_len_into(buf)?;
                let mut rest = Vec::with_capacity(buf.len() + 12);
                encoding::encode_key(field, encoding::WireType::LengthDelimited, &mut rest);
                encoding::encode_varint(buf.len() as u64, &mut rest);
                rest.extend_from_slice(buf);
                return Ok(Item::Rest(rest));
            }
            5 | 100 => {
                expect(field, wire_type, WireType::Varint)?;
                let value = fields.read_varint()?;
                let mut rest = Vec::with_capacity(12);
                encoding::encode_key(field, encoding::WireType::Varint, &mut rest);
                encoding::encode_varint(value, &mut rest);
                return Ok(Item::Rest(rest));
            }
            _ => fields.skip(wire_type)?,
        }
    }
}

/// Whether to decode on a second thread: yes unless `MEMPROF_THREADS=1`.
/// Both ways give the same result; the switch exists to check that and to
/// measure the difference.
fn pipelined() -> bool {
    std::env::var("MEMPROF_THREADS").map_or(true, |v| v.trim() != "1")
}

/// Streams an instance from `reader` (of `total` bytes, when known) and sends
/// its leaves to `visitor` under `path`.
///
/// By default two threads share the work: one reads, decodes and normalizes
/// elements, the other (the caller's) checks and visits them in stream
/// order, so the result and the error reported are those of a sequential run.
pub fn profile_instance<R: Read + Send, V: LogicalMemoryVisitor>(
    reader: R,
    total: Option<u64>,
    path: &mut Path,
    visitor: &mut V,
) -> Result<InstanceSummary, InstanceError> {
    let mut producer = Producer::new(reader, total);
    if !pipelined() {
        return consume(std::iter::from_fn(|| producer.next_batch()), path, visitor);
    }
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<Batch>(8);
        scope.spawn(move || {
            while let Some(batch) = producer.next_batch() {
                // A closed channel means the visiting side stopped on an error.
                if tx.send(batch).is_err() {
                    return;
                }
            }
        });
        // The receiver moves into `consume` and is dropped when it returns,
        // so a producer blocked on a full channel wakes (and stops) on an error.
        consume(rx.into_iter(), path, visitor)
    })
}

fn consume<V: LogicalMemoryVisitor>(
    mut batches: impl Iterator<Item = Batch>,
    path: &mut Path,
    visitor: &mut V,
) -> Result<InstanceSummary, InstanceError> {
    let mut state = State::default();
    // The singular fields and maps, re-encoded in stream order: decoded at the
    // end as an Instance whose entity lists are empty, prost applying
    // protobuf's merge and last-entry-wins rules.
    let mut rest = Vec::new();
    let end = 'stream: loop {
        let Some(batch) = batches.next() else {
            unreachable!("the producer always ends with End or an error")
        };
        for item in batch {
            match item? {
                Item::Variable(v) => {
                    if !state.variables.insert(v.id) {
                        return Err(ModelError::DuplicateVariable(v.id).into());
                    }
                    state.summary.variables += 1;
                    let mut p = path.with("Instance.decision_variables");
                    leaf(&p.with("BTreeMap[key]"), visitor, 8);
                    v.visit_logical_memory(&mut p, visitor);
                }
                Item::Constraint(c) => {
                    state.new_constraint(c.id)?;
                    state.constraints.insert(c.id);
                    state.uses(User::Constraint(c.id), &c.function);
                    state.summary.constraints += 1;
                    state.summary.terms += c.function.stored_terms() as u64;
                    let mut p = path.with("Instance.constraints");
                    leaf(&p.with("BTreeMap[key]"), visitor, 8);
                    c.visit_logical_memory(&mut p, visitor);
                }
                Item::Removed(r) => {
                    let id = r.constraint.id;
                    state.new_constraint(id)?;
                    state.removed.insert(id);
                    // 2.9.3 does not check the variables of removed constraints.
                    state.summary.removed_constraints += 1;
                    state.summary.terms += r.constraint.function.stored_terms() as u64;
                    let mut p = path.with("Instance.removed_constraints");
                    leaf(&p.with("BTreeMap[key]"), visitor, 8);
                    r.visit_logical_memory(&mut p, visitor);
                }
                Item::Named { id, function } => {
                    if !state.named_functions.insert(id) {
                        return Err(ModelError::DuplicateNamedFunction(id).into());
                    }
                    state.uses(User::NamedFunction(id), &function);
                    state.summary.named_functions += 1;
                }
                Item::Rest(bytes) => rest.extend_from_slice(&bytes),
                Item::End(offset) => break 'stream offset,
            }
        }
    };
    state.summary.wire_bytes = end;
    let pb::Instance {
        description,
        decision_variables: _,
        objective,
        constraints: _,
        sense: _, // any value is accepted (unknown ones read as minimize); it costs 1 byte
        parameters,
        constraint_hints,
        removed_constraints: _,
        decision_variable_dependency,
        named_functions: _,
        annotations,
        format_version,
    } = decode("the instance's singular fields", &rest, end)?;
    drop(rest);

    if format_version > 0 {
        return Err(ModelError::FormatVersion(format_version).into());
    }

    // Entity containers: their stack part is there even when empty.
    for frame in [
        "Instance.decision_variables",
        "Instance.constraints",
        "Instance.removed_constraints",
    ] {
        leaf(
            &path.with(frame).with("BTreeMap[stack]"),
            visitor,
            BTREE_STACK,
        );
    }
    leaf(&path.with("Instance.sense"), visitor, 1);

    let objective = Function::from_wire(&objective.ok_or(ModelError::MissingObjective)?)?;
    state.uses(User::Objective, &objective);
    state.summary.terms += objective.stored_terms() as u64;
    objective.visit_logical_memory(&mut path.with("Instance.objective"), visitor);

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
    hints.visit_logical_memory(&mut path.with("Instance.constraint_hints"), visitor);

    let assignments = check_dependency(decision_variable_dependency, &state)?;
    assignments.visit_logical_memory(
        &mut path.with("Instance.decision_variable_dependency"),
        visitor,
    );

    Parameters(parameters.map(|p| p.entries))
        .visit_logical_memory(&mut path.with("Instance.parameters"), visitor);
    Description(description).visit_logical_memory(&mut path.with("Instance.description"), visitor);
    Annotations::from_wire(annotations)?
        .visit_logical_memory(&mut path.with("Instance.annotations"), visitor);

    Ok(state.summary)
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
