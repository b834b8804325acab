//! The objective as an observer that looks at it is shown it: counted or
//! built, held or left in the file, read in turn, from a file on every
//! thread or from a stream on several threads, it is shown the same.

use prost::Message;

use super::tests::{damage, function, instance, run, Rng, Run};
use super::{Accounts, EntityObserver, ProfileOptions};
use crate::ids::SplitMix64;
use crate::ommx_v1 as pb;

/// Sees the entities and the objective: a regular file is read in turn,
/// its objective held. Keeps what it was shown of the objective.
#[derive(Default)]
struct SeesObjective(Option<(u64, u64, String)>);

impl EntityObserver for SeesObjective {
    fn finish(&mut self, singular: &super::Singular<'_>) {
        let shape = singular.objective;
        let mut variables = Vec::new();
        singular
            .objective_variables
            .for_each(|id| variables.push(id));
        variables.sort_unstable();
        self.0 = Some((
            shape.stored_terms as u64,
            shape.bytes() as u64,
            format!(
                "{shape:?} of degree {} on {variables:?} {:?}",
                singular.objective_degree, singular.objective_waste
            ),
        ));
    }
}

/// `bytes` as a regular file read in turn on `threads` threads (a long
/// body on every thread, `ranges::FileAt`), shown to [`SeesObjective`].
fn run_from_file(bytes: &[u8], threads: usize) -> (Run, Option<(u64, u64, String)>) {
    use super::ranges::InFile;
    use std::io::Write;
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(b"xyz").unwrap();
    file.write_all(bytes).unwrap();
    let source = super::pipeline::Source {
        reader: std::io::empty(),
        total: Some(bytes.len() as u64),
        max_element: None,
        in_file: Some(InFile {
            file: &file,
            start: 3,
            progress: &|_| {},
        }),
    };
    run_shown(source, threads)
}

/// `source` read on `threads` threads, shown to [`SeesObjective`].
fn run_shown<R: std::io::Read + Send>(
    source: super::pipeline::Source<'_, R>,
    threads: usize,
) -> (Run, Option<(u64, u64, String)>) {
    use super::settings::Settings;
    let mut accounts = Accounts::new(ProfileOptions::default());
    let mut observer = SeesObjective::default();
    let settings = Settings {
        threads: Some(threads),
        ..Settings::default()
    };
    let summary = super::pipeline::profile_source(source, settings, &mut accounts, &mut observer)
        .map_err(|e| e.to_string())
        .map(|summary| (accounts.memory.own_lines(), format!("{summary:?}")));
    (summary, observer.0)
}

#[test]
fn a_long_objective_in_a_file_reads_on_every_thread_as_in_turn() {
    use pb::function::Function as Arm;
    // Past the 4 MiB from which the field reader reads a body on every
    // thread, unsorted ids and repeats among them.
    let terms = (0..450_000u64).map(|i| pb::LinearTerm {
        id: (i * 7_919) % 1_000,
        coefficient: if i % 10 == 0 {
            0.0
        } else {
            (i % 13) as f64 - 6.5
        },
    });
    let linear = Arm::Linear(pb::Linear {
        terms: terms.collect(),
        constant: 1.5,
    });
    // Past the 4 MiB from which a quadratic one is left in the file: each
    // pair once, and then one pair again.
    let pairs: Vec<(u64, u64)> = (0..1_000u64)
        .flat_map(|i| (i..1_000).map(move |j| (i, j)))
        .take(450_000)
        .collect();
    let quadratic = |pairs: &[(u64, u64)]| {
        Arm::Quadratic(pb::Quadratic {
            rows: pairs.iter().map(|p| p.0).collect(),
            columns: pairs.iter().map(|p| p.1).collect(),
            values: pairs.iter().map(|p| 1.0 + (p.1 % 7) as f64).collect(),
            linear: Some(pb::Linear {
                terms: vec![pb::LinearTerm {
                    id: 3,
                    coefficient: 2.0,
                }],
                constant: 0.0,
            }),
        })
    };
    let repeated = [&pairs[..], &pairs[7..8]].concat();
    for objective in [linear, quadratic(&pairs), quadratic(&repeated)] {
        a_long_objective_reads_as_in_turn(objective);
    }
}

