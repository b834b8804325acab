//! `memprof diff` and `memprof check`: baselines, per-path deltas checked
//! against the oracle-verified profiles, crafted pairs with known deltas,
//! markdown truncation, budget boundaries and exit codes.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use memprof::ommx_v1 as pb;
use prost::Message;
use serde_json::{json, Value};

use super::{fails, memprof, ok, oracle};

/// Runs memprof, returning (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = memprof().args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

fn linear(terms: &[(u64, f64)], constant: f64) -> pb::Function {
    pb::Function {
        function: Some(pb::function::Function::Linear(pb::Linear {
            terms: terms
                .iter()
                .map(|&(id, coefficient)| pb::LinearTerm { id, coefficient })
                .collect(),
            constant,
        })),
    }
}

fn constraint(id: u64, name: &str, terms: &[(u64, f64)]) -> pb::Constraint {
    pb::Constraint {
        id,
        equality: 2, // <= 0
        function: Some(linear(terms, -1.0)),
        name: Some(name.to_string()),
        ..Default::default()
    }
}

/// Three binaries, objective x1 + x2 + x3, one constraint named "abcd".
fn base() -> pb::Instance {
    pb::Instance {
        decision_variables: (1..=3)
            .map(|id| pb::DecisionVariable {
                id,
                kind: 1,
                bound: Some(pb::Bound {
                    lower: 0.0,
                    upper: 1.0,
                }),
                ..Default::default()
            })
            .collect(),
        objective: Some(linear(&[(1, 1.0), (2, 1.0), (3, 1.0)], 0.0)),
        constraints: vec![constraint(1, "abcd", &[(1, 1.0), (2, 1.0)])],
        sense: 1,
        ..Default::default()
    }
}

/// The profile as `path -> own bytes`, from the oracle-verified folded output.
fn folded(file: &str) -> BTreeMap<String, u64> {
    ok(&["inspect", file, "-f", "folded", "-q"])
        .lines()
        .map(|l| {
            let (path, bytes) = l.rsplit_once(' ').unwrap();
            (path.to_string(), bytes.parse().unwrap())
        })
        .collect()
}

/// Inclusive bytes of every path prefix.
fn inclusive(own: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut all = BTreeMap::new();
    for (path, bytes) in own {
        let frames: Vec<&str> = path.split(';').collect();
        for k in 1..=frames.len() {
            *all.entry(frames[..k].join(";")).or_insert(0) += bytes;
        }
    }
    all
}

/// `path -> (status, delta)` from `diff --format json`.
fn diff_rows(old: &str, new: &str) -> (Value, BTreeMap<String, (String, i64)>) {
    let doc = json_of(&ok(&["diff", old, new, "-f", "json"]));
    let rows = doc["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                (
                    r["status"].as_str().unwrap().to_string(),
                    r["delta"].as_i64().unwrap(),
                ),
            )
        })
        .collect();
    (doc, rows)
}

fn count(doc: &Value, name: &str) -> i64 {
    doc["counts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()["delta"]
        .as_i64()
        .unwrap()
}

#[test]
fn self_diff_is_zero_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let ks = oracle("kitchen_sink.pb");
    let baseline = dir.path().join("ks.json");
    ok(&[
        "inspect",
        &ks,
        "-f",
        "json",
        "-o",
        baseline.to_str().unwrap(),
    ]);
    let baseline = baseline.to_str().unwrap();
    for (old, new) in [
        (ks.as_str(), ks.as_str()),
        (baseline, ks.as_str()),
        (ks.as_str(), baseline),
        (&oracle("multi.ommx"), &oracle("multi.ommx")),
    ] {
        let (doc, rows) = diff_rows(old, new);
        assert!(rows.len() > 20, "{old}");
        for (path, (status, delta)) in &rows {
            assert_eq!((status.as_str(), *delta), ("unchanged", 0), "{path}");
        }
        assert_eq!(doc["total"]["delta"], 0);
        assert_eq!(doc["total"]["delta_percent"], 0.0);
        for c in doc["counts"].as_array().unwrap() {
            assert_eq!(c["delta"], 0, "{c}");
        }
        for line in ok(&["diff", old, new, "-f", "folded"]).lines() {
            let parts: Vec<&str> = line.rsplitn(3, ' ').collect();
            assert_eq!(parts[0], parts[1], "{line}");
        }
        assert!(ok(&["diff", old, new]).contains("(no path changed)"));
        assert!(ok(&["diff", old, new, "-f", "markdown"]).contains("No path changed."));
        let tree = ok(&["diff", old, new, "-f", "tree"]);
        assert_eq!(tree.lines().filter(|l| l.contains("unchanged)")).count(), 1);
    }
}

