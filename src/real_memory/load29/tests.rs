use super::*;
use crate::profiled::{ByOwner, Unprofiled};
use crate::real_memory::facts::{Field, Functions, Group};
use crate::real_memory::fixtures::{each, lp_10k, removed_20k};

const MIB: f64 = 1048576.0;

fn linear(owner: Owner, count: u64, terms: u64) -> Functions {
    Functions {
        variant: Variant::Linear,
        owner,
        count,
        terms,
    }
}

/// A quadratic objective of `terms` monomials, `linear` of them linear,
/// over `variables` variables named with one character and one subscript
/// each (bench/real_memory.py's QUBOs, as `Facts::of` reads them).
fn quadratic_objective(variables: u64, terms: u64, linear: u64, payload: u64) -> Facts {
    let one_each = |field| vec![each(variables, Owner::Variables, field)];
    Facts {
        variables,
        functions: vec![Functions {
            variant: Variant::Quadratic,
            owner: Owner::Objective,
            count: 1,
            terms,
        }],
        strings: one_each(Field::Name),
        subscripts: one_each(Field::Subscripts),
        payload,
        unprofiled: ByOwner {
            objective: Unprofiled {
                quadratic_linear: linear,
                ..Unprofiled::default()
            },
            ..ByOwner::default()
        },
        ..Facts::default()
    }
}

/// A polynomial objective of `terms` monomials with `ids` ids in all, `long`
/// of them of more than 3 ids with `long_ids`, over `variables` variables
/// named as `quadratic_objective`'s.
fn polynomial_objective(variables: u64, terms: u64, ids: [u64; 3], payload: u64) -> Facts {
    let mut f = quadratic_objective(variables, terms, 0, payload);
    f.functions[0].variant = Variant::Polynomial;
    f.unprofiled.objective = Unprofiled {
        monomial_ids: ids[0],
        long_monomials: ids[1],
        long_monomial_ids: ids[2],
        ..Unprofiled::default()
    };
    f
}

/// tiny_constraints-20k: 20,000 unnamed binaries, an objective over all,
/// 40,000 unlabelled constraints of 2 terms and a constant.
fn tiny_constraints_20k() -> Facts {
    Facts {
        variables: 20_000,
        constraints: 40_000,
        functions: vec![
            linear(Owner::Constraints, 40_000, 120_000),
            linear(Owner::Objective, 1, 20_000),
        ],
        payload: 2_604_413,
        ..Facts::default()
    }
}

/// Asserts `mib` within the fraction `within` of `measured` (MiB).
fn near(mib: f64, measured: f64, within: f64) {
    assert!(
        (mib / measured - 1.0).abs() < within,
        "{mib:.2} MiB against {measured}"
    );
}

/// The traces of lp-10k's load (bench/alloc_trace.py --replay): the break
/// 10.23 MiB above its start after the parse, 18.39 after `to_bytes`, 18.86
/// after the annotations; measured resident 18.9 MiB (bench/real_memory.json).
/// The first two are OMMX's own calls, made to within 2 %; the arena's
/// per-element sizes are the traced ones, within 5 %.
#[test]
fn lp_10k_loads_as_traced() {
    let s = simulate(&lp_10k(), u64::MAX).expect("a linear instance");
    let [parse, to_bytes, annotations] = s.breaks.map(|b| b as f64 / MIB);
    near(parse, 10.23, 0.02);
    near(to_bytes, 18.39, 0.02);
    near(annotations, 18.86, 0.05);
    near(s.resident as f64 / MIB, 18.9, 0.05);
    // The load peak measured, within the 10 % the estimate aims at.
    near(s.load_peak as f64 / MIB, 20.8, 0.10);
}

/// tiny_constraints-20k: measured 59.1 MiB resident, where the closed-form
/// estimate says 57.8.
#[test]
fn many_tiny_constraints_load_as_measured() {
    let s = simulate(&tiny_constraints_20k(), u64::MAX).expect("a linear instance");
    near(s.resident as f64 / MIB, 59.1, 0.03);
    // The load peak measured, within the 10 % the estimate aims at.
    near(s.load_peak as f64 / MIB, 61.8, 0.10);
}

/// sparse_qubo-20k (traced: the break at 15.38, 15.44 and 24.82 MiB after
/// its phases; measured resident 30.6 MiB): a quadratic objective of
/// 159,939 pairs and 20,000 linear terms over 20,000 named variables with a
/// subscript each. The interpreter's heap as the load begins decides it:
/// on an empty heap the generated `to_bytes` trimmed the heap to 13.0 MiB
/// and the resident came out 22.0.
#[test]
fn a_quadratic_objective_loads_as_traced() {
    let f = quadratic_objective(20_000, 179_939, 20_000, 2_765_528);
    let s = simulate(&f, u64::MAX).expect("a quadratic objective");
    let [parse, to_bytes, annotations] = s.breaks.map(|b| b as f64 / MIB);
    near(parse, 15.38, 0.05);
    near(to_bytes, 15.44, 0.05);
    near(annotations, 24.82, 0.03);
    near(s.resident as f64 / MIB, 30.6, 0.10);
    // The load peak measured, within the 10 % the estimate aims at.
    near(s.load_peak as f64 / MIB, 43.1, 0.10);
}

