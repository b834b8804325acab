//! Edges issue 32 found: where OMMX 3.0 and memprof used to part (v1
//! constraint hints under the migration view, archive annotations 3.0 folds
//! into an instance), which of two failed readings a raw payload reports,
//! endless and random streams, folded stacks with bad counts or a million
//! frames, and two outputs of one command in one file.

use std::fs;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{fails, memprof, ok};

/// Writes `bytes` as `name` under `dir` and returns the path.
fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// A v1 payload whose hints name a constraint that does not exist, or list
/// a variable twice, is refused by 2.9.3 and read by 3.0, which drops the
/// hints unread: the migration view follows 3.0.
#[test]
fn migration_view_drops_hints_as_ommx_3_does() {
    let dir = tempfile::tempdir().unwrap();
    // Objective constant 1; then field 7, the constraint hints.
    let objective = hex::decode("1a0909000000000000f03f").unwrap();
    // Binary variables 0 and 1, constraint 0 (x0 + 1 <= 0), objective 1.
    let rows = hex::decode(
        "1204080010011204080110012215080010011a0f120d0a0b080011000000000000f03f1a09090000000000\
         00f03f",
    )
    .unwrap();
    let cases = [
        // A one-hot hint on constraint 5, which does not exist.
        ("dangling", objective.clone(), "3a0412020805", "OMMX 2.9.3 rejects this instance: one-hot hint on constraint 5 refers to constraint 5, which is not defined"),
        // An SOS1 hint listing variable 0 twice.
        ("repeated", rows.clone(), "3a0a1a08080012001a020000", "OMMX 2.9.3 rejects this instance: SOS1 hint on constraint 0 lists decision variable 0 more than once"),
        // A one-hot hint on an undefined variable 7.
        ("undefined", rows.clone(), "3a0712050800120107", "OMMX 2.9.3 rejects this instance: one-hot hint on constraint 0 uses decision variable 7, which is not defined"),
    ];
    for (name, body, hints, refusal) in cases {
        let with = file(
            &dir,
            &format!("{name}.pb"),
            &[body.clone(), hex::decode(hints).unwrap()].concat(),
        );
        let without = file(&dir, &format!("{name}_plain.pb"), &body);
        let err = fails(&["inspect", &with]);
        let v1 = "(read as ommx.v1; ommx.v2 gets no further)";
        assert_eq!(err, format!("memprof: error: {with}: {refusal} {v1}"));
        let as_3_0 = ok(&["inspect", &with, "--accounting", "3.0", "-f", "folded"]);
        assert_eq!(
            as_3_0,
            ok(&["inspect", &without, "--accounting", "3.0", "-f", "folded"]),
            "{name}"
        );
        assert!(!as_3_0.contains("hint"), "{as_3_0}");
    }
    // Hints 3.0 cannot decode are refused by both.
    let bad = file(
        &dir,
        "bad.pb",
        &[objective, hex::decode("3a021001").unwrap()].concat(),
    );
    let err = fails(&["inspect", &bad, "--accounting", "3.0"]);
    assert!(
        err.contains(
            "ConstraintHints.one_hot_constraints: Instance.constraint_hints: invalid wire type"
        ),
        "{err}"
    );
}

/// The profile of each line `folded` has, by path.
fn lines(folded: &str) -> std::collections::BTreeMap<&str, u64> {
    folded
        .lines()
        .map(|l| {
            let (path, bytes) = l.rsplit_once(' ').unwrap();
            (path, bytes.parse().unwrap())
        })
        .collect()
}