/// [`a_long_objective_in_a_file_reads_on_every_thread_as_in_turn`] of
/// one objective over 1,000 variables.
fn a_long_objective_reads_as_in_turn(objective: pb::function::Function) {
    let bytes = pb::Instance {
        decision_variables: (0..1_000)
            .map(|id| pb::DecisionVariable {
                id,
                kind: 3,
                ..Default::default()
            })
            .collect(),
        objective: Some(pb::Function {
            function: Some(objective),
        }),
        ..Default::default()
    }
    .encode_to_vec();
    assert!(bytes.len() > 5 << 20, "{}", bytes.len());
    // Whole, cut inside the objective (too few bytes left for its body),
    // and cut in its last window.
    for len in [bytes.len(), bytes.len() / 2, bytes.len() - 3] {
        let cut = &bytes[..len];
        let mut in_turn = SeesObjective::default();
        let expected = run(cut, &mut in_turn);
        assert_eq!(expected.is_ok(), len == bytes.len(), "{expected:?}");
        for threads in [2, 3] {
            let (got, shown) = run_from_file(cut, threads);
            assert_eq!(got, expected, "{len} bytes on {threads} threads");
            assert_eq!(shown, in_turn.0, "{len} bytes on {threads} threads");
        }
        // The objective was shown, held as OMMX holds it.
        assert_eq!(in_turn.0.is_some(), len == bytes.len());
    }
}

/// `bytes` as a stream read on `threads` threads (1: in turn on the
/// calling thread), shown to [`SeesObjective`].
fn run_stream_on(bytes: &[u8], threads: usize) -> (Run, Option<(u64, u64, String)>) {
    let source = super::pipeline::Source {
        reader: bytes,
        total: Some(bytes.len() as u64),
        max_element: None,
        in_file: None,
    };
    run_shown(source, threads)
}

/// The objective, counted or built, is shown on several threads as on
/// one: random objectives in no piece, one or several (merged, as protobuf
/// merges a message that comes again), anywhere in the stream, damaged or
/// not.
#[test]
fn an_objective_read_on_several_threads_is_shown_as_on_one() {
    let mut rng = Rng(SplitMix64(0x5eed_0043), false);
    let constant = pb::Instance {
        objective: Some(pb::Function {
            function: Some(pb::function::Function::Constant(1.0)),
        }),
        ..Default::default()
    }
    .encoded_len();
    let (mut one_piece, mut merged) = (0, 0);
    for _ in 0..3_000 {
        // `instance` starts with a constant objective: kept, or dropped.
        let mut bytes = instance(&mut rng);
        if rng.chance(2) {
            bytes.drain(..constant);
        }
        for _ in 0..rng.below(3) {
            let piece = pb::Instance {
                objective: Some(function(&mut rng).unwrap_or_default()),
                ..Default::default()
            }
            .encode_to_vec();
            if rng.chance(2) {
                bytes.splice(0..0, piece);
            } else {
                bytes.extend_from_slice(&piece);
            }
        }
        if rng.chance(4) {
            damage(&mut rng, &mut bytes);
        }
        let pieces = count_objective_pieces(&bytes);
        let expected = run_stream_on(&bytes, 1);
        for threads in [2, 3] {
            assert_eq!(run_stream_on(&bytes, threads), expected, "{bytes:02x?}");
        }
        if expected.1.is_some() {
            one_piece += usize::from(pieces == 1);
            merged += usize::from(pieces > 1);
        }
    }
    assert!(one_piece > 120 && merged > 150, "{one_piece} / {merged}");
}

/// How many objective fields the top level of `bytes` holds, as far as it
/// reads.
fn count_objective_pieces(bytes: &[u8]) -> usize {
    let mut fields = crate::wire::Fields::new(bytes);
    let mut n = 0;
    while let Ok(Some((number, _))) = fields.next_field() {
        n += usize::from(number == crate::wire::fields::instance::OBJECTIVE);
    }
    n
}
