//! What an `ommx.v2` payload spends on terms OMMX 3.0 drops or merges on
//! load (`from_v2_bytes` normalizes compact functions by 2.9.3's rules):
//! [`FileWaste`] of each function the `wasted-file-bytes` rule looks at (the
//! objective, the rows of the regular and indicator collections, active and
//! removed, and the named functions), seen from the payload's top-level
//! field that holds it.
//!
//! A function's waste is counted up to its map entry (the function, the row
//! or named function around it, the entry: each one's length prefix may
//! shrink), so rows add up exactly. The collection or table holding the
//! entries is one top-level field, whose length prefix shrinks by what all
//! its entries' waste takes together: that is [`PayloadWaste::framing`], not
//! any one function's. Entries are counted as prost writes them (OMMX
//! 3.0's writer): a key of 0 is left out.

use std::collections::BTreeMap;

use prost::encoding::encoded_len_varint;

use super::Func;
use crate::model::{EntityKind, FileWaste};
use crate::ommx_v1 as pb1;
use crate::wire::fields::v2::instance;
use crate::wire::slice::{Fields, Value};

/// The file waste of one payload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PayloadWaste {
    /// Each function's, by its entity (the objective is `(Objective, 0)`);
    /// only functions with waste are kept.
    pub entities: BTreeMap<(EntityKind, u64), FileWaste>,
    /// The top-level fields' length prefixes: what they shrink by once
    /// their entries' waste is gone.
    pub framing: u64,
}

/// The top-level fields whose entries hold the functions counted: the
/// regular and indicator collections and the named functions' table, with
/// the kinds of their entries.
const HOLDERS: [(u32, &[EntityKind]); 3] = [
    (
        instance::REGULAR_CONSTRAINTS,
        &[EntityKind::Constraint, EntityKind::Removed],
    ),
    (
        instance::INDICATOR_CONSTRAINTS,
        &[EntityKind::Indicator, EntityKind::RemovedIndicator],
    ),
    (instance::NAMED_FUNCTIONS, &[EntityKind::NamedFunction]),
];

/// The body of top-level field `field` of `payload` (the bodies of all its
/// occurrences, which protobuf merges; 0 when absent).
fn body(payload: &[u8], field: u32) -> u64 {
    let mut fields = Fields::new(payload);
    let mut len = 0;
    while let Ok(Some((number, value))) = fields.next_field() {
        if let (true, Value::Len(b)) = (number == field, value) {
            len += b.len() as u64;
        }
    }
    len
}

impl PayloadWaste {
    /// The objective, a top-level field: its own length prefix is in its
    /// waste.
    pub fn objective(&mut self, wire: Option<&pb1::Function>, read: &Func) {
        if let Some(w) = objective_waste(wire, read) {
            self.entities.insert((EntityKind::Objective, 0), w);
        }
    }

    /// The entry of a row or named function, `(kind, id)`, whose function
    /// `wire` was read as `read`; `rest`: the bytes of the message's other
    /// fields (a row's equality and indicator).
    pub fn entry(
        &mut self,
        (kind, id): (EntityKind, u64),
        wire: Option<&pb1::Function>,
        read: &Func,
        rest: u64,
    ) {
        if let Some(w) = entry_waste(id, wire, read, rest) {
            self.entities.insert((kind, id), w);
        }
    }

    /// Files the waste of rows read as `active` under `removed` for the
    /// ids of a collection's removed rows (a row is read before its map
    /// says which it is).
    pub fn removed(
        &mut self,
        ids: impl Iterator<Item = u64>,
        active: EntityKind,
        removed: EntityKind,
    ) {
        for id in ids {
            if let Some(w) = self.entities.remove(&(active, id)) {
                self.entities.insert((removed, id), w);
            }
        }
    }

    /// Once every entry is in: the holders' length prefixes, each body as
    /// long as `payload` (the `ommx.v2.Instance` read) writes it.
    pub fn close(&mut self, payload: &[u8]) {
        for (field, kinds) in HOLDERS {
            let of_holder = |k: &EntityKind| kinds.contains(k);
            let wasted: u64 = self
                .entities
                .iter()
                .filter(|((k, _), _)| of_holder(k))
                .map(|(_, w)| w.bytes)
                .sum();
            self.framing += framing(wasted, body(payload, field));
        }
    }
}