#[test]
fn diff_agrees_with_the_oracle_profiles_path_by_path() {
    for (a, b) in [
        ("obj_linear.pb", "constraints_equality.pb"),
        ("kitchen_sink.pb", "moderate.pb"),
        ("removed_constraints.pb", "hints_sos1.pb"),
    ] {
        let (old, new) = (oracle(a), oracle(b));
        let (old_own, new_own) = (folded(&old), folded(&new));
        let (old_in, new_in) = (inclusive(&old_own), inclusive(&new_own));
        let (doc, rows) = diff_rows(&old, &new);
        let union: BTreeSet<&String> = old_in.keys().chain(new_in.keys()).collect();
        assert_eq!(rows.len(), union.len(), "{a} -> {b}");
        for path in union {
            let (o, n) = (old_in.get(path), new_in.get(path));
            let want_status = match (o, n) {
                (None, Some(_)) => "added",
                (Some(_), None) => "removed",
                _ => "",
            };
            let want = *n.unwrap_or(&0) as i64 - *o.unwrap_or(&0) as i64;
            let (status, delta) = &rows[path.as_str()];
            assert_eq!(*delta, want, "{a} -> {b}: {path}");
            if !want_status.is_empty() {
                assert_eq!(status, want_status, "{path}");
            }
        }
        let total = |m: &BTreeMap<String, u64>| m.values().sum::<u64>() as i64;
        assert_eq!(
            doc["total"]["delta"].as_i64().unwrap(),
            total(&new_own) - total(&old_own)
        );
        // Largest change first.
        let deltas: Vec<u64> = doc["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["delta"].as_i64().unwrap().unsigned_abs())
            .collect();
        assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "{a} -> {b}");
    }
}

#[test]
fn crafted_pairs_have_known_deltas() {
    let dir = tempfile::tempdir().unwrap();
    let base_path = write(dir.path(), "base.pb", &base().encode_to_vec());

    // A constraint added: 8 B id, 8 B map key, 1 B equality, a linear
    // function of two terms and a non-zero constant (32 + 3 * 24 B) and its
    // name (a 24 B String + 4 B).
    let mut added = base();
    added
        .constraints
        .push(constraint(2, "efgh", &[(2, 1.0), (3, 1.0)]));
    let added_path = write(dir.path(), "added.pb", &added.encode_to_vec());
    let (doc, rows) = diff_rows(&base_path, &added_path);
    let delta = |p: &str| rows[&format!("Instance.constraints;{p}")].1;
    assert_eq!(delta("Constraint.id"), 8);
    assert_eq!(delta("BTreeMap[key]"), 8);
    assert_eq!(delta("Constraint.equality"), 1);
    assert_eq!(delta("Constraint.name"), 28);
    assert_eq!(
        delta("Constraint.function;Linear;PolynomialBase.terms"),
        104
    );
    assert_eq!(count(&doc, "constraints"), 1);
    assert_eq!(count(&doc, "stored terms"), 3);
    let constraints_total = rows["Instance.constraints"].1;
    assert_eq!(doc["total"]["delta"].as_i64().unwrap(), constraints_total);
    assert!(rows
        .iter()
        .all(|(p, (_, d))| p.starts_with("Instance.constraints") || *d == 0));

    // A name lengthened by 5 characters: 5 B in the name's heap, nothing else.
    let mut longer = base();
    longer.constraints[0].name = Some("abcdefghi".into());
    let longer_path = write(dir.path(), "longer.pb", &longer.encode_to_vec());
    let (doc, rows) = diff_rows(&base_path, &longer_path);
    let changed: Vec<(&String, i64)> = rows
        .iter()
        .filter(|(_, (_, d))| *d != 0)
        .map(|(p, (_, d))| (p, *d))
        .collect();
    assert_eq!(
        changed,
        vec![
            (&"Instance.constraints".to_string(), 5),
            (&"Instance.constraints;Constraint.name".to_string(), 5)
        ]
    );
    assert_eq!(doc["total"]["delta"], 5);
    assert_eq!(rows["Instance.constraints;Constraint.name"].0, "changed");

    // A term duplicated: OMMX sums duplicates, so nothing changes...
    let mut duplicated = base();
    duplicated.constraints[0].function = Some(linear(&[(1, 1.0), (2, 0.5), (2, 0.5)], -1.0));
    let dup_path = write(dir.path(), "dup.pb", &duplicated.encode_to_vec());
    let (doc, rows) = diff_rows(&base_path, &dup_path);
    assert!(rows.values().all(|(s, d)| s == "unchanged" && *d == 0));
    assert_eq!(count(&doc, "stored terms"), 0);
    // ...while a distinct term costs one 24-byte linear entry.
    let mut extra = base();
    extra.constraints[0].function = Some(linear(&[(1, 1.0), (2, 1.0), (3, 1.0)], -1.0));
    let extra_path = write(dir.path(), "extra.pb", &extra.encode_to_vec());
    let (doc, rows) = diff_rows(&base_path, &extra_path);
    assert_eq!(
        rows["Instance.constraints;Constraint.function;Linear;PolynomialBase.terms"].1,
        24
    );
    assert_eq!(rows["Instance.constraints;Constraint.function"].1, 24);
    assert_eq!(doc["total"]["delta"], 24);
    assert_eq!(count(&doc, "stored terms"), 1);
}

