//! Decoding an `ommx.v2.Instance` and building the model from it, with OMMX
//! 3.0's validation (`from_v2_bytes`).

use super::expression::Func;
use super::file_waste::scalar;
use super::{Collection, Dependency, Instance, OutputObjective, Reason, Row, V2Error};
use crate::model::EntityKind;
use crate::ommx_v1 as pb1;
use crate::ommx_v2 as pb;
use std::collections::BTreeMap;
use std::collections::BTreeSet;

/// Decodes and validates an `ommx.v2.Instance` payload.
pub fn decode(bytes: &[u8]) -> Result<Instance, V2Error> {
    use prost::Message;
    let message = pb::Instance::decode(bytes).map_err(|e| V2Error::Decode(e.to_string()))?;
    let mut inst = from_wire(message)?;
    inst.waste.close(bytes);
    Ok(inst)
}

pub fn read_function(
    f: Option<&pb1::Function>,
    what: impl Fn() -> String,
) -> Result<Func, V2Error> {
    match f {
        None => Err(V2Error::MissingFunction { what: what() }),
        Some(f) => Func::from_wire(f, &what),
    }
}

fn equality(value: i32, what: impl Fn() -> String) -> Result<(), V2Error> {
    match value {
        1 | 2 => Ok(()),
        _ => Err(V2Error::UnknownEquality {
            what: what(),
            equality: value,
        }),
    }
}

/// A set of ids, as the checks ask it: a whole message's (`BTreeSet`), or
/// one filled as a v2 payload streams (`IdSet`).
pub trait Has {
    fn has(&self, id: u64) -> bool;
}

impl Has for BTreeSet<u64> {
    fn has(&self, id: u64) -> bool {
        self.contains(&id)
    }
}

impl Has for crate::ids::IdSet {
    fn has(&self, id: u64) -> bool {
        self.contains(&id)
    }
}

/// Checks every variable `f` uses is defined (`vars` is `None` where the
/// reader does not check).
fn uses_defined(
    f: &Func,
    vars: Option<&dyn Has>,
    owner: impl Fn() -> String,
) -> Result<(), V2Error> {
    let Some(vars) = vars else {
        return Ok(());
    };
    let mut defined = true;
    f.for_each_variable(|id| defined &= vars.has(id));
    if defined {
        return Ok(());
    }
    let mut missing = None;
    // The first in OMMX's order (a linear function's terms may be in file
    // order: sorted only here, where one is missing).
    f.for_each_variable_first(|id| {
        if missing.is_none() && !vars.has(id) {
            missing = Some(id);
        }
    });
    match missing {
        Some(id) => Err(V2Error::UndefinedVariable { owner: owner(), id }),
        None => Ok(()),
    }
}

/// The parts shared by the four collections, with a row builder.
struct Parts<R> {
    active: BTreeMap<u64, R>,
    removed: BTreeMap<u64, R>,
    reasons: BTreeMap<u64, pb::RemovedReason>,
    contexts: BTreeMap<u64, pb::ConstraintContext>,
}

/// Builds a collection; removed rows' references are checked only when
/// `strict` (3.0's `from_v1_bytes` does not check them).
fn collection<R>(
    parts: Parts<R>,
    what: &'static str,
    vars: &BTreeSet<u64>,
    strict: bool,
    mut row: impl FnMut(u64, R, Option<&dyn Has>) -> Result<Row, V2Error>,
) -> Result<Collection, V2Error> {
    let Parts {
        active,
        removed,
        reasons,
        contexts,
    } = parts;
    let mut out = Collection::default();
    for (id, r) in active {
        out.active.insert(id, row(id, r, Some(vars))?);
    }
    for (id, r) in removed {
        if out.active.contains_key(&id) {
            return Err(V2Error::ActiveAndRemoved { what, id });
        }
        let row = row(id, r, strict.then_some(vars))?;
        let reason = reasons
            .get(&id)
            .map(|r| Reason {
                reason: r.reason.clone(),
                parameters: r.parameters.clone(),
            })
            .ok_or(V2Error::NoRemovedReason { kind: what, id })?;
        out.removed.insert(id, (row, reason));
    }
    let known = |id: &u64| out.active.contains_key(id) || out.removed.contains_key(id);
    if let Some(&id) = reasons.keys().find(|id| !out.removed.contains_key(id)) {
        return Err(V2Error::UndefinedRow {
            what: "a removed reason",
            kind: what,
            id,
        });
    }
    if let Some(&id) = contexts.keys().find(|id| !known(id)) {
        return Err(V2Error::UndefinedRow {
            what: "a constraint context",
            kind: what,
            id,
        });
    }
    for (id, context) in contexts {
        let pb::ConstraintContext { label, provenance } = context;
        if let Some(label) = label {
            out.labels.insert(id, label.into());
        }
        if !provenance.is_empty() {
            out.provenance.insert(id, provenance.len());
        }
    }
    Ok(out)
}

