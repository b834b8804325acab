//! An `ommx.v1` instance as OMMX 3.0's `from_v1_bytes` converts it (for the
//! migration view), given one that OMMX 2.9.3 accepts.
//!
//! Entity fields move to 3.0's side tables: names, subscripts, parameters and
//! descriptions become labels, `substituted_value` becomes a fixed value,
//! removed constraints keep their reason. Constraint hints are dropped unread
//! (3.0 has first-class one-hot and SOS1 constraints instead), so a hint
//! naming an undefined row or variable, or one twice, is no error. 3.0
//! refuses more than 2.9.3: a dependent variable used by the objective or a
//! constraint, a variable both fixed and dependent, and a coefficient that
//! summing duplicate terms made infinite.

use std::collections::BTreeMap;

use crate::ommx_v1 as pb1;
use crate::ommx_v2 as pb;

use super::{build, Func, Instance, Row, V2Error};
use crate::model::entities::{bound_holds_in_ommx30, Kind};
use crate::model::Function;

fn label(
    name: Option<String>,
    subscripts: Vec<i64>,
    parameters: BTreeMap<String, String>,
    description: Option<String>,
) -> Option<pb::ModelingLabel> {
    let label = pb::ModelingLabel {
        name,
        subscripts,
        parameters,
        description,
    };
    (label != pb::ModelingLabel::default()).then_some(label)
}

fn context(label: Option<pb::ModelingLabel>) -> Option<pb::ConstraintContext> {
    label.map(|label| pb::ConstraintContext {
        label: Some(label),
        provenance: Vec::new(),
    })
}

/// Why 3.0 refuses what 2.9.3 accepts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConversionError {
    #[error("dependent variable {0} is used in the objective or a constraint")]
    DependentUsed(u64),
    #[error("a coefficient is not finite after summing duplicate terms ({0})")]
    NonFinite(String),
    #[error("decision variable {id} is {kind} with bound [{lower}, {upper}], which holds no value of that kind in OMMX 3.0 (its ends rounded only within the tolerance)")]
    BoundInconsistentToKind {
        id: u64,
        kind: &'static str,
        lower: f64,
        upper: f64,
    },
    #[error(transparent)]
    Model(#[from] V2Error),
}

fn finite(f: &Func, what: &str) -> Result<(), ConversionError> {
    // v1 input holds no expression (2.9.3 refuses them before this).
    let Some(f) = f.compact() else {
        return Ok(());
    };
    let coefficients: Vec<f64> = match f {
        Function::Zero => Vec::new(),
        Function::Constant(c) => vec![*c],
        Function::Linear { terms, constant } => {
            terms.iter().map(|t| t.1).chain([*constant]).collect()
        }
        Function::Quadratic {
            quadratic,
            linear,
            constant,
        } => quadratic
            .iter()
            .map(|t| t.1)
            .chain(linear.iter().map(|t| t.1))
            .chain([*constant])
            .collect(),
        Function::Polynomial { terms } => terms.iter().map(|t| t.1).collect(),
    };
    match coefficients.iter().all(|c| c.is_finite()) {
        true => Ok(()),
        false => Err(ConversionError::NonFinite(what.to_string())),
    }
}

/// Converts a v1 instance (already accepted by 2.9.3's rules, hints aside).
pub fn from_v1(v1: pb1::Instance) -> Result<Instance, ConversionError> {
    let pb1::Instance {
        description,
        decision_variables,
        objective,
        constraints,
        sense,
        parameters,
        constraint_hints: _,
        removed_constraints,
        decision_variable_dependency,
        named_functions,
        annotations,
        format_version: _,
    } = v1;
    bounds_hold(&decision_variables)?;
    let message = pb::Instance {
        description,
        decision_variables: Some(variable_table(decision_variables)),
        objective,
        regular_constraints: Some(regular_collection(constraints, removed_constraints)),
        sense,
        parameters,
        decision_variable_dependency,
        named_functions: Some(named_table(named_functions)),
        annotations,
        ..pb::Instance::default()
    };
    let instance = build::build(message, false)?;
    no_dependent_variable_used(&instance)?;
    every_coefficient_finite(&instance)?;
    Ok(instance)
}

/// 3.0's rule for an integer or binary variable's bound, stricter than
/// 2.9.3's (which the v1 pass applied already).
fn bounds_hold(variables: &[pb1::DecisionVariable]) -> Result<(), ConversionError> {
    for v in variables {
        let (Some(kind @ (Kind::Binary | Kind::Integer)), Some(bound)) =
            (Kind::from_wire(v.id, v.kind).ok(), &v.bound)
        else {
            // An absent bound reads as [0, 0] in both, which holds 0.
            continue;
        };
        if !bound_holds_in_ommx30(kind, bound.lower, bound.upper) {
            return Err(ConversionError::BoundInconsistentToKind {
                id: v.id,
                kind: kind.name(),
                lower: bound.lower,
                upper: bound.upper,
            });
        }
    }
    Ok(())
}

