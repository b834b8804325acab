//! OMMX 2.9.3's cross-entity rules, applied in stream order on the
//! checking side: unique ids, references to defined variables, hints and
//! dependencies; and the instance-wide fields decoded once the stream ends.

use std::collections::{BTreeMap, BTreeSet};

use prost::Message;

use super::accounts::{visit_instance_parts, visit_parts, Families};
use super::framing::{Batch, Item};
use super::observer::Singular;
use super::EntityObserver;
use crate::ids::IdSet;
use crate::model::function::Shape;
use crate::model::{
    AcyclicAssignments, Annotations, ConstraintHints, Description, FileWaste, Function, ModelError,
    OneHot, Parameters, Sos1,
};
use crate::ommx_v1 as pb;
use crate::pass::objective::{Singulars, SingularsError, WireObjective};
use crate::pass::terms;
use crate::pass::terms::spooled::SpooledArm;
use crate::pass::InstanceError;
use crate::profile::family::GroupBy;
use crate::profile::Aggregate;
use crate::report::InstanceSummary;
use crate::trace::{self, Phase};

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

pub(super) fn consume<O: EntityObserver + ?Sized>(
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
                    state.define(v.id)?;
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
                Item::CountedVariable(id) => state.define(id)?,
                Item::CountedConstraint {
                    id,
                    mut ids,
                    linear,
                    terms,
                } => {
                    state.new_constraint(id)?;
                    state.constraints.insert(id);
                    state.uses_ids(User::Constraint(id), &mut ids, linear)?;
                    state.summary.constraints += 1;
                    state.summary.terms += terms;
                }
                Item::SpooledConstraint {
                    id,
                    offset,
                    function,
                    ids_below,
                    terms,
                } => {
                    state.new_constraint(id)?;
                    state.constraints.insert(id);
                    // With variables 0..n defined, ids below n need no look-up.
                    let below = state.variables_below;
                    let dense = below == state.summary.variables;
                    if let Some(function) = function.filter(|_| !dense || ids_below > below) {
                        let user = User::Constraint(id);
                        state.uses_spooled(user, &function, offset)?;
                    }
                    state.summary.constraints += 1;
                    state.summary.terms += terms;
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
                Item::Rest(part) => {
                    // Merged, they are decoded as one message: one element.
                    if let Some(limit) = max_element
                        .filter(|&limit| (rest.len() + part.encoded_len()) as u64 > limit)
                    {
                        return Err(InstanceError::SingularTooLarge { limit });
                    }
                    rest.push(part)
                }
                Item::End(offset) => break 'stream offset,
            }
        }
    };
    drop(batches);
    let _span = trace::span(Phase::Check);
    state.summary.wire_bytes = end;
    let (instance, objective) = rest.decode().map_err(|e| match e {
        SingularsError::Decode(source) => InstanceError::Decode {
            field: "the instance's singular fields",
            offset: end,
            source,
        },
        SingularsError::Spool(e) => InstanceError::Spool(e),
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

    let variables = &state.variables;
    let defined = |id| variables.contains(&id);
    let counts_only = observer.counts_only();
    let objective = match objective {
        WireObjective::Missing => return Err(ModelError::MissingObjective.into()),
        WireObjective::Decoded(wire) => {
            let (objective, waste) = from_prost(&wire)?;
            Objective::Built(objective, waste)
        }
        // Checked in full by `rest.decode`.
        WireObjective::Pieces { arm, pieces } => {
            match counts_only.then(|| terms::count(arm.as_ref(), &defined, threads)) {
                Some(Ok(Some(shape))) => Objective::Counted(shape),
                _ => build_objective(&pieces, end)?,
            }
        }
        WireObjective::Spooled(spooled) => {
            match counts_only.then(|| spooled.count(&defined, threads)) {
                Some(Ok(Some(shape))) => Objective::Counted(shape),
                _ => {
                    let bytes = spooled.load().map_err(InstanceError::Spool)?;
                    drop(spooled);
                    build_objective(&[&bytes], end)?
                }
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

/// Builds the objective from its pieces, checked.
fn build_objective(pieces: &[&[u8]], end: u64) -> Result<Objective, InstanceError> {
    let field = "the instance's singular fields";
    let (objective, waste) = build_function(pieces, field, end)?;
    Ok(Objective::Built(objective, waste))
}

/// Builds a function from its pieces (checked already), as the wire
/// reader reads them or, should prost read them otherwise, as prost does
/// (its error naming `field` at `offset`).
fn build_function(
    pieces: &[&[u8]],
    field: &'static str,
    offset: u64,
) -> Result<(Function, FileWaste), InstanceError> {
    match terms::normalize(pieces) {
        Ok(read) => Ok(read?),
        Err(terms::Unsupported) => {
            let wire = pb::Function::decode(pieces.concat().as_slice()).map_err(|source| {
                InstanceError::Decode {
                    field,
                    offset,
                    source,
                }
            })?;
            Ok(from_prost(&wire)?)
        }
    }
}

/// The objective once read: built, or only counted (for an observer that
/// [counts only](EntityObserver::counts_only)).
enum Objective {
    Built(Function, FileWaste),
    Counted(Shape),
}

/// A function built from prost's decoding, as OMMX builds it, and what
/// normalizing it dropped or merged.
fn from_prost(wire: &pb::Function) -> Result<(Function, FileWaste), ModelError> {
    let function = Function::from_wire(wire)?;
    let waste = FileWaste::of(wire, &function);
    Ok((function, waste))
}

/// Distinct variable ids that may wait for their definition: a hostile
/// stream of references to undefined variables costs memory per distinct
/// id, up to this.
pub const MAX_PENDING: usize = 1 << 18;

impl State {
    /// Defines variable `id`, once.
    fn define(&mut self, id: u64) -> Result<(), ModelError> {
        if !self.variables.insert(id) {
            return Err(ModelError::DuplicateVariable(id));
        }
        self.summary.variables += 1;
        self.variables_below = self.variables_below.max(id.saturating_add(1));
        Ok(())
    }

    fn uses(&mut self, user: User, function: &Function) -> Result<(), InstanceError> {
        let mut fresh = false;
        function.for_each_variable(|id| fresh |= self.used(user, id));
        self.pending_within(fresh)
    }

    /// [`State::uses`] for a function counted on the wire: `ids` are the
    /// variables of its stored terms, in its normalized order or, for a
    /// linear function (`ascending`), in any order, as its normalized order
    /// is ascending. Order matters only when some are not defined yet.
    fn uses_ids(
        &mut self,
        user: User,
        ids: &mut [u64],
        ascending: bool,
    ) -> Result<(), InstanceError> {
        if ids.iter().all(|id| self.variables.contains(id)) {
            return Ok(());
        }
        if ascending {
            ids.sort_unstable();
        }
        let mut fresh = false;
        for &id in ids.iter() {
            fresh |= self.used(user, id);
        }
        self.pending_within(fresh)
    }

    /// [`State::uses`] for a function counted from the file it was spooled
    /// to: its variables looked up there, and only when some is not defined
    /// yet, the function read back and built, for OMMX's order.
    fn uses_spooled(
        &mut self,
        user: User,
        function: &SpooledArm,
        offset: u64,
    ) -> Result<(), InstanceError> {
        let variables = &self.variables;
        if let Ok(true) = function.all_defined(&|id| variables.contains(&id)) {
            return Ok(());
        }
        let bytes = function.load().map_err(InstanceError::Spool)?;
        let (built, _) = build_function(&[&bytes], "constraints", offset)?;
        self.uses(user, &built)
    }

    /// Notes that `user` uses variable `id`; true if it is newly pending.
    #[inline]
    fn used(&mut self, user: User, id: u64) -> bool {
        if !self.variables.contains(&id) && self.pending_ids.insert(id) {
            self.pending.push((user, id));
            return true;
        }
        false
    }

    /// Checks the pending list's length once some are `fresh`.
    fn pending_within(&mut self, fresh: bool) -> Result<(), InstanceError> {
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

/// Who used a variable, for the error message when it turns out undefined.
#[derive(Debug, Clone, Copy)]
pub(super) enum User {
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
pub(super) struct State {
    variables: IdSet,
    constraints: IdSet,
    removed: IdSet,
    named_functions: IdSet,
    /// Variables used before (or without) their definition: each distinct
    /// id once, with its first user, in order of first use.
    pending: Vec<(User, u64)>,
    pending_ids: IdSet,
    /// One more than the largest variable id defined (0: none).
    variables_below: u64,
    summary: InstanceSummary,
}
