//! Issue 45's smaller things, each as a reader meets it.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{memprof, ok, oracle};

fn at_width(args: &[&str], columns: &str) -> String {
    let out = memprof()
        .args(args)
        .env("COLUMNS", columns)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_sentence_in_a_narrowed_table_wraps_and_keeps_its_start() {
    let (kitchen, moderate) = (oracle("kitchen_sink.pb"), oracle("moderate.pb"));
    let diff = ["diff", kitchen.as_str(), moderate.as_str(), "--top", "3"];
    let table = ["inspect", moderate.as_str(), "-f", "table", "--top", "3"];
    for (args, sentence) in [
        (
            &diff[..],
            "(93 smaller changes not shown; raise --top to see them)",
        ),
        (&diff[..], "(14 unchanged paths not shown)"),
        (
            &table[..],
            "(98 smaller paths not shown; raise --top to see them)",
        ),
    ] {
        assert!(ok(args).contains(sentence), "{args:?}");
        let mut narrowed = 0;
        for columns in ["100", "90", "80", "70"] {
            let text = at_width(args, columns);
            // Where the path column is cut behind "…", narrower than the
            // sentence, the sentence wraps there, every word whole.
            if !text.contains("│ …") {
                continue;
            }
            narrowed += 1;
            let cells: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("│ "))
                .map(|line| line.split(" ┆").next().unwrap().trim_end())
                .collect();
            let start = cells
                .iter()
                .position(|cell| sentence.starts_with(cell) && cell.starts_with('('))
                .unwrap_or_else(|| panic!("{columns}: {sentence} cut:\n{text}"));
            let mut joined = String::new();
            for cell in &cells[start..] {
                joined = if joined.is_empty() {
                    cell.to_string()
                } else {
                    format!("{joined} {cell}")
                };
                if joined.len() >= sentence.len() {
                    break;
                }
            }
            assert_eq!(joined, sentence, "{columns}:\n{text}");
        }
        assert!(narrowed > 0, "{args:?} never narrowed");
    }
}

/// The `sample:` lines of each recommendation in `advise`'s table, the
/// label taken off.
fn sample_lines(text: &str) -> Vec<Vec<String>> {
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut in_samples = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("    sample:") {
            in_samples = true;
            groups.push(vec![rest.trim().to_string()]);
        } else if in_samples && line.starts_with("                ") {
            groups.last_mut().unwrap().push(line.trim().to_string());
        } else {
            in_samples = false;
        }
    }
    groups
}

/// A sample line without its ids: what two entities alike share.
fn without_ids(line: &str) -> String {
    let (head, detail) = line.split_once(": ").unwrap();
    let head: String = head
        .split(' ')
        .filter(|w| !w.trim_end_matches(',').chars().all(|c| c.is_ascii_digit()))
        .collect::<Vec<_>>()
        .join(" ");
    let head = head.split(" (").next().unwrap().to_string();
    format!("{head}: {detail}")
}

