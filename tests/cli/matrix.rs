//! Every subcommand in every output format on the bundled fixtures, pinned
//! as reviewed snapshots: what users read must not change by accident
//! (restructuring the code, in particular, must leave every byte as is).

use super::memprof;

const KITCHEN: &str = "fixtures/oracle/kitchen_sink.pb";
const MODERATE: &str = "fixtures/oracle/moderate.pb";
const MULTI: &str = "fixtures/oracle/multi.ommx";
const BASELINES: &str = "fixtures/baselines";
const BUDGET: &str = "fixtures/budgets/fixtures.yaml";

/// Runs memprof from the repository root (so paths in the output are the
/// relative ones above) and returns stdout; `code` is the expected status.
fn run_with(code: i32, args: &[&str]) -> String {
    let out = memprof()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "memprof {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn run(args: &[&str]) -> String {
    run_with(0, args)
}

/// The per-file time cells of a table (`0.087 s`) as `T`, so the snapshot
/// pins everything else.
fn mask_times(text: &str) -> String {
    let mask_cell = |cell: &str| {
        let value = cell.trim().trim_end_matches('│').trim();
        match value.strip_suffix(" s") {
            Some(number) if number.parse::<f64>().is_ok() => {
                cell.replacen(value, &format!("{:>width$}", "T", width = value.len()), 1)
            }
            _ => cell.to_string(),
        }
    };
    text.lines()
        .map(|line| line.split('┆').map(mask_cell).collect::<Vec<_>>().join("┆"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn inspect_in_every_format() {
    for format in ["folded", "tree", "table", "json", "yaml"] {
        insta::assert_snapshot!(
            format!("inspect_{format}"),
            // --all: the whole tree, as before the default cut.
            run(&["inspect", KITCHEN, "--format", format, "--all"])
        );
    }
    insta::assert_snapshot!(
        "inspect_archive_tree",
        run(&["inspect", MULTI, "--format", "tree", "--all"])
    );
    insta::assert_snapshot!(
        "inspect_archive_json",
        run(&["inspect", MULTI, "--format", "json"])
    );
    insta::assert_snapshot!(
        "inspect_two_files_table",
        mask_times(&run(&[
            "inspect", KITCHEN, MODERATE, "--format", "table", "--top", "5"
        ]))
    );
    insta::assert_snapshot!(
        "inspect_wire_folded",
        run(&["inspect", KITCHEN, "--view", "wire", "--format", "folded"])
    );
    insta::assert_snapshot!(
        "inspect_group_by_name_tree",
        run(&[
            "inspect",
            MODERATE,
            "--group-by",
            "name",
            "--format",
            "tree",
            "--depth",
            "3",
            "--all"
        ])
    );
    // What `memprof inspect FILE` shows: a screenful.
    insta::assert_snapshot!("inspect_default_tree", run(&["inspect", MULTI]));
    // speedscope's file, one line of JSON as written (tests/cli/viewers.rs
    // reads it back).
    insta::assert_snapshot!(
        "inspect_speedscope",
        run(&["inspect", KITCHEN, "--format", "speedscope"])
    );
}

#[test]
fn flamegraph_svg() {
    let svg = run(&["flamegraph", KITCHEN, "-o", "-"]);
    assert!(svg.starts_with("<?xml"), "{}", &svg[..svg.len().min(200)]);
    insta::assert_snapshot!("flamegraph_svg", svg);
    insta::assert_snapshot!(
        "flamegraph_reverse_svg",
        run(&["flamegraph", KITCHEN, "--reverse", "-o", "-"])
    );
}

#[test]
fn ls_in_every_format() {
    for format in ["table", "json"] {
        insta::assert_snapshot!(
            format!("ls_{format}"),
            run(&["ls", MULTI, "--format", format])
        );
    }
}

#[test]
fn diff_in_every_format() {
    let old = "fixtures/baselines/moderate.pb.json";
    for format in ["table", "tree", "json", "markdown", "folded"] {
        insta::assert_snapshot!(
            format!("diff_{format}"),
            run(&["diff", old, KITCHEN, "--format", format])
        );
    }
}

#[test]
fn check_in_every_format() {
    for format in ["table", "json", "markdown", "junit"] {
        insta::assert_snapshot!(
            format!("check_{format}"),
            run(&[
                "check",
                KITCHEN,
                MODERATE,
                MULTI,
                "--baseline",
                BASELINES,
                "--budget",
                BUDGET,
                "--format",
                format,
            ])
        );
    }
    // A budget that fails: exit 1, and the report says which rule.
    let dir = tempfile::tempdir().unwrap();
    let tight = dir.path().join("tight.yaml");
    std::fs::write(&tight, "rules:\n  - path: total\n    max: 1 KiB\n").unwrap();
    let profiled = run_with(1, &["check", KITCHEN, "--budget", tight.to_str().unwrap()]);
    insta::assert_snapshot!(
        "check_failing_table",
        profiled.replace(dir.path().to_str().unwrap(), "[TMP]")
    );
}

#[test]
fn drill_down_commands_in_every_format() {
    for format in ["table", "json", "yaml"] {
        insta::assert_snapshot!(
            format!("top_{format}"),
            run(&["top", MODERATE, "-n", "5", "--format", format])
        );
        insta::assert_snapshot!(
            format!("stats_{format}"),
            run(&["stats", MODERATE, "--format", format])
        );
        insta::assert_snapshot!(
            format!("explain_{format}"),
            run(&[
                "explain",
                KITCHEN,
                "Instance.decision_variables",
                "--format",
                format
            ])
        );
        insta::assert_snapshot!(
            format!("advise_{format}"),
            run(&["advise", KITCHEN, "--format", format])
        );
    }
}
