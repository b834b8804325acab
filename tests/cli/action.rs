//! The GitHub Action's step scripts (`ci/action/`), run as the Action runs
//! them, against a release served from a local directory (file:// URLs,
//! no network), the memprof just built, and a stand-in for `gh`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::oracle;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("ci/action")
        .join(name)
}

/// A runner's environment: its temp dir, the files GitHub reads outputs and
/// PATH additions from, and a PATH whose `memprof` (and `gh`) are this
/// test's.
struct Runner {
    dir: tempfile::TempDir,
}

impl Runner {
    fn new() -> Self {
        let runner = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        for sub in ["temp", "bin"] {
            fs::create_dir(runner.path(sub)).unwrap();
        }
        runner
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, name: &str, env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap()
        );
        Command::new("bash")
            .arg(script(name))
            .env("PATH", path)
            .env("RUNNER_TEMP", self.path("temp"))
            .env("GITHUB_OUTPUT", self.path("output"))
            .env("GITHUB_PATH", self.path("github_path"))
            .env("GITHUB_STEP_SUMMARY", self.path("summary"))
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// The memprof of this build as the runner's `memprof`.
    fn with_memprof(self) -> Self {
        let link = self.path("bin/memprof");
        std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("memprof"), link).unwrap();
        self
    }
}

/// A release v1.2.3 as dist lays it out: `memprof-<target>.tar.xz` holding
/// `memprof-<target>/memprof`, and its `.sha256`, under
/// `<root>/download/v1.2.3/`. Its memprof is a stand-in that only says its
/// version (compressing the real debug binary would take minutes).
fn release(root: &Path, checksum: Option<&str>) -> String {
    let target = "x86_64-unknown-linux-gnu";
    let stage = root.join("stage").join(format!("memprof-{target}"));
    fs::create_dir_all(&stage).unwrap();
    let binary = stage.join("memprof");
    fs::write(&binary, "#!/bin/sh\necho 'memprof 1.2.3'\n").unwrap();
    fs::set_permissions(&binary, fs::Permissions::from_mode(0o755)).unwrap();
    let assets = root.join("releases/download/v1.2.3");
    fs::create_dir_all(&assets).unwrap();
    let archive = assets.join(format!("memprof-{target}.tar.xz"));
    let tar = Command::new("tar")
        .arg("-cJf")
        .arg(&archive)
        .arg("-C")
        .arg(root.join("stage"))
        .arg(format!("memprof-{target}"))
        .status()
        .unwrap();
    assert!(tar.success());
    let sum = Command::new("sha256sum").arg(&archive).output().unwrap();
    let digest = String::from_utf8(sum.stdout).unwrap();
    let digest = checksum.unwrap_or_else(|| digest.split_whitespace().next().unwrap());
    fs::write(
        assets.join(format!("memprof-{target}.tar.xz.sha256")),
        format!("{digest}  memprof-{target}.tar.xz\n"),
    )
    .unwrap();
    format!("file://{}", root.join("releases").display())
}

fn linux_x64<'a>(url: &'a str, version: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("RUNNER_OS", "Linux"),
        ("RUNNER_ARCH", "X64"),
        ("MEMPROF_RELEASES_URL", url),
        ("MEMPROF_VERSION", version),
        ("MEMPROF_REPOSITORY", "someone/memprof"),
    ]
}

