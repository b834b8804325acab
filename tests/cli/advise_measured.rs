//! advise's savings against what OMMX itself measures.
//!
//! The changes a user can make in OMMX are measured by
//! `fixtures/advise/measured.py`, which applies each one with OMMX 2.9.3 and
//! profiles the result (on the fixtures and on thousands of random
//! instances; `.ci/run` runs it). Its minimized failures, found while the
//! rules were made exact, are kept in `fixtures/advise/corpus.jsonl` with
//! what OMMX measured, and replayed here without Python. Moving to OMMX 3.0
//! is held to OMMX 3.0.0b7's own profiles of the fixtures
//! (`fixtures/v2/from_v1/`) and to the migration view's paths.

use std::collections::BTreeMap;
use std::fs;

use serde_json::Value;

use crate::{fixtures, memprof, ok, pb_files};

fn advise_json(path: &str) -> Value {
    serde_json::from_str(&ok(&["advise", path, "--format", "json"])).unwrap()
}

fn recommendation<'a>(layer: &'a Value, rule: &str) -> Option<&'a Value> {
    layer["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rule"] == rule)
}

fn saving(layer: &Value, rule: &str) -> u64 {
    recommendation(layer, rule).map_or(0, |r| r["saving_bytes"].as_u64().unwrap())
}

/// The total of a folded profile.
fn folded_total(text: &str) -> u64 {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum()
}

#[test]
fn the_corpus_of_minimized_failures_is_measured_exactly() {
    let text = fs::read_to_string(fixtures().join("advise/corpus.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let item: Value = serde_json::from_str(line).unwrap();
        let name = item["name"].as_str().unwrap();
        let bytes: Vec<u8> = (0..item["input_hex"].as_str().unwrap().len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&item["input_hex"].as_str().unwrap()[i..i + 2], 16))
            .collect::<Result<_, _>>()
            .unwrap();
        let path = dir.path().join(format!("{name}.pb"));
        fs::write(&path, bytes).unwrap();
        let doc = advise_json(path.to_str().unwrap());
        let layer = &doc["layers"][0];
        let measured: BTreeMap<String, Value> =
            serde_json::from_value(item["measured"].clone()).unwrap();
        for (rule, got) in &measured {
            let claimed = match rule.as_str() {
                "summary" => layer["estimated_saving_bytes"].as_u64().unwrap(),
                rule => saving(layer, rule),
            };
            // null: OMMX refuses the change; advise must not claim it.
            let want = got.as_u64().unwrap_or(0);
            assert_eq!(claimed, want, "{name}: {rule}");
        }
        // What the rule claimed when the failure was found differs: the
        // corpus holds failures, not agreements.
        assert_ne!(
            item["claimed_when_found"], item["measured"],
            "{name} was no failure"
        );
        checked += 1;
    }
    assert!(checked >= 10, "{checked} corpus cases");
}

