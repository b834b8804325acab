//! `ommx.v1` entities as OMMX 3.0's `from_v1_bytes` converts them, one at a
//! time, so that a v1 instance is counted under 3.0's accounting as the
//! stream goes by, never held whole.
//!
//! Entity fields move to 3.0's side tables: names, subscripts, parameters and
//! descriptions become labels, `substituted_value` becomes a fixed value,
//! removed constraints keep their reason. Constraint hints are dropped unread
//! (3.0 has first-class one-hot and SOS1 constraints instead), so a hint
//! naming an undefined row or variable, or one twice, is no error. 3.0
//! reads expression functions, which 2.9.3 refuses, and refuses more than
//! 2.9.3: a binary or integer variable whose bound holds no value of its
//! kind, a fixed or dependent variable used by the objective or an active
//! constraint, a variable both fixed and dependent, and a coefficient that
//! summing duplicate terms made infinite. The per-entity rules are here;
//! the cross-entity ones need the whole stream and are the pass's
//! (`pass/finish.rs`).

use std::collections::BTreeMap;

use crate::model::entities::{bound_holds_in_ommx30, Kind};
use crate::model::{
    Constraint, DecisionVariable, EntityKind, FileWaste, Function, ModelError, Name,
    RemovedConstraint, Subscripts,
};
use crate::ommx_v1 as pb1;

use super::entity::{Part, REGULAR};
use super::{Entity, Func, Label, Reason, Row, V2Error};

/// The container of 3.0's regular constraint collection.
pub const REGULAR_COLLECTION: &str = "Instance.constraint_collection";

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

/// Why one v1 entity cannot be converted: 2.9.3 refuses it already
/// (`Model`), or only 3.0 does (`Ommx30`).
#[derive(Debug, Clone, PartialEq)]
pub enum EntityRefusal {
    Model(ModelError),
    Ommx30(ConversionError),
}

impl From<ModelError> for EntityRefusal {
    fn from(e: ModelError) -> Self {
        EntityRefusal::Model(e)
    }
}

impl From<ConversionError> for EntityRefusal {
    fn from(e: ConversionError) -> Self {
        EntityRefusal::Ommx30(e)
    }
}

/// 3.0's rule for an integer or binary variable's bound (as the file
/// gives it), stricter than 2.9.3's.
pub fn check_bound(id: u64, kind: i32, bound: Option<(f64, f64)>) -> Result<(), ConversionError> {
    let (Some(kind @ (Kind::Binary | Kind::Integer)), Some((lower, upper))) =
        (Kind::from_wire(id, kind).ok(), bound)
    else {
        // An absent bound reads as [0, 0] in both, which holds 0.
        return Ok(());
    };
    match bound_holds_in_ommx30(kind, lower, upper) {
        true => Ok(()),
        false => Err(ConversionError::BoundInconsistentToKind {
            id,
            kind: kind.name(),
            lower,
            upper,
        }),
    }
}

/// 3.0 refuses a coefficient that summing duplicate terms made infinite.
pub fn check_finite(f: &Func) -> Result<(), ConversionError> {
    match f.compact() {
        Some(f) => check_finite_compact(f),
        None => Ok(()),
    }
}

/// [`check_finite`] of a compact function.
pub fn check_finite_compact(f: &Function) -> Result<(), ConversionError> {
    let finite = |c: &f64| c.is_finite();
    let all_finite = match f {
        Function::Zero => true,
        Function::Constant(c) => finite(c),
        Function::Linear { terms, constant } => {
            terms.iter().map(|t| &t.1).all(finite) && finite(constant)
        }
        Function::Quadratic {
            quadratic,
            linear,
            constant,
        } => {
            quadratic.iter().map(|t| &t.1).all(finite)
                && linear.iter().map(|t| &t.1).all(finite)
                && finite(constant)
        }
        Function::Polynomial { terms } => terms.iter().map(|t| &t.1).all(finite),
    };
    match all_finite {
        true => Ok(()),
        false => Err(ConversionError::NonFinite("a function".to_string())),
    }
}

/// A function as 3.0 reads it from v1: a compact one by 2.9.3's rules (and
/// its errors), an expression by 3.0's own; `what` names it.
pub fn function(f: &pb1::Function, what: &dyn Fn() -> String) -> Result<Func, EntityRefusal> {
    let func = match &f.function {
        Some(pb1::FunctionArm::Expression(_)) => {
            Func::from_wire(f, what).map_err(ConversionError::Model)?
        }
        _ => Func::Compact(Function::from_wire(f)?),
    };
    check_finite(&func)?;
    Ok(func)
}

/// Whether `f` is an expression function, which 2.9.3 refuses.
fn is_expression(f: Option<&pb1::Function>) -> bool {
    matches!(
        f.and_then(|f| f.function.as_ref()),
        Some(pb1::FunctionArm::Expression(_))
    )
}

