//! Streams one `ommx.v1.Instance` and visits it as OMMX 2.9.3 would hold it.
//!
//! The repeated entity fields (variables, constraints, removed constraints,
//! named functions) are decoded one element at a time, checked, visited and
//! dropped. What remains in memory is what OMMX's cross-entity rules need:
//! the set of variable ids, the constraint ids (and which are removed), the
//! references to variables not defined yet, and the small singular fields
//! (objective, hints, dependencies, ...), which protobuf allows to be split
//! and merged anywhere in the stream and so are decoded at the end.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;

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

type IdSet = HashSet<u64, BuildHasherDefault<IdHasher>>;

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

/// Streams an instance from `reader` (of `total` bytes, when known) and sends
/// its leaves to `visitor` under `path`.
pub fn profile_instance<R: Read, V: LogicalMemoryVisitor>(
    reader: R,
    total: Option<u64>,
    path: &mut Path,
    visitor: &mut V,
) -> Result<InstanceSummary, InstanceError> {
    let mut fields = FieldReader::new(reader, total);
    let mut state = State::default();
    // The singular fields and maps, re-encoded in stream order: decoded at the
    // end as an Instance whose entity lists are empty, prost applying
    // protobuf's merge and last-entry-wins rules.
    let mut rest = Vec::new();
    let mut buf = Vec::new();

    while let Some((field, wire_type)) = fields.next_field()? {
        match field {
            2 | 4 | 8 | 10 => {
                expect(field, wire_type, WireType::Len)?;
                fields.read_len_into(&mut buf)?;
                let at = fields.offset();
                match field {
                    2 => {
                        let v =
                            DecisionVariable::from_wire(decode("decision_variables", &buf, at)?)?;
                        if !state.variables.insert(v.id) {
                            return Err(ModelError::DuplicateVariable(v.id).into());
                        }
                        state.summary.variables += 1;
                        let mut p = path.with("Instance.decision_variables");
                        leaf(&p.with("BTreeMap[key]"), visitor, 8);
                        v.visit_logical_memory(&mut p, visitor);
                    }
                    4 => {
                        let c = Constraint::from_wire(decode("constraints", &buf, at)?)?;
                        state.new_constraint(c.id)?;
                        state.constraints.insert(c.id);
                        state.uses(User::Constraint(c.id), &c.function);
                        state.summary.constraints += 1;
                        state.summary.terms += c.function.stored_terms() as u64;
                        let mut p = path.with("Instance.constraints");
                        leaf(&p.with("BTreeMap[key]"), visitor, 8);
                        c.visit_logical_memory(&mut p, visitor);
                    }
                    8 => {
                        let r =
                            RemovedConstraint::from_wire(decode("removed_constraints", &buf, at)?)?;
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
                    _ => {
                        // Checked like OMMX does, but 2.9.3 does not count them.
                        let n: pb::NamedFunction = decode("named_functions", &buf, at)?;
                        let function =
                            n.function
                                .as_ref()
                                .ok_or_else(|| ModelError::MissingFunction {
                                    what: format!("named function {}", n.id),
                                })?;
                        let function = Function::from_wire(function)?;
                        if !state.named_functions.insert(n.id) {
                            return Err(ModelError::DuplicateNamedFunction(n.id).into());
                        }
                        state.uses(User::NamedFunction(n.id), &function);
                        state.summary.named_functions += 1;
                    }
                }
            }
            1 | 3 | 6 | 7 | 9 | 11 => {
                expect(field, wire_type, WireType::Len)?;
                fields.read_len_into(&mut buf)?;
                encoding::encode_key(field, encoding::WireType::LengthDelimited, &mut rest);
                encoding::encode_varint(buf.len() as u64, &mut rest);
                rest.extend_from_slice(&buf);
            }
            5 | 100 => {
                expect(field, wire_type, WireType::Varint)?;
                let value = fields.read_varint()?;
                encoding::encode_key(field, encoding::WireType::Varint, &mut rest);
                encoding::encode_varint(value, &mut rest);
            }
            _ => fields.skip(wire_type)?,
        }
    }
    let end = fields.offset();
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
    known: &IdSet,
    hint: &dyn Fn() -> String,
    undefined: impl Fn(String, u64) -> ModelError,
    duplicate: impl Fn(String, u64) -> ModelError,
) -> Result<(), ModelError> {
    let mut seen = BTreeSet::new();
    for &id in ids {
        if !known.contains(&id) {
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
    let mut all_constraints = state.constraints.clone();
    all_constraints.extend(state.removed.iter().copied());
    let undefined_var = |hint, id| ModelError::UndefinedVariable { owner: hint, id };
    let duplicate_var = |hint, id| ModelError::DuplicateHintVariable { hint, id };
    let undefined_con = |hint, id| ModelError::UnknownHintConstraint { hint, id };
    let duplicate_con = |hint, id| ModelError::DuplicateHintConstraint { hint, id };

    let mut out = ConstraintHints::default();
    for h in hints.one_hot_constraints {
        let name = || format!("one-hot hint on constraint {}", h.constraint_id);
        check_ids(
            &[h.constraint_id],
            &all_constraints,
            &name,
            undefined_con,
            duplicate_con,
        )?;
        check_ids(
            &h.decision_variables,
            &state.variables,
            &name,
            undefined_var,
            duplicate_var,
        )?;
        if !state.removed.contains(&h.constraint_id) {
            out.one_hot.push(OneHot {
                constraint_id: h.constraint_id,
                variables: h.decision_variables,
            });
        }
    }
    for h in hints.sos1_constraints {
        let name = || format!("SOS1 hint on constraint {}", h.binary_constraint_id);
        check_ids(
            &[h.binary_constraint_id],
            &all_constraints,
            &name,
            undefined_con,
            duplicate_con,
        )?;
        check_ids(
            &h.big_m_constraint_ids,
            &all_constraints,
            &name,
            undefined_con,
            duplicate_con,
        )?;
        check_ids(
            &h.decision_variables,
            &state.variables,
            &name,
            undefined_var,
            duplicate_var,
        )?;
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
    let mut graph: HashMap<u64, BTreeSet<u64>> = HashMap::new();
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
    let mut marks: HashMap<u64, Mark> = HashMap::new();
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