#[test]
fn added_and_removed_paths_are_marked_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (small, big) = (oracle("obj_linear.pb"), oracle("constraints_equality.pb"));
    let function = "Instance.constraints;Constraint.function";
    let (_, grown) = diff_rows(&small, &big);
    assert_eq!(grown[function], ("added".to_string(), 544));
    let (_, shrunk) = diff_rows(&big, &small);
    assert_eq!(shrunk[function], ("removed".to_string(), -544));

    let table = ok(&["diff", &big, &small, "--top", "100"]);
    let row = table
        .lines()
        .find(|l| l.contains(&format!("{function} ")))
        .unwrap();
    assert!(row.contains("removed") && row.contains("-544 B"), "{row}");
    let markdown = ok(&["diff", &small, &big, "-f", "markdown"]);
    assert!(markdown.contains(&format!("| `{function}` | 0 B | 544 B | +544 B | added |")));
    let tree = ok(&["diff", &big, &small, "-f", "tree"]);
    assert!(tree
        .lines()
        .any(|l| l.contains("Constraint.function") && l.ends_with("removed")));

    // The folded diff is what inferno's own differ makes of the two profiles.
    let (a, b) = (
        ok(&["inspect", &big, "-f", "folded"]),
        ok(&["inspect", &small, "-f", "folded"]),
    );
    let mut theirs = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        a.as_bytes(),
        b.as_bytes(),
        &mut theirs,
    )
    .unwrap();
    let mut theirs: Vec<String> = String::from_utf8(theirs)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    theirs.sort();
    let ours: Vec<String> = ok(&["diff", &big, &small, "-f", "folded"])
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(ours, theirs);
    assert!(ours.contains(&format!("{function};Constant 40 0")));

    // Two graphs: the removed function is drawn only where widths are old bytes.
    let svg = dir.path().join("d.svg");
    let svg_arg = svg.to_str().unwrap();
    ok(&["diff", &big, &small, "--flamegraph", svg_arg]);
    let new_graph = fs::read_to_string(&svg).unwrap();
    let old_graph = fs::read_to_string(dir.path().join("d.old.svg")).unwrap();
    assert!(new_graph.starts_with("<?xml") && old_graph.starts_with("<?xml"));
    assert!(!new_graph.contains("Constraint.function"));
    assert!(old_graph.contains("Constraint.function"));
    assert!(
        new_graph.contains("d.old.svg"),
        "the graph points at its pair"
    );
    ok(&["diff", &big, &small, "--flamegraph", svg_arg]);
    assert_eq!(
        fs::read_to_string(&svg).unwrap(),
        new_graph,
        "deterministic"
    );
}

/// A baseline whose tree has `n` children of the root with long names.
fn wide_baseline(n: usize, bump: u64) -> Vec<u8> {
    let children: Vec<Value> = (0..n)
        .map(|i| {
            json!({"name": format!("Instance.field_with_a_rather_long_name_number_{i:05}"),
                   "bytes": 100 + bump * (i as u64 % 7), "own_bytes": 100 + bump * (i as u64 % 7),
                   "leaves": 1, "children": []})
        })
        .collect();
    let total: u64 = children.iter().map(|c| c["bytes"].as_u64().unwrap()).sum();
    serde_json::to_vec(&json!({
        "schema_version": 1,
        "tool": "memprof test",
        "accounting": "ommx 2.9.3 logical_memory_profile",
        "input": {"name": "wide.pb", "container": "raw", "gzip": false, "file_bytes": 1},
        "layers": [{"index": null, "title": null, "summary": {"variables": 0, "constraints": 0,
            "removed_constraints": 0, "named_functions": 0, "terms": 0, "wire_bytes": 1}}],
        "summary": {},
        "total_bytes": total,
        "tree": {"name": "total", "bytes": total, "own_bytes": 0, "leaves": n, "children": children},
    }))
    .unwrap()
}

#[test]
fn markdown_stays_under_the_comment_limit_and_says_what_was_cut() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &wide_baseline(3000, 0));
    let new = write(dir.path(), "new.json", &wide_baseline(3000, 1));
    let md = ok(&["diff", &old, &new, "-f", "markdown"]);
    assert!(md.chars().count() < 65_536, "{} chars", md.chars().count());
    let shown = md.lines().filter(|l| l.starts_with("| `Instance.")).count();
    let changed = 3000 - 3000 / 7 - 1; // i % 7 == 0 does not change
    assert!(shown > 100 && shown < changed, "{shown}");
    assert!(
        md.contains(&format!(
            "_{} of {} changed paths not shown (to keep this comment under GitHub's limit of 65,536 characters)",
            memprof::units::thousands((changed - shown) as u64),
            memprof::units::thousands(changed as u64)
        )),
        "{}",
        &md[md.len() - 400..]
    );
    let top = ok(&["diff", &old, &new, "-f", "markdown", "--top", "3"]);
    assert_eq!(
        top.lines()
            .filter(|l| l.starts_with("| `Instance."))
            .count(),
        3
    );
    assert!(top.contains("not shown (by --top)"));
    let small = ok(&[
        "diff",
        &oracle("obj_linear.pb"),
        &oracle("constraints_equality.pb"),
        "-f",
        "markdown",
    ]);
    assert!(!small.contains("not shown"));
}