/// OMMX 3.0 reads a layer's title (and the other `org.ommx.v1.instance.*`
/// annotations, and user annotations) into the instance it loads from the
/// layer, v1 or v2; 2.9.3 reads the payload alone.
#[test]
fn ommx_3_folds_a_layers_annotations_into_its_instance() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    // `Instance.minimize()` as v1 bytes, added twice: with a title and user
    // annotation, and bare.
    let v1 = hex::decode("1a090900000000000000002801").unwrap();
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&v1)));
    let layer = |annotations: serde_json::Value| {
        serde_json::json!({"mediaType": "application/org.ommx.v1.instance",
                           "digest": digest, "size": v1.len(), "annotations": annotations})
    };
    let tar = crate::oci_tar(
        &[(&format!("blobs/sha256/{}", &digest[7..]), v1.clone())],
        serde_json::json!([
            layer(serde_json::json!({"org.ommx.v1.instance.title": "t",
                                     "org.ommx.v1.instance.variables": "0",
                                     "org.ommx.user.k": "v"})),
            layer(serde_json::json!({})),
        ]),
    );
    let archive = file(&dir, "titled.ommx", &tar);
    let layer_as = |n: &str, accounting: &str| {
        ok(&[
            "inspect",
            &archive,
            "--layer",
            n,
            "--accounting",
            accounting,
            "-f",
            "folded",
        ])
    };
    let titled = layer_as("0", "3.0");
    let got = lines(&titled);
    // 3.0.0b7's numbers for this layer.
    assert_eq!(got["Instance.description;Description.name"], 25, "{titled}");
    for field in [
        "authors;Vec[stack]",
        "created_by;Option[stack]",
        "description;Option[stack]",
    ] {
        assert_eq!(
            got[format!("Instance.description;Description.{field}").as_str()],
            24
        );
    }
    assert!(!got.contains_key("Instance.description;Option[stack]"));
    assert_eq!(
        got["Instance.annotations;HashMap[key]"],
        24 + 15,
        "{titled}"
    );
    assert_eq!(got["Instance.annotations"], 24 + 1, "{titled}");
    // The bare layer, and 2.9.3's view of either, have no description.
    let bare = layer_as("1", "3.0");
    assert_eq!(lines(&bare)["Instance.description;Option[stack]"], 168);
    assert_eq!(
        bare,
        ok(&[
            "inspect",
            &file(&dir, "bare.pb", &v1),
            "--accounting",
            "3.0",
            "-f",
            "folded"
        ])
    );
    for n in ["0", "1"] {
        assert_eq!(
            lines(&layer_as(n, "2.9"))["Instance.description;Option[stack]"],
            168
        );
    }
    // Both layers at once: each with its own annotations.
    let both = ok(&["inspect", &archive, "--accounting", "3.0", "-f", "folded"]);
    assert!(
        both.contains("layer[0] (t);Instance.description;Description.name 25\n"),
        "{both}"
    );
    assert!(
        both.contains("layer[1];Instance.description;Option[stack] 168\n"),
        "{both}"
    );
}

/// Raw bytes neither schema reads report the reading that got further,
/// naming its schema; with `--schema` the one reading's error stands alone.
#[test]
fn the_reading_that_got_further_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    // ommx.v2: a description with only created_by, an empty variable
    // table, an objective using an undefined variable 5, sense minimize. As
    // v1 the description reads as a variable of kind 0, the table as an
    // empty objective, and the objective fails to decode as a constraint,
    // at byte 7; as v2 all of it decodes.
    let v2 = file(
        &dir,
        "v2.pb",
        &hex::decode("12032201631a00220f120d0a0b080511000000000000f03f3001").unwrap(),
    );
    assert_eq!(
        fails(&["inspect", &v2]),
        format!(
            "memprof: error: {v2}: the objective uses decision variable 5, which is not defined \
             (read as ommx.v2, which gets further than ommx.v1)"
        )
    );
    assert_eq!(
        fails(&["inspect", &v2, "--schema", "v1"]),
        format!("memprof: error: {v2}: OMMX 2.9.3 rejects this instance: decision variable 0 has unknown or unspecified kind 0")
    );
    assert_eq!(
        fails(&["inspect", &v2, "--schema", "v2"]),
        format!(
            "memprof: error: {v2}: the objective uses decision variable 5, which is not defined"
        )
    );
    // ommx.v1: variable 0 of kind 0 and no objective. As v2, the variable
    // is a description whose name (field 1) has the wrong wire type.
    let v1 = file(&dir, "v1.pb", &hex::decode("12020800").unwrap());
    assert_eq!(
        fails(&["inspect", &v1]),
        format!(
            "memprof: error: {v1}: OMMX 2.9.3 rejects this instance: decision variable 0 has unknown or \
             unspecified kind 0 (read as ommx.v1; ommx.v2 gets no further)"
        )
    );
    // From stdin alike.
    let out = memprof()
        .args(["inspect", "-"])
        .write_stdin(fs::read(&v2).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .ends_with("(read as ommx.v2, which gets further than ommx.v1)\n"));
}