fn label(
    name: Option<Name>,
    subscripts: Subscripts,
    parameters: BTreeMap<String, String>,
    description: Option<String>,
) -> Option<Label> {
    let label = Label {
        name,
        subscripts,
        parameters,
        description,
    };
    (label != Label::default()).then_some(label)
}

/// [`label`] of borrowed fields.
fn label_of(
    name: Option<&str>,
    subscripts: &[i64],
    parameters: &BTreeMap<String, String>,
    description: &Option<String>,
) -> Option<Label> {
    let empty = name.is_none() && subscripts.is_empty() && parameters.is_empty();
    match empty && description.is_none() {
        true => None,
        false => label(
            name.map(Name::from),
            Subscripts::from_slice(subscripts),
            parameters.clone(),
            description.clone(),
        ),
    }
}

/// What 3.0 holds of one entity, besides its label.
#[derive(Debug, Clone, PartialEq)]
enum Held {
    Variable { fixed: bool },
    Row { row: Row, reason: Option<Reason> },
    Named(Func),
}

/// One v1 entity as 3.0 holds it after `from_v1_bytes`.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    pub kind: EntityKind,
    pub id: u64,
    label: Option<Label>,
    held: Held,
    /// What normalizing its function dropped or merged from the file's
    /// terms, as 2.9.3 measures it (3.0 normalizes compact functions by the
    /// same rules); none for an expression.
    pub waste: FileWaste,
}

impl Converted {
    /// A decision variable, checked by 2.9.3's rules and then 3.0's bound
    /// rule.
    pub fn variable(v: pb1::DecisionVariable) -> Result<Self, EntityRefusal> {
        let bound = v.bound.as_ref().map(|b| (b.lower, b.upper));
        let (id, kind) = (v.id, v.kind);
        let v = DecisionVariable::from_wire(v)?;
        check_bound(id, kind, bound)?;
        let DecisionVariable {
            id,
            substituted_value,
            name,
            subscripts,
            parameters,
            description,
            ..
        } = v;
        Ok(Self {
            kind: EntityKind::Variable,
            id,
            label: label(name, subscripts, parameters, description),
            held: Held::Variable {
                fixed: substituted_value.is_some(),
            },
            waste: FileWaste::default(),
        })
    }

    /// An active constraint as a row of 3.0's regular collection.
    pub fn constraint(c: pb1::Constraint) -> Result<Self, EntityRefusal> {
        let (c, func, waste) = checked_constraint(c)?;
        let Constraint {
            id,
            name,
            subscripts,
            parameters,
            description,
            ..
        } = c;
        Ok(Self {
            kind: EntityKind::Constraint,
            id,
            label: label(name, subscripts, parameters, description),
            held: Held::Row {
                row: Row::Regular(func),
                reason: None,
            },
            waste,
        })
    }

    /// A removed constraint as a removed row with its reason.
    pub fn removed(r: pb1::RemovedConstraint) -> Result<Self, EntityRefusal> {
        // 2.9.3's checks, with an expression taken as a constant.
        let mut copy = r;
        let expression = copy
            .constraint
            .as_mut()
            .and_then(|c| c.function.take_if(|f| is_expression(Some(f))));
        if expression.is_some() {
            if let Some(c) = &mut copy.constraint {
                c.function = Some(constant_zero());
            }
        }
        let (removed, waste) = RemovedConstraint::from_wire_measured(copy)?;
        let waste = match expression {
            Some(_) => FileWaste::default(),
            None => waste,
        };
        let RemovedConstraint {
            constraint:
                Constraint {
                    id,
                    function,
                    name,
                    subscripts,
                    parameters,
                    description,
                    ..
                },
            removed_reason,
            removed_reason_parameters,
        } = removed;
        let func = match expression {
            Some(e) => self::function(&e, &|| format!("removed constraint {id}"))?,
            None => {
                let func = Func::Compact(function);
                check_finite(&func)?;
                func
            }
        };
        Ok(Self {
            kind: EntityKind::Removed,
            id,
            label: label(name, subscripts, parameters, description),
            held: Held::Row {
                row: Row::Regular(func),
                reason: Some(Reason {
                    reason: removed_reason,
                    parameters: removed_reason_parameters,
                }),
            },
            waste,
        })
    }

    /// A named function (2.9.3 checks its function only).
    pub fn named_function(n: pb1::NamedFunction) -> Result<Self, EntityRefusal> {
        let rest = crate::model::waste::named_rest(&n);
        let pb1::NamedFunction {
            id,
            function,
            subscripts,
            parameters,
            name,
            description,
        } = n;
        let function = function.ok_or_else(|| ModelError::MissingFunction {
            what: format!("named function {id}"),
        })?;
        let func = self::function(&function, &|| format!("named function {id}"))?;
        let waste = match func.compact() {
            Some(normalized) => FileWaste::of(&function, normalized),
            None => FileWaste::default(),
        };
        let waste = match waste.bytes > 0 {
            true => waste.within(rest),
            false => waste,
        };
        Ok(Self {
            kind: EntityKind::NamedFunction,
            id,
            label: label(
                name.map(Name::from),
                Subscripts::from_vec(subscripts),
                parameters.into_iter().collect(),
                description,
            ),
            held: Held::Named(func),
            waste,
        })
    }

