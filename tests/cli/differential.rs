//! The differential corpus: inputs on which memprof once disagreed with
//! OMMX 2.9.3, or could have, each with OMMX's own verdict, replayed through
//! the binary without Python. `fixtures/differential/differential.py`
//! generates the cases and runs the oracle; see fixtures/differential/README.md.

use std::fs;
use std::io::Read;

use serde::Deserialize;

use super::{fixtures, memprof};

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    /// `raw` (an ommx.v1.Instance) or `archive` (an .ommx file).
    kind: String,
    category: String,
    /// The input (raw cases), or the input gzip-compressed (archives, which
    /// are mostly tar padding).
    #[serde(default)]
    input_hex: String,
    #[serde(default)]
    input_gzip_hex: String,
    /// `accept` or `reject`: what OMMX 2.9.3 did with the input.
    verdict: String,
    /// OMMX's `logical_memory_profile()` of each instance layer, when accepted.
    #[serde(default)]
    profiles: Vec<String>,
    /// The last line of OMMX's error, when refused.
    #[serde(default)]
    error: String,
}

impl Case {
    fn input(&self) -> Vec<u8> {
        if self.input_gzip_hex.is_empty() {
            return hex::decode(&self.input_hex).unwrap();
        }
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&hex::decode(&self.input_gzip_hex).unwrap()[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    }
}

fn corpus() -> Vec<Case> {
    let text = fs::read_to_string(fixtures().join("differential/corpus.jsonl")).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// How many threads a corpus run takes, and the size of the chunks a file
/// is cut into on several threads (small, so that the corpus's small files
/// span many chunks and their elements cross chunk ends).
#[derive(Clone, Copy)]
struct Threads(&'static str, Option<&'static str>);

/// One thread, two and sixteen: every case gives the same verdict, profile
/// and message with each.
const THREADS: [Threads; 3] = [
    Threads("1", None),
    Threads("2", Some("64")),
    Threads("16", Some("7")),
];

/// memprof's `--format folded` on `path` (one layer, or the whole input),
/// without its final newline; `Err` with stderr when it refused. `spool`:
/// every objective field is spooled to a temporary file and read there.
fn folded(
    path: &str,
    layer: Option<usize>,
    spool: bool,
    Threads(threads, chunk): Threads,
) -> Result<String, String> {
    let mut cmd = memprof();
    cmd.args(["inspect", path, "--format", "folded", "-q"]);
    if spool {
        cmd.env("MEMPROF_SPOOL_ABOVE", "0");
    }
    cmd.env("MEMPROF_THREADS", threads);
    if let Some(chunk) = chunk {
        cmd.env("MEMPROF_CHUNK_BYTES", chunk);
    }
    if let Some(layer) = layer {
        cmd.args(["--layer", &layer.to_string()]);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(0) => {
            let text = String::from_utf8(out.stdout).unwrap();
            Ok(text.strip_suffix('\n').unwrap_or(&text).to_string())
        }
        Some(2) if stderr.lines().count() == 1 && !stderr.contains("panicked") => Err(stderr),
        code => panic!("{path}: exit {code:?}, stderr {stderr}"),
    }
}

#[test]
fn memprof_agrees_with_ommx_on_every_corpus_case() {
    agrees_on_every_corpus_case(false);
}

/// The same verdicts and profiles with every objective spooled and read
/// from the file.
#[test]
fn memprof_agrees_with_ommx_on_every_corpus_case_spooling_the_objective() {
    agrees_on_every_corpus_case(true);
}

fn agrees_on_every_corpus_case(spool: bool) {
    let cases = corpus();
    assert!(cases.len() >= 200, "the corpus has {} cases", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let mut disagreements = Vec::new();
    for case in &cases {
        let path = dir.path().join(&case.name);
        fs::write(&path, case.input()).unwrap();
        let path = path.to_str().unwrap();
        let mut refusals = Vec::new();
        for threads in THREADS {
            let run = |layer| folded(path, layer, spool, threads);
            let problem = match (case.verdict.as_str(), case.kind.as_str()) {
                ("accept", "raw") => match run(None) {
                    Ok(got) if got == case.profiles[0] => None,
                    Ok(_) => Some("profile differs".to_string()),
                    Err(e) => Some(format!("wrongly refused: {e}")),
                },
                ("accept", _) => {
                    (0..case.profiles.len()).find_map(|layer| match run(Some(layer)) {
                        Ok(got) if got == case.profiles[layer] => None,
                        Ok(_) => Some(format!("layer {layer}: profile differs")),
                        Err(e) => Some(format!("layer {layer}: wrongly refused: {e}")),
                    })
                }
                ("reject", _) => match run(None) {
                    Ok(_) => Some(format!("wrongly accepted; OMMX says: {}", case.error)),
                    Err(e) => {
                        refusals.push(e);
                        None
                    }
                },
                (verdict, _) => panic!("{}: unknown verdict {verdict}", case.name),
            };
            if let Some(problem) = problem {
                disagreements.push(format!(
                    "{} ({}, {}, {} threads): {problem}",
                    case.name, case.kind, case.category, threads.0
                ));
            }
        }
        // The same message, whatever the number of threads.
        if refusals.windows(2).any(|w| w[0] != w[1]) {
            disagreements.push(format!("{}: messages differ: {refusals:?}", case.name));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} corpus cases disagree with OMMX 2.9.3:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
}

#[test]
fn the_corpus_covers_what_the_issue_named() {
    let cases = corpus();
    let has = |name: &str| cases.iter().any(|c| c.name == name);
    for name in [
        "group16",
        "linear_then_expression",
        "linear_then_expression_split",
        "expression_then_linear",
        "empty_group15_first",
        "png_magic_fixed64",
        "xz_magic_fixed32",
        "ustar_at_257",
        "desc_123",
        "desc_91",
        "desc_60",
    ] {
        assert!(has(name), "the corpus lacks {name}");
    }
    for category in [
        "grid",
        "random",
        "archive_duplicate_identical",
        "archive_missing_blob",
    ] {
        for verdict in ["accept", "reject"] {
            let n = cases
                .iter()
                .filter(|c| c.category == category && c.verdict == verdict)
                .count();
            if category == "archive_duplicate_identical" && verdict == "reject" {
                continue; // OMMX writes these itself: always read
            }
            assert!(n > 0, "no {verdict}ed {category} case in the corpus");
        }
    }
}

/// `advise` reads every corpus input OMMX accepts (archives listing a blob
/// twice, storing blobs out of order, ...), one layer of advice per instance
/// layer with OMMX's total, and refuses, in one line, what OMMX refuses.
#[test]
fn advise_reads_what_ommx_reads_layer_by_layer() {
    let dir = tempfile::tempdir().unwrap();
    for case in corpus() {
        let path = dir.path().join(&case.name);
        fs::write(&path, case.input()).unwrap();
        let out = memprof()
            .args(["advise", path.to_str().unwrap(), "--format", "json", "-q"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{}: {stderr}", case.name);
        if case.verdict != "accept" {
            assert_eq!(out.status.code(), Some(2), "{}: {stderr}", case.name);
            continue;
        }
        assert!(out.status.success(), "{}: {stderr}", case.name);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let totals: Vec<u64> = doc["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["total_bytes"].as_u64().unwrap())
            .collect();
        let ommx: Vec<u64> = case
            .profiles
            .iter()
            .map(|p| {
                p.lines()
                    .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
                    .sum()
            })
            .collect();
        assert_eq!(totals, ommx, "{}", case.name);
    }
}