/// Builds the model from a decoded message, validating as `from_v2_bytes`
/// does.
pub fn from_wire(message: pb::Instance) -> Result<Instance, V2Error> {
    build(message, true)
}

/// Builds the model; `strict` is false for a message converted from v1,
/// whose removed rows and substitutions 3.0 does not check. The steps run in
/// 3.0's order, so that the error reported is the one it reports.
pub(super) fn build(message: pb::Instance, strict: bool) -> Result<Instance, V2Error> {
    let wire = super::entity::wire_sizes(&message);
    let pb::Instance {
        required_features,
        description,
        decision_variables,
        objective,
        regular_constraints,
        sense,
        parameters,
        indicator_constraints,
        one_hot_constraints,
        sos1_constraints,
        decision_variable_dependency,
        named_functions,
        annotations,
        output_objective,
    } = message;
    check_header(&required_features, sense, strict)?;
    let mut inst = Instance {
        description,
        parameters: parameters.map(|p| p.entries.into_iter().collect()),
        annotations,
        wire,
        ..Instance::default()
    };
    let table = match decision_variables {
        Some(table) => table,
        None if strict => return Err(V2Error::MissingVariableTable),
        None => pb::DecisionVariableTable::default(),
    };
    let fixed: BTreeSet<u64> = table.fixed_values.keys().copied().collect();
    // One-hot and indicator variables must be binary.
    let binary: BTreeSet<u64> = table
        .entries
        .iter()
        .filter(|(_, v)| v.kind == 1)
        .map(|(&id, _)| id)
        .collect();
    add_variables(&mut inst, table, strict)?;
    let vars = inst.variables.clone();
    let read = read_function(objective.as_ref(), || "the objective".into())?;
    uses_defined(&read, Some(&vars), || "the objective".into())?;
    inst.waste.objective(objective.as_ref(), &read);
    inst.objective = Some(read);
    add_rows(
        &mut inst,
        Collections {
            regular: regular_constraints.unwrap_or_default(),
            indicator: indicator_constraints.unwrap_or_default(),
            one_hot: one_hot_constraints.unwrap_or_default(),
            sos1: sos1_constraints.unwrap_or_default(),
        },
        &vars,
        &binary,
        strict,
    )?;
    add_named_functions(&mut inst, named_functions.unwrap_or_default(), &vars)?;
    inst.dependency = assignments(&decision_variable_dependency, &vars, strict)?;
    check_substituted_out(&inst, &fixed)?;
    if let Some(o) = output_objective {
        if !(1..=2).contains(&o.sense) {
            return Err(V2Error::UnknownSense(o.sense));
        }
        let f = read_function(o.function.as_ref(), || "the output objective".into())?;
        uses_defined(&f, Some(&vars), || "the output objective".into())?;
        inst.output_objective = Some(OutputObjective { function: f });
    }
    Ok(inst)
}

/// The features the payload requires (all four known ones) and its sense
/// (v1's unspecified sense is read as minimize, by 2.9.3 and 3.0 alike).
pub fn check_header(required_features: &[i32], sense: i32, strict: bool) -> Result<(), V2Error> {
    if let Some(&f) = required_features.iter().find(|&&f| !(1..=4).contains(&f)) {
        return Err(V2Error::UnknownFeature(f));
    }
    if strict && !(1..=2).contains(&sense) {
        return Err(V2Error::UnknownSense(sense));
    }
    Ok(())
}

