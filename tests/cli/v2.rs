//! OMMX 3.0 input (`ommx.v2`) and the migration view, against the fixtures
//! ommx 3.0.0b7 generated (fixtures/v2/README.md).

use std::fs;
use std::path::PathBuf;

use crate::{expected_folded, fails, fixtures, gzip, memprof, ok, oracle};

fn v2(rel: &str) -> String {
    fixtures()
        .join("v2")
        .join(rel)
        .to_str()
        .unwrap()
        .to_string()
}

fn v2_pb_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(fixtures().join("v2").join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pb"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_v2_payload_matches_ommx_3_byte_for_byte() {
    let mut checked = 0;
    for dir in ["oracle", "from_v1"] {
        for path in v2_pb_files(dir) {
            let got = ok(&["inspect", path.to_str().unwrap(), "-f", "folded"]);
            let want = expected_folded(&path.with_extension("folded"));
            assert_eq!(got, want, "{}", path.display());
            // Forcing the schema gives the same bytes.
            let forced = ok(&[
                "inspect",
                path.to_str().unwrap(),
                "--schema",
                "v2",
                "-f",
                "folded",
            ]);
            assert_eq!(forced, want, "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} v2 fixtures");
}

#[test]
fn v2_archives_profile_layer_by_layer_with_each_schemas_accounting() {
    for archive in ["v2_multi", "mixed"] {
        let file = v2(&format!("archives/{archive}.ommx"));
        let mut whole = 0u64;
        for k in 0..3 {
            let got = ok(&["inspect", &file, "--layer", &k.to_string(), "-f", "folded"]);
            let want =
                expected_folded(&fixtures().join(format!("v2/archives/{archive}.layer{k}.folded")));
            assert_eq!(got, want, "{archive} layer {k}");
            whole += want
                .lines()
                .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
                .sum::<u64>();
        }
        let all = ok(&["inspect", &file, "-f", "folded"]);
        assert!(all.lines().all(|l| l.starts_with("layer[")), "{all}");
        let total: u64 = all
            .lines()
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(total, whole, "{archive}");
    }
    let listing = ok(&["ls", &v2("archives/mixed.ommx")]);
    assert!(
        listing.contains("application/org.ommx.v2.instance"),
        "{listing}"
    );
    assert!(!listing.contains("cannot read"), "{listing}");
    let tree = ok(&["inspect", &v2("archives/mixed.ommx"), "--depth", "1"]);
    assert!(
        tree.contains("OMMX 2.9.3's estimate for ommx.v1 layers, 3.0.0b7's for ommx.v2"),
        "{tree}"
    );
}

#[test]
fn raw_v2_is_detected_after_v1_and_says_so() {
    let knapsack = v2("oracle/knapsack.pb");
    let header = ok(&["inspect", &knapsack, "--depth", "1"]);
    assert!(
        header.contains("layer:       raw instance, ommx.v2\n"),
        "{header}"
    );
    assert!(header.contains("OMMX 3.0.0b7's estimate"), "{header}");
    assert!(ok(&["ls", &knapsack]).contains("raw ommx.v2.Instance bytes"));
    let listing: serde_json::Value =
        serde_json::from_str(&ok(&["ls", &knapsack, "-f", "json"])).unwrap();
    assert_eq!(listing["schema"], "ommx.v2");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", &knapsack, "-f", "json"])).unwrap();
    assert_eq!(json["accounting"], "ommx 3.0.0b7 logical_memory_profile");
    // v1 input keeps its listing without a schema field.
    let v1: serde_json::Value =
        serde_json::from_str(&ok(&["ls", &oracle("empty.pb"), "-f", "json"])).unwrap();
    assert!(v1.get("schema").is_none());
    // Forced to v1, a v2 payload fails as it did before v2 was read.
    let err = fails(&["inspect", &knapsack, "--schema", "v1"]);
    assert!(err.contains("malformed protobuf"), "{err}");
    let err = fails(&["inspect", &oracle("kitchen_sink.pb"), "--schema", "v2"]);
    assert!(err.contains("ommx.v2"), "{err}");
}

#[test]
fn gzip_and_stdin_raw_v2() {
    let bytes = fs::read(v2("oracle/everything.pb")).unwrap();
    let want = expected_folded(&fixtures().join("v2/oracle/everything.folded"));
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("everything.pb.gz");
    fs::write(&gz, gzip(&bytes)).unwrap();
    assert_eq!(ok(&["inspect", gz.to_str().unwrap(), "-f", "folded"]), want);
    // A stream is copied as the v1 pass reads it, and read again from the
    // copy as v2; --schema v2 reads it once.
    for args in [
        vec!["inspect", "-", "--schema", "v2", "-f", "folded"],
        vec!["inspect", "-", "-f", "folded"],
    ] {
        let out = memprof()
            .args(&args)
            .write_stdin(bytes.clone())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{args:?}");
    }
    // The analyses see the v2 entities once, not what v1 made of the bytes.
    let from_file = ok(&[
        "top",
        &v2("oracle/everything.pb"),
        "-n",
        "100",
        "-f",
        "json",
    ]);
    let out = memprof()
        .args(["top", "-", "-n", "100", "-f", "json"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    assert!(out.status.success());
    let entities = |text: &str| {
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        doc["entities"].clone()
    };
    assert_eq!(
        entities(&String::from_utf8(out.stdout).unwrap()),
        entities(&from_file)
    );
    // Bytes neither schema reads keep v1's error, from a stream as from a file.
    let junk = dir.path().join("junk.pb");
    fs::write(&junk, [0x0a, 0x05, 0xff, 0xff]).unwrap();
    let from_file = fails(&["inspect", junk.to_str().unwrap()]);
    let out = memprof()
        .args(["inspect", "-"])
        .write_stdin(fs::read(&junk).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let from_stream = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        from_stream.trim_end(),
        from_file.replace(junk.to_str().unwrap(), "<stdin>")
    );
}

#[test]
fn migration_view_counts_v1_as_ommx_3_loads_it() {
    let dir = fixtures().join("v2/from_v1");
    let mut checked = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "folded") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap();
        let got = ok(&[
            "inspect",
            &oracle(&format!("{name}.pb")),
            "--accounting",
            "3.0",
            "-f",
            "folded",
        ]);
        assert_eq!(got, expected_folded(&path), "{name}");
        checked += 1;
    }
    assert!(checked >= 45, "only {checked}");
    for line in fs::read_to_string(dir.join("refused.txt")).unwrap().lines() {
        let name = line.split('\t').next().unwrap();
        let err = fails(&[
            "inspect",
            &oracle(&format!("{name}.pb")),
            "--accounting",
            "3.0",
        ]);
        assert!(err.contains("OMMX 3.0.0b7 cannot convert"), "{name}: {err}");
    }
    // The default stays 2.9.3's.
    assert_eq!(
        ok(&[
            "inspect",
            &oracle("empty.pb"),
            "--accounting",
            "2.9",
            "-f",
            "folded"
        ]),
        ok(&["inspect", &oracle("empty.pb"), "-f", "folded"])
    );
}

#[test]
fn diff_side_by_side_of_the_two_accountings() {
    let file = oracle("hints_one_hot.pb");
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "diff",
        "--accounting",
        "2.9,3.0",
        &file,
        "-f",
        "json",
    ]))
    .unwrap();
    let sum = |path: PathBuf| -> u64 {
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    let text = json.to_string();
    let old = sum(fixtures().join("oracle/hints_one_hot.folded"));
    let new = sum(fixtures().join("v2/from_v1/hints_one_hot.folded"));
    assert!(
        text.contains(&old.to_string()) && text.contains(&new.to_string()),
        "{text}"
    );
    let err = fails(&["diff", "--accounting", "2.9,3.0", &file, &file]);
    assert!(err.contains("give one file"), "{err}");
}

