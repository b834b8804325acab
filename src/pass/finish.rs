//! Everything after an instance's stream: the singular fields decoded, the
//! objective counted or built, the variables still pending, OMMX's hint and
//! dependency rules, and the instance-wide parts visited. Shared by the
//! stream checked in order ([`super::validate`]) and the file checked on
//! every thread (`ranges.rs`).

use std::collections::{BTreeMap, BTreeSet};

use super::accounts::{visit_instance_parts, Accounts};
use super::compare::{ommx30_rules, Comparing};
use super::convert;
use super::observer::{Cost, EntityView, Singular, Singular30};
use super::validate::{from_prost, function_built, State, User};
use super::EntityObserver;
use crate::ids::{IdSet, SharedIdSet};
use crate::model::function::{CountedFunction, Shape};
use crate::model::ommx30::{self, ConversionError, Func};
use crate::model::{
    AcyclicAssignments, Annotations, ConstraintHints, Description, FileWaste, Function, ModelError,
    OneHot, Parameters, Sos1,
};
use crate::ommx_v1 as pb;
use crate::pass::objective::{Singulars, SingularsError, WireObjective};
use crate::pass::terms;
use crate::pass::InstanceError;
use crate::profile::Aggregate;
use crate::profile::{LogicalMemoryProfile, Path};
use crate::profiled::Accounting;
use crate::profiled::{Growth, InstanceCounts};
use crate::trace::{self, Phase};
use crate::wire::Wire;

/// How an instance's end is read.
#[derive(Debug, Clone)]
pub(super) struct Finish {
    /// Threads a large objective is counted on.
    pub(super) threads: usize,
    /// Whether a quadratic objective's table order is made, as the
    /// real-memory estimate simulates it ([`terms::growths`]).
    pub(super) growths: bool,
    /// Whose layout the instance-wide parts follow.
    pub(super) accounting: Accounting,
    /// The archive layer's annotations (OMMX 3.0 folds them in).
    pub(super) layer_annotations: Option<BTreeMap<String, String>>,
}

impl Finish {
    /// How the end of the instance `accounts` count is read, on `threads`
    /// threads: a quadratic objective's table order is made when the pass
    /// was asked for it.
    pub(super) fn new(accounts: &Accounts, threads: usize) -> Self {
        Finish {
            threads,
            growths: accounts.table_order && accounts.accounting == Accounting::Ommx29,
            accounting: accounts.accounting,
            layer_annotations: accounts.layer_annotations.clone(),
        }
    }
}

/// Everything after the stream's last element, once the entities are
/// checked (`state`): the singular fields decoded, the objective counted
/// or built and checked, the variables still pending, the hints and the
/// dependency checked, and the instance-wide parts visited.
/// With `compare`, 3.0's accounting of the same instance is finished too
/// ([`Comparing::finish`]), once 2.9.3's accepts it.
pub(super) fn finish_instance<O: EntityObserver + ?Sized>(
    mut state: State,
    mut rest: Singulars,
    end: u64,
    finish: Finish,
    mut compare: Option<&mut Comparing>,
    aggregate: &mut Aggregate,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let Finish {
        threads,
        growths,
        accounting,
        layer_annotations,
    } = finish;
    let _span = trace::span(Phase::Check);
    state.counts.summary.wire_bytes = end;
    let objective_wire_bytes = rest.objective_wire_bytes();
    let (instance, objective) = decode_singulars(&mut rest, end, threads)?;
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
    if accounting == Accounting::Ommx30 {
        let singular = pb::Instance {
            description,
            parameters,
            decision_variable_dependency,
            annotations,
            ..pb::Instance::default()
        };
        let objective = (objective, objective_wire_bytes);
        let layer = layer_annotations.as_ref();
        return finish_ommx30(
            state, singular, objective, end, threads, layer, aggregate, observer,
        );
    }
    // 3.0's rules look at the objective's variables.
    let counts_only = observer.counts_only() && compare.is_none();
    let need = match counts_only {
        true => ObjectiveNeed::Count,
        false => ObjectiveNeed::Outline,
    };
    let reading = ObjectiveReading {
        threads,
        need,
        growths,
    };
    let defined = |id| state.defines(id);
    let (objective, growths) = read_objective(objective, &defined, end, reading)?;
    drop(rest);
    let (shape, degree, waste, objective_variables) = match objective {
        Objective::Built(f, waste) => {
            let variables = f.variables(threads);
            // Most often every variable is defined by now; only otherwise
            // are they noted, in OMMX's order.
            if !variables.all(|id| state.defines(id)) {
                state.uses(User::Objective, &f)?;
            }
            // 3.0 refuses a coefficient that summing made infinite.
            if let Some(compare) = compare.as_deref_mut() {
                compare.check_objective(&f);
            }
            (f.shape(), f.degree(), waste, variables)
        }
        // Counted only when every variable it uses is defined, none
        // repeated; its variables gathered unless it counts only.
        Objective::Counted(c, variables) => (c.shape, c.degree, FileWaste::default(), variables),
    };
    state.counts.add_objective_terms(shape.terms());
    state.counts.gathered.objective_growths = growths;
    state.check_pending()?;
    let hints = check_hints(constraint_hints.unwrap_or_default(), &state)?;
    let file_dependency = compare
        .as_ref()
        .map(|_| decision_variable_dependency.clone());
    let dependency = check_dependency(decision_variable_dependency, &state)?;
    let parameters = Parameters(parameters.map(|p| p.entries));
    let description = Description(description);
    let annotations = Annotations::from_wire(annotations)?;

    let singular = Singular {
        objective: shape,
        objective_degree: degree,
        objective_variables: &objective_variables,
        objective_waste: waste,
        hints: &hints,
        dependency: &dependency,
        parameters: &parameters,
        description: &description,
        annotations: &annotations,
    };
    visit_instance_parts(&singular, aggregate);
    let cost = Cost {
        bytes: shape.bytes() as u64,
        wire_bytes: objective_wire_bytes,
        waste,
    };
    observer.objective(&EntityView::objective(shape.stored_terms as u64), cost);
    observer.hints(&hints);
    if !counts_only {
        observer.finish(&singular);
    }
    if let (Some(compare), Some(file)) = (compare, &file_dependency) {
        compare.finish(&singular, file, &state.counts);
    }
    Ok(state.counts)
}

