//! The viewers people already use: speedscope's file (`inspect --format
//! speedscope`) and inferno's leaves-first graph (`flamegraph --reverse`),
//! each read back and held to the folded lines it is made of.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{memprof, ok, oracle};

/// `(path, bytes)` of each folded line.
fn folded(args: &[&str]) -> Vec<(String, u64)> {
    let mut args = args.to_vec();
    args.extend(["-f", "folded"]);
    ok(&args)
        .lines()
        .map(|line| {
            let (path, bytes) = line.rsplit_once(' ').unwrap();
            (path.to_string(), bytes.parse().unwrap())
        })
        .collect()
}

/// Holds speedscope's file of `args` to the folded lines of the same run.
fn speedscope_reproduces_folded(args: &[&str]) {
    let mut with = args.to_vec();
    with.extend(["-f", "speedscope"]);
    let text = ok(&with);
    assert_eq!(text, ok(&with), "the same input gives the same bytes");
    assert_eq!(text.lines().count(), 1, "one line of JSON");
    let file: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        file["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    assert!(file["exporter"].as_str().unwrap().starts_with("memprof "));
    assert_eq!(file["activeProfileIndex"], 0);
    let frames: Vec<&str> = file["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let mut distinct = frames.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), frames.len(), "one frame per name");
    let profiles = file["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 1);
    let p = &profiles[0];
    assert_eq!(p["type"], "sampled");
    assert_eq!(p["unit"], "bytes");
    assert_eq!(p["startValue"], 0);
    let samples = p["samples"].as_array().unwrap();
    let weights: Vec<u64> = p["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_u64().expect("an integer weight"))
        .collect();
    let lines: Vec<(String, u64)> = samples
        .iter()
        .zip(&weights)
        .map(|(sample, &weight)| {
            let path: Vec<&str> = sample
                .as_array()
                .unwrap()
                .iter()
                .map(|i| frames[i.as_u64().unwrap() as usize])
                .collect();
            (path.join(";"), weight)
        })
        .collect();
    assert_eq!(lines, folded(args), "{args:?}");
    let total: u64 = weights.iter().sum();
    assert_eq!(p["endValue"].as_u64(), Some(total));
    let mut json = args.to_vec();
    json.extend(["-f", "json"]);
    let doc: Value = serde_json::from_str(&ok(&json)).unwrap();
    assert_eq!(doc["total_bytes"].as_u64(), Some(total), "{args:?}");
}

#[test]
fn speedscope_samples_are_the_folded_lines_weighed_in_bytes() {
    let (kitchen, moderate, multi, var_kinds) = (
        oracle("kitchen_sink.pb"),
        oracle("moderate.pb"),
        oracle("multi.ommx"),
        oracle("var_kinds.pb"),
    );
    for args in [
        vec!["inspect", &kitchen],
        // Several layers and several inputs under their root frames, as
        // the folded lines have them.
        vec!["inspect", &multi],
        vec!["inspect", &multi, "--layer", "2"],
        vec!["inspect", &kitchen, &moderate],
        vec!["inspect", &moderate, "--group-by", "name"],
        vec!["inspect", &kitchen, "--view", "wire"],
        vec!["inspect", &var_kinds, "--accounting", "3.0"],
    ] {
        speedscope_reproduces_folded(&args);
    }
    let layers: Value =
        serde_json::from_str(&ok(&["inspect", &multi, "-f", "speedscope"])).unwrap();
    let roots: Vec<&str> = layers["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .filter(|name| name.starts_with("layer["))
        .collect();
    assert_eq!(roots.len(), 3, "{roots:?}");
    assert!(layers["profiles"][0]["name"]
        .as_str()
        .unwrap()
        .contains("all 3 instance layers"));
}

#[test]
fn speedscope_is_offered_by_inspect_alone() {
    let kitchen = oracle("kitchen_sink.pb");
    for command in ["top", "stats", "advise", "ls"] {
        let out = memprof()
            .args([command, &kitchen, "-f", "speedscope"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("invalid value 'speedscope'"), "{stderr}");
    }
    let help = ok(&["inspect", "--help"]);
    assert!(help.contains("speedscope"), "{help}");
}

#[test]
fn inspect_help_defines_a_leaf() {
    let help = ok(&["inspect", "--help"]);
    assert!(
        help.contains("A leaf is one figure OMMX's leaf-only visitor reports"),
        "{help}"
    );
}

/// The frames of an inferno SVG: (name, y, bytes).
fn svg_frames(svg: &str) -> Vec<(String, u64, u64)> {
    svg.split("<g><title>")
        .skip(1)
        .map(|g| {
            let name = &g[..g.find(" (").unwrap()];
            let attr = |key: &str| -> u64 {
                let at = g.find(&format!(" {key}=\"")).unwrap() + key.len() + 3;
                g[at..at + g[at..].find('"').unwrap()].parse().unwrap()
            };
            let name = name
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            (name, attr("y"), attr("fg:w"))
        })
        .collect()
}

/// Bytes of the frames in the row next to the root, summed by name.
fn next_to_root(svg: &str, inverted: bool) -> BTreeMap<String, u64> {
    let frames = svg_frames(svg);
    let root_y = frames.iter().map(|f| f.1);
    let root_y = if inverted {
        root_y.min().unwrap()
    } else {
        root_y.max().unwrap()
    };
    let row = if inverted { root_y + 16 } else { root_y - 16 };
    let mut sums = BTreeMap::new();
    for (name, y, bytes) in frames {
        if y == row {
            *sums.entry(name).or_default() += bytes;
        }
    }
    sums
}

#[test]
fn flamegraph_reverse_stands_the_leaves_on_the_root() {
    let kitchen = oracle("kitchen_sink.pb");
    let lines = folded(&["inspect", &kitchen]);
    let mut by_leaf: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_top: BTreeMap<String, u64> = BTreeMap::new();
    for (path, bytes) in &lines {
        *by_leaf
            .entry(path.rsplit(';').next().unwrap().to_string())
            .or_default() += bytes;
        *by_top
            .entry(path.split(';').next().unwrap().to_string())
            .or_default() += bytes;
    }
    let graph = |extra: &[&str]| {
        let mut args = vec![
            "flamegraph",
            kitchen.as_str(),
            "--min-width",
            "0",
            "-o",
            "-",
        ];
        args.extend(extra);
        ok(&args)
    };
    let plain = graph(&[]);
    assert_eq!(next_to_root(&plain, false), by_top);
    let reversed = graph(&["--reverse"]);
    assert_eq!(next_to_root(&reversed, false), by_leaf);
    assert!(by_leaf.contains_key("PolynomialBase.terms"));
    assert!(reversed.contains("leaves first"), "the subtitle says so");
    assert!(
        reversed.contains("kitchen_sink.pb: 4.2 KiB"),
        "the root's name"
    );
    assert_eq!(reversed, graph(&["--reverse"]), "deterministic");
    // Upside down as well: the root on top, the leaves under it.
    let both = graph(&["--reverse", "--inverted"]);
    assert_eq!(next_to_root(&both, true), by_leaf);
    // Folded stacks as input turn the same way.
    let out = memprof()
        .args(["flamegraph", "--reverse", "--min-width", "0", "-o", "-"])
        .write_stdin(ok(&["inspect", &kitchen, "-f", "folded"]))
        .output()
        .unwrap();
    assert!(out.status.success());
    let from_folded = String::from_utf8(out.stdout).unwrap();
    assert_eq!(next_to_root(&from_folded, false), by_leaf);
}

#[test]
fn flamegraph_help_tells_inverted_from_reverse() {
    let help = ok(&["flamegraph", "--help"]);
    assert!(help.contains("--reverse"), "{help}");
    assert!(help.contains("--inverted draws it upside down"), "{help}");
}