#[test]
fn advise_shows_samples_alike_once_and_only_paths_the_instance_has() {
    let file = oracle("var_kinds.pb");
    let text = ok(&["advise", &file]);
    assert!(
        sample_lines(&text).contains(&vec![
            "variable 1, 2, 3 (3 alike): 153 B in OMMX 2.9.3, 25 B in OMMX 3.0".to_string()
        ]),
        "{text}"
    );
    // No two lines of a recommendation alike once their ids are taken out.
    let moderate = ok(&["advise", &oracle("moderate.pb")]);
    for text in [&text, &moderate] {
        for lines in sample_lines(text) {
            let shapes: BTreeSet<String> = lines.iter().map(|l| without_ids(l)).collect();
            assert_eq!(shapes.len(), lines.len(), "{lines:#?}");
        }
    }
    assert!(
        moderate.contains("constraint 1, 3, 4 \"c\" (3 alike): Linear with 9 terms"),
        "{moderate}"
    );
    // The JSON keeps every sample, as data.
    let doc: Value = serde_json::from_str(&ok(&["advise", &file, "-f", "json"])).unwrap();
    let recommendations = doc["layers"][0]["recommendations"].as_array().unwrap();
    let migration = recommendations
        .iter()
        .find(|r| r["rule"] == "ommx-3-layout")
        .expect("ommx-3-layout");
    assert_eq!(migration["sample"].as_array().unwrap().len(), 3);
    // Its paths are the instance's: the top-level frames of its profile.
    let profile: BTreeSet<String> = ok(&["inspect", &file, "-f", "folded"])
        .lines()
        .map(|line| line.split([';', ' ']).next().unwrap().to_string())
        .collect();
    let paths: Vec<&str> = migration["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(!paths.is_empty());
    for path in &paths {
        assert!(profile.contains(*path), "{path} is not in {profile:?}");
    }
    // 3.0's own collections are in its details, with their bytes.
    let per_path = migration["details"]["per_path"].as_array().unwrap();
    assert!(per_path
        .iter()
        .any(|p| p["path"] == "Instance.constraint_collection" && p["ommx29_bytes"] == 0));
}

/// The rows of a tree under `parent` (a row's label, its frame's name).
fn tree_children(text: &str, parent: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |line: &str| line.find(|c: char| c.is_alphanumeric() || c == '(');
    let depth = indent(lines[parent]).unwrap();
    let mut children = Vec::new();
    for line in &lines[parent + 1..] {
        let Some(at) = indent(line) else { break };
        if at <= depth {
            break;
        }
        if at == depth + 3 {
            let name = line[at..].split("  ").next().unwrap();
            children.push(name.to_string());
        }
    }
    children
}

#[test]
fn a_tree_never_folds_one_child_or_an_only_row_into_others() {
    let files = [
        oracle("kitchen_sink.pb"),
        oracle("moderate.pb"),
        oracle("multi.ommx"),
    ];
    let mut singles = 0;
    for file in &files {
        for cut in [
            vec![],
            vec!["--depth", "2", "--min-percent", "5"],
            vec!["--min-percent", "10"],
            vec!["--group-by", "name"],
            vec!["--depth", "4", "--min-percent", "1"],
        ] {
            let mut args = vec!["inspect", file.as_str()];
            args.extend(&cut);
            let text = ok(&args);
            assert!(!text.contains("(1 other)"), "{args:?}:\n{text}");
            let start = text.lines().position(|l| l.starts_with("total")).unwrap();
            for (i, line) in text.lines().enumerate().skip(start) {
                let children = tree_children(&text, i);
                if let [only] = children.as_slice() {
                    assert!(!only.starts_with('('), "{args:?}: {line}\n{text}");
                    singles += 1;
                }
            }
        }
    }
    assert!(singles > 0, "some node shows one child");
    // Instance.description's 7 small children are not one "(7 others)" row.
    let text = ok(&[
        "inspect",
        &oracle("kitchen_sink.pb"),
        "--depth",
        "2",
        "--min-percent",
        "5",
    ]);
    let row = text
        .lines()
        .position(|l| l.contains("Instance.description"))
        .unwrap();
    assert!(tree_children(&text, row).is_empty(), "{text}");
    // Where one child is too small to open, it is shown by its name.
    let text = ok(&["inspect", &oracle("kitchen_sink.pb"), "--group-by", "name"]);
    assert!(
        text.contains(
            "│  └─ BTreeMap[stack]                            24 B    0.6%          1 leaf"
        ),
        "{text}"
    );
}

#[test]
fn top_speaks_of_ties_only_where_they_decided_the_cut() {
    let kitchen = oracle("kitchen_sink.pb");
    let doc: Value =
        serde_json::from_str(&ok(&["top", &kitchen, "-n", "100", "-f", "json"])).unwrap();
    let bytes: Vec<u64> = doc["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["bytes"].as_u64().unwrap())
        .collect();
    let mut tied = 0;
    for n in 1..bytes.len() {
        let text = ok(&["top", &kitchen, "-n", &n.to_string()]);
        let left_out = bytes[n..].iter().filter(|&&b| b == bytes[n - 1]).count();
        if left_out == 0 {
            assert!(!text.contains("ties are listed"), "-n {n}:\n{text}");
        } else {
            tied += 1;
            let entities = if left_out == 1 {
                "entity ties"
            } else {
                "entities tie"
            };
            assert!(
                text.contains(&format!("{left_out} more {entities} with the last row at ")),
                "-n {n}:\n{text}"
            );
            assert!(text.contains("ties are listed by id"), "-n {n}:\n{text}");
        }
    }
    assert!(tied > 0 && tied < bytes.len() - 1, "{bytes:?}");
}

#[test]
fn a_file_no_rule_applies_to_says_so_instead_of_an_empty_table() {
    let dir = tempfile::tempdir().unwrap();
    let kitchen = oracle("kitchen_sink.pb");
    let baselines = dir.path().to_str().unwrap();
    let table = ok(&["check", &kitchen, "--baseline", baselines]);
    assert!(
        table.contains(
            "(added: no baseline yet): PASS\n  no rules: each rule of this check compares with \
             a baseline, and this file has none yet\n"
        ),
        "{table}"
    );
    assert!(!table.contains('┌'), "no empty table:\n{table}");
    let markdown = ok(&["check", &kitchen, "--baseline", baselines, "-f", "markdown"]);
    assert!(markdown.contains("\nNo rules: each rule"), "{markdown}");
    assert!(!markdown.contains("| rule |"), "{markdown}");
}

#[test]
fn an_estimate_of_nothing_is_zero_bytes_not_about_zero() {
    let small = ok(&["inspect", &oracle("obj_linear.pb")]);
    assert!(
        small.contains("\nreal memory: 0 B resident, ~4.0 KiB peak to load in OMMX 2.9.3"),
        "{small}"
    );
    let doc: Value =
        serde_json::from_str(&ok(&["inspect", &oracle("obj_linear.pb"), "-f", "json"])).unwrap();
    assert_eq!(doc["layers"][0]["real_memory"]["resident_bytes"], 0);
    let larger = ok(&["inspect", &oracle("kitchen_sink.pb")]);
    assert!(
        larger.contains("real memory: ~20.7 KiB resident"),
        "{larger}"
    );
    for file in super::pb_files("oracle") {
        let text = ok(&["inspect", file.to_str().unwrap(), "--depth", "1"]);
        assert!(!text.contains("~0 B"), "{}:\n{text}", file.display());
    }
}
