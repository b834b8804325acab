//! Counting entities on the wire (a plain profile) against building them
//! (an analysis that sees them): random instances, and random damage to
//! their encoding, must give the same profile, leaf counts included, and
//! the same verdict.

use prost::Message;

use super::{profile_instance_within, Accounts, EntityObserver, ProfileOptions};
use crate::ids::SplitMix64;
use crate::ommx_v1 as pb;
use crate::profile::family::GroupBy;
use crate::profiled::Accounting;

/// Sees every entity, so that the pass builds them; looks at no objective,
/// as the plain profile does not.
struct Sees;

impl EntityObserver for Sees {
    fn counts_only(&self) -> bool {
        true
    }
}

/// Random draws, and whether the instance being made should mostly pass
/// OMMX's checks (tame: finite values, ids of defined variables).
pub(super) struct Rng(pub(super) SplitMix64, pub(super) bool);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next()
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    pub(super) fn chance(&mut self, one_in: u64) -> bool {
        self.0.chance(one_in)
    }
    fn id(&mut self) -> u64 {
        if !self.1 && self.chance(40) {
            self.next() >> self.below(64)
        } else {
            self.below(12)
        }
    }
    fn value(&mut self) -> f64 {
        const V: [f64; 12] = [
            0.0, 1.0, -1.0, 0.5, 2.0, 10.0, -0.0, 0.1, 0.2, -0.3, 1e-7, 3.0,
        ];
        match self.below(if self.1 { 1000 } else { 100 }) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            _ => V[self.below(V.len() as u64) as usize],
        }
    }
    fn text(&mut self) -> Option<String> {
        (!self.chance(3)).then(|| "xyz"[..self.below(4) as usize].to_string())
    }
    fn parameters(&mut self) -> std::collections::BTreeMap<String, String> {
        let mut p = std::collections::BTreeMap::new();
        if self.chance(8) {
            p.insert("k".into(), "v".repeat(self.below(3) as usize));
        }
        p
    }
    fn subscripts(&mut self) -> Vec<i64> {
        (0..self.below(3))
            .map(|_| self.next() as i64 >> 40)
            .collect()
    }
}

pub(super) fn function(rng: &mut Rng) -> Option<pb::Function> {
    use pb::FunctionArm;
    let linear = |rng: &mut Rng| pb::Linear {
        terms: (0..rng.below(6))
            .map(|_| pb::LinearTerm {
                id: rng.id(),
                coefficient: rng.value(),
            })
            .collect(),
        constant: rng.value(),
    };
    let arm = match rng.below(12) {
        0 => return None,
        1 => None,
        2 => Some(FunctionArm::Constant(rng.value())),
        3 => {
            let n = rng.below(4) as usize;
            let ids = |rng: &mut Rng| (0..n).map(|_| rng.id()).collect::<Vec<_>>();
            Some(FunctionArm::Quadratic(pb::Quadratic {
                rows: ids(rng),
                columns: ids(rng),
                values: (0..n + usize::from(rng.chance(10)))
                    .map(|_| rng.value())
                    .collect(),
                linear: rng.chance(2).then(|| linear(rng)),
            }))
        }
        4 => {
            // Monomials over a few variables, ids repeated, now and then one
            // written again in another order (they merge, or cancel).
            let pool: Vec<u64> = (0..3).map(|_| rng.id()).collect();
            let mut terms: Vec<pb::Monomial> = Vec::new();
            for _ in 0..rng.below(6) {
                let again = (!terms.is_empty() && rng.chance(4))
                    .then(|| terms[rng.below(terms.len() as u64) as usize].ids.clone());
                let mut ids = again.unwrap_or_else(|| {
                    (0..rng.below(5))
                        .map(|_| match rng.below(8) {
                            0 => rng.id(),
                            i => pool[i as usize % 3],
                        })
                        .collect()
                });
                let turn = rng.below(ids.len() as u64 + 1) as usize % ids.len().max(1);
                ids.rotate_left(turn);
                terms.push(pb::Monomial {
                    ids,
                    coefficient: rng.value(),
                });
            }
            Some(FunctionArm::Polynomial(pb::Polynomial { terms }))
        }
        _ => Some(FunctionArm::Linear(linear(rng))),
    };
    Some(pb::Function { function: arm })
}

