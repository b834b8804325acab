//! The read step for v1 input counted with OMMX 3.0's accounting: each
//! element built as 3.0's `from_v1_bytes` converts it
//! ([`ommx30::Converted`]), checked by 2.9.3's per-entity rules and 3.0's
//! own, and visited with 3.0's leaves under its container. What only the
//! whole stream can tell (references, fixed and dependent variables in
//! use) is the checking steps' (`validate.rs`, `finish.rs`).

use super::accounts::{Accounts, Summing};
use super::item::Item;
use super::observer::Cost;
use super::terms;
use super::InstanceError;
use crate::model::ommx30::{Converted, EntityRefusal, Func};
use crate::profile::family::GroupBy;
use crate::profile::wire_view::TopLevelField;
use crate::profile::Path;
use crate::profiled::Terms;
use crate::trace::{Laps, Phase};
use crate::wire::fields::instance;

/// Builds, checks and visits one entity element under 3.0's accounting.
pub(super) fn decode_entity(
    element: TopLevelField<'_>,
    offset: u64,
    path: &mut Path,
    accounts: &mut Accounts,
    laps: &mut Laps,
) -> Result<Item, InstanceError> {
    let bytes = element.body.unwrap_or_default();
    let converted = match element.number {
        instance::DECISION_VARIABLES => {
            let v = terms::decode_field(bytes)
                .map_err(InstanceError::decoding("decision_variables", offset))?;
            laps.lap(Phase::Decode);
            Converted::variable(v)
        }
        instance::CONSTRAINTS => {
            let c = terms::decode_field(bytes)
                .map_err(InstanceError::decoding("constraints", offset))?;
            laps.lap(Phase::Decode);
            Converted::constraint(c)
        }
        instance::REMOVED_CONSTRAINTS => {
            let r = terms::decode_field(bytes)
                .map_err(InstanceError::decoding("removed_constraints", offset))?;
            laps.lap(Phase::Decode);
            Converted::removed(r)
        }
        _ => {
            let n = terms::decode_field(bytes)
                .map_err(InstanceError::decoding("named_functions", offset))?;
            laps.lap(Phase::Decode);
            Converted::named_function(n)
        }
    }
    .map_err(refused)?;
    laps.lap(Phase::Normalize);
    let entity = converted.entity();
    let family = (accounts.group_by == GroupBy::Name).then(|| entity.family());
    let mut summing = Summing {
        aggregate: &mut accounts.memory,
        bytes: 0,
    };
    entity.visit_under(path, family, &mut summing);
    let cost = Cost {
        bytes: summing.bytes,
        wire_bytes: element.wire_bytes,
        waste: converted.waste,
    };
    laps.lap(Phase::Aggregate);
    Ok(Item::Converted(Box::new(converted), cost))
}

/// A refusal as the pass reports it: 2.9.3's in its words, 3.0's own as
/// its conversion's.
pub(super) fn refused(e: EntityRefusal) -> InstanceError {
    match e {
        EntityRefusal::Model(e) => e.into(),
        EntityRefusal::Ommx30(e) => InstanceError::Ommx30(Box::new(e)),
    }
}

/// What a 3.0 function adds to the summary's terms.
pub(super) fn terms_of(f: &Func) -> Terms {
    match f.compact() {
        Some(compact) => compact.shape().terms(),
        None => Terms {
            stored: f.stored_terms() as u64,
            unprofiled: Default::default(),
        },
    }
}

/// The variables of a converted entity's function (none for a variable),
/// in its order, repeats included.
pub(super) fn variables_of(c: &Converted) -> Vec<u64> {
    let mut ids = Vec::new();
    if let Some(f) = c.entity().function() {
        f.for_each_variable(|id| ids.push(id));
    }
    ids
}