#[test]
fn the_released_binary_is_downloaded_checked_and_put_on_the_path() {
    let runner = Runner::new();
    let url = release(&runner.path("server"), None);
    let out = runner.run("install.sh", &linux_x64(&url, "1.2.3"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(runner.read("output"), "fallback=false\n");
    let installed = PathBuf::from(runner.read("github_path").trim()).join("memprof");
    let version = Command::new(installed).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout), "memprof 1.2.3\n");
    // The version may come from the action's tag instead of the input.
    let runner = Runner::new();
    let url = release(&runner.path("server"), None);
    let mut env = linux_x64(&url, "");
    env.push(("ACTION_REF", "v1.2.3"));
    let out = runner.run("install.sh", &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(runner.read("output"), "fallback=false\n");
}

#[test]
fn a_download_that_does_not_match_its_checksum_is_refused() {
    let runner = Runner::new();
    let url = release(&runner.path("server"), Some(&"0".repeat(64)));
    let out = runner.run("install.sh", &linux_x64(&url, "1.2.3"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not match its published SHA-256"),
        "{err}"
    );
    // Neither installed nor built around.
    assert_eq!(runner.read("github_path"), "");
    assert_eq!(runner.read("output"), "");
}

#[test]
fn without_a_released_binary_the_action_builds_memprof() {
    let runner = Runner::new();
    let url = release(&runner.path("server"), None);
    let cases: [(&str, Vec<(&str, &str)>); 3] = [
        ("no such version", linux_x64(&url, "9.9.9")),
        (
            "an unusual runner",
            vec![
                ("RUNNER_OS", "Linux"),
                ("RUNNER_ARCH", "ARM"),
                ("MEMPROF_RELEASES_URL", &url),
                ("MEMPROF_VERSION", "1.2.3"),
            ],
        ),
        (
            "a branch, not a tag",
            vec![
                ("RUNNER_OS", "Linux"),
                ("RUNNER_ARCH", "X64"),
                ("MEMPROF_RELEASES_URL", &url),
                ("ACTION_REF", "main"),
            ],
        ),
    ];
    for (case, env) in cases {
        let _ = fs::remove_file(runner.path("output"));
        let out = runner.run("install.sh", &env);
        assert!(out.status.success(), "{case}");
        let output = runner.read("output");
        assert!(
            output.starts_with("fallback=true\ncache-key="),
            "{case}: {output}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("building memprof with cargo instead"),
            "{case}: {err}"
        );
    }
    assert_eq!(runner.read("github_path"), "");
}

#[test]
fn check_reports_to_the_log_summary_and_comment_with_the_diff_of_what_failed() {
    let runner = Runner::new().with_memprof();
    let baselines = runner.path("baselines");
    fs::create_dir(&baselines).unwrap();
    let moderate = oracle("moderate.pb");
    // A baseline of a smaller instance under moderate.pb's name: it "grew".
    fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/baselines/kitchen_sink.pb.json"),
        baselines.join("moderate.pb.json"),
    )
    .unwrap();
    let env = [
        ("MEMPROF_FILES", moderate.as_str()),
        ("MEMPROF_BASELINE", baselines.to_str().unwrap()),
    ];
    let out = runner.run("check.sh", &env);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(runner.read("output"), "status=1\n");
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(log.contains("### memprof check: ❌"), "{log}");
    assert_eq!(runner.read("summary"), log, "the summary is the report");
    let comment = runner.read("temp/memprof-comment.md");
    assert!(comment.starts_with("<!-- memprof-check -->\n### memprof check: ❌"));
    assert!(comment.contains("<details><summary>Which paths changed in <code>"));
    assert!(comment.contains("moderate.pb"), "{comment}");
    // The log's update is the check as a user would run it: the action's
    // JSON report, a runner's temporary file, is not part of it.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "memprof: if the growth is intended: memprof check {moderate} --baseline {} \
             --update-baseline\n",
            baselines.display()
        )),
        "{err}"
    );

    // Passing: a report, no diff; warn-only: exit 0 with the diff.
    let runner = Runner::new().with_memprof();
    let out = runner.run(
        "check.sh",
        &[
            ("MEMPROF_FILES", moderate.as_str()),
            (
                "MEMPROF_BASELINE",
                concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/baselines"),
            ),
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let comment = runner.read("temp/memprof-comment.md");
    assert!(comment.contains("### memprof check: ✅"), "{comment}");
    assert!(!comment.contains("<details>"), "{comment}");
    let runner = Runner::new().with_memprof();
    let mut warn = env.to_vec();
    warn.push(("MEMPROF_WARN_ONLY", "true"));
    let out = runner.run("check.sh", &warn);
    assert_eq!(out.status.code(), Some(0));
    assert!(runner.read("temp/memprof-comment.md").contains("<details>"));

    // Over an absolute limit, unchanged against its baseline: no diff,
    // which would show nothing.
    let runner = Runner::new().with_memprof();
    let budget = runner.path("budget.yaml");
    fs::write(&budget, "rules:\n  - path: total\n    max: 1 KiB\n").unwrap();
    let out = runner.run(
        "check.sh",
        &[
            ("MEMPROF_FILES", moderate.as_str()),
            (
                "MEMPROF_BASELINE",
                concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/baselines"),
            ),
            ("MEMPROF_BUDGET", budget.to_str().unwrap()),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let comment = runner.read("temp/memprof-comment.md");
    assert!(comment.contains("### memprof check: ❌"), "{comment}");
    assert!(!comment.contains("<details>"), "{comment}");
}

/// The repository's own fixtures against their committed baselines and
/// budget, a pattern among the files as CI configurations pass them.
#[test]
fn check_passes_the_repositorys_fixtures_as_ci_runs_them() {
    let runner = Runner::new().with_memprof();
    let root = env!("CARGO_MANIFEST_DIR");
    let files = format!("{root}/fixtures/oracle/kitchen_*.pb {root}/fixtures/oracle/multi.ommx");
    let baselines = format!("{root}/fixtures/baselines");
    let budget = format!("{root}/fixtures/budgets/fixtures.yaml");
    let out = runner.run(
        "check.sh",
        &[
            ("MEMPROF_FILES", files.as_str()),
            ("MEMPROF_BASELINE", baselines.as_str()),
            ("MEMPROF_BUDGET", budget.as_str()),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        runner
            .read("summary")
            .starts_with("### memprof check: ✅ every budget holds in 2 files"),
        "{}",
        runner.read("summary")
    );
}

#[test]
fn an_error_before_any_verdict_fails_with_no_report() {
    let runner = Runner::new().with_memprof();
    let out = runner.run(
        "check.sh",
        &[
            ("MEMPROF_FILES", "nope.ommx"),
            ("MEMPROF_BUDGET", "nope.yaml"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(runner.read("output"), "status=2\n");
    assert!(!runner.path("temp/memprof-comment.md").exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("memprof: error:"));
}

/// A stand-in for `gh` that logs its arguments and answers the comment
/// listing with `listing`.
fn fake_gh(runner: &Runner, listing: &str) {
    failing_gh(runner, listing, "", "");
}

/// [`fake_gh`], failing every call whose arguments hold `call` (none when
/// empty) with `error` on stderr, as gh fails.
fn failing_gh(runner: &Runner, listing: &str, call: &str, error: &str) {
    let gh = runner.path("bin/gh");
    fs::write(
        &gh,
        format!(
            "#!/usr/bin/env bash\n\
             echo \"$*\" >> {log}\n\
             if [[ -n '{call}' && \"$*\" == *'{call}'* ]]; then echo '{error}' >&2; exit 1; fi\n\
             if [[ \"$*\" == *--paginate* ]]; then echo '{listing}'; fi\n",
            log = runner.path("gh.log").display()
        ),
    )
    .unwrap();
    fs::set_permissions(&gh, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_comment_is_posted_once_then_updated_in_place() {
    let runner = Runner::new();
    fs::write(
        runner.path("temp/memprof-comment.md"),
        "<!-- memprof-check -->\nreport",
    )
    .unwrap();
    fs::write(
        runner.path("event.json"),
        r#"{"pull_request": {"number": 7}}"#,
    )
    .unwrap();
    let event = runner.path("event.json");
    let env = [
        ("GITHUB_REPOSITORY", "someone/project"),
        ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
        ("GH_TOKEN", "token"),
    ];
    fake_gh(&runner, "");
    let out = runner.run("comment.sh", &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = runner.read("gh.log");
    assert!(
        log.contains("--method POST repos/someone/project/issues/7/comments"),
        "{log}"
    );

    let _ = fs::remove_file(runner.path("gh.log"));
    fake_gh(&runner, "4242");
    let out = runner.run("comment.sh", &env);
    assert!(out.status.success());
    let log = runner.read("gh.log");
    assert!(
        log.contains("--method PATCH repos/someone/project/issues/comments/4242"),
        "{log}"
    );
    assert!(!log.contains("POST"), "{log}");

    // Not a pull request: nothing posted.
    let _ = fs::remove_file(runner.path("gh.log"));
    fs::write(runner.path("event.json"), r#"{"push": {}}"#).unwrap();
    assert!(runner.run("comment.sh", &env).status.success());
    assert_eq!(runner.read("gh.log"), "");
}

/// A pull request from a fork gets a read-only token: the comment cannot be
/// posted. The step still succeeds (the verdict is the check's) and the
/// job summary says why there is no comment.
#[test]
fn a_comment_the_token_cannot_post_is_skipped_with_the_reason_in_the_summary() {
    let runner = Runner::new();
    fs::write(
        runner.path("temp/memprof-comment.md"),
        "<!-- memprof-check -->\nreport",
    )
    .unwrap();
    fs::write(runner.path("summary"), "### memprof check: ✅\n").unwrap();
    fs::write(
        runner.path("event.json"),
        r#"{"pull_request": {"number": 7,
            "head": {"repo": {"full_name": "contributor/project"}},
            "base": {"repo": {"full_name": "someone/project"}}}}"#,
    )
    .unwrap();
    let event = runner.path("event.json");
    let env = [
        ("GITHUB_REPOSITORY", "someone/project"),
        ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
        ("GH_TOKEN", "read-only"),
    ];
    let forbidden = "HTTP 403: Resource not accessible by integration \
                     (https://api.github.com/repos/someone/project/issues/7/comments)";
    failing_gh(&runner, "", "--method POST", forbidden);
    let out = runner.run("comment.sh", &env);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(runner.read("gh.log").contains("--method POST"));
    assert!(
        err.contains(forbidden),
        "gh's own error is in the log: {err}"
    );
    assert_eq!(
        runner.read("summary"),
        "### memprof check: ✅\n\n\
         memprof: no pull-request comment: the token cannot write to pull requests \
         (a pull request from the fork contributor/project gets a read-only token); \
         the report is above.\n"
    );

    // The same repository without the permission; an update in place too.
    fs::write(runner.path("summary"), "").unwrap();
    fs::write(
        runner.path("event.json"),
        r#"{"pull_request": {"number": 7}}"#,
    )
    .unwrap();
    failing_gh(&runner, "4242", "--method PATCH", forbidden);
    let out = runner.run("comment.sh", &env);
    assert!(out.status.success());
    assert_eq!(
        runner.read("summary"),
        "\nmemprof: no pull-request comment: the token cannot write to pull requests \
         (the workflow needs permissions: pull-requests: write); the report is above.\n"
    );

    // Any other failure of gh, the listing included: its first line says why.
    fs::write(runner.path("summary"), "").unwrap();
    failing_gh(&runner, "", "--paginate", "HTTP 502: Bad Gateway");
    let out = runner.run("comment.sh", &env);
    assert!(out.status.success());
    assert_eq!(
        runner.read("summary"),
        "\nmemprof: no pull-request comment: gh failed: HTTP 502: Bad Gateway; \
         the report is above.\n"
    );
}

/// An action's checkout: install.sh's build inputs, with a README beside
/// them, under `root`.
fn action_checkout(root: &Path) {
    for (path, text) in [
        ("Cargo.lock", "version = 4\n"),
        ("Cargo.toml", "[package]\nname = \"memprof\"\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("README.md", "# memprof\n"),
    ] {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
}

/// The cache key install.sh gives the cargo build when it falls back, for
/// the action checked out at `root`.
fn cache_key(runner: &Runner, root: &Path) -> String {
    let _ = fs::remove_file(runner.path("output"));
    let out = runner.run(
        "install.sh",
        &[
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "X64"),
            ("ACTION_REF", "main"),
            ("GITHUB_ACTION_PATH", root.to_str().unwrap()),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let output = runner.read("output");
    let key = output
        .lines()
        .find_map(|l| l.strip_prefix("cache-key="))
        .unwrap_or_else(|| panic!("no cache-key in {output:?}"));
    key.to_string()
}

/// A cached build is reused exactly while the action's code is the same:
/// the key follows Cargo.lock and the sources, not the docs nor where the
/// runner put the action.
#[test]
fn the_cargo_builds_cache_key_follows_the_actions_code() {
    let runner = Runner::new();
    let root = runner.path("action");
    action_checkout(&root);
    let key = cache_key(&runner, &root);
    let hash = key.strip_prefix("memprof-Linux-X64-").unwrap();
    assert!(
        hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
        "{key}"
    );
    assert_eq!(
        cache_key(&runner, &root),
        key,
        "the same code, the same key"
    );
    let elsewhere = runner.path("elsewhere");
    fs::rename(&root, &elsewhere).unwrap();
    assert_eq!(cache_key(&runner, &elsewhere), key, "wherever it is");
    fs::rename(&elsewhere, &root).unwrap();
    fs::write(root.join("README.md"), "# memprof, reworded\n").unwrap();
    assert_eq!(cache_key(&runner, &root), key, "the docs are not built");

    fs::write(
        root.join("Cargo.lock"),
        "version = 4\n# a dependency moved\n",
    )
    .unwrap();
    let lock_moved = cache_key(&runner, &root);
    assert_ne!(lock_moved, key, "Cargo.lock changed");
    fs::write(root.join("src/main.rs"), "fn main() { println!(); }\n").unwrap();
    let source_moved = cache_key(&runner, &root);
    assert_ne!(source_moved, lock_moved, "a source changed");
    fs::write(root.join("src/new.rs"), "").unwrap();
    assert_ne!(
        cache_key(&runner, &root),
        source_moved,
        "a source was added"
    );

    // This repository as the action: the script finds its own root.
    let _ = fs::remove_file(runner.path("output"));
    let out = runner.run(
        "install.sh",
        &[
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "X64"),
            ("ACTION_REF", "main"),
        ],
    );
    assert!(out.status.success());
    let output = runner.read("output");
    assert!(
        output
            .lines()
            .filter_map(|l| l.strip_prefix("cache-key=memprof-Linux-X64-"))
            .any(|hash| hash.len() == 64),
        "{output}"
    );
}

fn yaml(path: &str) -> serde_yaml::Value {
    let text = fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The Action, the release workflows and the sample CI files are valid
/// YAML; the Action's scripts exist; the samples pass the Action only
/// inputs it has.
#[test]
fn the_action_workflows_and_samples_hold_together() {
    let action = yaml("action.yml");
    let inputs: Vec<&str> = action["inputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap())
        .collect();
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| s["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no step {name}"))
    };
    // The cache key comes from install.sh, which can read the action's
    // files (hashFiles sees only the workspace); the verdict runs after
    // any step that failed.
    assert_eq!(
        step("Restore memprof built earlier")["with"]["key"].as_str(),
        Some("${{ steps.install.outputs.cache-key }}")
    );
    assert_eq!(step("Verdict")["if"].as_str(), Some("always()"));
    for step in steps {
        if let Some(run) = step["run"].as_str() {
            if let Some(rest) = run.split("$GITHUB_ACTION_PATH/").nth(1) {
                let script = rest.trim_end_matches(['"', '\'']);
                assert!(
                    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                        .join(script)
                        .is_file(),
                    "{script}"
                );
            }
        }
    }
    for workflow in [
        ".github/workflows/release.yml",
        ".github/workflows/build-wheels.yml",
        ".github/workflows/publish-pypi.yml",
        ".github/workflows/publish-crate.yml",
        "ci/memprof.gitlab-ci.yml",
    ] {
        yaml(workflow);
    }
    for sample in [
        "ci/examples/github-committed-baselines.yml",
        "ci/examples/github-default-branch-baselines.yml",
    ] {
        let doc = yaml(sample);
        let mut uses_action = false;
        for job in doc["jobs"].as_mapping().unwrap().values() {
            for step in job["steps"].as_sequence().unwrap() {
                let Some(uses) = step["uses"].as_str() else {
                    continue;
                };
                if uses.contains("/memprof@") {
                    uses_action = true;
                    for key in step["with"].as_mapping().unwrap().keys() {
                        let key = key.as_str().unwrap();
                        assert!(inputs.contains(&key), "{sample}: no input {key}");
                    }
                }
            }
        }
        assert!(uses_action, "{sample} uses the Action");
    }
}