/// Pseudo-random bytes (xorshift), the same for a seed.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

/// Runs `memprof inspect -` on an endless stdin of `chunk` repeated,
/// returning its stderr and how long it took.
fn endless_stdin(chunk: Vec<u8>) -> (String, Duration) {
    let start = Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memprof"))
        .args(["inspect", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Until memprof stops reading (a broken pipe), or a minute passes.
    let writer = std::thread::spawn(move || {
        let begun = Instant::now();
        while begun.elapsed() < Duration::from_secs(60) && stdin.write_all(&chunk).is_ok() {}
    });
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    (String::from_utf8(out.stderr).unwrap(), took)
}

/// Endless or large inputs that are no instance are refused in their first
/// bytes, not once read (issue 32: /dev/zero took 7 to 10 s, /dev/urandom
/// 18 s, copying up to the 4 GiB stream limit for a second reading).
#[test]
fn endless_and_random_bytes_are_refused_at_once() {
    let bound = Duration::from_secs(1);
    // Zeros: a tar's end marker first, so an empty tar, from a device as
    // from a pipe.
    let start = Instant::now();
    let err = fails(&["inspect", "/dev/zero"]);
    assert_eq!(
        err,
        "memprof: error: /dev/zero: an empty tar archive: it ends before its first entry, so it \
         holds no OCI layout"
    );
    assert!(start.elapsed() < bound, "{:?}", start.elapsed());
    let (err, took) = endless_stdin(vec![0; 1 << 16]);
    assert!(
        err.starts_with("memprof: error: <stdin>: an empty tar archive"),
        "{err}"
    );
    assert!(took < bound, "{took:?}");
    // Random bytes: neither schema reads their first field.
    for seed in [1, 2, 3, 4, 5] {
        let (err, took) = endless_stdin(noise(seed, 1 << 20));
        assert!(err.starts_with("memprof: error: <stdin>: "), "{err}");
        assert!(err.trim_end().ends_with(")"), "{err}");
        assert!(took < bound, "seed {seed}: {took:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    for seed in [6, 7, 8] {
        let path = file(&dir, "noise.bin", &noise(seed, 64 << 20));
        let start = Instant::now();
        let err = fails(&["inspect", &path]);
        assert!(
            err.starts_with(&format!("memprof: error: {path}: ")),
            "{err}"
        );
        assert!(
            start.elapsed() < bound,
            "seed {seed}: {:?}",
            start.elapsed()
        );
    }
    // An unknown field claiming a terabyte, then zeros forever: refused at
    // its claim (it was read through, to the 4 GiB stream limit).
    let claim = vec![0xa2, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
    let start = Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memprof"))
        .args(["inspect", "-", "--schema", "v1"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let zeros = vec![0; 1 << 16];
        let begun = Instant::now();
        if stdin.write_all(&claim).is_ok() {
            while begun.elapsed() < Duration::from_secs(60) && stdin.write_all(&zeros).is_ok() {}
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(
        String::from_utf8(out.stderr).unwrap().trim_end(),
        "memprof: error: <stdin>: a length-delimited field at byte 2 is 1099511627776 bytes, \
         more than 32MiB, the --max-element limit; raise it if the input is trusted"
    );
    assert!(start.elapsed() < bound, "{:?}", start.elapsed());
    // Fewer zeros than a tar block: field number 0, at byte 0, either way.
    let zeros = file(&dir, "zeros.bin", &[0; 100]);
    assert_eq!(
        fails(&["inspect", &zeros]),
        format!(
            "memprof: error: {zeros}: malformed protobuf at byte 0: invalid field number 0 (read as \
             ommx.v1; ommx.v2 gets no further)"
        )
    );
}

/// Folded stacks whose counts are no byte counts are refused naming the
/// line and the count, and no output is written; a line of a million frames
/// is drawn to a bounded depth, and the picture says so.
#[test]
fn folded_counts_are_checked_and_deep_stacks_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.svg");
    let out = out.to_str().unwrap();
    let max = u64::MAX;
    let whole = format!("(a whole number from 0 to {max})");
    let digits = "9".repeat(1_000_000);
    let cases = [
        ("neg", "a 1\nInstance.sense -5\n".to_string(), format!("line 2: count -5 is not a byte count {whole}")),
        ("big", "a;b 18446744073709551616\n".to_string(), format!("line 1: count 18446744073709551616 is not a byte count {whole}")),
        ("sum", format!("a {max}\nb 0\nc 1\n"), format!("line 3: the counts add up to more than {max} bytes")),
        ("huge", format!("a;b {digits}\n"), format!("line 1: count 999999999999999999999999... (1000000 characters) is not a byte count {whole}")),
    ];
    for (name, text, why) in cases {
        let input = file(&dir, &format!("{name}.folded"), text.as_bytes());
        assert_eq!(
            fails(&["flamegraph", &input, "-o", out]),
            format!("memprof: error: {input}: folded stacks, {why}")
        );
        assert!(!std::path::Path::new(out).exists(), "{name}");
    }
    let frames: Vec<String> = (0..1_000_000).map(|i| format!("f{i}")).collect();
    let deep = file(
        &dir,
        "deep.folded",
        format!("{} 5\nshallow 3\n", frames.join(";")).as_bytes(),
    );
    ok(&["flamegraph", &deep, "-o", out]);
    let svg = fs::read_to_string(out).unwrap();
    assert!(svg.len() < 1 << 20, "{} bytes", svg.len());
    assert!(
        svg.contains("1 stack deeper than 1,024 frames cut there; "),
        "subtitle"
    );
    assert!(svg.contains("[deeper frames not drawn]"));
    assert!(
        svg.contains("<title>f1022 (") && !svg.contains("<title>f1023 ("),
        "cut after 1023 frames"
    );
}

/// ommx.v2 rules OMMX 3.0.0b7 applies that memprof once let through (found
/// by the extended differential): each payload refused, naming what is wrong.
#[test]
fn v2_rows_follow_ommx_3s_rules() {
    let dir = tempfile::tempdir().unwrap();
    // Variables 0 and 1 binary, 2 continuous in [-1, 5]; objective 0; minimize.
    let base = "1a540a1a080012160801121209000000000000000011000000000000f03f0a1a0801121608011212090000\
                00000000000011000000000000f03f0a1a080212160803121209000000000000f0bf11000000000000144022\
                090900000000000000003001";
    let cases = [
        (
            "no-table",
            "22090900000000000000003001",
            "the instance has no decision_variables table (ommx.v2 requires one, even empty)",
        ),
        (
            "one-hot-empty",
            "4a060a0408001200",
            "one-hot constraint 0 lists no decision variable (it needs at least one)",
        ),
        (
            "one-hot-twice",
            "4a0a0a08080012040a020000",
            "one-hot constraint 0 lists decision variable 0 more than once",
        ),
        (
            "one-hot-continuous",
            "4a090a07080012030a0102",
            "one-hot constraint 0 uses decision variable 2, which is not binary",
        ),
        (
            "sos1-twice",
            "520a0a08080012040a020101",
            "SOS1 constraint 0 lists decision variable 1 more than once",
        ),
        (
            "no-reason",
            "2a191217080012130802120f120d0a0b080011000000000000f03f",
            "removed constraint 0 has no removed reason",
        ),
        (
            "indicator-continuous",
            "421b0a1908001215080210021a0f120d0a0b080011000000000000f03f",
            "indicator constraint 0 uses decision variable 2, which is not binary",
        ),
    ];
    for (name, rows, why) in cases {
        let payload = match name {
            "no-table" => hex::decode(rows).unwrap(),
            _ => hex::decode(format!("{base}{rows}")).unwrap(),
        };
        let path = file(&dir, &format!("{name}.pb"), &payload);
        assert_eq!(
            fails(&["inspect", &path, "--schema", "v2"]),
            format!("memprof: error: {path}: {why}")
        );
    }
    // An SOS1 row over a continuous variable is fine.
    let sos1 = file(
        &dir,
        "sos1.pb",
        &hex::decode(format!("{base}52090a07080012030a0102")).unwrap(),
    );
    ok(&["inspect", &sos1, "--schema", "v2"]);
}