/// The waste of the objective (`wire`, read as `read`), a top-level field
/// whose own length prefix is in it; `None` when it wastes nothing.
pub fn objective_waste(wire: Option<&pb1::Function>, read: &Func) -> Option<FileWaste> {
    wire.map(|f| of(f, read)).filter(|w| w.bytes > 0)
}

/// The waste of a map entry of key `id` whose function `wire` was read as
/// `read` (`rest`: the bytes of the message's other fields), counted up to
/// the entry; `None` when it wastes nothing.
pub fn entry_waste(
    id: u64,
    wire: Option<&pb1::Function>,
    read: &Func,
    rest: u64,
) -> Option<FileWaste> {
    let w = wire.map(|f| of(f, read)).filter(|w| w.bytes > 0)?;
    let key = if id == 0 { 0 } else { 1 + varint(id) };
    Some(w.within(rest).within(key))
}

/// What the length prefix of a top-level field whose body is `written`
/// bytes shrinks by once its entries' waste, `wasted` bytes, is gone.
pub fn framing(wasted: u64, written: u64) -> u64 {
    match wasted > 0 && wasted <= written {
        true => varint(written) - varint(written - wasted),
        false => 0,
    }
}

/// A singular enum or integer field of a 1-byte tag: written unless zero.
pub fn scalar(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        1 + varint(n)
    }
}

fn of(wire: &pb1::Function, read: &Func) -> FileWaste {
    match read.compact() {
        Some(normalized) => FileWaste::of(wire, normalized),
        None => FileWaste::default(),
    }
}

fn varint(n: u64) -> u64 {
    encoded_len_varint(n) as u64
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use crate::ommx_v1 as pb1;
    use crate::ommx_v2 as pb;

    fn linear(terms: &[(u64, f64)]) -> Option<pb1::Function> {
        let terms = terms
            .iter()
            .map(|&(id, coefficient)| pb1::LinearTerm { id, coefficient })
            .collect();
        Some(pb1::Function {
            function: Some(pb1::function::Function::Linear(pb1::Linear {
                terms,
                constant: 0.0,
            })),
        })
    }

    /// An instance of `rows` regular rows over variables 1 and 2, each
    /// row's terms given by `terms`.
    fn instance(rows: u64, terms: &[(u64, f64)]) -> pb::Instance {
        let variable = pb::DecisionVariable {
            kind: 1,
            bound: Some(pb1::Bound {
                lower: 0.0,
                upper: 1.0,
            }),
        };
        let row = pb::RegularConstraint {
            equality: 2,
            function: linear(terms),
        };
        pb::Instance {
            sense: 1,
            decision_variables: Some(pb::DecisionVariableTable {
                entries: [(1, variable), (2, variable)].into(),
                ..Default::default()
            }),
            objective: linear(terms),
            regular_constraints: Some(pb::RegularConstraintCollection {
                active: (0..rows).map(|id| (id, row.clone())).collect(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn wasted(dirty: &pb::Instance) -> u64 {
        let inst = super::super::decode(&dirty.encode_to_vec()).unwrap();
        inst.waste.entities.values().map(|w| w.bytes).sum::<u64>() + inst.waste.framing
    }

    #[test]
    fn the_waste_is_what_a_clean_payload_does_not_write() {
        let clean = [(1, 1.5), (2, -2.0)];
        // A zero term on variable 2 and the first term split in two.
        let dirty = [(1, 0.75), (2, -2.0), (2, 0.0), (1, 0.75)];
        for rows in [1, 2, 3, 4, 200] {
            let (dirty, clean) = (instance(rows, &dirty), instance(rows, &clean));
            let saved = (dirty.encoded_len() - clean.encoded_len()) as u64;
            assert_eq!(wasted(&dirty), saved, "{rows} rows");
        }
        // With 3 rows the collection's body shrinks below 128 bytes, and
        // its length prefix by a byte.
        let framed = |rows| {
            let inst = super::super::decode(&instance(rows, &dirty).encode_to_vec()).unwrap();
            inst.waste.framing
        };
        assert_eq!((1..=5).map(framed).collect::<Vec<_>>(), [0, 0, 1, 0, 0]);
    }

    #[test]
    fn a_clean_payload_wastes_nothing() {
        let clean = instance(3, &[(1, 1.5), (2, -2.0)]);
        let inst = super::super::decode(&clean.encode_to_vec()).unwrap();
        assert_eq!(inst.waste, super::PayloadWaste::default());
    }
}
