//! Decoding on several threads must not change a byte of any output, nor
//! which error is reported, on instances spanning many batches.

use std::fs;
use std::path::Path;

use assert_cmd::Command;

use crate::memprof;

/// Writes a generated LP of a few thousand entities (several decoding
/// batches) and returns its bytes.
fn generated_lp(dir: &Path) -> Vec<u8> {
    let path = dir.join("lp.pb");
    let status = Command::cargo_bin("memprof-gen")
        .unwrap()
        .args(["lp", "--constraints", "3000", "--terms", "4"])
        .args(["--variables", "2500", "-o", path.to_str().unwrap()])
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    fs::read(path).unwrap()
}

/// The first top-level element of an encoded instance (tag, length, body).
fn first_element(bytes: &[u8]) -> &[u8] {
    let mut at = 1; // a one-byte tag: field 2, length-delimited
    assert_eq!(bytes[0], 0x12, "the generator writes variables first");
    let (mut len, mut shift) = (0usize, 0);
    loop {
        let b = bytes[at];
        at += 1;
        len |= usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    &bytes[..at + len]
}

fn run(path: &Path, threads: &str, format: &str) -> std::process::Output {
    memprof()
        .env("MEMPROF_THREADS", threads)
        .args(["inspect", path.to_str().unwrap(), "--format", format])
        .output()
        .unwrap()
}

#[test]
fn every_thread_count_gives_the_same_bytes_and_the_same_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = generated_lp(dir.path());
    let mut cases = vec![("good.pb", good.clone())];
    // The first variable again at the very end: a duplicate id, found only
    // after every batch before it was decoded on some thread.
    let mut duplicate = good.clone();
    duplicate.extend_from_slice(first_element(&good));
    cases.push(("duplicate.pb", duplicate));
    // A constraint whose length runs past the end of the file.
    let mut truncated = good.clone();
    truncated.extend_from_slice(&[0x22, 0x40, 0x08]);
    cases.push(("truncated.pb", truncated));
    // Damage in the middle: a constraint body that is not valid protobuf.
    let mut corrupt = good;
    let middle = corrupt.len() / 2;
    corrupt.splice(middle..middle, [0x22, 0x02, 0xff, 0xff]);
    cases.push(("corrupt.pb", corrupt));

    for (name, bytes) in cases {
        let path = dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        for format in ["folded", "json"] {
            let one = run(&path, "1", format);
            for threads in ["2", "3", "8"] {
                let many = run(&path, threads, format);
                assert_eq!(one.status.code(), many.status.code(), "{name} {threads}");
                assert_eq!(one.stdout, many.stdout, "{name} {format} {threads}");
                assert_eq!(one.stderr, many.stderr, "{name} {threads}");
            }
            let expect_ok = name == "good.pb";
            assert_eq!(one.status.success(), expect_ok, "{name}");
        }
    }
}