/// Variables move to 3.0's table: kind and bound, a label, a fixed value.
fn variable_table(variables: Vec<pb1::DecisionVariable>) -> pb::DecisionVariableTable {
    let mut table = pb::DecisionVariableTable::default();
    for v in variables {
        let pb1::DecisionVariable {
            id,
            kind,
            bound,
            name,
            subscripts,
            parameters,
            description,
            substituted_value,
        } = v;
        table
            .entries
            .insert(id, pb::DecisionVariable { kind, bound });
        if let Some(l) = label(name, subscripts, parameters, description) {
            table.labels.insert(id, l);
        }
        if let Some(value) = substituted_value {
            table.fixed_values.insert(id, value);
        }
    }
    table
}

/// A v1 constraint as a regular row, with its id and its context.
fn split(c: pb1::Constraint) -> (u64, pb::RegularConstraint, Option<pb::ConstraintContext>) {
    let pb1::Constraint {
        id,
        equality,
        function,
        parameters,
        name,
        description,
        subscripts,
    } = c;
    let row = pb::RegularConstraint { equality, function };
    (
        id,
        row,
        context(label(name, subscripts, parameters, description)),
    )
}

/// Active and removed constraints as 3.0's regular collection: removed rows
/// keep their reason, labels move to the rows' contexts.
fn regular_collection(
    constraints: Vec<pb1::Constraint>,
    removed_constraints: Vec<pb1::RemovedConstraint>,
) -> pb::RegularConstraintCollection {
    let mut regular = pb::RegularConstraintCollection::default();
    let mut contexts = BTreeMap::new();
    for c in constraints {
        let (id, row, ctx) = split(c);
        regular.active.insert(id, row);
        contexts.extend(ctx.map(|c| (id, c)));
    }
    for r in removed_constraints {
        let pb1::RemovedConstraint {
            constraint,
            removed_reason,
            removed_reason_parameters,
        } = r;
        let (id, row, ctx) = split(constraint.unwrap_or_default());
        regular.removed.insert(id, row);
        regular.removed_reasons.insert(
            id,
            pb::RemovedReason {
                reason: removed_reason,
                parameters: removed_reason_parameters,
            },
        );
        contexts.extend(ctx.map(|c| (id, c)));
    }
    regular.contexts = contexts;
    regular
}

/// Named functions move to 3.0's table, their labels beside them.
fn named_table(functions: Vec<pb1::NamedFunction>) -> pb::NamedFunctionTable {
    let mut named = pb::NamedFunctionTable::default();
    for f in functions {
        let pb1::NamedFunction {
            id,
            function,
            subscripts,
            parameters,
            name,
            description,
        } = f;
        named.entries.insert(id, pb::NamedFunction { function });
        if let Some(l) = label(name, subscripts, parameters, description) {
            named.labels.insert(id, l);
        }
    }
    named
}

/// The functions of the active regular rows.
fn active_functions(instance: &Instance) -> impl Iterator<Item = &Func> {
    instance.regular.active.values().filter_map(|r| match r {
        Row::Regular(f) => Some(f),
        _ => None,
    })
}

/// 3.0 refuses a dependent variable (a key of the dependency) used by the
/// objective or an active constraint.
fn no_dependent_variable_used(instance: &Instance) -> Result<(), ConversionError> {
    let dependent = |f: &Func| {
        let mut used = None;
        f.for_each_variable(|v| {
            if used.is_none() && instance.dependency.assignments.contains_key(&v) {
                used = Some(v);
            }
        });
        used
    };
    for f in instance.objective.iter().chain(active_functions(instance)) {
        if let Some(v) = dependent(f) {
            return Err(ConversionError::DependentUsed(v));
        }
    }
    Ok(())
}

/// 3.0 refuses a coefficient that summing duplicate terms made infinite,
/// in any function it holds.
fn every_coefficient_finite(instance: &Instance) -> Result<(), ConversionError> {
    let removed = instance
        .regular
        .removed
        .values()
        .filter_map(|(r, _)| match r {
            Row::Regular(f) => Some(f),
            _ => None,
        });
    let all = instance
        .objective
        .iter()
        .chain(active_functions(instance))
        .chain(removed)
        .chain(instance.named_functions.values())
        .chain(instance.dependency.assignments.values());
    for f in all {
        finite(f, "a function")?;
    }
    Ok(())
}