/// Writes a budget file and runs check, returning (code, stdout, stderr).
fn check_with(dir: &Path, budget: &str, args: &[&str]) -> (i32, String, String) {
    let path = write(dir, "budget.yaml", budget.as_bytes());
    let mut all = vec!["check", "--budget", path.as_str()];
    all.extend_from_slice(args);
    run(&all)
}

#[test]
fn each_budget_kind_passes_at_its_boundary_and_fails_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let ks = oracle("kitchen_sink.pb"); // 4298 B; constraints 1235 B; 5 constraints; 20 terms
    let lin = oracle("obj_linear.pb"); // decision variables 483 B over 3 variables
                                       // A name of 1 character costs 24 + 1 B; one more character is +4%.
    let mut short = base();
    short.constraints[0].name = Some("a".into());
    let base_path = write(dir.path(), "base.pb", &short.encode_to_vec());
    let mut longer = base();
    longer.constraints[0].name = Some("ab".into());
    let longer_path = write(dir.path(), "longer.pb", &longer.encode_to_vec());
    let name = "Instance.constraints;Constraint.name";
    let cases: Vec<(String, Vec<&str>, i32)> = vec![
        ("path: total\n    max: 4298 B".into(), vec![&ks], 0),
        ("path: total\n    max: 4297 B".into(), vec![&ks], 1),
        ("path: total\n    max: 4.197265625 KiB".into(), vec![&ks], 0),
        ("path: total\n    max: 4.297 kB".into(), vec![&ks], 1),
        (
            "path: Instance.decision_variables\n    max_per_variable: 161 B".into(),
            vec![&lin],
            0,
        ),
        (
            "path: Instance.decision_variables\n    max_per_variable: 160.9 B".into(),
            vec![&lin],
            1,
        ),
        (
            "path: Instance.constraints\n    max_per_constraint: 247 B".into(),
            vec![&ks],
            0,
        ),
        (
            "path: Instance.constraints\n    max_per_constraint: 246.9 B".into(),
            vec![&ks],
            1,
        ),
        (
            "path: total\n    max_per_term: 214.9 B".into(),
            vec![&ks],
            0,
        ),
        (
            "path: total\n    max_per_term: 214.8 B".into(),
            vec![&ks],
            1,
        ),
        (
            format!("path: \"{name}\"\n    max_growth: 4%"),
            vec![&longer_path, "--baseline", &base_path],
            0,
        ),
        (
            format!("path: \"{name}\"\n    max_growth: 3.9%"),
            vec![&longer_path, "--baseline", &base_path],
            1,
        ),
        (
            format!("path: \"{name}\"\n    max_growth: 0%\n    min_delta: 2 B"),
            vec![&longer_path, "--baseline", &base_path],
            0,
        ),
        (
            format!("path: \"{name}\"\n    max_growth: 0%\n    min_delta: 1 B"),
            vec![&longer_path, "--baseline", &base_path],
            1,
        ),
        // Globs: every constraint path must stay under 1235 B, the largest.
        (
            "path: \"Instance.constraints;**\"\n    max: 1235 B".into(),
            vec![&ks],
            0,
        ),
        (
            "path: \"Instance.constraints;*\"\n    max: 527 B".into(),
            vec![&ks],
            1,
        ),
    ];
    for (rule, args, want) in &cases {
        let budget = format!("rules:\n  - {rule}\n    message: \"look at this\"\n");
        let mut all = args.clone();
        all.extend(["-f", "json"]);
        let (code, out, err) = check_with(dir.path(), &budget, &all);
        assert_eq!(code, *want, "{rule}: {out}{err}");
        let profiled = json_of(&out);
        assert_eq!(profiled["pass"], *want == 0, "{rule}");
        let result = &profiled["files"][0]["results"][0];
        assert_eq!(result["pass"], *want == 0, "{rule}");
        if *want == 1 {
            assert!(!result["failures"].as_array().unwrap().is_empty());
        }
    }
    // The human table names the failure and shows the rule's message.
    let budget = "rules:\n  - path: total\n    max: 4297 B\n    message: \"look at this\"\n";
    let (code, table, _) = check_with(dir.path(), budget, &[&ks]);
    assert_eq!(code, 1);
    assert!(
        table.contains("EXCEEDED") && table.contains("look at this"),
        "{table}"
    );
}

/// The stderr lines after "check failed": what to run next.
fn next_steps(err: &str) -> Vec<&str> {
    let mut lines = err.lines();
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("memprof: check failed:")),
        "{err}"
    );
    lines.collect()
}