pub(super) fn instance(rng: &mut Rng) -> Vec<u8> {
    rng.1 = rng.chance(2);
    let n = if rng.1 { 12 } else { rng.below(8) };
    let variables: Vec<pb::DecisionVariable> = (0..n)
        .map(|i| pb::DecisionVariable {
            id: if rng.1 { i } else { rng.id() },
            kind: if rng.1 && !rng.chance(300) {
                3
            } else {
                [3, 3, 1, 2, 0, 4, 5, 9][rng.below(8) as usize]
            },
            bound: (!rng.chance(4)).then(|| {
                let lower = if rng.chance(3) || rng.1 {
                    0.0
                } else {
                    rng.value()
                };
                pb::Bound {
                    lower,
                    upper: lower + rng.value().abs(),
                }
            }),
            name: rng.text(),
            subscripts: rng.subscripts(),
            parameters: rng.parameters(),
            description: rng.text().filter(|_| rng.chance(2)),
            substituted_value: rng.chance(if rng.1 { 40 } else { 6 }).then(|| rng.value()),
        })
        .collect();
    let constraints: Vec<pb::Constraint> = (0..rng.below(8))
        .map(|i| pb::Constraint {
            id: if rng.1 { i } else { rng.id() },
            equality: if rng.1 && !rng.chance(100) {
                1 + rng.below(2) as i32
            } else {
                [1, 2, 2, 0, 7][rng.below(5) as usize]
            },
            function: function(rng),
            parameters: rng.parameters(),
            name: rng.text(),
            description: rng.text().filter(|_| rng.chance(2)),
            subscripts: rng.subscripts(),
        })
        .collect();
    let mut bytes = pb::Instance {
        objective: Some(pb::Function {
            function: Some(pb::function::Function::Constant(1.0)),
        }),
        ..Default::default()
    }
    .encode_to_vec();
    let entities = variables
        .iter()
        .map(|v| (2, v.encode_to_vec()))
        .chain(constraints.iter().map(|c| (4, c.encode_to_vec())));
    for (field, mut body) in entities {
        if rng.chance(30) {
            body.extend_from_slice(extra_field(rng, field));
        }
        prost::encoding::encode_key(
            field,
            prost::encoding::WireType::LengthDelimited,
            &mut bytes,
        );
        prost::encoding::encode_varint(body.len() as u64, &mut bytes);
        bytes.extend_from_slice(&body);
    }
    bytes
}

/// A field appended to an entity's encoding: one it has already (given
/// again, packed or not), one of another wire type, or an unknown one.
fn extra_field(rng: &mut Rng, entity: u32) -> &'static [u8] {
    const VARIABLE: [&[u8]; 9] = [
        &[0x1a, 0x09, 0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f], // bound {upper: 1}
        &[0x1a, 0x00],                                     // bound {}
        &[0x22, 0x01, b'n'],                               // name "n"
        &[0x2a, 0x02, 0x05, 0x7f],                         // subscripts [5, 127]
        &[0x28, 0x03],                                     // subscript 3
        &[0x08, 0x02],                                     // id 2
        &[0x10, 0x01],                                     // kind binary
        &[0x41, 0, 0, 0, 0, 0, 0, 0, 0],                   // substituted value 0
        &[0x32, 0x00],                                     // a parameter entry
    ];
    const CONSTRAINT: [&[u8]; 8] = [
        &[0x1a, 0x02, 0x09, 0x00], // function piece, truncated constant
        &[0x1a, 0x00],             // empty function piece
        &[0x32, 0x01, b'c'],       // name "c"
        &[0x42, 0x01, 0x01],       // subscripts [1]
        &[0x40, 0x05],             // subscript 5
        &[0x10, 0x01],             // equality
        &[0x22, 0x00],             // field 4, unknown to Constraint
        &[0x2a, 0x00],             // a parameter entry
    ];
    const ANY: [&[u8]; 4] = [
        &[0xc8, 0x01, 0x05], // field 25, varint
        &[0x0a, 0x00],       // field 1 as bytes
        &[0x0d, 0, 0, 0, 0], // field 1 as fixed32
        &[0x23, 0x24],       // a group
    ];
    if rng.chance(3) {
        ANY[rng.below(ANY.len() as u64) as usize]
    } else if entity == 2 {
        VARIABLE[rng.below(VARIABLE.len() as u64) as usize]
    } else {
        CONSTRAINT[rng.below(CONSTRAINT.len() as u64) as usize]
    }
}