/// The migration view reads its input once: standard input gives what the
/// file gives (its name aside), raw, gzip'd or an archive, with and without
/// family frames, and 3.0's refusal of a layer in the same words.
#[test]
fn migration_view_reads_standard_input_as_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("hints_sos1.pb.gz");
    fs::write(&gz, gzip(&fs::read(oracle("hints_sos1.pb")).unwrap())).unwrap();
    let gz = gz.to_str().unwrap().to_string();
    let multi = oracle("multi.ommx");
    let cases: [(&str, &[&str]); 6] = [
        (&oracle("hints_sos1.pb"), &["-f", "json"]),
        (
            &oracle("hints_sos1.pb"),
            &["--group-by", "name", "-f", "tree"],
        ),
        (&gz, &["--group-by", "name", "-f", "folded"]),
        (
            &multi,
            &["--layer", "2", "--group-by", "name", "-f", "json"],
        ),
        (&v2("archives/mixed.ommx"), &["--layer", "1", "-f", "table"]),
        // 3.0 refuses the archive's first layer: the run fails, as it does on the file.
        (&multi, &["-f", "json"]),
    ];
    let run = |input: &str, args: &[&str], stdin: Option<Vec<u8>>| {
        let mut cmd = memprof();
        cmd.args(["diff", "--accounting", "2.9,3.0", input])
            .args(args);
        let out = cmd.write_stdin(stdin.unwrap_or_default()).output().unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (out.status.code(), text(out.stdout), text(out.stderr))
    };
    for (file, args) in cases {
        let (code, stdout, stderr) = run(file, args, None);
        let piped = run("-", args, Some(fs::read(file).unwrap()));
        let named = |s: String| s.replace(file, "<stdin>");
        assert_eq!(
            piped,
            (code, named(stdout), named(stderr)),
            "{file} {args:?}"
        );
    }
    let (code, stdout, stderr) = run("-", &[], Some(fs::read(&multi).unwrap()));
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert_eq!(
        stderr,
        "memprof: error: <stdin>: instance layer 0: OMMX 3.0.0b7 cannot convert this ommx.v1 \
         instance: decision variable 5 is both fixed and dependent\n"
    );
}