/// A file over an absolute limit, unchanged against its own baseline: the
/// hint names the budget's file, line and limit, and `advise`; no diff
/// (which would show no change) and no update (which would change
/// nothing).
#[test]
fn an_absolute_limits_hint_points_at_its_rule_and_at_advise() {
    let dir = tempfile::tempdir().unwrap();
    let moderate = oracle("moderate.pb");
    let baselines = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/baselines");
    let budget = "# what loading may take\nrules:\n  - path: total\n    max_growth: 5%\n  \
                  - path: total\n    measure: real\n    max: 200 KiB\n";
    let (code, _, err) = check_with(dir.path(), budget, &[&moderate, "--baseline", baselines]);
    assert_eq!(code, 1, "{err}");
    let budget = dir.path().join("budget.yaml");
    let budget = budget.to_str().unwrap();
    assert_eq!(
        next_steps(&err),
        [format!(
            "memprof: {moderate} is over rule 2 at {budget}:5 (total max 200 KiB (real memory: \
             estimated load peak)): to see what would shrink it: memprof advise {moderate}; \
             if the size is intended, raise that limit in the budget"
        )]
    );
    let (code, advice, _) = run(&["advise", &moderate]);
    assert_eq!(code, 0, "the suggested advise runs");
    assert!(!advice.is_empty());
    // Raising the limit there is what makes it pass.
    let raised = fs::read_to_string(budget)
        .unwrap()
        .replace("max: 200 KiB", "max: 1 MiB");
    let (code, _, err) = check_with(dir.path(), &raised, &[&moderate, "--baseline", baselines]);
    assert_eq!((code, err.as_str()), (0, ""));

    // Several limits, no baseline: the first, and how many more.
    let budget = "rules:\n  - path: \"**\"\n    max: 256 B\n    max_per_term: 1 B\n";
    let (code, _, err) = check_with(dir.path(), budget, &[&moderate]);
    assert_eq!(code, 1);
    let steps = next_steps(&err);
    assert_eq!(steps.len(), 1, "{err}");
    assert!(
        steps[0].contains(&format!(
            "is over rule 1 at {}:2 (** max 256 B) and 1 more limit:",
            dir.path().join("budget.yaml").display()
        )) && steps[0].ends_with("raise those limits in the budget"),
        "{err}"
    );
}

/// A file that grew past a max_growth rule against its own baseline in a
/// directory: the rule, the diff that shows why, and an update that is
/// the same check (budget and options kept, the report's destination
/// dropped); running that update makes the check pass.
#[test]
fn a_growth_hint_suggests_an_update_that_keeps_the_check_and_then_passes() {
    let dir = tempfile::tempdir().unwrap();
    let baselines = dir.path().join("baselines");
    fs::create_dir(&baselines).unwrap();
    let model = dir.path().join("model.pb");
    fs::copy(oracle("kitchen_sink.pb"), &model).unwrap();
    let model = model.to_str().unwrap();
    let dir_arg = baselines.to_str().unwrap();
    ok(&["check", model, "--baseline", dir_arg, "--update-baseline"]);
    // The instance grows.
    fs::copy(oracle("moderate.pb"), model).unwrap();
    let budget = "rules:\n  # the whole instance\n  - path: total\n    max_growth: 5%\n  \
                  - path: \"**\"\n    max: 1 MiB\n";
    let profiled = dir.path().join("report.json");
    let args = [
        model,
        "--baseline",
        dir_arg,
        "--max-decompressed",
        "1GiB",
        "-f",
        "json",
        "-o",
        profiled.to_str().unwrap(),
    ];
    let (code, _, err) = check_with(dir.path(), budget, &args);
    assert_eq!(code, 1, "{err}");
    let budget = dir.path().join("budget.yaml");
    let budget = budget.to_str().unwrap();
    let saved = baselines.join("model.pb.json");
    let saved = saved.to_str().unwrap();
    let update = format!(
        "memprof check --budget {budget} {model} --baseline {dir_arg} --max-decompressed 1GiB \
         --update-baseline"
    );
    assert_eq!(
        next_steps(&err),
        [
            format!(
                "memprof: {model} grew past rule 1 at {budget}:3 (total max_growth 5%): \
                 to see why: memprof diff {saved} {model}"
            ),
            format!("memprof: if the growth is intended: {update}"),
        ]
    );
    let (code, diff, _) = run(&["diff", saved, model]);
    assert_eq!(code, 0);
    assert!(
        diff.contains("total:"),
        "the suggested diff shows the growth: {diff}"
    );

    // The update, run as printed: the baseline becomes this model's, and
    // the check passes.
    let words = super::readme::words(&update);
    let words: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    let (code, _, err) = run(&words);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        fs::read_to_string(saved).unwrap(),
        ok(&["inspect", model, "-f", "json"])
    );
    let mut again = vec!["check", "--budget", budget];
    again.extend_from_slice(&args);
    assert_eq!(run(&again).0, 0);
}

