//! Facts of instances the tests of the real-memory models share (read off
//! bench/real_memory.py's instances as `Facts::of` reads them).

use super::facts::{Facts, Functions, Group, Owner};
use crate::model::function::Variant;

/// lp-10k of bench/real_memory.py: 10,000 named variables with one
/// subscript, an objective over all of them, 2,000 constraints of 50
/// terms and a constant (as `Facts::of` reads them off its profile).
pub(super) fn lp_10k() -> Facts {
    let one_each = vec![
        Group {
            count: 10_000,
            size: 10_000,
            owner: Owner::Variables,
        },
        Group {
            count: 2_000,
            size: 2_000,
            owner: Owner::Constraints,
        },
    ];
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
        strings: one_each.clone(),
        subscripts: one_each,
        payload: 1_848_099,
        ..Facts::default()
    }
}
