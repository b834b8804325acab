//! Facts of instances the tests of the real-memory models share (read off
//! bench/real_memory.py's instances as `Facts::of` reads them).

use super::facts::{Facts, Field, Functions, Group, Map, Owner};
use crate::model::function::Variant;

/// lp-10k of bench/real_memory.py: 10,000 named variables with one
/// subscript, an objective over all of them, 2,000 constraints of 50
/// terms and a constant (as `Facts::of` reads them off its profile).
pub(super) fn lp_10k() -> Facts {
    let one_each = |field| {
        vec![
            each(10_000, Owner::Variables, field),
            each(2_000, Owner::Constraints, field),
        ]
    };
    Facts {
        variables: 10_000,
        constraints: 2_000,
        functions: vec![
            Functions {
                variant: Variant::Linear,
                owner: Owner::Constraints,
                count: 2_000,
                terms: 102_000,
            },
            Functions {
                variant: Variant::Linear,
                owner: Owner::Objective,
                count: 1,
                terms: 10_000,
            },
        ],
        // One name of one byte and one subscript each.
        strings: one_each(Field::Name),
        subscripts: one_each(Field::Subscripts),
        payload: 1_848_099,
        ..Facts::default()
    }
}

/// `count` values of one byte (or element) each, of `owner`'s `field`.
pub(super) fn each(count: u64, owner: Owner, field: Field) -> Group {
    Group {
        count,
        size: count,
        owner,
        field,
    }
}

/// removed-20k of bench/real_memory.py: 20,000 unnamed variables, an
/// objective over all, 10,000 constraints of 10 terms and a constant, as
/// many removed ones, each with the reason "relaxed" and one parameter (as
/// `Facts::of` reads them off either runtime's profile).
pub(super) fn removed_20k() -> Facts {
    let group = |size, field| Group {
        count: 10_000,
        size,
        owner: Owner::Removed,
        field,
    };
    Facts {
        variables: 20_000,
        constraints: 10_000,
        removed: 10_000,
        functions: vec![
            linear(Owner::Constraints, 10_000, 110_000),
            linear(Owner::Removed, 10_000, 110_000),
            linear(Owner::Objective, 1, 20_000),
        ],
        strings: vec![
            group(70_000, Field::RemovedReason),
            group(10_000, Field::Value(Map::RemovedReason)),
            group(50_000, Field::Key(Map::RemovedReason)),
        ],
        parameters: vec![group(10_000, Field::Parameters(Map::RemovedReason))],
        payload: 4_185_347,
        ..Facts::default()
    }
}

/// `count` linear functions of `owner` holding `terms` terms in all.
pub(super) fn linear(owner: Owner, count: u64, terms: u64) -> Functions {
    Functions {
        variant: Variant::Linear,
        owner,
        count,
        terms,
    }
}