#[test]
fn check_exit_codes_and_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ks = oracle("kitchen_sink.pb");
    let lin = oracle("obj_linear.pb");
    let baseline = d.join("ks.json");
    ok(&[
        "inspect",
        &ks,
        "-f",
        "json",
        "-o",
        baseline.to_str().unwrap(),
    ]);
    let baseline = baseline.to_str().unwrap().to_string();

    // The default rule with --baseline alone: the total may not grow.
    assert_eq!(run(&["check", &ks, "--baseline", &baseline]).0, 0);
    assert_eq!(run(&["check", &lin, "--baseline", &baseline]).0, 0);
    let (code, out, err) = run(&["check", &oracle("moderate.pb"), "--baseline", &baseline]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("default") && out.contains("overall: FAIL"),
        "{out}"
    );
    // The verdict, then what to run next: the rule and the diff that shows
    // why, with this run's paths. The baseline is another instance's
    // profile, which an update would overwrite: none is suggested.
    let moderate = oracle("moderate.pb");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [
            "memprof: check failed: 1 of 1 file exceeds a budget".to_string(),
            format!(
                "memprof: {moderate} grew past the default rule (total max_growth 0%): \
                 to see why: memprof diff {baseline} {moderate}"
            ),
            format!(
                "memprof: no --update-baseline suggested: {baseline} is the baseline of {ks}, \
                 not of {moderate}, and would be overwritten"
            ),
        ]
    );
    let (_, diff_out, _) = run(&["diff", &baseline, &moderate]);
    assert!(
        diff_out.contains("total:"),
        "the suggested diff runs: {diff_out}"
    );

    let missing = d.join("nope.json");
    let missing = missing.to_str().unwrap();
    let err = fails(&["check", &ks, "--baseline", missing]);
    assert!(
        err.contains(missing) && err.contains("cannot read"),
        "{err}"
    );
    let broken = write(d, "broken.json", b"{\"schema_version\": 1, \"tree\": ");
    let err = fails(&["check", &ks, "--baseline", &broken]);
    assert!(
        err.contains(&broken) && err.contains("not valid JSON"),
        "{err}"
    );
    let other = write(d, "package.json", b"{\"name\": \"x\"}");
    let err = fails(&["diff", &other, &ks]);
    assert!(err.contains("not a memprof baseline"), "{err}");
    let newer = write(d, "newer.json", b"{\"schema_version\": 7}");
    assert!(fails(&["diff", &newer, &ks]).contains("schema_version 7 is not supported"));

    let no_budget = d.join("none.yaml");
    let err = fails(&["check", &ks, "--budget", no_budget.to_str().unwrap()]);
    assert!(err.contains("none.yaml: cannot read"), "{err}");
    for (text, needle) in [
        (
            "rules:\n  - path: total\n    max: 5 kilobytes\n",
            "unknown unit \"kilobytes\"",
        ),
        (
            "rules:\n  - path: total\n    maximum: 5 B\n",
            "unknown field `maximum`",
        ),
        (
            "rules:\n  - path: total\n    max: lots\n",
            "\"lots\" is not a size",
        ),
        (
            "rules:\n  - path: total\n    max_growth: 5\n",
            "with a % sign",
        ),
        ("rule:\n  - path: total\n", "unknown field `rule`"),
        ("rules: [\n", "invalid budget"),
        ("rules:\n  - path: \"a;;b\"\n    max: 1 B\n", "empty frame"),
    ] {
        let path = write(d, "bad.yaml", text.as_bytes());
        let err = fails(&["check", &ks, "--budget", &path]);
        assert!(err.contains("bad.yaml: invalid budget"), "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let growth = write(
        d,
        "growth.yaml",
        b"rules:\n  - path: total\n    max_growth: 5%\n",
    );
    assert!(fails(&["check", &ks, "--budget", &growth]).contains("needs --baseline"));
    // An error in one file is exit 2 even when another file fails its budget.
    let tight = write(d, "tight.yaml", b"rules:\n  - path: total\n    max: 1 B\n");
    let bad = write(d, "bad.pb", &[0x12, 0x7f]);
    let err = fails(&["check", &ks, &bad, "--budget", &tight]);
    assert!(err.contains(&bad), "{err}");
    let err = fails(&[
        "check",
        &format!("{}/*.nothing", d.display()),
        "--budget",
        &tight,
    ]);
    assert!(err.contains("matches no file"), "{err}");
    // Neither --baseline nor --budget: a usage error, also 2.
    assert_eq!(run(&["check", &ks]).0, 2);
}

