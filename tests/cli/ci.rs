//! `memprof check` as CI glue: new instances are "added", baselines are
//! refreshed atomically, a warn-only mode, and per-entity budgets per layer.

use std::fs;
use std::path::Path;

use super::{memprof, ok, oracle};

fn check(args: &[&str]) -> (i32, String, String) {
    let out = memprof().arg("check").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn an_instance_without_a_baseline_in_the_directory_is_added() {
    let dir = tempfile::tempdir().unwrap();
    let baselines = dir.path().join("baselines");
    fs::create_dir(&baselines).unwrap();
    let ks = oracle("kitchen_sink.pb");
    let (code, json, _) = check(&[&ks, "--baseline", s(&baselines), "-f", "json"]);
    assert_eq!(code, 0);
    let profiled: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(profiled["pass"], true);
    assert_eq!(profiled["files"][0]["added"], true);
    assert_eq!(profiled["files"][0]["baseline"], serde_json::Value::Null);
    let (code, table, _) = check(&[&ks, "--baseline", s(&baselines)]);
    assert_eq!(code, 0);
    assert!(
        table.contains("kitchen_sink.pb (added: no baseline yet)"),
        "{table}"
    );
    // A budget's absolute limits still apply to an added instance.
    let budget = dir.path().join("budget.yaml");
    fs::write(
        &budget,
        "rules:\n  - path: total\n    max: 1 KiB\n  - path: total\n    max_growth: 0%\n",
    )
    .unwrap();
    let (code, _, _) = check(&[&ks, "--baseline", s(&baselines), "--budget", s(&budget)]);
    assert_eq!(
        code, 1,
        "max 1 KiB fails on 4.2 KiB even without a baseline"
    );
}

#[test]
fn update_baseline_warn_only_and_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let baselines = dir.path().join("baselines");
    fs::create_dir(&baselines).unwrap();
    let model = dir.path().join("model.pb");
    fs::copy(oracle("obj_linear.pb"), &model).unwrap();

    // The first run records the baseline.
    let (code, _, stderr) = check(&[s(&model), "--baseline", s(&baselines), "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("baseline of"), "{stderr}");
    let saved = baselines.join("model.pb.json");
    assert_eq!(
        fs::read_to_string(&saved).unwrap(),
        ok(&["inspect", s(&model), "-f", "json"])
    );
    let entries: Vec<_> = fs::read_dir(&baselines).unwrap().collect();
    assert_eq!(entries.len(), 1, "no temporary file is left behind");
    let (code, _, _) = check(&[s(&model), "--baseline", s(&baselines)]);
    assert_eq!(code, 0);

    // The instance grows: a regression.
    fs::copy(oracle("kitchen_sink.pb"), &model).unwrap();
    let (code, profiled, _) = check(&[s(&model), "--baseline", s(&baselines)]);
    assert_eq!(code, 1);
    let (code, warned, stderr) = check(&[s(&model), "--baseline", s(&baselines), "--warn-only"]);
    assert_eq!(code, 0);
    assert_eq!(
        warned, profiled,
        "--warn-only changes the exit status, not the report"
    );
    assert!(
        stderr.contains("memprof: warning: 1 of 1 file exceeds a budget (--warn-only: exit 0)"),
        "{stderr}"
    );

    // Accepting it.
    let (code, _, _) = check(&[s(&model), "--baseline", s(&baselines), "--update-baseline"]);
    assert_eq!(code, 0);
    assert_eq!(
        fs::read_to_string(&saved).unwrap(),
        ok(&["inspect", s(&model), "-f", "json"])
    );
    let (code, _, _) = check(&[s(&model), "--baseline", s(&baselines)]);
    assert_eq!(code, 0);

    // A single baseline file is updated in place, or created.
    let single = dir.path().join("single.json");
    let (code, _, stderr) = check(&[s(&model), "--baseline", s(&single), "--update-baseline"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        fs::read_to_string(&single).unwrap(),
        fs::read_to_string(&saved).unwrap()
    );
    let out = memprof()
        .args(["check", s(&model), "--update-baseline"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "--update-baseline needs --baseline"
    );
}

/// `max_per_constraint` on a multi-layer archive divides each layer's bytes
/// by that layer's constraints, not by the constraints of all layers.
#[test]
fn per_entity_budgets_apply_per_layer() {
    let dir = tempfile::tempdir().unwrap();
    let budget = dir.path().join("budget.yaml");
    fs::write(
        &budget,
        "rules:\n  - path: \"*;Instance.constraints\"\n    max_per_constraint: 1 B\n",
    )
    .unwrap();
    let multi = oracle("multi.ommx");
    let (code, json, _) = check(&[&multi, "--budget", s(&budget), "-f", "json"]);
    assert_eq!(code, 1);
    let profiled: serde_json::Value = serde_json::from_str(&json).unwrap();
    let profile: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", &multi, "-f", "json"])).unwrap();
    let layer_constraints: Vec<u64> = profile["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["summary"]["constraints"].as_u64().unwrap())
        .collect();
    assert_eq!(layer_constraints, [5, 0, 3]);
    let failures = profiled["files"][0]["results"][0]["failures"]
        .as_array()
        .unwrap();
    let measured: Vec<&str> = failures
        .iter()
        .map(|f| f["measured"].as_str().unwrap())
        .collect();
    assert_eq!(
        measured,
        [
            "247.0 B per constraint (1,235 B over 5 constraints)",
            "233.0 B per constraint (699 B over 3 constraints)"
        ]
    );
}

fn repo_file(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The GitLab snippet is the one docs/ci.md shows, and its memprof line is
/// a valid command line asking for JUnit.
#[test]
fn the_gitlab_snippet_is_in_the_ci_page_and_parses() {
    use clap::Parser;
    let snippet = repo_file("ci/memprof.gitlab-ci.yml");
    assert!(repo_file("docs/ci.md").contains(&format!("```yaml\n{snippet}```")));
    let ci: serde_yaml::Value = serde_yaml::from_str(&snippet).unwrap();
    let job = &ci["memprof-check"];
    assert_eq!(
        job["artifacts"]["reports"]["junit"].as_str(),
        Some("memprof-junit.xml")
    );
    let check = job["script"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .find(|l| l.starts_with("memprof check"))
        .unwrap();
    let args = super::readme::words(check);
    memprof::cli::Cli::try_parse_from(&args).unwrap();
    assert!(check.contains("--format junit -o memprof-junit.xml"));
}
