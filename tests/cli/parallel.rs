//! Decoding on several threads must not change a byte of any output, nor
//! which error is reported, on instances spanning many batches.

use std::fs;
use std::path::Path;

use assert_cmd::Command;

use crate::memprof;

/// Writes a generated LP of some twenty thousand entities (several decoding
/// batches of up to 4,096 elements or 256 KiB) and returns its bytes.
pub(crate) fn generated_lp(dir: &Path) -> Vec<u8> {
    let path = dir.join("lp.pb");
    let status = Command::cargo_bin("memprof-gen")
        .unwrap()
        .args(["lp", "--constraints", "12000", "--terms", "4"])
        .args(["--variables", "10000", "-o", path.to_str().unwrap()])
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

/// What a successful memprof prints with `args` on `threads` threads.
pub fn stdout_on(threads: &str, args: &[&str]) -> Vec<u8> {
    let out = memprof()
        .env("MEMPROF_THREADS", threads)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} on {threads} threads");
    out.stdout
}

fn run(path: &Path, threads: &str, format: &str) -> std::process::Output {
    run_in_chunks(path, threads, "1048576", format)
}

/// [`run`], a file on several threads cut into chunks of `chunk` bytes.
fn run_in_chunks(path: &Path, threads: &str, chunk: &str, format: &str) -> std::process::Output {
    memprof()
        .env("MEMPROF_THREADS", threads)
        .env("MEMPROF_CHUNK_BYTES", chunk)
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
            // The file whole in one chunk, and in chunks of 4 KiB and 333
            // bytes (an element crossing almost every chunk's end).
            for (threads, chunk) in [
                ("2", "1048576"),
                ("3", "4096"),
                ("8", "333"),
                ("16", "4096"),
            ] {
                let many = run_in_chunks(&path, threads, chunk, format);
                assert_eq!(one.status.code(), many.status.code(), "{name} {threads}");
                assert_eq!(one.stdout, many.stdout, "{name} {format} {threads}");
                assert_eq!(one.stderr, many.stderr, "{name} {threads}");
            }
            let expect_ok = name == "good.pb";
            assert_eq!(one.status.success(), expect_ok, "{name}");
        }
    }
}