/// Damages an encoding now and then: a byte changed, a bit flipped, a cut.
pub(super) fn damage(rng: &mut Rng, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    match rng.below(8) {
        0 => {
            let at = rng.below(bytes.len() as u64) as usize;
            bytes[at] = rng.next() as u8;
        }
        1 => bytes.truncate(rng.below(bytes.len() as u64) as usize),
        2 => {
            let at = rng.below(bytes.len() as u64) as usize;
            bytes[at] ^= 1 << rng.below(8);
        }
        _ => {}
    }
}

/// The profile's lines and the summary of a run, or its error.
pub(super) type Run = Result<(Vec<(String, u64, u64)>, String), String>;

pub(super) fn run(bytes: &[u8], observer: &mut dyn EntityObserver) -> Run {
    run_spooling(bytes, observer, u64::MAX)
}

/// [`run`], spooling objective fields longer than `spool_above` bytes.
fn run_spooling(bytes: &[u8], observer: &mut dyn EntityObserver, spool_above: u64) -> Run {
    run_on(bytes, observer, spool_above, 1)
}

/// [`run_spooling`] on `threads` threads (a large objective is checked and
/// counted on them).
fn run_on(
    bytes: &[u8],
    observer: &mut dyn EntityObserver,
    spool_above: u64,
    threads: usize,
) -> Run {
    run_as(bytes, observer, spool_above, threads, Accounting::Ommx29)
}

/// [`run_on`] under `accounting`.
fn run_as(
    bytes: &[u8],
    observer: &mut dyn EntityObserver,
    spool_above: u64,
    threads: usize,
    accounting: Accounting,
) -> Run {
    run_grouped(
        bytes,
        observer,
        spool_above,
        threads,
        accounting,
        GroupBy::None,
    )
}

/// [`run_as`] with family frames as `group_by` says.
fn run_grouped(
    bytes: &[u8],
    observer: &mut dyn EntityObserver,
    spool_above: u64,
    threads: usize,
    accounting: Accounting,
    group_by: GroupBy,
) -> Run {
    let mut accounts = Accounts::new(ProfileOptions {
        group_by,
        ..ProfileOptions::default()
    });
    accounts.spool_above = spool_above;
    accounts.accounting = accounting;
    let total = Some(bytes.len() as u64);
    let threads = Some(threads);
    let summary = profile_instance_within(bytes, total, None, threads, &mut accounts, observer)
        .map_err(|e| e.to_string())?;
    Ok((accounts.memory.own_lines(), format!("{summary:?}")))
}

#[test]
fn counting_entities_on_the_wire_gives_what_building_them_gives() {
    let mut rng = Rng(SplitMix64(0x5eed_0016), false);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..6_000 {
        let mut bytes = instance(&mut rng);
        damage(&mut rng, &mut bytes);
        let counted = run(&bytes, &mut ());
        let built = run(&bytes, &mut Sees);
        assert_eq!(counted, built, "{bytes:02x?}");
        match counted {
            Ok(_) => accepted += 1,
            Err(_) => refused += 1,
        }
    }
    // Both verdicts are exercised.
    assert!(accepted > 800 && refused > 1_000, "{accepted} / {refused}");
}

/// [`run_on`] under OMMX 3.0's accounting of v1 input.
fn run_ommx30(bytes: &[u8], observer: &mut dyn EntityObserver, threads: usize) -> Run {
    run_as(bytes, observer, u64::MAX, threads, Accounting::Ommx30)
}

