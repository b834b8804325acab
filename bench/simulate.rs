//! Prints, for each instance of each file, the resident that OMMX 2.9.3's
//! load leaves and its load peak when it is made allocation by allocation
//! from the instance's facts and run through the model of glibc malloc
//! (`src/real_memory/load29/`), beside the closed form's (what memprof
//! prints where it does not simulate), and how long the simulation took. Instances whose shape the
//! generator does not make yet (parameters, descriptions, removed
//! constraints) say so.
//!
//! Usage: cargo run --release --example simulate -- [--record TRACE] FILE...
//!        cargo run --release --example simulate -- --accounting 3.0 [--record TRACE] FILE...
//! With `--accounting 3.0`, OMMX 3.0.0b7's load of the same files
//! (`src/real_memory/load30/`): its resident and load peak simulated, the
//! calls made and predicted, beside the closed form's.
//! `--record` writes the first instance's generated load as a trace in
//! `bench/alloc_trace.c`'s records, for `bench/alloc_trace.py FILE --trace
//! TRACE --steps N` to print beside a traced load's steps (after
//! `--accounting 3.0`, 3.0's load of it: `--runtime 3.0`, or `3.0-v2` for
//! v2 input).
//! `SIMULATE_FACTS=1` prints each instance's facts (what the generator is
//! made from) to stderr. Compare with the measured column of
//! bench/real_memory.json.

use memprof::api::{self, Input, Options};
use memprof::profiled::Accounting;
use memprof::real_memory::{estimate, load29, load30, Effort, Facts};
use std::time::Instant;

fn main() {
    let mib = |b: u64| b as f64 / 1048576.0;
    let mut failed = false;
    // Read as for the simulation (a quadratic objective's table order is
    // made then); the closed form is printed beside it.
    let mut options = Options::default();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let ommx30 = args.first().is_some_and(|a| a == "--accounting") && args.len() > 2;
    if ommx30 {
        if args[1] != "3.0" {
            eprintln!("simulate: --accounting takes 3.0 (2.9.3 is the default)");
            std::process::exit(2);
        }
        args.drain(..2);
        options.accounting = Some(Accounting::Ommx30);
    }
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
            for instance in &loaded.profiled.instances {
                let Some(gathered) = &instance.gathered else {
                    continue;
                };
                let facts = Facts {
                    schema: instance.schema,
                    ..Facts::of(&instance.aggregate, &instance.summary, gathered)
                };
                if ommx30 {
                    if std::env::var_os("SIMULATE_FACTS").is_some() {
                        eprintln!("{facts:#?}");
                    }
                    if let Some(out) = record.take() {
                        let Some((_, records)) = load30::record(&facts) else {
                            eprintln!("simulate: {path}: not a shape the recipe makes");
                            std::process::exit(2);
                        };
                        write_records(&out, &records);
                    }
                    simulate30(&path, &facts);
                    continue;
                }
                let closed = estimate(&facts, Accounting::Ommx29, Effort::ClosedForm);
                if let Some(out) = record.take() {
                    let Some((_, records)) = load29::record(&facts) else {
                        eprintln!("simulate: {path}: not a shape the generator makes");
                        std::process::exit(2);
                    };
                    write_records(&out, &records);
                }
                if std::env::var_os("SIMULATE_FACTS").is_some() {
                    eprintln!("{facts:#?}");
                }
                let started = Instant::now();
                let simulated = load29::simulate(&facts, u64::MAX);
                let took = started.elapsed();
                match simulated {
                    Some(s) => println!(
                        "{path}: resident {:.1} MiB, load peak {:.1} MiB simulated ({:.2} s, {} calls, {} predicted; breaks {:.1} / {:.1} / {:.1} MiB); closed form {:.1} / {:.1}",
                        mib(s.resident),
                        mib(s.load_peak),
                        took.as_secs_f64(),
                        s.calls,
                        load29::predicted_calls(&facts).unwrap_or(0),
                        mib(s.breaks[0]),
                        mib(s.breaks[1]),
                        mib(s.breaks[2]),
                        mib(closed.resident),
                        mib(closed.load_peak)
                    ),
                    None => println!(
                        "{path}: not simulated (a shape the generator does not make yet); closed form {:.1} / {:.1} MiB",
                        mib(closed.resident),
                        mib(closed.load_peak)
                    ),
                }
            }
        }
    }
    if failed {
        std::process::exit(2);
    }
}

/// OMMX 3.0.0b7's load of one instance, simulated, beside the closed form.
fn simulate30(path: &str, facts: &Facts) {
    let mib = |b: u64| b as f64 / 1048576.0;
    let closed = estimate(facts, Accounting::Ommx30, Effort::ClosedForm);
    let started = Instant::now();
    let simulated = load30::simulate(facts, u64::MAX);
    let took = started.elapsed();
    match simulated {
        Some(s) => println!(
            "{path}: 3.0 resident {:.1} MiB, load peak {:.1} MiB simulated ({:.2} s, {} calls, {} predicted); closed form {:.1} / {:.1}",
            mib(s.resident),
            mib(s.load_peak),
            took.as_secs_f64(),
            s.calls,
            load30::predicted_calls(facts).unwrap_or(0),
            mib(closed.resident),
            mib(closed.load_peak)
        ),
        None => println!(
            "{path}: 3.0 not simulated (a shape the recipe does not make yet); closed form {:.1} / {:.1} MiB",
            mib(closed.resident),
            mib(closed.load_peak)
        ),
    }
}

/// A generated load's records written as `bench/alloc_trace.c` writes a
/// trace.
fn write_records(out: &str, records: &[[u64; 4]]) {
    let bytes: Vec<u8> = records
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    if let Err(e) = std::fs::write(out, bytes) {
        eprintln!("simulate: {out}: {e}");
        std::process::exit(2);
    }
}