/// The singular fields decoded as an Instance whose entity lists are empty,
/// and its objective as the wire gave it.
fn decode_singulars(
    rest: &mut Singulars,
    end: u64,
    threads: usize,
) -> Result<(pb::Instance, WireObjective<'_>), InstanceError> {
    rest.decode(threads).map_err(|e| match e {
        SingularsError::Decode(source) => InstanceError::Decode {
            field: "the instance's singular fields",
            offset: end,
            source,
        },
        SingularsError::Spool(e) => InstanceError::Spool(e),
    })
}

/// How [`read_objective`] reads the objective.
struct ObjectiveReading {
    threads: usize,
    need: ObjectiveNeed,
    /// A quadratic one's table order is wanted too, once counted.
    growths: bool,
}

/// What the pass needs of the objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ObjectiveNeed {
    /// Its count (for an observer that [counts only](EntityObserver::counts_only)).
    Count,
    /// What [`Singular`] shows of it: its count, its degree, its
    /// variables and what normalizing removed from the file.
    Outline,
    /// The function itself.
    Function,
}

/// The objective counted on the wire where the count gives all that is
/// needed of it (when normalizing removes nothing from the file, for its
/// outline), else built; with a quadratic one's table order when asked for
/// and its pieces were read on the wire (not where prost decoded it), its
/// terms each once (none merged or cancelled).
fn read_objective<D: Fn(u64) -> bool + Sync>(
    objective: WireObjective<'_>,
    defined: &D,
    end: u64,
    reading: ObjectiveReading,
) -> Result<(Objective, Option<Vec<Growth>>), InstanceError> {
    if reading.need != ObjectiveNeed::Outline {
        return read_counted(objective, defined, end, reading);
    }
    // Its variables gathered as the count checks them.
    let variables = SharedIdSet::default();
    let noted = |id| {
        let defined = defined(id);
        if defined {
            variables.note(id);
        }
        defined
    };
    let (mut objective, growths) = read_counted(objective, &noted, end, reading)?;
    if let Objective::Counted(_, gathered) = &mut objective {
        *gathered = variables.into_set();
    }
    Ok((objective, growths))
}