/// The decision variable table: each variable checked as 2.9.3 checks a v1
/// variable (3.0 shares those rules), then its labels and fixed values,
/// which must name defined variables.
fn add_variables(
    inst: &mut Instance,
    table: pb::DecisionVariableTable,
    strict: bool,
) -> Result<(), V2Error> {
    for (&id, v) in &table.entries {
        check_variable(id, v, table.fixed_values.get(&id).copied(), strict)?;
        inst.variables.insert(id);
    }
    let undefined = |what: &'static str, id: u64| V2Error::UndefinedRow {
        what,
        kind: "decision variable",
        id,
    };
    let vars = &inst.variables;
    if let Some(&id) = table.labels.keys().find(|id| !vars.contains(id)) {
        return Err(undefined("a variable label", id));
    }
    if let Some(&id) = table.fixed_values.keys().find(|id| !vars.contains(id)) {
        return Err(undefined("a fixed value", id));
    }
    inst.variable_labels = table
        .labels
        .into_iter()
        .map(|(k, l)| (k, l.into()))
        .collect();
    inst.fixed_values = table.fixed_values.keys().copied().collect();
    Ok(())
}

/// One entry of the decision variable table, with its fixed value: its
/// kind, its bound (required when `strict`) and the fixed value checked as
/// 2.9.3 checks a v1 variable (3.0 shares those rules).
pub fn check_variable(
    id: u64,
    v: &pb::DecisionVariable,
    fixed: Option<f64>,
    strict: bool,
) -> Result<(), V2Error> {
    if !(1..=5).contains(&v.kind) {
        return Err(V2Error::UnknownKind { id, kind: v.kind });
    }
    // v1's bound is optional (its kind's default then); v2's is not.
    if strict && v.bound.is_none() {
        return Err(V2Error::MissingBound(id));
    }
    let as_v1 = pb1::DecisionVariable {
        id,
        kind: v.kind,
        bound: v.bound,
        substituted_value: fixed,
        ..Default::default()
    };
    crate::model::DecisionVariable::from_wire(as_v1)
        .map_err(|source| V2Error::Variable { id, source })?;
    Ok(())
}

/// A regular row; its references checked against `vars` when given.
pub fn regular_row(
    id: u64,
    c: &pb::RegularConstraint,
    vars: Option<&dyn Has>,
) -> Result<Row, V2Error> {
    let what = || format!("constraint {id}");
    equality(c.equality, what)?;
    let f = read_function(c.function.as_ref(), what)?;
    uses_defined(&f, vars, what)?;
    Ok(Row::Regular(f))
}

/// An indicator row; its references checked against `vars` when given, its
/// indicator against the binary variables.
pub fn indicator_row(
    id: u64,
    c: &pb::IndicatorConstraint,
    vars: Option<&dyn Has>,
    binary: &dyn Has,
) -> Result<Row, V2Error> {
    let what = || format!("indicator constraint {id}");
    equality(c.equality, what)?;
    binary_variable(&what, c.indicator_variable, vars, binary)?;
    let f = read_function(c.function.as_ref(), what)?;
    uses_defined(&f, vars, what)?;
    Ok(Row::Indicator(c.indicator_variable, f))
}

/// A named function's entry, over defined variables.
pub fn named_function(id: u64, nf: &pb::NamedFunction, vars: &dyn Has) -> Result<Func, V2Error> {
    let what = || format!("named function {id}");
    let f = read_function(nf.function.as_ref(), what)?;
    uses_defined(&f, Some(vars), what)?;
    Ok(f)
}

/// The four constraint collections, as the message holds them.
struct Collections {
    regular: pb::RegularConstraintCollection,
    indicator: pb::IndicatorConstraintCollection,
    one_hot: pb::OneHotConstraintCollection,
    sos1: pb::Sos1ConstraintCollection,
}