#[test]
fn flamegraph_and_baselines_of_v2() {
    let file = v2("oracle/everything.pb");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("g.svg");
    ok(&["flamegraph", &file, "-o", svg.to_str().unwrap()]);
    let svg = fs::read_to_string(svg).unwrap();
    assert!(svg.contains("logical bytes as OMMX 3.0.0b7 counts them"));
    let base = dir.path().join("base.json");
    fs::write(&base, ok(&["inspect", &file, "-f", "json"])).unwrap();
    ok(&["check", &file, "--baseline", base.to_str().unwrap()]);
    let same = ok(&["diff", base.to_str().unwrap(), &file, "-f", "folded"]);
    // `path old new`: a baseline of the same instance has every path equal.
    assert!(
        same.lines().all(|l| {
            let n: Vec<&str> = l.rsplitn(3, ' ').collect();
            n[0] == n[1]
        }),
        "{same}"
    );
}

/// OMMX 3.0.0b7's verdict on one payload.
#[derive(Debug, serde::Deserialize)]
struct Verdict {
    /// `accept` or `reject` (empty for an archive, whose layers have theirs).
    #[serde(default)]
    verdict: String,
    #[serde(default)]
    profile_gzip_hex: String,
    #[serde(default)]
    error: String,
}

#[derive(Debug, serde::Deserialize)]
struct Case {
    name: String,
    /// `raw` (an ommx.v2.Instance), `migration` (an ommx.v1.Instance read
    /// with `--accounting 3.0`), `detect` (raw bytes read with no
    /// `--schema`: 2.9.3's verdict, else 3.0's) or `archive` (each instance
    /// layer with `--accounting 3.0`).
    kind: String,
    category: String,
    #[serde(default)]
    input_hex: String,
    #[serde(default)]
    input_gzip_hex: String,
    #[serde(flatten)]
    verdict: Verdict,
    /// An archive's verdicts, one per instance layer.
    #[serde(default)]
    layers: Vec<Verdict>,
}