/// [`read_objective`], the count's variables checked with `defined`.
fn read_counted<D: Fn(u64) -> bool + Sync>(
    objective: WireObjective<'_>,
    defined: &D,
    end: u64,
    reading: ObjectiveReading,
) -> Result<(Objective, Option<Vec<Growth>>), InstanceError> {
    let ObjectiveReading {
        threads,
        need,
        growths,
    } = reading;
    // An error reading the order leaves it to the estimate's even spread.
    let order = |made: Wire<Option<Vec<Growth>>>| made.ok().flatten();
    let counted = |count: &dyn Fn() -> Wire<Option<CountedFunction>>| match need {
        ObjectiveNeed::Function => None,
        ObjectiveNeed::Count => count().ok().flatten(),
        ObjectiveNeed::Outline => count().ok().flatten().filter(CountedFunction::as_written),
    };
    Ok(match objective {
        WireObjective::Missing => return Err(ModelError::MissingObjective.into()),
        WireObjective::Decoded(wire) => {
            let (objective, waste) = from_prost(&wire)?;
            (Objective::Built(objective, waste), None)
        }
        // Checked in full by `rest.decode`.
        WireObjective::Pieces { arm, pieces } => {
            let objective = match counted(&|| terms::count(arm.as_ref(), defined, threads)) {
                Some(c) => Objective::Counted(c, IdSet::default()),
                None => built_objective(terms::normalize(&pieces, threads), &pieces, end)?,
            };
            let made = growths.then(|| terms::growths(arm.as_ref(), objective.stored_terms()));
            (objective, made.and_then(order))
        }
        WireObjective::Spooled(spooled) => {
            let objective = match counted(&|| spooled.count(defined, threads)) {
                Some(c) => Objective::Counted(c, IdSet::default()),
                None => {
                    let bytes = spooled.load().map_err(InstanceError::Spool)?;
                    built_objective(terms::normalize(&[&bytes], threads), &[&bytes], end)?
                }
            };
            let made = growths.then(|| spooled.growths(objective.stored_terms()));
            (objective, made.and_then(order))
        }
    })
}

/// The objective, checked, from what [`terms::normalize`] built of its
/// pieces.
fn built_objective(
    built: Wire<Result<(Function, FileWaste), ModelError>>,
    pieces: &[&[u8]],
    end: u64,
) -> Result<Objective, InstanceError> {
    let field = "the instance's singular fields";
    let (objective, waste) = function_built(built, pieces, field, end)?;
    Ok(Objective::Built(objective, waste))
}

/// The objective once read: built, with what normalizing removed from the
/// file; or counted, with its variables (none gathered for an observer
/// that [counts only](EntityObserver::counts_only)).
enum Objective {
    Built(Function, FileWaste),
    Counted(CountedFunction, IdSet),
}

