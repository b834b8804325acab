//! Raw `ommx.v1.Instance` bytes through the streaming decoder, OMMX's
//! normalization and validation, and the logical-memory visit.
//!
//! Each input is decoded twice: with its length known (as for a file, where
//! length prefixes are checked against it up front) and unknown (as for
//! gzip or stdin, where bodies are read incrementally). Both must end in a
//! profile or an error, and the same one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memprof::decode::instance::profile_instance;
use memprof::profile::{Aggregate, Path};

fuzz_target!(|data: &[u8]| {
    let known = {
        let mut aggregate = Aggregate::new();
        profile_instance(
            data,
            Some(data.len() as u64),
            &mut Path::new(),
            &mut aggregate,
        )
        .map(|summary| (summary, aggregate))
        .map_err(|e| e.to_string())
    };
    let unknown = {
        let mut aggregate = Aggregate::new();
        profile_instance(data, None, &mut Path::new(), &mut aggregate)
            .map(|summary| (summary, aggregate))
            .map_err(|e| e.to_string())
    };
    match (&known, &unknown) {
        (Ok((s1, a1)), Ok((s2, a2))) => {
            assert_eq!(s1, s2);
            assert_eq!(a1.folded_lines(), a2.folded_lines());
        }
        (Err(e1), Err(e2)) => assert_eq!(e1, e2),
        _ => panic!("known and unknown length disagree: {known:?} vs {unknown:?}"),
    }
});