    /// A variable as 2.9.3 holds it (accepted), as 3.0 holds it; 3.0's
    /// bound rule is the caller's, on the bound the file gave
    /// ([`check_bound`]), which 2.9.3 adjusts to the kind.
    pub fn of_variable(v: &DecisionVariable) -> Self {
        Self {
            kind: EntityKind::Variable,
            id: v.id,
            label: label_of(
                v.name.as_deref(),
                &v.subscripts,
                &v.parameters,
                &v.description,
            ),
            held: Held::Variable {
                fixed: v.substituted_value.is_some(),
            },
            waste: FileWaste::default(),
        }
    }

    /// An active constraint as 2.9.3 holds it (accepted), as 3.0 holds it;
    /// its function's finiteness ([`check_finite`]) is the caller's.
    pub fn of_constraint(c: &Constraint) -> Self {
        Self {
            kind: EntityKind::Constraint,
            id: c.id,
            label: label_of(
                c.name.as_deref(),
                &c.subscripts,
                &c.parameters,
                &c.description,
            ),
            held: Held::Row {
                row: Row::Regular(Func::Compact(c.function.clone())),
                reason: None,
            },
            waste: FileWaste::default(),
        }
    }

    /// A removed constraint as 2.9.3 holds it (accepted), as 3.0 holds it;
    /// its function's finiteness is the caller's.
    pub fn of_removed(r: &RemovedConstraint) -> Self {
        let c = &r.constraint;
        Self {
            kind: EntityKind::Removed,
            id: c.id,
            label: label_of(
                c.name.as_deref(),
                &c.subscripts,
                &c.parameters,
                &c.description,
            ),
            held: Held::Row {
                row: Row::Regular(Func::Compact(c.function.clone())),
                reason: Some(Reason {
                    reason: r.removed_reason.clone(),
                    parameters: r.removed_reason_parameters.clone(),
                }),
            },
            waste: FileWaste::default(),
        }
    }

    /// A named function as 2.9.3 reads it (accepted: `function`
    /// normalized), as 3.0 holds it; its function's finiteness is the
    /// caller's.
    pub fn of_named(
        id: u64,
        function: &Function,
        name: &Option<String>,
        subscripts: &[i64],
        parameters: &BTreeMap<String, String>,
        description: &Option<String>,
    ) -> Self {
        Self {
            kind: EntityKind::NamedFunction,
            id,
            label: label_of(name.as_deref(), subscripts, parameters, description),
            held: Held::Named(Func::Compact(function.clone())),
            waste: FileWaste::default(),
        }
    }

    /// The entity, as the 3.0 profile visits it.
    pub fn entity(&self) -> Entity<'_> {
        let (container, part) = match &self.held {
            Held::Variable { fixed } => {
                (super::entity::VARIABLES, Part::Variable { fixed: *fixed })
            }
            Held::Row { row, reason } => (
                REGULAR_COLLECTION,
                Part::Row {
                    names: &REGULAR,
                    row,
                    reason: reason.as_ref(),
                    provenance: 0,
                },
            ),
            Held::Named(f) => (super::entity::NAMED_FUNCTIONS, Part::NamedFunction(f)),
        };
        Entity {
            kind: self.kind,
            id: self.id,
            label: self.label.as_ref(),
            container,
            part,
        }
    }

    /// Whether it is a variable with a fixed value.
    pub fn fixed(&self) -> bool {
        matches!(self.held, Held::Variable { fixed: true })
    }
}

fn constant_zero() -> pb1::Function {
    pb1::Function {
        function: Some(pb1::FunctionArm::Constant(0.0)),
    }
}

/// A constraint checked by 2.9.3's rules (an expression taken as a
/// constant for them), with its function as 3.0 reads it and what
/// normalizing it dropped from the file (none for an expression).
fn checked_constraint(
    mut c: pb1::Constraint,
) -> Result<(Constraint, Func, FileWaste), EntityRefusal> {
    let expression = c.function.take_if(|f| is_expression(Some(f)));
    if expression.is_some() {
        c.function = Some(constant_zero());
    }
    let (mut c, waste) = Constraint::from_wire_measured(c)?;
    let (func, waste) = match expression {
        Some(e) => (
            function(&e, &|| format!("constraint {}", c.id))?,
            FileWaste::default(),
        ),
        None => {
            let func = Func::Compact(std::mem::replace(&mut c.function, Function::Zero));
            check_finite(&func)?;
            (func, waste)
        }
    };
    Ok((c, func, waste))
}
