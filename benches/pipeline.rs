//! In-process benchmarks of the pipeline's pieces (criterion). The
//! whole-process figures against OMMX come from bench/run.sh; these isolate
//! where a change moves the time. Run: `cargo bench --bench pipeline`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use prost::Message;

use memprof::decode::instance::{profile_instance, Accounts};
use memprof::decode::ProfileOptions;
use memprof::model::Function;
use memprof::ommx_v1 as pb;
use memprof::profile::{Aggregate, LogicalMemoryProfile, Path};

/// A deterministic pseudo-random sequence (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn linear(rng: &mut Rng, terms: usize, variables: u64) -> pb::Function {
    pb::Function {
        function: Some(pb::function::Function::Linear(pb::Linear {
            terms: (0..terms)
                .map(|_| pb::LinearTerm {
                    id: rng.next() % variables,
                    coefficient: (rng.next() % 1000) as f64 / 7.0,
                })
                .collect(),
            constant: -1.0,
        })),
    }
}

/// An LP like the benchmark's, scaled down: `constraints` × `terms` terms
/// over `variables` named variables.
fn lp_bytes(constraints: u64, terms: usize, variables: u64) -> Vec<u8> {
    let mut rng = Rng(7);
    let instance = pb::Instance {
        decision_variables: (0..variables)
            .map(|id| pb::DecisionVariable {
                id,
                kind: pb::decision_variable::Kind::Continuous as i32,
                bound: Some(pb::Bound {
                    lower: 0.0,
                    upper: 10.0,
                }),
                name: Some("x".into()),
                subscripts: vec![id as i64],
                ..Default::default()
            })
            .collect(),
        objective: Some(linear(&mut rng, 100, variables)),
        constraints: (0..constraints)
            .map(|id| pb::Constraint {
                id,
                equality: pb::Equality::LessThanOrEqualToZero as i32,
                function: Some(linear(&mut rng, terms, variables)),
                name: Some("c".into()),
                subscripts: vec![id as i64],
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    instance.encode_to_vec()
}

fn profile(c: &mut Criterion) {
    let bytes = lp_bytes(2_000, 50, 10_000);
    let mut group = c.benchmark_group("profile_instance");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.sample_size(20);
    for threads in ["1", "2"] {
        group.bench_function(format!("lp-100k-terms/threads={threads}"), |b| {
            std::env::set_var("MEMPROF_THREADS", threads);
            b.iter(|| {
                let mut accounts = Accounts::new(ProfileOptions::default());
                profile_instance(&bytes[..], Some(bytes.len() as u64), &mut accounts, &mut ())
                    .unwrap();
                black_box(accounts.memory.total_bytes())
            })
        });
    }
    group.finish();
}

fn normalize(c: &mut Criterion) {
    let mut rng = Rng(11);
    let small = linear(&mut rng, 50, 100_000);
    let mut quadratic = pb::Quadratic::default();
    for _ in 0..100_000 {
        quadratic.rows.push(rng.next() % 2_000);
        quadratic.columns.push(rng.next() % 2_000);
        quadratic.values.push((rng.next() % 100) as f64);
    }
    let quadratic = pb::Function {
        function: Some(pb::function::Function::Quadratic(quadratic)),
    };
    let mut group = c.benchmark_group("normalize");
    group.throughput(Throughput::Elements(50));
    group.bench_function("linear-50", |b| {
        b.iter(|| Function::from_wire(black_box(&small)).unwrap())
    });
    group.throughput(Throughput::Elements(100_000));
    group.sample_size(20);
    group.bench_function("quadratic-100k", |b| {
        b.iter(|| Function::from_wire(black_box(&quadratic)).unwrap())
    });
    group.finish();
}

fn aggregate(c: &mut Criterion) {
    let mut rng = Rng(3);
    let functions: Vec<Function> = (0..1_000)
        .map(|_| Function::from_wire(&linear(&mut rng, 50, 100_000)).unwrap())
        .collect();
    let mut group = c.benchmark_group("aggregate");
    group.throughput(Throughput::Elements(functions.len() as u64));
    group.bench_function("visit-1000-linear-functions", |b| {
        b.iter_batched(
            Aggregate::new,
            |mut aggregate| {
                let mut path = Path::new();
                for f in &functions {
                    f.visit_logical_memory(&mut path.with("Constraint.function"), &mut aggregate);
                }
                aggregate
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, profile, normalize, aggregate);
criterion_main!(benches);