/// Under OMMX 3.0's accounting, v1 input read with its entities counted on
/// the wire, built, on several threads and in chunks of a file gives one
/// profile and one verdict.
#[test]
fn ommx30_accounting_reads_alike_counted_built_and_in_chunks() {
    let mut rng = Rng(SplitMix64(0x5eed_0043), false);
    let (mut accepted, mut refused, mut chunked) = (0, 0, 0);
    for _ in 0..3_000 {
        let mut bytes = instance(&mut rng);
        damage(&mut rng, &mut bytes);
        let counted = run_ommx30(&bytes, &mut (), 1);
        assert_eq!(counted, run_ommx30(&bytes, &mut Sees, 1), "{bytes:02x?}");
        assert_eq!(counted, run_ommx30(&bytes, &mut (), 3), "{bytes:02x?}");
        if let Some(in_chunks) = run_in_place_as(&bytes, u64::MAX, 3, Accounting::Ommx30) {
            assert_eq!(counted, in_chunks, "{bytes:02x?}");
            chunked += 1;
        }
        match counted {
            Ok(_) => accepted += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(
        accepted > 400 && refused > 500 && chunked > 400,
        "{accepted} / {refused} / {chunked}"
    );
}

/// A large function: a linear, quadratic or polynomial one of up to a few
/// hundred terms, its ids sorted, shuffled or repeated, over variables
/// 0..40.
fn large_function(rng: &mut Rng) -> pb::Function {
    use pb::FunctionArm;
    // Now and then a non-finite one.
    let value = |rng: &mut Rng| match rng.value() {
        v if v.is_finite() || rng.chance(30) => v,
        _ => 1.5,
    };
    let n = rng.below(300) as usize;
    let sorted = rng.chance(2);
    let mut ids: Vec<u64> = (0..n as u64)
        .map(|i| if sorted { i % 40 } else { rng.below(40) })
        .collect();
    if !sorted && rng.chance(2) {
        // Few repeats, often none.
        ids = (0..n as u64)
            .map(|i| (i * 7 + rng.below(2)) % 997)
            .collect();
    }
    let arm = if rng.chance(3) {
        // Monomials of degree up to 5 over those ids, some written again
        // (they merge, or cancel).
        let mut terms: Vec<pb::Monomial> = Vec::new();
        for chunk in ids.chunks(1 + rng.below(5) as usize) {
            let again = (!terms.is_empty() && rng.chance(5))
                .then(|| terms[rng.below(terms.len() as u64) as usize].ids.clone());
            terms.push(pb::Monomial {
                ids: again.unwrap_or_else(|| chunk.to_vec()),
                coefficient: value(rng),
            });
        }
        FunctionArm::Polynomial(pb::Polynomial { terms })
    } else if rng.chance(2) {
        FunctionArm::Linear(pb::Linear {
            terms: ids
                .iter()
                .map(|&id| pb::LinearTerm {
                    id,
                    coefficient: value(rng),
                })
                .collect(),
            constant: value(rng),
        })
    } else {
        let columns: Vec<u64> = ids.iter().map(|&i| (i * 3 + rng.below(3)) % 40).collect();
        let extra = usize::from(rng.chance(20));
        FunctionArm::Quadratic(pb::Quadratic {
            rows: ids,
            columns,
            values: (0..n + extra).map(|_| value(rng)).collect(),
            linear: rng.chance(2).then(|| pb::Linear {
                terms: (0..rng.below(50))
                    .map(|i| pb::LinearTerm {
                        id: i % 40,
                        coefficient: value(rng),
                    })
                    .collect(),
                constant: value(rng),
            }),
        })
    };
    pb::Function {
        function: Some(arm),
    }
}

/// Damages `bytes` now and then, and requires the same profile, summary
/// and verdict held and spooled past a random threshold, and read in
/// place in a file on several threads; whether it was refused, and
/// whether the file was read on several threads to the end (else one
/// thread reads it again).
fn spooled_as_held(rng: &mut Rng, mut bytes: Vec<u8>) -> (bool, bool) {
    if rng.chance(3) {
        damage(rng, &mut bytes);
    }
    let held = run(&bytes, &mut ());
    let above = rng.below(64);
    assert_eq!(run_spooling(&bytes, &mut (), above), held, "{bytes:02x?}");
    // A large linear objective checked and counted on several threads,
    // held and spooled.
    // (Not drawn from `rng`, whose draws make the cases.)
    let threads = 2 + bytes.len() % 3;
    assert_eq!(run_on(&bytes, &mut (), u64::MAX, threads), held);
    assert_eq!(run_on(&bytes, &mut (), above, threads), held);
    let in_place = run_in_place(&bytes, above, threads);
    if let Some(many) = &in_place {
        assert_eq!(many, &held, "{bytes:02x?}");
    }
    (held.is_err(), in_place.is_some())
}

/// `bytes` in a file read in chunks on `threads` threads, what is longer
/// than `above` read in place; `None` where it gives up (and one thread
/// reads it again).
fn run_in_place(bytes: &[u8], above: u64, threads: usize) -> Option<Run> {
    run_in_place_as(bytes, above, threads, Accounting::Ommx29)
}

/// [`run_in_place`] under `accounting`.
fn run_in_place_as(
    bytes: &[u8],
    above: u64,
    threads: usize,
    accounting: Accounting,
) -> Option<Run> {
    use super::framing::Spooling;
    use super::ranges::{profile_file, InFile};
    use std::io::Write;
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(b"xyz").unwrap();
    file.write_all(bytes).unwrap();
    let mut accounts = Accounts::new(ProfileOptions::default());
    accounts.spool_above = u64::MAX;
    accounts.accounting = accounting;
    accounts.count_when_unseen(false);
    let spooling = Spooling::of(&accounts, &()).in_file(above);
    let source = InFile {
        file: &file,
        start: 3,
        progress: &|_| {},
    };
    let size = (bytes.len() as u64, 1 + bytes.len() as u64 % 97);
    let done = profile_file(source, size, threads, spooling, &mut accounts, &mut ())?;
    Some(
        done.map_err(|e| e.to_string())
            .map(|summary| (accounts.memory.own_lines(), format!("{summary:?}"))),
    )
}

#[test]
fn spooling_the_objective_gives_what_holding_it_gives() {
    let mut rng = Rng(SplitMix64(0x5eed_5900), true);
    let (mut spooled, mut refused, mut in_place) = (0, 0, 0);
    for _ in 0..1_500 {
        rng.1 = true;
        let variables = (0..if rng.chance(10) { 39 } else { 40 }).map(|id| pb::DecisionVariable {
            id,
            kind: 3,
            ..Default::default()
        });
        let mut bytes = pb::Instance {
            decision_variables: variables.collect(),
            ..Default::default()
        }
        .encode_to_vec();
        // One objective field, or several (merged, or the last arm wins).
        for _ in 0..1 + usize::from(rng.chance(4)) + usize::from(rng.chance(8)) {
            let objective = if rng.chance(6) {
                function(&mut rng).unwrap_or_default()
            } else {
                large_function(&mut rng)
            };
            pb::Instance {
                objective: Some(objective),
                ..Default::default()
            }
            .encode(&mut bytes)
            .expect("a Vec grows");
        }
        spooled += 1;
        let (refusal, many) = spooled_as_held(&mut rng, bytes);
        refused += usize::from(refusal);
        in_place += usize::from(many);
    }
    assert!(
        refused > 150 && spooled - refused > 800 && in_place > 800,
        "{spooled} / {refused} / {in_place}"
    );
}

#[test]
fn spooling_constraints_gives_what_holding_them_gives() {
    let mut rng = Rng(SplitMix64(0x5eed_5901), true);
    let (mut cases, mut refused, mut in_place) = (0, 0, 0);
    for _ in 0..1_000 {
        rng.1 = true;
        // Variables 0..40, now and then one missing (the last, or one
        // between).
        let missing = match rng.below(10) {
            0 => 39,
            1 => 17,
            _ => 40,
        };
        let variables = (0..40)
            .filter(|&id| id != missing)
            .map(|id| pb::DecisionVariable {
                id,
                kind: 3,
                ..Default::default()
            });
        let head = pb::Instance {
            decision_variables: variables.collect(),
            objective: Some(pb::Function {
                function: Some(pb::function::Function::Constant(1.0)),
            }),
            ..Default::default()
        }
        .encode_to_vec();
        let mut constraints = Vec::new();
        for i in 0..1 + rng.below(4) {
            let function = match rng.below(20) {
                0 | 1 => function(&mut rng),
                2 => None,
                _ => Some(large_function(&mut rng)),
            };
            let c = pb::Constraint {
                id: if rng.chance(40) { 0 } else { i },
                equality: if rng.chance(30) { 0 } else { 1 },
                function,
                name: rng.text(),
                subscripts: rng.subscripts(),
                description: rng.text().filter(|_| rng.chance(2)),
                parameters: if rng.chance(8) {
                    rng.parameters()
                } else {
                    Default::default()
                },
            };
            let mut body = c.encode_to_vec();
            if rng.chance(10) {
                body.extend_from_slice(extra_field(&mut rng, 4));
            }
            let tag = prost::encoding::WireType::LengthDelimited;
            prost::encoding::encode_key(4, tag, &mut constraints);
            prost::encoding::encode_varint(body.len() as u64, &mut constraints);
            constraints.extend_from_slice(&body);
        }
        // Now and then the constraints come first: their variables are
        // checked once the stream has shown them.
        let bytes = match rng.chance(4) {
            true => [constraints, head].concat(),
            false => [head, constraints].concat(),
        };
        cases += 1;
        let (refusal, many) = spooled_as_held(&mut rng, bytes);
        refused += usize::from(refusal);
        in_place += usize::from(many);
    }
    assert!(
        refused > 150 && cases - refused > 300 && in_place > 300,
        "{cases} / {refused} / {in_place}"
    );
}

/// Sees every entity and notes what each costs under OMMX 3.0's
/// accounting: as the comparing pass tells it, or as the 3.0 reading shows
/// it.
#[derive(Default)]
struct Costs30(Vec<(crate::model::EntityKind, u64, u64)>);

impl EntityObserver for Costs30 {
    fn entity(&mut self, e: &super::EntityView<'_>, cost: super::Cost) {
        self.0.push((e.kind, e.id, cost.bytes));
    }
    fn ommx30_cost(&mut self, kind: crate::model::EntityKind, id: u64, bytes: u64) {
        self.0.push((kind, id, bytes));
    }
}

/// 2.9.3's reading that compares with 3.0's (`Reading::compare`): 2.9.3's
/// run, and 3.0's as the comparison gives it (its refusal as the message
/// `--accounting 3.0` ends with), with the 3.0 costs it told.
fn run_compared(
    bytes: &[u8],
    group_by: GroupBy,
) -> (Run, Option<Run>, Vec<(crate::model::EntityKind, u64, u64)>) {
    let mut accounts = Accounts::new(ProfileOptions {
        group_by,
        ..ProfileOptions::default()
    });
    accounts.comparing = true;
    accounts.compare = Some(Box::new(super::compare::Comparing::new(
        vec![None],
        group_by,
    )));
    let mut costs = Costs30::default();
    let total = Some(bytes.len() as u64);
    let counts = profile_instance_within(bytes, total, None, Some(2), &mut accounts, &mut costs);
    let v29 = match counts {
        Ok(counts) => Ok((accounts.memory.own_lines(), format!("{counts:?}"))),
        Err(e) => return (Err(e.to_string()), None, costs.0),
    };
    let compared = accounts.compare.take().map(|c| c.compared(None, None));
    let v30 = compared
        .and_then(|c| c.into_iter().next())
        .map(|c| match c {
            crate::profiled::Compared::Measured(i) => {
                let counts = crate::profiled::InstanceCounts {
                    summary: i.summary,
                    gathered: i.gathered.expect("gathered"),
                };
                Ok((i.aggregate.own_lines(), format!("{counts:?}")))
            }
            crate::profiled::Compared::Refused(why) => Err(why),
        });
    (v29, v30, costs.0)
}

/// The 3.0 reading's verdict as the comparison words it: a refusal 3.0
/// alone makes, as `--accounting 3.0` reports it at its root.
fn as_compared(run: Run, bytes: &[u8]) -> Run {
    run.map_err(|e| {
        let mut accounts = Accounts::new(ProfileOptions::default());
        accounts.accounting = Accounting::Ommx30;
        let total = Some(bytes.len() as u64);
        match profile_instance_within(bytes, total, None, Some(1), &mut accounts, &mut ()) {
            Err(super::InstanceError::Ommx30(e)) => {
                super::V2PassError::Conversion(e.to_string()).to_string()
            }
            _ => e,
        }
    })
}

/// Every v1 instance 2.9.3 accepts: the comparison made in its pass is
/// what reading it again under 3.0's accounting gives (profile, summary,
/// verdict and message, and each entity's 3.0 cost), on random instances,
/// the oracle's fixtures and the 3.0 differential corpus's v1 cases; with
/// family frames (`--group-by name`) too.
#[test]
fn comparing_in_one_pass_gives_what_reading_again_under_ommx30_gives() {
    comparing_gives_what_reading_again_gives(GroupBy::None);
}

#[test]
fn comparing_in_one_pass_with_family_frames_gives_what_reading_again_gives() {
    comparing_gives_what_reading_again_gives(GroupBy::Name);
}

fn comparing_gives_what_reading_again_gives(group_by: GroupBy) {
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    let mut rng = Rng(SplitMix64(0x5eed_0c30), false);
    for _ in 0..3_000 {
        let mut bytes = instance(&mut rng);
        damage(&mut rng, &mut bytes);
        inputs.push(bytes);
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for entry in std::fs::read_dir(root.join("oracle")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pb") {
            inputs.push(std::fs::read(path).unwrap());
        }
    }
    let corpus = std::fs::read_to_string(root.join("v2/corpus.jsonl")).unwrap();
    for line in corpus.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let hex = case["input_hex"].as_str().unwrap_or_default();
        if case["kind"] == "migration" && !hex.is_empty() {
            inputs.push(hex::decode(hex).unwrap());
        }
    }
    let (mut measured, mut refused) = (0, 0);
    for bytes in &inputs {
        let (v29, v30, costs) = run_compared(bytes, group_by);
        let again = run_grouped(bytes, &mut Sees, u64::MAX, 2, Accounting::Ommx29, group_by);
        assert_eq!(v29, again, "{bytes:02x?}");
        let Some(v30) = v30.filter(|_| v29.is_ok()) else {
            continue;
        };
        let mut seen = Costs30::default();
        let ommx30 = Accounting::Ommx30;
        let again = run_grouped(bytes, &mut seen, u64::MAX, 1, ommx30, group_by);
        let again = as_compared(again, bytes);
        assert_eq!(v30, again, "{bytes:02x?}");
        match v30 {
            Ok(_) => {
                assert_eq!(costs, seen.0, "{bytes:02x?}");
                measured += 1;
            }
            Err(_) => refused += 1,
        }
    }
    assert!(measured > 500 && refused > 20, "{measured} / {refused}");
}

/// A linear function keeps its terms in file order when it names each
/// variable once; the variable an error names is still the first in OMMX's
/// (sorted) order, built, counted, converted or compared.
#[test]
fn an_undefined_variable_is_the_smallest_whatever_the_file_order() {
    use pb::FunctionArm;
    let linear = |ids: &[u64]| pb::Function {
        function: Some(FunctionArm::Linear(pb::Linear {
            terms: ids
                .iter()
                .map(|&id| pb::LinearTerm {
                    id,
                    coefficient: 1.0,
                })
                .collect(),
            constant: 0.0,
        })),
    };
    let variable = |id| pb::DecisionVariable {
        id,
        kind: 1,
        ..Default::default()
    };
    let instance = pb::Instance {
        decision_variables: vec![variable(1), variable(5)],
        constraints: vec![pb::Constraint {
            id: 0,
            equality: 1,
            function: Some(linear(&[9, 5, 7, 1, 8])),
            ..Default::default()
        }],
        objective: Some(linear(&[5, 1])),
        ..Default::default()
    };
    let bytes = instance.encode_to_vec();
    let error = |run: Run| run.expect_err("variables 7, 8 and 9 are undefined");
    for threads in [1, 2] {
        let built = error(run_on(&bytes, &mut Sees, u64::MAX, threads));
        assert!(built.contains("decision variable 7"), "{built}");
        assert_eq!(error(run_on(&bytes, &mut (), u64::MAX, threads)), built);
        let ommx30 = error(run_ommx30(&bytes, &mut Sees, threads));
        assert!(ommx30.contains("decision variable 7"), "{ommx30}");
    }
}