/// How a detection refusal names the reading it reports.
const READINGS: [&str; 2] = [
    " (read as ommx.v1; ommx.v2 gets no further)",
    " (read as ommx.v2, which gets further than ommx.v1)",
];

/// memprof's words for 3.0's refusal of a fixed or dependent variable in
/// use, or of one both fixed and dependent: 3.0 names one variable (the
/// smallest of its kind), and memprof must name the same.
fn substituted_words(ommx: &str) -> Option<String> {
    let id = ommx.split("VariableID(").nth(1)?.split(')').next()?;
    let words = if ommx.contains("Dependent variable cannot be used in objectives or constraints") {
        "dependent variable {} is used in the objective or a constraint"
    } else if ommx.contains("cannot be used in objectives or constraints") {
        "fixed variable {} is used in the objective or a constraint"
    } else if ommx.contains("cannot be both fixed and dependent") {
        "decision variable {} is both fixed and dependent"
    } else {
        return None;
    };
    Some(words.replace("{}", id))
}

/// What is wrong with memprof's answer (`args` on `path`) against `want`.
fn disagreement(path: &str, args: &[&str], want: &Verdict, detect: bool) -> Option<String> {
    use std::io::Read;
    let out = memprof()
        .args(["inspect", path, "-f", "folded", "-q"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(0)
            || (out.status.code() == Some(2)
                && stderr.lines().count() == 1
                && !stderr.contains("panicked")),
        "{path}: {stderr}"
    );
    match (want.verdict.as_str(), out.status.success()) {
        ("accept", true) => {
            let mut want_text = String::new();
            flate2::read::GzDecoder::new(&hex::decode(&want.profile_gzip_hex).unwrap()[..])
                .read_to_string(&mut want_text)
                .unwrap();
            let got = String::from_utf8(out.stdout).unwrap();
            (got.strip_suffix('\n').unwrap_or(&got) != want_text).then(|| "profile differs".into())
        }
        ("accept", false) => Some(format!("wrongly refused: {stderr}")),
        ("reject", true) => Some(format!("wrongly accepted; ommx says: {}", want.error)),
        ("reject", false) => {
            if let Some(words) = substituted_words(&want.error).filter(|w| !stderr.contains(w)) {
                return Some(format!("names another variable than {words:?}: {stderr}"));
            }
            // Detection that read the bytes both ways names the reading.
            let read = !stderr.contains("not an OMMX instance or archive");
            let named = READINGS.iter().any(|r| stderr.trim_end().ends_with(r));
            (detect && read && !named).then(|| format!("names no schema: {stderr}"))
        }
        (verdict, _) => panic!("{path}: unknown verdict {verdict}"),
    }
}

/// The 3.0 differential corpus (fixtures/v2/differential.py), replayed
/// without Python: same profile where 3.0 reads, a refusal where it refuses.
#[test]
fn memprof_agrees_with_ommx_3_on_every_corpus_case() {
    use std::io::Read;
    let text = fs::read_to_string(fixtures().join("v2/corpus.jsonl")).unwrap();
    let cases: Vec<Case> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(cases.len() >= 400, "the corpus has {} cases", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let mut disagreements = Vec::new();
    let mut kinds = std::collections::BTreeMap::new();
    for case in &cases {
        *kinds.entry(case.kind.as_str()).or_insert(0) += 1;
        let path = dir.path().join(&case.name);
        let input = match case.input_gzip_hex.as_str() {
            "" => hex::decode(&case.input_hex).unwrap(),
            packed => {
                let mut bytes = Vec::new();
                flate2::read::GzDecoder::new(&hex::decode(packed).unwrap()[..])
                    .read_to_end(&mut bytes)
                    .unwrap();
                bytes
            }
        };
        fs::write(&path, input).unwrap();
        let path = path.to_str().unwrap();
        let problems: Vec<String> = match case.kind.as_str() {
            "raw" => disagreement(path, &["--schema", "v2"], &case.verdict, false)
                .into_iter()
                .collect(),
            "migration" => {
                let args = ["--schema", "v1", "--accounting", "3.0"];
                disagreement(path, &args, &case.verdict, false)
                    .into_iter()
                    .collect()
            }
            "detect" => disagreement(path, &[], &case.verdict, true)
                .into_iter()
                .collect(),
            "archive" => case
                .layers
                .iter()
                .enumerate()
                .filter_map(|(i, want)| {
                    let i = i.to_string();
                    let args = ["--layer", &i, "--accounting", "3.0"];
                    disagreement(path, &args, want, false).map(|p| format!("layer {i}: {p}"))
                })
                .collect(),
            other => panic!("{}: unknown kind {other}", case.name),
        };
        for problem in problems {
            disagreements.push(format!("{} ({}): {problem}", case.name, case.category));
        }
    }
    for kind in ["raw", "migration", "detect", "archive"] {
        assert!(kinds.get(kind).is_some_and(|&n| n >= 20), "{kinds:?}");
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} cases disagree with ommx 3.0.0b7:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
}

/// A v2 payload from a stream (standard input, gzip data) is spooled to a
/// temporary file and read a table entry at a time as the file is, or read
/// whole where that reading declines it: either way, what the file gives
/// (the input's description aside), held (short) or spooled
/// (`MEMPROF_SPOOL_ABOVE=0` spools every payload), on one thread or many.
#[test]
fn a_v2_stream_gives_what_its_file_gives() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        "everything.pb",
        "polynomial.pb",
        "sos1.pb",
        "substituted.pb",
    ];
    let commands: [&[&str]; 7] = [
        &["inspect", "-f", "folded"],
        &["inspect", "--group-by", "name", "-f", "folded"],
        &["inspect", "--view", "wire", "-f", "folded"],
        &[
            "inspect",
            "--view",
            "wire",
            "--group-by",
            "name",
            "-f",
            "json",
        ],
        &["top", "-n", "100", "-f", "json"],
        &["stats", "-f", "json"],
        &["advise", "-f", "json"],
    ];
    // The output without the input's description (name, size, gzip).
    let shown = |out: std::process::Output| {
        let text = String::from_utf8(out.stdout).unwrap();
        let text = match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(mut doc) => {
                doc.as_object_mut().unwrap().remove("input");
                doc.to_string()
            }
            Err(_) => text,
        };
        (out.status.code(), text)
    };
    for file in files {
        let path = v2(&format!("oracle/{file}"));
        let bytes = fs::read(&path).unwrap();
        let gz = dir.path().join(format!("{file}.gz"));
        fs::write(&gz, gzip(&bytes)).unwrap();
        let gz = gz.to_str().unwrap();
        for args in commands {
            let run = |input: &str, spool: bool, threads: &str| {
                let mut cmd = memprof();
                cmd.arg(args[0]).arg(input).args(&args[1..]);
                cmd.env("MEMPROF_THREADS", threads);
                if spool {
                    cmd.env("MEMPROF_SPOOL_ABOVE", "0");
                }
                shown(cmd.write_stdin(bytes.clone()).output().unwrap())
            };
            let want = run(&path, false, "2");
            assert_eq!(want.0, Some(0), "{file} {args:?}");
            for (spool, threads) in [(false, "1"), (true, "1"), (true, "16")] {
                for input in ["-", gz] {
                    let got = run(input, spool, threads);
                    assert_eq!(got, want, "{file} {args:?} {input} {spool} {threads}");
                }
            }
        }
    }
}