/// Every constraint collection's rows, in 3.0's order: regular, indicator,
/// one-hot, SOS1 (`binary`: the binary variables).
fn add_rows(
    inst: &mut Instance,
    c: Collections,
    vars: &BTreeSet<u64>,
    binary: &BTreeSet<u64>,
    strict: bool,
) -> Result<(), V2Error> {
    let Collections {
        regular,
        indicator,
        one_hot,
        sos1,
    } = c;
    let waste = &mut inst.waste;
    inst.regular = collection(
        Parts {
            active: regular.active,
            removed: regular.removed,
            reasons: regular.removed_reasons,
            contexts: regular.contexts,
        },
        "constraint",
        vars,
        strict,
        |id, c, vars| {
            let row = regular_row(id, &c, vars)?;
            if let Row::Regular(f) = &row {
                let rest = scalar(c.equality as u64);
                let entity = (EntityKind::Constraint, id);
                waste.entry(entity, c.function.as_ref(), f, rest);
            }
            Ok(row)
        },
    )?;
    let removed = inst.regular.removed.keys().copied();
    waste.removed(removed, EntityKind::Constraint, EntityKind::Removed);
    inst.indicator = collection(
        Parts {
            active: indicator.active,
            removed: indicator.removed,
            reasons: indicator.removed_reasons,
            contexts: indicator.contexts,
        },
        "indicator constraint",
        vars,
        strict,
        |id, c, vars| {
            let row = indicator_row(id, &c, vars, binary)?;
            if let Row::Indicator(_, f) = &row {
                let rest = scalar(c.indicator_variable) + scalar(c.equality as u64);
                let entity = (EntityKind::Indicator, id);
                waste.entry(entity, c.function.as_ref(), f, rest);
            }
            Ok(row)
        },
    )?;
    let removed = inst.indicator.removed.keys().copied();
    waste.removed(removed, EntityKind::Indicator, EntityKind::RemovedIndicator);
    let one_hot_sets = |m: BTreeMap<u64, pb::OneHotConstraint>| {
        m.into_iter().map(|(k, c)| (k, c.variables)).collect()
    };
    inst.one_hot = collection(
        Parts {
            active: one_hot_sets(one_hot.active),
            removed: one_hot_sets(one_hot.removed),
            reasons: one_hot.removed_reasons,
            contexts: one_hot.contexts,
        },
        "one-hot constraint",
        vars,
        strict,
        set_row("one-hot constraint", Some(binary)),
    )?;
    let sos1_sets = |m: BTreeMap<u64, pb::Sos1Constraint>| {
        m.into_iter().map(|(k, c)| (k, c.variables)).collect()
    };
    inst.sos1 = collection(
        Parts {
            active: sos1_sets(sos1.active),
            removed: sos1_sets(sos1.removed),
            reasons: sos1.removed_reasons,
            contexts: sos1.contexts,
        },
        "SOS1 constraint",
        vars,
        strict,
        set_row("SOS1 constraint", None),
    )?;
    Ok(())
}

/// The row of a set constraint (one-hot, SOS1): at least one variable, none
/// twice, each defined, and each binary when `binary` lists the binary ones
/// (one-hot).
pub fn set_row<'b>(
    kind: &'static str,
    binary: Option<&'b dyn Has>,
) -> impl Fn(u64, Vec<u64>, Option<&dyn Has>) -> Result<Row, V2Error> + 'b {
    move |id, variables, vars| {
        let owner = || format!("{kind} {id}");
        if variables.is_empty() {
            return Err(V2Error::NoVariables { owner: owner() });
        }
        let mut set = BTreeSet::new();
        for &v in &variables {
            if !set.insert(v) {
                return Err(V2Error::RepeatedVariable {
                    owner: owner(),
                    id: v,
                });
            }
            match binary {
                Some(binary) => binary_variable(&owner, v, vars, binary)?,
                None if vars.is_some_and(|vars| !vars.has(v)) => {
                    return Err(V2Error::UndefinedVariable {
                        owner: owner(),
                        id: v,
                    })
                }
                None => {}
            }
        }
        Ok(Row::Set(set))
    }
}

/// Checks a variable that must be binary (an indicator's, a one-hot's) where
/// the row's references are checked (`vars`): defined, and of kind binary.
fn binary_variable(
    owner: &dyn Fn() -> String,
    id: u64,
    vars: Option<&dyn Has>,
    binary: &dyn Has,
) -> Result<(), V2Error> {
    match vars {
        Some(vars) if !vars.has(id) => Err(V2Error::UndefinedVariable { owner: owner(), id }),
        Some(_) if !binary.has(id) => Err(V2Error::NotBinary { owner: owner(), id }),
        _ => Ok(()),
    }
}

/// The named functions, each over defined variables, then their labels,
/// which must name defined functions.
fn add_named_functions(
    inst: &mut Instance,
    named: pb::NamedFunctionTable,
    vars: &BTreeSet<u64>,
) -> Result<(), V2Error> {
    for (id, nf) in named.entries {
        let f = named_function(id, &nf, vars)?;
        let entity = (EntityKind::NamedFunction, id);
        inst.waste.entry(entity, nf.function.as_ref(), &f, 0);
        inst.named_functions.insert(id, f);
    }
    if let Some(&id) = named
        .labels
        .keys()
        .find(|id| !inst.named_functions.contains_key(id))
    {
        return Err(V2Error::UndefinedRow {
            what: "a named-function label",
            kind: "named function",
            id,
        });
    }
    inst.named_labels = named
        .labels
        .into_iter()
        .map(|(k, l)| (k, l.into()))
        .collect();
    Ok(())
}

