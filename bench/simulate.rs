//! Prints, for each instance of each file, the resident that OMMX 2.9.3's
//! load leaves when it is made allocation by allocation from the instance's
//! facts and run through the model of glibc malloc
//! (`src/real_memory/load29/`), beside the closed-form estimate (what memprof
//! prints where it does not simulate), and how long the simulation took. Instances whose shape the
//! generator does not make yet (parameters, descriptions, removed
//! constraints) say so.
//!
//! Usage: cargo run --release --example simulate -- [--record TRACE] FILE...
//! `--record` writes the first instance's generated load as a trace in
//! `bench/alloc_trace.c`'s records, for `bench/alloc_trace.py FILE --trace
//! TRACE --steps N` to print beside a traced load's steps.
//! `SIMULATE_FACTS=1` prints each instance's facts (what the generator is
//! made from) to stderr. Compare with the measured column of
//! bench/real_memory.json.

use memprof::api::{self, Input, Options};
use memprof::real_memory::{estimate, load29, Effort, Facts};
use memprof::report::Accounting;
use std::time::Instant;

fn main() {
    let mib = |b: u64| b as f64 / 1048576.0;
    let mut failed = false;
    // Read as for the simulation (a quadratic objective's table order is
    // made then); the closed form is printed beside it.
    let options = Options::default();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut record = None;
    if args.first().is_some_and(|a| a == "--record") && args.len() > 1 {
        record = Some(args.remove(1));
        args.remove(0);
    }
    for path in args {
        let loaded = match api::load(&Input::from_arg(&path), &options) {
            Ok(loaded) => loaded,
            Err(e) => {
                eprintln!("simulate: {}", api::one_line(&e));
                failed = true;
                continue;
            }
        };
        {
            for instance in &loaded.report.instances {
                let Some(gathered) = &instance.gathered else {
                    continue;
                };
                let facts = Facts::of(&instance.aggregate, &instance.summary, gathered);
                let estimated = estimate(&facts, Accounting::Ommx29, Effort::ClosedForm).resident;
                if let Some(out) = record.take() {
                    let Some((_, records)) = load29::record(&facts) else {
                        eprintln!("simulate: {path}: not a shape the generator makes");
                        std::process::exit(2);
                    };
                    let bytes: Vec<u8> = records
                        .iter()
                        .flatten()
                        .flat_map(|v| v.to_le_bytes())
                        .collect();
                    if let Err(e) = std::fs::write(&out, bytes) {
                        eprintln!("simulate: {out}: {e}");
                        std::process::exit(2);
                    }
                }
                if std::env::var_os("SIMULATE_FACTS").is_some() {
                    eprintln!("{facts:#?}");
                }
                let started = Instant::now();
                let simulated = load29::simulate(&facts, u64::MAX);
                let took = started.elapsed();
                match simulated {
                    Some(s) => println!(
                        "{path}: resident {:.1} MiB simulated ({:.2} s, {} calls, {} predicted; breaks {:.1} / {:.1} / {:.1} MiB), {:.1} estimated",
                        mib(s.resident),
                        took.as_secs_f64(),
                        s.calls,
                        load29::predicted_calls(&facts).unwrap_or(0),
                        mib(s.breaks[0]),
                        mib(s.breaks[1]),
                        mib(s.breaks[2]),
                        mib(estimated)
                    ),
                    None => println!(
                        "{path}: not simulated (a shape the generator does not make yet), {:.1} MiB estimated",
                        mib(estimated)
                    ),
                }
            }
        }
    }
    if failed {
        std::process::exit(2);
    }
}
