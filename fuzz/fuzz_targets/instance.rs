//! Raw `ommx.v1.Instance` bytes through the streaming decoder, OMMX's
//! normalization and validation, and the logical-memory visit.
//!
//! Each input is decoded twice: with its length known (as for a file, where
//! length prefixes are checked against it up front) and unknown (as for
//! gzip or stdin, where bodies are read incrementally). Both must end in a
//! profile or an error, and the same one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memprof::pass::{profile_instance, Accounts};
use memprof::pass::ProfileOptions;
use memprof::profile::family::GroupBy;

/// Families and the wire view on, so their code paths are fuzzed too.
fn run(data: &[u8], total: Option<u64>) -> Result<(memprof::profiled::InstanceCounts, Accounts), String> {
    let options = ProfileOptions {
        group_by: GroupBy::Name,
        wire: true,
        table_order: true,
    };
    let mut accounts = Accounts::new(options);
    profile_instance(data, total, &mut accounts, &mut ())
        .map(|counts| (counts, accounts))
        .map_err(|e| e.to_string())
}

fuzz_target!(|data: &[u8]| {
    let known = run(data, Some(data.len() as u64));
    let unknown = run(data, None);
    match (&known, &unknown) {
        (Ok((s1, a1)), Ok((s2, a2))) => {
            assert_eq!(s1, s2);
            assert_eq!(a1.memory.folded_lines(), a2.memory.folded_lines());
            let wire = |a: &Accounts| a.wire.as_ref().map(|w| w.folded_lines());
            assert_eq!(wire(a1), wire(a2));
            // The wire view accounts for every byte of the input.
            let total = a1.wire.as_ref().map(|w| w.total_bytes());
            assert_eq!(total, Some(data.len() as u64));
        }
        (Err(e1), Err(e2)) => assert_eq!(e1, e2),
        _ => panic!(
            "known and unknown length disagree: {:?} vs {:?}",
            known.as_ref().map(|r| &r.0),
            unknown.as_ref().map(|r| &r.0)
        ),
    }
});
