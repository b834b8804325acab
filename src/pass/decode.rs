//! Each framed batch read (on any thread): every element decoded,
//! normalized and accounted, built as OMMX builds it, or counted on the
//! wire where no analysis looks at the entities (`counted.rs`).

use prost::Message;

use super::accounts::{account_entity, Accounts};
use super::convert;
use super::counted::{count_entity, count_spooled_constraint};
use super::framing::{RawBatch, RawElement};
use super::item::{Batch, Item};
use super::objective::Part;
use super::observer::{Cost, NamedFunction};
use super::terms;
use super::terms::spooled::SpooledFunction;
use super::InstanceError;
use crate::model::ommx30;
use crate::model::{
    Constraint, DecisionVariable, FileWaste, Function, ModelError, RemovedConstraint,
    VariableFields,
};
use crate::ommx_v1 as pb;
use crate::profile::wire_view::{self, TopLevelField};
use crate::profile::{LogicalMemoryVisitor, Path};
use crate::profiled::Accounting;
use crate::trace::{Laps, Phase};
use crate::wire::fields::instance;

/// Decodes, normalizes and visits (into `aggregate`) every element of a
/// batch, leaving `raw` without elements (its bytes stay until the next
/// batch is framed). Decoding stops at the first error, which ends the
/// batch.
pub(super) fn decode_batch(raw: &mut RawBatch, accounts: &mut Accounts) -> Batch {
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
                accounts.wire_top_level(TopLevelField {
                    number: field,
                    tag_bytes,
                    wire_bytes,
                    body: value_start.map(|start| &bytes[start..]),
                });
                laps.lap(Phase::Aggregate);
                Ok(Item::Rest(Part::Field(bytes)))
            }
            RawElement::Spooled {
                part,
                tag_bytes,
                wire_bytes,
            } => accounts
                .wire_objective(&part, (tag_bytes, wire_bytes))
                .map(|()| Item::Rest(part))
                .map_err(InstanceError::Spool),
            RawElement::SpooledConstraint {
                body,
                offset,
                tag_bytes,
                wire_bytes,
            } => decode_spooled_constraint(
                &body,
                offset,
                (tag_bytes, wire_bytes),
                &mut path,
                accounts,
                &mut laps,
            ),
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
        if let Some(e) = accounts.ommx30_refused.take() {
            items.push(Ok(Item::Ommx30Refusal(Box::new(e))));
        }
        let failed = item.is_err();
        items.push(item);
        if failed {
            break;
        }
    }
    laps.finish();
    raw.elements.clear();
    if !items.last().is_some_and(Result::is_err) {
        match last {
            None => {}
            Some(Ok(offset)) => items.push(Ok(Item::End(offset))),
            Some(Err(e)) => items.push(Err(e)),
        }
    }
    items
}

pub(super) fn decode_entity(
    element: TopLevelField<'_>,
    offset: u64,
    path: &mut Path,
    accounts: &mut Accounts,
    laps: &mut Laps,
) -> Result<Item, InstanceError> {
    let bytes = element.body.unwrap_or_default();
    if let Some(counted) = count_entity(element.number, bytes, path, accounts, laps) {
        return counted;
    }
    if accounts.accounting == Accounting::Ommx30 {
        return convert::decode_entity(element, offset, path, accounts, laps);
    }
    Ok(match element.number {
        instance::DECISION_VARIABLES => {
            // As writers emit it, read on the wire; prost for anything else.
            let mut v = VariableFields::default();
            if !terms::held::variable(bytes, &mut v) {
                v = decode::<pb::DecisionVariable>("decision_variables", bytes, offset)?.into();
            }
            laps.lap(Phase::Decode);
            let file = (v.id, v.kind, v.bound);
            let v = DecisionVariable::from_fields(v)?;
            if accounts.comparing {
                accounts.ommx30_refused = ommx30::check_bound(file.0, file.1, file.2).err();
            }
            laps.lap(Phase::Normalize);
            let frame = "Instance.decision_variables";
            let held = (&v, v.leaf_key());
            let cost = account_entity(frame, v.name.as_deref(), held, element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Variable(v, cost)
        }
        instance::CONSTRAINTS => {
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
            if accounts.comparing {
                accounts.ommx30_refused = ommx30::check_finite_compact(&c.function).err();
            }
            laps.lap(Phase::Normalize);
            let frame = "Instance.constraints";
            let held = (&c, c.leaf_key());
            let cost = account_entity(frame, c.name.as_deref(), held, element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Constraint(c, Cost { waste, ..cost })
        }
        instance::REMOVED_CONSTRAINTS => {
            let r = decode("removed_constraints", bytes, offset)?;
            laps.lap(Phase::Decode);
            let (r, waste) = RemovedConstraint::from_wire_measured(r)?;
            if accounts.comparing {
                let function = &r.constraint.function;
                accounts.ommx30_refused = ommx30::check_finite_compact(function).err();
            }
            laps.lap(Phase::Normalize);
            let frame = "Instance.removed_constraints";
            let name = r.constraint.name.as_deref();
            let cost = account_entity(frame, name, (&r, None), element, path, accounts);
            laps.lap(Phase::Aggregate);
            Item::Removed(Box::new(r), Cost { waste, ..cost })
        }
        _ => {
            let mut wire: pb::NamedFunction = decode("named_functions", bytes, offset)?;
            laps.lap(Phase::Decode);
            let function = wire
                .function
                .take()
                .ok_or_else(|| ModelError::MissingFunction {
                    what: format!("named function {}", wire.id),
                })?;
            let normalized = Function::from_wire(&function)?;
            if accounts.comparing {
                accounts.ommx30_refused = ommx30::check_finite_compact(&normalized).err();
            }
            let mut waste = FileWaste::of(&function, &normalized);
            if waste.bytes > 0 {
                waste = waste.within(crate::model::waste::named_rest(&wire));
            }
            let pb::NamedFunction {
                id,
                function: _,
                subscripts,
                parameters,
                name,
                description,
            } = wire;
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
            accounts.wire_top_level(element);
            laps.lap(Phase::Aggregate);
            Item::Named(
                Box::new(named),
                Cost {
                    bytes: 0,
                    wire_bytes: element.wire_bytes,
                    waste,
                },
            )
        }
    })
}

/// A constraint spooled to a file (`body`, ending at stream `offset`, with
/// its tag's and whole element's encoded sizes): counted a window at a time
/// as a large objective is ([`count_spooled_constraint`]); read back whole
/// and decoded as a held one when that count cannot answer.
pub(super) fn decode_spooled_constraint(
    body: &SpooledFunction,
    offset: u64,
    (tag_bytes, wire_bytes): (u64, u64),
    path: &mut Path,
    accounts: &mut Accounts,
    laps: &mut Laps,
) -> Result<Item, InstanceError> {
    if let Some(counted) = count_spooled_constraint(body, offset, path, accounts, laps) {
        return counted;
    }
    let bytes = body.load().map_err(InstanceError::Spool)?;
    let element = TopLevelField {
        number: instance::CONSTRAINTS,
        tag_bytes,
        wire_bytes,
        body: Some(&bytes),
    };
    decode_entity(element, offset, path, accounts, laps)
}

/// Decodes the body of one of the Instance's fields as OMMX does: as a
/// field of the Instance, one level down prost's recursion budget, so that
/// unknown groups inside it may nest exactly as deep as OMMX lets them.
fn decode<M: Message + Default>(
    field: &'static str,
    bytes: &[u8],
    offset: u64,
) -> Result<M, InstanceError> {
    terms::decode_field(bytes).map_err(InstanceError::decoding(field, offset))
}