/// The fixtures 3.0.0b7 refuses, from fixtures/v2/from_v1/refused.txt.
fn refused_by_ommx_3() -> Vec<String> {
    fs::read_to_string(fixtures().join("v2/from_v1/refused.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn moving_to_ommx_3_saves_what_ommx_3_measures() {
    let refused = refused_by_ommx_3();
    let (mut smaller, mut larger) = (0, 0);
    for path in pb_files("oracle") {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let p = path.to_str().unwrap();
        let doc = advise_json(p);
        let layer = &doc["layers"][0];
        let finding = recommendation(layer, "ommx-3-layout");
        if refused.contains(&name) {
            assert!(finding.is_none(), "{name}: 3.0.0b7 refuses it");
            let reason = layer["not_computed"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| n["rule"] == "ommx-3-layout")
                .unwrap_or_else(|| panic!("{name} says why there is no 3.0 finding"));
            assert!(
                reason["reason"]
                    .as_str()
                    .unwrap()
                    .contains("OMMX 3.0.0b7 cannot"),
                "{name}: {reason}"
            );
            continue;
        }
        let r = finding.unwrap_or_else(|| panic!("{name} has an ommx-3-layout finding"));
        let v29 = folded_total(&fs::read_to_string(path.with_extension("folded")).unwrap());
        let v3 = fixtures().join("v2/from_v1").join(format!("{name}.folded"));
        let v30 = folded_total(&fs::read_to_string(v3).unwrap());
        // OMMX 2.9.3's and OMMX 3.0.0b7's own totals.
        assert_eq!(r["details"]["ommx29_bytes"], v29, "{name}");
        assert_eq!(r["details"]["ommx30_bytes"], v30, "{name}");
        assert_eq!(r["saving_bytes"], v29.saturating_sub(v30), "{name}");
        assert_eq!(r["change"], "ommx-3.0", "{name}");
        assert_eq!(
            r["severity"], "info",
            "{name}: a pre-release is never urged"
        );
        assert_eq!(r["details"]["pre_release"], true);
        let suggestion = r["suggestion"].as_str().unwrap();
        assert!(suggestion.contains("pre-release (3.0.0b7)"), "{suggestion}");
        if v30 > v29 {
            larger += 1;
            assert!(
                r["title"]
                    .as_str()
                    .unwrap()
                    .contains("more than OMMX 2.9.3's"),
                "{name}: {}",
                r["title"]
            );
            assert!(
                suggestion.starts_with("Stay with OMMX 2.9.3"),
                "{suggestion}"
            );
        } else {
            smaller += 1;
            assert!(!suggestion.starts_with("Stay"), "{suggestion}");
        }
        // Its paths are where the migration view differs among the
        // instance's own (3.0's collections are in its details), and the
        // view's deltas over every path it differs at, as the details list
        // them, add up to the saving (or the growth).
        let diff: Value = serde_json::from_str(&ok(&[
            "diff",
            p,
            "--accounting",
            "2.9,3.0",
            "--format",
            "json",
            "--top",
            "100000",
        ]))
        .unwrap();
        let top_level = || {
            diff["paths"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| !d["path"].as_str().unwrap().contains(';'))
                .filter(|d| d["delta"].as_i64().unwrap() != 0)
        };
        let deltas: BTreeMap<&str, i64> = top_level()
            .map(|d| (d["path"].as_str().unwrap(), d["delta"].as_i64().unwrap()))
            .collect();
        let mut own: Vec<&str> = top_level()
            .filter(|d| d["old_bytes"].as_u64().unwrap() > 0)
            .map(|d| d["path"].as_str().unwrap())
            .collect();
        own.sort();
        let paths: Vec<&str> = r["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        let mut sorted = paths.clone();
        sorted.sort();
        assert_eq!(sorted, own, "{name}");
        let listed: Vec<&str> = r["details"]["per_path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["path"].as_str().unwrap())
            .collect();
        let mut all = listed.clone();
        all.sort();
        assert_eq!(all, deltas.keys().copied().collect::<Vec<_>>(), "{name}");
        let sum: i64 = listed.iter().map(|p| deltas[p]).sum();
        assert_eq!(sum, v30 as i64 - v29 as i64, "{name}");
    }
    assert!(
        smaller > 0 && larger > 0,
        "{smaller} smaller, {larger} larger"
    );
}

#[test]
fn each_layer_of_an_archive_gets_its_own_verdict_on_ommx_3() {
    // multi.ommx: layer 0 is kitchen_sink, which 3.0.0b7 refuses; layers 1
    // and 2 it reads.
    let doc = advise_json(&crate::oracle("multi.ommx"));
    let layers = doc["layers"].as_array().unwrap();
    assert!(recommendation(&layers[0], "ommx-3-layout").is_none());
    assert_eq!(layers[0]["not_computed"][0]["rule"], "ommx-3-layout");
    for layer in &layers[1..] {
        let r = recommendation(layer, "ommx-3-layout").unwrap();
        assert_eq!(r["details"]["ommx29_bytes"], layer["total_bytes"]);
    }
}

/// What `args` writes to stdout with `stdin` as its standard input.
fn from_stdin(args: &[&str], stdin: Vec<u8>) -> String {
    let out = memprof().args(args).write_stdin(stdin).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The OMMX 3.0 comparison reads its input once, so a stream is compared
/// as a file is: advise's layers and the report page's migration findings
/// from stdin are the file's, for a raw instance, gzip'd bytes and an
/// archive (one of whose layers OMMX 3.0 refuses).
#[test]
fn a_stream_is_compared_with_ommx_3_as_its_file_is() {
    use sha2::{Digest, Sha256};
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mixed = fs::read(fixtures().join("oracle/highlevel_mixed.pb")).unwrap();
    let refused = fs::read(fixtures().join("oracle/kitchen_sink.pb")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&mixed).unwrap();
    let digest = |b: &[u8]| format!("sha256:{}", hex::encode(Sha256::digest(b)));
    let blobs: Vec<(String, Vec<u8>)> = [&mixed, &refused]
        .iter()
        .map(|b| (format!("blobs/sha256/{}", &digest(b)[7..]), b.to_vec()))
        .collect();
    let blobs: Vec<(&str, Vec<u8>)> = blobs.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let layer = |b: &[u8]| {
        serde_json::json!({"mediaType": "application/org.ommx.v1.instance",
                           "digest": digest(b), "size": b.len()})
    };
    let archive = crate::oci_tar(&blobs, Value::Array(vec![layer(&mixed), layer(&refused)]));
    // The page's migration findings: each title or refusal, to its end.
    let findings = |page: &str| -> Vec<String> {
        let starts = ["OMMX 3.0 would hold", "OMMX 3.0.0b7 cannot convert"];
        let mut found = Vec::new();
        for start in starts {
            for (at, _) in page.match_indices(start) {
                let rest = &page[at..];
                let end = rest.find(['"', '<']).unwrap_or(rest.len());
                found.push(rest[..end].to_string());
            }
        }
        found
    };
    for (name, bytes) in [
        ("raw.pb", mixed.clone()),
        ("gz.pb.gz", gz.finish().unwrap()),
        ("a.ommx", archive),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, &bytes).unwrap();
        let path = path.to_str().unwrap();
        let file = advise_json(path);
        let advise = ["advise", "-", "--format", "json"];
        let stream: Value = serde_json::from_str(&from_stdin(&advise, bytes.clone())).unwrap();
        assert_eq!(file["layers"], stream["layers"], "{name}");
        let compared = file["layers"].as_array().unwrap().iter();
        let with_3 = compared.filter(|l| recommendation(l, "ommx-3-layout").is_some());
        assert!(with_3.count() >= 1, "{name}: {file}");
        let page = ok(&["report", path, "-o", "-"]);
        let streamed = from_stdin(&["report", "-", "-o", "-"], bytes);
        assert!(!findings(&page).is_empty(), "{name}");
        assert_eq!(findings(&page), findings(&streamed), "{name}");
    }
}

/// Ranks of `change`: what the user controls first.
fn rank(change: &Value) -> u8 {
    match change.as_str().unwrap() {
        "ommx" => 0,
        "ommx-3.0" => 1,
        "not-in-ommx" => 2,
        other => panic!("unknown change {other}"),
    }
}

fn severity(s: &Value) -> u8 {
    ["info", "low", "medium", "high"]
        .iter()
        .position(|x| s == x)
        .unwrap() as u8
}

#[test]
fn what_the_user_controls_comes_first_and_outranks_the_rest() {
    let mut seen = [0; 3];
    for path in pb_files("oracle") {
        let doc = advise_json(path.to_str().unwrap());
        for layer in doc["layers"].as_array().unwrap() {
            let recs = layer["recommendations"].as_array().unwrap();
            for pair in recs.windows(2) {
                let (a, b) = (&pair[0], &pair[1]);
                // What the user controls first; severities never rise down
                // the list; within a severity, the larger saving first.
                let key = |r: &Value| {
                    (
                        rank(&r["change"]),
                        std::cmp::Reverse(severity(&r["severity"])),
                        std::cmp::Reverse(r["saving_bytes"].as_u64()),
                    )
                };
                assert!(key(a) <= key(b), "{}: {a} before {b}", path.display());
            }
            for r in recs {
                seen[rank(&r["change"]) as usize] += 1;
                if rank(&r["change"]) > 0 {
                    assert_eq!(r["severity"], "info", "{r}");
                }
                if r["change"] == "not-in-ommx" {
                    let text = format!("{} {}", r["title"], r["suggestion"]);
                    assert!(text.contains("a layout OMMX does not offer"), "{text}");
                }
            }
            // The summary sums the changes the user can make, nothing else.
            let in_ommx: u64 = recs
                .iter()
                .filter(|r| r["change"] == "ommx" && r["measure"] == "logical")
                .map(|r| r["saving_bytes"].as_u64().unwrap())
                .sum();
            assert!(layer["estimated_saving_bytes"].as_u64().unwrap() <= in_ommx);
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}

#[test]
fn each_layer_of_an_archive_that_ommx_3_refuses_once_gets_its_own_verdict() {
    use sha2::{Digest, Sha256};
    let refused = fs::read(fixtures().join("oracle/kitchen_sink.pb")).unwrap();
    let empty = fs::read(fixtures().join("oracle/empty.pb")).unwrap();
    let digest = |b: &[u8]| format!("sha256:{}", hex::encode(Sha256::digest(b)));
    let layer = |b: &[u8]| {
        serde_json::json!({"mediaType": "application/org.ommx.v1.instance",
                           "digest": digest(b), "size": b.len()})
    };
    let blobs: Vec<(String, Vec<u8>)> = [&refused, &empty]
        .iter()
        .map(|b| (format!("blobs/sha256/{}", &digest(b)[7..]), b.to_vec()))
        .collect();
    let blobs: Vec<(&str, Vec<u8>)> = blobs.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let dir = tempfile::tempdir().unwrap();
    for layers in [3, 17] {
        let manifest: Vec<Value> = (0..layers)
            .map(|i| layer(if i == 1 { &refused } else { &empty }))
            .collect();
        let path = dir.path().join(format!("{layers}.ommx"));
        fs::write(&path, crate::oci_tar(&blobs, Value::Array(manifest))).unwrap();
        let doc = advise_json(path.to_str().unwrap());
        let layers = doc["layers"].as_array().unwrap();
        // Layer 1 is refused either way, with 3.0's reason.
        let reason = layers[1]["not_computed"][0]["reason"].as_str().unwrap();
        assert!(reason.contains("both fixed and dependent"), "{reason}");
        // The one reading compares each layer: every other layer gets its
        // own comparison, however many there are.
        for (i, layer) in layers.iter().enumerate().filter(|(i, _)| *i != 1) {
            assert!(recommendation(layer, "ommx-3-layout").is_some(), "{i}");
            let others = layer["not_computed"].as_array().map_or(0, Vec::len);
            assert_eq!(others, 0, "{i}");
        }
    }
}

#[test]
fn each_layer_gets_its_own_advice_whatever_order_its_blobs_are_stored_in() {
    use sha2::{Digest, Sha256};
    let kitchen = fs::read(fixtures().join("oracle/kitchen_sink.pb")).unwrap();
    let mixed = fs::read(fixtures().join("oracle/highlevel_mixed.pb")).unwrap();
    let digest = |b: &[u8]| format!("sha256:{}", hex::encode(Sha256::digest(b)));
    let name = |b: &[u8]| format!("blobs/sha256/{}", &digest(b)[7..]);
    let layer = |b: &[u8]| {
        serde_json::json!({"mediaType": "application/org.ommx.v1.instance",
                           "digest": digest(b), "size": b.len()})
    };
    // Stored mixed first, listed kitchen_sink first, and kitchen_sink twice.
    let (k, m) = (name(&kitchen), name(&mixed));
    let tar = crate::oci_tar(
        &[(m.as_str(), mixed.clone()), (k.as_str(), kitchen.clone())],
        serde_json::json!([layer(&kitchen), layer(&mixed), layer(&kitchen)]),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reordered.ommx");
    fs::write(&path, tar).unwrap();
    let doc = advise_json(path.to_str().unwrap());
    let layers = doc["layers"].as_array().unwrap();
    let alone = |p: &str| advise_json(&fixtures().join("oracle").join(p).to_string_lossy());
    let (k, m) = (alone("kitchen_sink.pb"), alone("highlevel_mixed.pb"));
    for (i, expected) in [(0, &k), (1, &m), (2, &k)] {
        let mut got = layers[i].clone();
        assert_eq!(got["index"], i);
        got["index"] = Value::Null;
        assert_eq!(got, expected["layers"][0], "layer {i}");
    }
}
