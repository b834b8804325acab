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
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["pass"], true);
    assert_eq!(report["files"][0]["added"], true);
    assert_eq!(report["files"][0]["baseline"], serde_json::Value::Null);
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
    let (code, report, _) = check(&[s(&model), "--baseline", s(&baselines)]);
    assert_eq!(code, 1);
    let (code, warned, stderr) = check(&[s(&model), "--baseline", s(&baselines), "--warn-only"]);
    assert_eq!(code, 0);
    assert_eq!(
        warned, report,
        "--warn-only changes the exit status, not the report"
    );
    assert!(
        stderr.contains("memprof: warning: 1 of 1 file(s) exceed a budget (--warn-only: exit 0)"),
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
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let profile: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", &multi, "-f", "json"])).unwrap();
    let layer_constraints: Vec<u64> = profile["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["summary"]["constraints"].as_u64().unwrap())
        .collect();
    assert_eq!(layer_constraints, [5, 0, 3]);
    let failures = report["files"][0]["results"][0]["failures"]
        .as_array()
        .unwrap();
    let measured: Vec<&str> = failures
        .iter()
        .map(|f| f["measured"].as_str().unwrap())
        .collect();
    assert_eq!(
        measured,
        [
            "247.0 B per constraint (1235 B / 5)",
            "233.0 B per constraint (699 B / 3)"
        ]
    );
}

fn repo_file(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The `run:` script and `env:` keys of the action step named `name`.
fn action_step(name: &str) -> (String, Vec<String>) {
    let action: serde_yaml::Value = serde_yaml::from_str(&repo_file("action.yml")).unwrap();
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let step = steps
        .iter()
        .find(|s| s["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("action.yml has no step {name:?}"));
    let env = step["env"]
        .as_mapping()
        .map(|m| m.keys().map(|k| k.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    (step["run"].as_str().unwrap().to_string(), env)
}

/// Runs the action's check step as the runner would (inputs in its env),
/// with the memprof under test on PATH; returns the exit code and the job
/// summary written.
fn run_action(inputs: &[(&str, &str)]) -> (i32, String) {
    let (script, env_keys) = action_step("memprof check");
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let binary = assert_cmd::cargo::cargo_bin("memprof");
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(&script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path)
        .env("RUNNER_TEMP", dir.path())
        .env("GITHUB_STEP_SUMMARY", &summary);
    for key in &env_keys {
        cmd.env(key, "");
    }
    for (key, value) in inputs {
        assert!(
            env_keys.iter().any(|k| k == key),
            "the step has no env {key}"
        );
        cmd.env(key, value);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        fs::read_to_string(&summary).unwrap_or_default(),
    )
}

#[test]
fn the_github_action_checks_writes_the_job_summary_and_fails_on_regression() {
    let (install, _) = action_step("Install memprof");
    let status = std::process::Command::new("bash")
        .args(["-n", "-c", &install])
        .status()
        .unwrap();
    assert!(status.success());

    // The repository's own fixtures against their committed baselines.
    let (code, summary) = run_action(&[
        (
            "MEMPROF_FILES",
            "fixtures/oracle/kitchen_sink.pb fixtures/oracle/multi.ommx",
        ),
        ("MEMPROF_BASELINE", "fixtures/baselines"),
        ("MEMPROF_BUDGET", "fixtures/budgets/fixtures.yaml"),
    ]);
    assert_eq!(code, 0);
    assert!(
        summary.starts_with("### memprof check: ✅ every budget holds (2 file(s))"),
        "{summary}"
    );

    // A pattern, expanded by memprof, and a regression against a smaller baseline.
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("small.json");
    ok(&[
        "inspect",
        &oracle("obj_linear.pb"),
        "-f",
        "json",
        "-o",
        s(&baseline),
    ]);
    let grown = [
        ("MEMPROF_FILES", "fixtures/oracle/kitchen_*.pb"),
        ("MEMPROF_BASELINE", s(&baseline)),
    ];
    let (code, summary) = run_action(&grown);
    assert_eq!(code, 1, "{summary}");
    assert!(summary.contains("❌"), "{summary}");
    let mut warn = grown.to_vec();
    warn.push(("MEMPROF_WARN_ONLY", "true"));
    let (code, _) = run_action(&warn);
    assert_eq!(code, 0);
}

/// The GitLab snippet is the one the README shows, and its memprof line is
/// a valid command line asking for JUnit.
#[test]
fn the_gitlab_snippet_is_in_the_readme_and_parses() {
    use clap::Parser;
    let snippet = repo_file("ci/memprof.gitlab-ci.yml");
    assert!(repo_file("README.md").contains(&format!("```yaml\n{snippet}```")));
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