#[test]
fn several_files_get_one_verdict_each_and_one_overall() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ["obj_linear.pb", "kitchen_sink.pb", "moderate.pb"] {
        fs::copy(oracle(name), d.join(name)).unwrap();
    }
    let budget = write(d, "b.yaml", b"rules:\n  - path: total\n    max: 4 KiB\n");
    let pattern = format!("{}/*.pb", d.display());
    let (code, out, _) = run(&["check", &pattern, "--budget", &budget, "-f", "json"]);
    assert_eq!(code, 1);
    let profiled = json_of(&out);
    let verdicts: Vec<(String, bool)> = profiled["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap();
            let name = Path::new(file).file_name().unwrap().to_str().unwrap();
            (name.to_string(), f["pass"].as_bool().unwrap())
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("kitchen_sink.pb".to_string(), false),
            ("moderate.pb".to_string(), false),
            ("obj_linear.pb".to_string(), true)
        ]
    );
    assert_eq!(profiled["pass"], false);

    // Per-file baselines from a directory, and the GitHub job summary.
    let baselines = d.join("baselines");
    fs::create_dir(&baselines).unwrap();
    for name in ["obj_linear.pb", "kitchen_sink.pb", "moderate.pb"] {
        let out = baselines.join(format!("{name}.json"));
        ok(&[
            "inspect",
            d.join(name).to_str().unwrap(),
            "-f",
            "json",
            "-o",
            out.to_str().unwrap(),
        ]);
    }
    let summary = d.join("summary.md");
    let out = memprof()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["check", &pattern, "--baseline", baselines.to_str().unwrap()])
        .args(["-f", "junit"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let junit = String::from_utf8(out.stdout).unwrap();
    assert!(junit.contains(r#"<testsuites name="memprof check" tests="3" failures="0""#));
    let md = fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("### memprof check: ✅ every budget holds in 3 files"));
    // A file without a baseline in the directory is new: "added", not an error.
    fs::remove_file(baselines.join("moderate.pb.json")).unwrap();
    let table = ok(&["check", &pattern, "--baseline", baselines.to_str().unwrap()]);
    assert!(
        table.contains("moderate.pb (added: no baseline yet)"),
        "{table}"
    );
}

#[test]
fn baselines_work_from_stdin_and_per_layer() {
    let multi = oracle("multi.ommx");
    let baseline = ok(&["inspect", &multi, "-f", "json"]);
    let out = memprof()
        .args(["diff", "-", &multi, "-f", "json"])
        .write_stdin(baseline.clone())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(doc["old"]["name"], "<stdin>");
    assert_eq!(doc["total"]["delta"], 0);
    // --layer picks the same layer out of a multi-layer baseline.
    let dir = tempfile::tempdir().unwrap();
    let saved = write(dir.path(), "multi.json", baseline.as_bytes());
    let doc = json_of(&ok(&["diff", &saved, &multi, "--layer", "1", "-f", "json"]));
    assert_eq!(doc["total"]["delta"], 0);
    assert_eq!(doc["old"]["layers"], "instance layer 1");
    let layer = json_of(&ok(&["inspect", &multi, "--layer", "1", "-f", "json"]));
    assert_eq!(doc["total"]["old_bytes"], layer["total_bytes"]);
    assert!(doc["paths"].as_array().unwrap().len() > 5);
    assert!(fails(&["diff", &saved, &multi, "--layer", "5"]).contains("out of range"));
}

#[test]
fn human_formats_snapshot() {
    let run_here = |args: &[&str]| {
        let out = memprof()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.code().unwrap() <= 1);
        String::from_utf8(out.stdout).unwrap()
    };
    let (old, new) = (
        "fixtures/oracle/obj_linear.pb",
        "fixtures/oracle/constraints_equality.pb",
    );
    insta::assert_snapshot!("diff_table", run_here(&["diff", old, new, "--top", "6"]));
    insta::assert_snapshot!("diff_tree", run_here(&["diff", new, old, "-f", "tree"]));
    insta::assert_snapshot!(
        "diff_markdown",
        run_here(&["diff", old, new, "-f", "markdown", "--top", "4"])
    );
    insta::assert_snapshot!(
        "check_table",
        run_here(&[
            "check",
            "fixtures/oracle/kitchen_sink.pb",
            "fixtures/oracle/moderate.pb",
            "--baseline",
            "fixtures/baselines",
            "--budget",
            "fixtures/budgets/fixtures.yaml",
        ])
    );
}

#[test]
fn diff_and_check_take_the_wire_view_and_families() {
    // Wire view: the totals are the files' sizes.
    let (old, new) = (oracle("obj_linear.pb"), oracle("obj_linear_constant.pb"));
    let doc = json_of(&ok(&["diff", &old, &new, "--view", "wire", "-f", "json"]));
    let size = |f: &str| fs::metadata(f).unwrap().len();
    assert_eq!(doc["total"]["old_bytes"].as_u64().unwrap(), size(&old));
    assert_eq!(doc["total"]["new_bytes"].as_u64().unwrap(), size(&new));
    assert!(doc["paths"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["path"].as_str().unwrap().ends_with("Wire[tag]")));

    // Families: a self-diff is zero and carries the family frames.
    let ks = oracle("kitchen_sink.pb");
    let grouped = json_of(&ok(&["diff", &ks, &ks, "--group-by", "name", "-f", "json"]));
    let paths = grouped["paths"].as_array().unwrap();
    assert!(paths.iter().all(|p| p["delta"] == 0));
    assert!(paths
        .iter()
        .any(|p| p["path"] == "Instance.constraints;cap;Constraint.function"));

    // check --view wire: a budget on the file size, at and one past its boundary.
    let dir = tempfile::tempdir().unwrap();
    let total = size(&ks);
    for (limit, code) in [(total, 0), (total - 1, 1)] {
        let budget = write(
            dir.path(),
            "wire.yaml",
            format!("rules:\n  - path: total\n    max: {limit} B\n").as_bytes(),
        );
        let (got, _, _) = run(&["check", &ks, "--budget", &budget, "--view", "wire"]);
        assert_eq!(got, code, "limit {limit} B against {total} B on disk");
    }
    // A baseline holds only the in-memory view; both views cannot be compared.
    let baseline = write(
        dir.path(),
        "b.json",
        ok(&["inspect", &ks, "-f", "json"]).as_bytes(),
    );
    let err = fails(&["diff", &baseline, &ks, "--view", "wire"]);
    assert!(err.contains("in-memory view only"), "{err}");
    assert!(fails(&["diff", &ks, &ks, "--view", "both"]).contains("--view both"));
}

/// Baselines and instances are told apart by structure: bytes that start
/// like JSON but do not parse are tried as an instance, and a baseline saved
/// with a byte-order mark (UTF-8, or UTF-16 as PowerShell's `>` writes) reads.
#[test]
fn inputs_that_look_like_the_other_kind_are_read_as_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let instance = base().encode_to_vec();
    // An empty unknown group (field 15) first: the file starts with `{|`.
    let braced = [&[0x7b, 0x7c][..], &instance].concat();
    // A 123-byte description first: the file starts `\n{`, JSON after a blank.
    let description = pb::instance::Description {
        name: Some("d".repeat(121)),
        ..Default::default()
    };
    let described = pb::Instance {
        description: Some(description),
        ..base()
    }
    .encode_to_vec();
    assert_eq!(&described[..2], &[0x0a, 0x7b]);
    let plain = write(dir.path(), "plain.pb", &instance);
    for (name, bytes) in [("braced.pb", &braced), ("described.pb", &described)] {
        let path = write(dir.path(), name, bytes);
        let doc = json_of(&ok(&["diff", &path, &path, "--format", "json"]));
        assert_eq!(doc["old"]["layers"], "raw instance", "{name}");
        assert_eq!(doc["old"]["baseline_of"], Value::Null, "{name}");
    }
    let path = dir.path().join("braced.pb");
    let doc = json_of(&ok(&[
        "diff",
        &plain,
        path.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(doc["total"]["delta"], 0, "{doc}");

    let baseline = ok(&["inspect", &plain, "--format", "json"]);
    let utf8_bom = [&[0xef, 0xbb, 0xbf][..], baseline.as_bytes()].concat();
    let utf16: Vec<u8> = [0xfeff_u16]
        .into_iter()
        .chain(baseline.encode_utf16())
        .flat_map(u16::to_le_bytes)
        .collect();
    for (name, bytes) in [("bom.json", utf8_bom), ("utf16.json", utf16)] {
        let path = write(dir.path(), name, &bytes);
        let doc = json_of(&ok(&["diff", &path, &plain, "--format", "json"]));
        assert_ne!(doc["old"]["baseline_of"], Value::Null, "{name}");
        assert_eq!(doc["total"]["delta"], 0, "{name}");
    }

    // Text that is neither keeps the JSON error.
    let broken = write(dir.path(), "broken.json", b"{\"schema_version\": ");
    let err = fails(&["diff", &broken, &plain]);
    assert!(err.contains("not valid JSON"), "{err}");
}

/// `measure: real` budgets the estimated load peak (the figure `inspect`'s
/// JSON gives the layer), passing at it and failing one byte under it;
/// growth against a baseline compares the baselines' estimates; a path
/// other than `total` is refused.
#[test]
fn a_real_memory_budget_holds_the_estimated_load_peak() {
    let dir = tempfile::tempdir().unwrap();
    let ks = oracle("kitchen_sink.pb");
    let (_, out, _) = run(&["inspect", &ks, "--format", "json"]);
    let doc = json_of(&out);
    let peak = doc["layers"][0]["real_memory"]["load_peak_bytes"]
        .as_u64()
        .unwrap();
    assert!(peak > doc["total_bytes"].as_u64().unwrap());
    let baseline = write(dir.path(), "ks.json", out.as_bytes());
    for (limit, code) in [(peak, 0), (peak - 1, 1)] {
        let budget = format!("rules:\n  - path: total\n    measure: real\n    max: {limit} B\n");
        let path = write(dir.path(), "budget.yaml", budget.as_bytes());
        let (got, out, _) = run(&["check", &ks, "--budget", &path, "--format", "json"]);
        assert_eq!(got, code, "{out}");
        let result = &json_of(&out)["files"][0]["results"][0];
        assert_eq!(result["worst"]["new_bytes"].as_u64(), Some(peak));
        assert!(result["limit_text"]
            .as_str()
            .unwrap()
            .contains("real memory"));
    }
    let growth = "rules:\n  - path: total\n    measure: real\n    max_growth: 0%\n";
    let path = write(dir.path(), "growth.yaml", growth.as_bytes());
    let args = ["check", &ks, "--budget", &path, "--baseline", &baseline];
    assert_eq!(run(&args).0, 0);
    let bad = "rules:\n  - path: Instance.constraints\n    measure: real\n    max: 1 GiB\n";
    let path = write(dir.path(), "bad.yaml", bad.as_bytes());
    let (code, _, err) = run(&["check", &ks, "--budget", &path]);
    assert_eq!(code, 2);
    assert!(err.contains("its path must be \"total\""), "{err}");
}