/// The assignments `x = f(...)`: each of a defined variable, as a graph
/// without cycles (whether one is fixed too is checked after, with the
/// variables in use: [`check_substituted_out`]).
pub fn assignments(
    given: &BTreeMap<u64, pb1::Function>,
    vars: &dyn Has,
    strict: bool,
) -> Result<Dependency, V2Error> {
    let mut assignments = BTreeMap::new();
    for (id, f) in given {
        let what = || format!("the assignment of variable {id}");
        if !vars.has(*id) {
            return Err(V2Error::UndefinedRow {
                what: "decision_variable_dependency",
                kind: "decision variable",
                id: *id,
            });
        }
        let f = read_function(Some(f), what)?;
        uses_defined(&f, strict.then_some(vars), what)?;
        assignments.insert(*id, f);
    }
    dependency(assignments)
}

/// Fixed and dependent variables are substituted out of the active
/// problem: 3.0 refuses a payload whose objective or active rows still use
/// an assigned variable, then one that uses a fixed one, then one with a
/// variable both fixed and assigned. It checks each on sets ordered by id,
/// so each names the smallest such variable.
fn check_substituted_out(inst: &Instance, fixed: &BTreeSet<u64>) -> Result<(), V2Error> {
    let assigned = &inst.dependency.assignments;
    let objective = inst.objective.iter().map(RowRef::Function);
    // Every active row: a function's variables, an indicator's variable, a
    // one-hot's or an SOS1's variables (3.0 refuses an SOS1 row on a fixed
    // variable too: the differential's seed 781).
    let rows = inst
        .collections()
        .into_iter()
        .flat_map(|c| c.active.values())
        .map(RowRef::Row);
    let (mut dependent_used, mut fixed_used) = (None::<u64>, None::<u64>);
    let mut see = |v: u64| {
        let smallest = |seen: Option<u64>| Some(seen.map_or(v, |s| s.min(v)));
        if assigned.contains_key(&v) {
            dependent_used = smallest(dependent_used);
        }
        if fixed.contains(&v) {
            fixed_used = smallest(fixed_used);
        }
    };
    for r in objective.chain(rows) {
        match r {
            RowRef::Function(f) => f.for_each_variable(&mut see),
            RowRef::Row(row) => row.for_each_variable(&mut see),
        }
    }
    if let Some(v) = dependent_used {
        return Err(V2Error::DependentUsed(v));
    }
    if let Some(v) = fixed_used {
        return Err(V2Error::FixedUsed(v));
    }
    match assigned.keys().find(|id| fixed.contains(id)) {
        Some(&v) => Err(V2Error::FixedAndDependent(v)),
        None => Ok(()),
    }
}

/// What the check of substituted variables walks: the objective or a row.
enum RowRef<'a> {
    Function(&'a Func),
    Row(&'a Row),
}

/// The dependency graph of `x = f(y, ...)` assignments: an edge from every
/// variable an assignment uses to the variable it assigns. Refuses cycles.
pub fn dependency(assignments: BTreeMap<u64, Func>) -> Result<Dependency, V2Error> {
    let mut nodes = BTreeSet::new();
    let mut edges = BTreeSet::new();
    for (&key, f) in &assignments {
        nodes.insert(key);
        f.for_each_variable(|v| {
            nodes.insert(v);
            edges.insert((v, key));
        });
    }
    // Kahn's algorithm over the assigned variables: a cycle leaves some behind.
    let mut uses: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for &(from, to) in &edges {
        if assignments.contains_key(&from) {
            uses.entry(to).or_default().insert(from);
        }
    }
    let mut done = BTreeSet::new();
    loop {
        let ready: Vec<u64> = assignments
            .keys()
            .filter(|k| !done.contains(*k))
            .filter(|k| {
                uses.get(k)
                    .is_none_or(|u| u.iter().all(|x| done.contains(x)))
            })
            .copied()
            .collect();
        if ready.is_empty() {
            break;
        }
        done.extend(ready);
    }
    if let Some(&stuck) = assignments.keys().find(|k| !done.contains(*k)) {
        return Err(V2Error::CyclicDependency(stuck));
    }
    Ok(Dependency {
        nodes: nodes.len(),
        edges: edges.len(),
        assignments,
    })
}
