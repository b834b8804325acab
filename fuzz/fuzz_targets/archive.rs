//! Any bytes as a file given to `memprof inspect`: sniffing (gzip, tar, raw
//! protobuf, known foreign formats), the gzip decompressor and its size
//! limit, the tar scan and its hygiene rules, the OCI index and manifests,
//! digest and size checks, and the instance layers' profiles.
//!
//! The bytes are written to one reused temporary file, since archives are
//! read with seeks, exactly as a file named on the command line is.
#![no_main]

use std::cell::RefCell;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};

use libfuzzer_sys::fuzz_target;
use memprof::input::{read_file, Limits, Selection};
use memprof::pass::Pass;

/// Small enough that a decompression bomb is stopped within the timeout.
const MAX_DECOMPRESSED: u64 = 16 << 20;

thread_local! {
    static FILE: RefCell<File> = RefCell::new(tempfile::tempfile().expect("a temporary file"));
}

fuzz_target!(|data: &[u8]| {
    let file = FILE.with(|file| {
        let mut file = file.borrow_mut();
        file.set_len(0).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.write_all(data).unwrap();
        file.try_clone().unwrap()
    });
    let limits = Limits {
        max_decompressed: MAX_DECOMPRESSED,
        ..Limits::default()
    };
    let bar = indicatif::ProgressBar::hidden();
    let mut nothing = ();
    let mut pass = Pass::new(&mut nothing);
    if let Ok(profiled) = read_file(file, "fuzz".into(), Selection::All, &limits, &mut pass, &bar) {
        // Profiling succeeded: every instance layer has a profile.
        let instance_layers = profiled
            .input
            .layers
            .iter()
            .filter(|l| l.instance_index.is_some())
            .count();
        assert_eq!(profiled.instances.len(), instance_layers.max(1));
    }
});
