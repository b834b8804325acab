//! Variables and constraints counted on the wire, for a pass whose
//! analyses look at no entity: checked as OMMX checks them and accounted by
//! the model's leaf code, without being built; a large constraint counted
//! from the file it was spooled to.

use std::sync::atomic::{AtomicU64, Ordering};

use super::accounts::{account_counted, account_counted_as_is, Accounts};
use super::item::Item;
use crate::model::function::{Shape, Variant};
use crate::model::leaves::{ConstraintLeaves, VariableLeaves};
use crate::model::ommx30;
use crate::model::{DecisionVariable, Equality, ModelError};
use crate::pass::terms::entities;
use crate::pass::terms::spooled::SpooledFunction;
use crate::pass::InstanceError;
use crate::profile::replay::Tally;
use crate::profile::{Aggregate, Path};
use crate::profiled::Accounting;
use crate::trace::{Laps, Phase};
use crate::wire::fields::instance;

/// A variable or a constraint counted on the wire without being built, when
/// the accounts count (`None`: build it; also for anything the wire reader
/// leaves to prost, which then decodes it as before).
#[inline]
pub(super) fn count_entity(
    field: u32,
    bytes: &[u8],
    path: &mut Path,
    accounts: &mut Accounts,
    laps: &mut Laps,
) -> Option<Result<Item, InstanceError>> {
    let counting = accounts.counting.as_mut()?;
    match field {
        instance::DECISION_VARIABLES => {
            let v = entities::variable(bytes).ok()?;
            laps.lap(Phase::Decode);
            if let Err(e) = DecisionVariable::check(v.id, v.kind, v.bound, v.substituted_value) {
                return Some(Err(e.into()));
            }
            let ommx30 = accounts.accounting == Accounting::Ommx30;
            if ommx30 {
                if let Err(e) = ommx30::check_bound(v.id, v.kind, v.bound) {
                    return Some(Err(InstanceError::Ommx30(Box::new(e))));
                }
            }
            laps.lap(Phase::Normalize);
            let leaves = VariableLeaves {
                substituted_value: v.substituted_value,
                name: v.name,
                subscripts: v.subscripts,
                parameters: std::iter::empty(),
                description: v.description,
            };
            let (frame, tally) = ("Instance.decision_variables", &mut counting.variables);
            match ommx30 {
                false => account_counted(frame, &leaves, tally, &mut accounts.memory, path),
                true => {
                    let leaves = ommx30::CountedVariable(&leaves);
                    account_counted_as_is(
                        ommx30::VARIABLES,
                        &leaves,
                        tally,
                        &mut accounts.memory,
                        path,
                    )
                }
            }
            laps.lap(Phase::Aggregate);
            Some(Ok(Item::CountedVariable {
                id: v.id,
                fixed: v.substituted_value.is_some(),
            }))
        }
        instance::CONSTRAINTS => {
            let c = entities::constraint(bytes).ok()?;
            // A linear term takes 12 bytes or more on the wire.
            let bytes: usize = c.function.iter().map(|p| p.len()).sum();
            let mut ids = Vec::with_capacity(bytes / 12);
            let function = match c.function.as_slice() {
                [] => None,
                pieces => {
                    Some(entities::count_function(pieces, &mut counting.seen, &mut ids).ok()?)
                }
            };
            if ids.capacity() > 2 * ids.len() + 16 {
                ids.shrink_to_fit();
            }
            laps.lap(Phase::Decode);
            let head = (c.id, c.equality, c.name, c.subscripts, c.description);
            let tally = &mut counting.constraints;
            let accounting = accounts.accounting;
            let memory = &mut accounts.memory;
            Some(
                account_constraint(head, function, accounting, tally, memory, path, laps).map(
                    |shape| Item::CountedConstraint {
                        id: c.id,
                        ids,
                        linear: shape.variant == Variant::Linear,
                        terms: shape.terms(),
                    },
                ),
            )
        }
        _ => None,
    }
}

/// A counted constraint's id, equality, name, number of subscripts and
/// description.
type ConstraintHead<'a> = (u64, i32, Option<&'a str>, usize, Option<&'a str>);

/// Checks a counted constraint (its function's shape or error, `None` for
/// none) as OMMX does and adds its leaves; its function's shape.
fn account_constraint(
    (id, equality, name, subscripts, description): ConstraintHead<'_>,
    function: Option<Result<Shape, ModelError>>,
    accounting: Accounting,
    tally: &mut Tally,
    memory: &mut Aggregate,
    path: &mut Path,
    laps: &mut Laps,
) -> Result<Shape, InstanceError> {
    // In `Constraint::from_wire_normalized`'s order.
    let shape = Equality::from_wire(id, equality).and_then(|_| {
        function.ok_or_else(|| ModelError::MissingFunction {
            what: format!("constraint {id}"),
        })?
    })?;
    laps.lap(Phase::Normalize);
    let leaves = ConstraintLeaves {
        function: shape,
        name,
        subscripts,
        parameters: std::iter::empty(),
        description,
    };
    match accounting {
        Accounting::Ommx29 => account_counted("Instance.constraints", &leaves, tally, memory, path),
        Accounting::Ommx30 => {
            let leaves = ommx30::CountedConstraint(&leaves);
            let frame = ommx30::REGULAR_COLLECTION;
            account_counted_as_is(frame, &leaves, tally, memory, path)
        }
    }
    laps.lap(Phase::Aggregate);
    Ok(shape)
}

/// A constraint spooled to a file (`body`, ending at stream `offset`),
/// counted a window at a time as a large objective is, when the accounts
/// count; `None` when that count cannot answer (it is then read held).
pub(super) fn count_spooled_constraint(
    body: &SpooledFunction,
    offset: u64,
    path: &mut Path,
    accounts: &mut Accounts,
    laps: &mut Laps,
) -> Option<Result<Item, InstanceError>> {
    // Every variable taken as defined (the checking side sees to that),
    // the ids of stored terms bounded on the way.
    let below = AtomicU64::new(0);
    let defined = |id: u64| {
        if id >= below.load(Ordering::Relaxed) {
            below.fetch_max(id.saturating_add(1), Ordering::Relaxed);
        }
        true
    };
    let counted = body.constraint().ok().and_then(|c| {
        let function = match &c.function {
            None => None,
            Some(arm) => Some(Ok(arm.count(&defined, 1).ok()??.shape)),
        };
        Some((c, function))
    });
    if let (Some((c, function)), Some(counting)) = (counted, accounts.counting.as_mut()) {
        laps.lap(Phase::Decode);
        let head = (
            c.id,
            c.equality,
            c.name.as_deref(),
            c.subscripts,
            c.description.as_deref(),
        );
        let tally = &mut counting.constraints;
        let (accounting, memory) = (accounts.accounting, &mut accounts.memory);
        let shape = account_constraint(head, function, accounting, tally, memory, path, laps);
        return Some(shape.map(|shape| Item::SpooledConstraint {
            id: c.id,
            offset,
            function: c.function.map(Box::new),
            ids_below: below.into_inner(),
            terms: shape.terms(),
        }));
    }
    None
}