/// quadratic_constraints-100k: 25,000 constraints of 6 pairs, 4 linear terms
/// and a constant; measured resident 106.4 MiB. With the linear parts'
/// terms taken as pairs (the profile alone does not tell them apart), the
/// generated `to_bytes` keeps the heap it grew (151.7 MiB).
#[test]
fn quadratic_constraints_load_as_measured() {
    let one_each = |field| each(100_000, Owner::Variables, field);
    let f = Facts {
        variables: 100_000,
        constraints: 25_000,
        functions: vec![
            linear(Owner::Objective, 1, 100_000),
            Functions {
                variant: Variant::Quadratic,
                owner: Owner::Constraints,
                count: 25_000,
                terms: 275_000,
            },
        ],
        strings: vec![one_each(Field::Name)],
        subscripts: vec![one_each(Field::Subscripts)],
        payload: 8_467_695,
        unprofiled: ByOwner {
            constraints: Unprofiled {
                quadratic_linear: 125_000,
                ..Unprofiled::default()
            },
            ..ByOwner::default()
        },
        ..Facts::default()
    };
    let s = simulate(&f, u64::MAX).expect("quadratic constraints");
    near(s.resident as f64 / MIB, 106.4, 0.05);
    // The load peak measured, within the 10 % the estimate aims at.
    near(s.load_peak as f64 / MIB, 159.1, 0.10);
}

/// qubo-500: a dense quadratic objective (124,750 pairs and 500 linear
/// terms) over 500 named variables. Traced: the break 4.20 MiB above its
/// start after the parse, 5.75 after `to_bytes` (its clone's table is
/// mapped), 6.72 after the annotations (protobuf's arrays in blocks of their
/// own); measured resident 14.8 MiB.
#[test]
fn a_dense_quadratic_objective_loads_as_traced() {
    let f = quadratic_objective(500, 125_250, 500, 1_452_265);
    let s = simulate(&f, u64::MAX).expect("a quadratic objective");
    let [parse, to_bytes, annotations] = s.breaks.map(|b| b as f64 / MIB);
    near(parse, 4.20, 0.03);
    near(to_bytes, 5.75, 0.03);
    near(annotations, 6.72, 0.03);
    near(s.resident as f64 / MIB, 14.8, 0.03);
    // The load peak measured, within the 10 % the estimate aims at.
    near(s.load_peak as f64 / MIB, 22.2, 0.10);
}

/// hubo-20k: 79,999 monomials of 2 to 4 ids (240,296 in all; 26,843 of 4,
/// whose ids OMMX keeps on the heap) over 20,000 named binaries; measured
/// resident 30.7 MiB.
#[test]
fn a_polynomial_objective_loads_as_measured() {
    let f = polynomial_objective(20_000, 79_999, [240_296, 26_843, 107_372], 2_069_431);
    let s = simulate(&f, u64::MAX).expect("a polynomial objective");
    near(s.resident as f64 / MIB, 30.7, 0.05);
    // The load peak measured, within the 10 % the estimate aims at.
    near(s.load_peak as f64 / MIB, 39.1, 0.10);
}

#[test]
fn removed_constraints_load_as_measured() {
    let s = simulate(&removed_20k(), u64::MAX).expect("removed constraints");
    near(s.resident as f64 / MIB, 57.2, 0.05);
    // The load peak measured, within the 10 % the estimate aims at.
    near(s.load_peak as f64 / MIB, 61.4, 0.10);
}

/// A field that some entities of a group carry and others not, or a
/// parameter map whose keys the facts do not hold, is not made.
#[test]
fn groups_not_alike_are_not_simulated() {
    let mut f = lp_10k();
    f.strings[0].count = 5_000;
    assert_eq!(simulate(&f, u64::MAX), None);
    let mut f = removed_20k();
    f.strings.pop();
    assert_eq!(simulate(&f, u64::MAX), None);
    let mut f = lp_10k();
    f.strings.push(Group {
        field: Field::RemovedReason,
        ..f.strings[0]
    });
    assert_eq!(simulate(&f, u64::MAX), None);
}

/// The variables' id set of tiny_constraints seed 34 (12,542 ids) as its
/// drop frees it: the traced parse ends with these runs of leaves (112-byte
/// chunks) and internal nodes (208), and the tcache keeps the last ones.
#[test]
fn an_id_set_is_freed_in_the_traced_order() {
    let runs: [(usize, &[u64]); 9] = [
        (
            12,
            &[
                208, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112,
            ],
        ),
        (2, &[208]),
        (
            10,
            &[
                112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 208,
            ],
        ),
        (
            4,
            &[
                208, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112,
            ],
        ),
        (1, &[208]),
        (8, &[112]),
        (1, &[208]),
        (6, &[112]),
        (3, &[208]),
    ];
    let traced: Vec<u64> = runs
        .iter()
        .flat_map(|&(times, run)| std::iter::repeat_n(run, times).flatten().copied())
        .collect();
    let mut m = Malloc::new();
    let order = parts::id_set(&mut m, 12_542);
    let sizes: Vec<u64> = order.iter().map(|&p| m.size_of(p)).collect();
    assert_eq!(sizes[sizes.len() - traced.len()..], traced[..]);
}