#[test]
fn trace_is_valid_trace_event_json_and_timings_leave_stdout_alone() {
    let dir = tempfile::tempdir().unwrap();
    generated_lp(dir.path());
    let input = dir.path().join("lp.pb");
    let trace = dir.path().join("trace.json");
    let plain = run(&input, "2", "folded");
    let traced = memprof()
        .env("MEMPROF_THREADS", "2")
        .args(["--timings", "--trace", trace.to_str().unwrap()])
        .args(["inspect", input.to_str().unwrap(), "--format", "folded"])
        .output()
        .unwrap();
    assert!(traced.status.success());
    assert_eq!(plain.stdout, traced.stdout, "timing changes no output byte");

    let stderr = String::from_utf8(traced.stderr).unwrap();
    for phase in [
        "read",
        "decode",
        "normalize",
        "aggregate",
        "check",
        "render",
    ] {
        let row = stderr
            .lines()
            .find(|l| l.split_whitespace().next() == Some(phase))
            .unwrap_or_else(|| panic!("no {phase} row in {stderr}"));
        assert!(row.contains("ms") && row.contains("MiB"), "{row}");
    }

    let doc: serde_json::Value = serde_json::from_slice(&fs::read(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let mut phases = std::collections::BTreeSet::new();
    let mut threads = std::collections::BTreeSet::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap();
        assert!(["M", "X", "C"].contains(&ph), "{e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
        if ph == "X" {
            let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
            assert!(ts >= 0.0 && dur >= 0.0, "{e}");
            phases.insert(e["name"].as_str().unwrap().to_string());
            threads.insert(e["tid"].as_u64().unwrap());
        }
        if ph == "C" {
            assert!(e["args"]["rss_bytes"].as_u64().unwrap() > 0, "{e}");
        }
    }
    for phase in [
        "read",
        "decode",
        "normalize",
        "aggregate",
        "check",
        "render",
    ] {
        assert!(phases.contains(phase), "no {phase} span in the trace");
    }
    assert!(threads.len() >= 2, "spans from the main thread and workers");
}

#[test]
fn several_inputs_are_profiled_together_in_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oracle");
    let names = ["kitchen_sink.pb", "moderate.pb", "multi.ommx", "empty.pb"];
    for name in names {
        fs::copy(oracle.join(name), dir.path().join(name)).unwrap();
    }
    let paths: Vec<String> = names
        .iter()
        .map(|n| dir.path().join(n).to_string_lossy().into_owned())
        .collect();
    let inspect = |threads: &str, args: &[&str]| {
        let out = memprof()
            .env("MEMPROF_THREADS", threads)
            .arg("inspect")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };

    // Folded: each file's own lines under its root frame, in argument order.
    let args: Vec<&str> = paths
        .iter()
        .map(String::as_str)
        .chain(["-f", "folded"])
        .collect();
    let together = inspect("1", &args);
    let mut expected = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        for line in inspect("1", &[path, "-f", "folded"]).lines() {
            expected.push(format!("file[{i}] ({path});{line}"));
        }
    }
    expected.sort();
    assert_eq!(together.lines().collect::<Vec<_>>(), expected);
    assert_eq!(inspect("4", &args), together, "threads change nothing");

    // A quoted pattern expands, sorted, to the same files.
    let pattern = format!("{}/*", dir.path().display());
    let globbed = inspect("2", &[&pattern, "-f", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&globbed).unwrap();
    let files = doc["files"].as_array().unwrap();
    let mut sorted = paths.clone();
    sorted.sort();
    let listed: Vec<&str> = files.iter().map(|f| f["file"].as_str().unwrap()).collect();
    assert_eq!(listed, sorted);
    let sum: u64 = files
        .iter()
        .map(|f| f["logical_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(doc["total_bytes"].as_u64().unwrap(), sum);
    assert_eq!(doc["tree"]["bytes"].as_u64().unwrap(), sum);
    for f in files {
        assert!(f["seconds"].as_f64().unwrap() >= 0.0);
    }
    let table = inspect("2", &[&pattern, "-f", "table"]);
    assert!(table.contains("total (4 files)"), "{table}");

    // One bad input fails the run, naming the first bad file in order.
    let bad = dir.path().join("bad.pb");
    fs::write(&bad, [0x12, 0x7f]).unwrap();
    let out = memprof()
        .args(["inspect", &paths[0], bad.to_str().unwrap(), &paths[1]])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("memprof: error: {}:", bad.display())),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn advise_takes_several_inputs_and_gives_each_its_own_document() {
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oracle");
    let files: Vec<String> = ["kitchen_sink.pb", "moderate.pb", "multi.ommx"]
        .iter()
        .map(|n| oracle.join(n).to_string_lossy().into_owned())
        .collect();
    let advise = |threads: &str, files: &[String]| {
        let out = memprof()
            .env("MEMPROF_THREADS", threads)
            .arg("advise")
            .args(files)
            .args(["-f", "json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let together = advise("2", &files);
    assert_eq!(together, advise("1", &files), "threads change nothing");
    let each = together["files"].as_array().unwrap();
    assert_eq!(each.len(), files.len());
    for (doc, file) in each.iter().zip(&files) {
        assert_eq!(doc, &advise("1", std::slice::from_ref(file)), "{file}");
    }
}

#[test]
fn timings_count_gzip_inflation_as_decompress() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let raw = fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oracle/moderate.pb"))
        .unwrap();
    let gz = dir.path().join("moderate.pb.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&raw).unwrap();
    fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let out = memprof()
        .args([
            "--timings",
            "inspect",
            gz.to_str().unwrap(),
            "-f",
            "folded",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let row = stderr
        .lines()
        .find(|l| l.starts_with("decompress"))
        .unwrap();
    let spans: u64 = row.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(spans > 0, "{row}");
}
