//! A quadratic objective's table order as the pass reads it
//! (`Gathered::objective_growths`) against what allocation traces of
//! OMMX 2.9.3's own loads show (fixtures/table_order/expected.txt, written
//! by bench/table_order.py): held, spooled, counted or built.

use prost::Message;

use super::{profile_instance_within, Accounts, EntityObserver, ProfileOptions};
use crate::ommx_v1 as pb;
use crate::profiled::Growth;

/// Looks at the objective: the pass counts it with its variables, or
/// builds it where the count is not exact (a repeated term).
struct SeesObjective;

impl EntityObserver for SeesObjective {}

/// The growths as bench/table_order.py prints them: `P4 P8 L4 ...`.
fn shown(growths: &[Growth]) -> String {
    let (mut pairs, mut linear) = (2, 2);
    let each = growths.iter().map(|g| match g {
        Growth::Pairs => {
            pairs *= 2;
            format!("P{pairs}")
        }
        Growth::Linear => {
            linear *= 2;
            format!("L{linear}")
        }
    });
    each.collect::<Vec<_>>().join(" ")
}

fn growths_of(bytes: &[u8], observer: &mut dyn EntityObserver, spool_above: u64) -> Option<String> {
    let mut accounts = Accounts::new(ProfileOptions::default());
    accounts.spool_above = spool_above;
    let total = Some(bytes.len() as u64);
    let counts = profile_instance_within(bytes, total, None, Some(2), &mut accounts, observer)
        .expect("a valid instance");
    counts.gathered.objective_growths.as_deref().map(shown)
}

#[test]
fn the_table_order_is_what_traced_loads_show() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/table_order");
    let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    let mut checked = 0;
    for line in expected.lines() {
        let (file, traced) = line.split_once(": ").unwrap();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        for spool_above in [u64::MAX, 0] {
            for observer in [&mut () as &mut dyn EntityObserver, &mut SeesObjective] {
                let got = growths_of(&bytes, observer, spool_above);
                assert_eq!(
                    got.as_deref(),
                    Some(traced),
                    "{file}, spooled above {spool_above}"
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// A pair given twice is one entry of OMMX's table, made by a path that
/// does not insert it twice: its order is not claimed.
#[test]
fn a_repeated_term_gives_no_order() {
    let variables: Vec<_> = (0..4)
        .map(|id| pb::DecisionVariable {
            id,
            kind: pb::decision_variable::Kind::Binary as i32,
            ..Default::default()
        })
        .collect();
    let quadratic = |rows: Vec<u64>, columns: Vec<u64>| pb::Quadratic {
        values: vec![1.0; rows.len()],
        rows,
        columns,
        linear: Some(pb::Linear {
            terms: vec![pb::LinearTerm {
                id: 3,
                coefficient: 2.0,
            }],
            constant: 0.0,
        }),
    };
    let with = |q: pb::Quadratic| {
        pb::Instance {
            decision_variables: variables.clone(),
            objective: Some(pb::Function {
                function: Some(pb::function::Function::Quadratic(q)),
            }),
            ..Default::default()
        }
        .encode_to_vec()
    };
    let once = with(quadratic(vec![0, 1, 2], vec![1, 2, 0]));
    let got = growths_of(&once, &mut (), u64::MAX).expect("an order");
    assert!(got == "P4 L4" || got == "L4 P4", "{got}");
    let twice = with(quadratic(vec![0, 1, 2, 1], vec![1, 2, 0, 0]));
    for observer in [&mut () as &mut dyn EntityObserver, &mut SeesObjective] {
        assert_eq!(growths_of(&twice, observer, u64::MAX), None);
    }
}