impl Objective {
    fn stored_terms(&self) -> usize {
        match self {
            Objective::Built(f, _) => f.stored_terms(),
            Objective::Counted(c, _) => c.shape.stored_terms,
        }
    }
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
    let known_constraint = |id| {
        let (constraint, removed) = state.has_constraint(id);
        constraint || removed
    };
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
            |id| state.defines(id),
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
        if !state.has_constraint(h.constraint_id).1 {
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
            .any(|&id| state.has_constraint(id).1);
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
        if !state.defines(key) {
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

/// [`finish_instance`] for v1 input counted with OMMX 3.0's accounting: the
/// objective (an expression one too), 2.9.3's checks of what needs the
/// whole stream (hints aside: 3.0 drops them unread), then 3.0's own
/// (fixed and dependent variables), and 3.0's instance-wide parts visited,
/// the archive layer's annotations folded in.
#[allow(clippy::too_many_arguments)]
fn finish_ommx30<O: EntityObserver + ?Sized>(
    mut state: State,
    singular: pb::Instance,
    (objective, objective_wire_bytes): (WireObjective<'_>, u64),
    end: u64,
    threads: usize,
    layer_annotations: Option<&BTreeMap<String, String>>,
    aggregate: &mut Aggregate,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let refused = |e: ConversionError| InstanceError::Ommx30(Box::new(e));
    let mut uses = state.ommx30.take().unwrap_or_default();
    let pb::Instance {
        description,
        parameters,
        decision_variable_dependency: dependency,
        annotations,
        ..
    } = singular;
    // A variable the objective may not use: fixed, or assigned.
    let substituted = |id: u64| uses.fixed.contains(&id) || dependency.contains_key(&id);
    // Its function is shown to an observer that does not count only.
    let need = match observer.counts_only() {
        true => ObjectiveNeed::Count,
        false => ObjectiveNeed::Function,
    };
    let reading = ObjectiveReading {
        threads,
        need,
        growths: false,
    };
    // Counted only when it uses none of them, else built for 3.0's error.
    let defined = |id| state.defines(id) && !substituted(id);
    // What normalizing it dropped from the file, as 2.9.3 measures it.
    let mut objective_waste = FileWaste::default();
    let objective = match objective {
        WireObjective::Decoded(wire) => {
            let what = || "the objective".to_string();
            let f = ommx30::function(&wire, &what).map_err(convert::refused)?;
            if let Some(normalized) = f.compact() {
                objective_waste = FileWaste::of(&wire, normalized);
            }
            Ommx30Objective::Built(f)
        }
        other => match read_objective(other, &defined, end, reading)?.0 {
            Objective::Built(f, waste) => {
                let f = Func::Compact(f);
                ommx30::check_finite(&f).map_err(refused)?;
                objective_waste = waste;
                Ommx30Objective::Built(f)
            }
            Objective::Counted(c, _) => Ommx30Objective::Counted(c.shape),
        },
    };
    if let Ommx30Objective::Built(f) = &objective {
        let mut ids = Vec::new();
        f.for_each_variable(|id| ids.push(id));
        state.uses_ids(User::Objective, &mut ids, f.variables_ascend())?;
        state.counts.add_objective_terms(convert::terms_of(f));
    } else if let Ommx30Objective::Counted(shape) = &objective {
        state.counts.add_objective_terms(shape.terms());
    }
    state.check_pending()?;
    // 2.9.3's dependency rules, with an expression taken as a constant.
    let constant = |f: &pb::Function| match &f.function {
        Some(pb::FunctionArm::Expression(_)) => pb::Function {
            function: Some(pb::FunctionArm::Constant(0.0)),
        },
        _ => f.clone(),
    };
    let copy = dependency.iter().map(|(&k, f)| (k, constant(f))).collect();
    check_dependency(copy, &state)?;
    let annotations = Annotations::from_wire(annotations)?.0;
    let built = match &objective {
        Ommx30Objective::Built(f) => Some(f),
        Ommx30Objective::Counted(_) => None,
    };
    let variables = |note: &mut dyn FnMut(u64)| {
        if let Some(f) = built {
            f.for_each_variable(note);
        }
    };
    let dependency = ommx30_rules(&uses, &dependency, &variables).map_err(convert::refused)?;
    if !observer.counts_only() {
        // The objective is built for such an observer.
        let referenced = &mut uses.referenced;
        let functions = dependency.assignments.values();
        if let Ommx30Objective::Built(f) = &objective {
            f.for_each_variable(|id| _ = referenced.insert(id));
        }
        for f in functions {
            f.for_each_variable(|id| _ = referenced.insert(id));
        }
        dependency
            .assignments
            .keys()
            .for_each(|&id| _ = referenced.insert(id));
        observer.variables_used(&|id| uses.used.contains(&id) || uses.referenced.contains(&id));
    }

    let mut instance = ommx30::Instance {
        description,
        parameters: parameters.map(|p| p.entries),
        annotations,
        dependency,
        ..ommx30::Instance::default()
    };
    if let Some(layer) = layer_annotations {
        ommx30::fold_layer_annotations(&mut instance, layer);
    }
    instance.visit_parts_but_objective(&mut Path::new(), aggregate);
    let mut objective_path = Path::new();
    let mut objective_path = objective_path.with(ommx30::OBJECTIVE);
    let (bytes, terms) = match &objective {
        Ommx30Objective::Built(f) => {
            f.visit_logical_memory(&mut objective_path, aggregate);
            (crate::profile::bytes_of(f), f.stored_terms())
        }
        Ommx30Objective::Counted(shape) => {
            shape.visit_logical_memory(&mut objective_path, aggregate);
            (shape.bytes() as u64, shape.stored_terms)
        }
    };
    if let Some(mut leaves) = observer.leaves() {
        instance.visit_parts_but_objective(&mut Path::new(), &mut leaves);
        match &objective {
            Ommx30Objective::Built(f) => f.visit_logical_memory(&mut objective_path, &mut leaves),
            Ommx30Objective::Counted(s) => s.visit_logical_memory(&mut objective_path, &mut leaves),
        }
    }
    let cost = Cost {
        bytes,
        wire_bytes: objective_wire_bytes,
        waste: objective_waste,
    };
    observer.objective(&EntityView::objective(terms as u64), cost);
    observer.ommx30_singular(&Singular30 {
        objective: match &objective {
            Ommx30Objective::Built(f) => Some(f),
            Ommx30Objective::Counted(_) => None,
        },
        output_objective: None,
        assignments: &instance.dependency.assignments,
        description: instance.description.as_ref(),
        annotations: &instance.annotations,
        framing_waste: 0,
    });
    Ok(state.counts)
}

/// The objective under 3.0's accounting: built (any function 3.0 reads),
/// or only counted.
enum Ommx30Objective {
    Built(Func),
    Counted(Shape),
}
