//! Catalogue cases for the errors of the commands around the decoder:
//! argument patterns, stdin, baselines and budgets (`diff`, `check`), the
//! `--view both` and `explain` restrictions.

use std::fs;
use std::path::Path;

use super::{write, Case, Expect};
use crate::{fixtures, gzip, oracle};

/// A case running `args(dir)`, where the closure writes what it needs.
fn command_case(
    kind: &'static str,
    name: &'static str,
    args: impl Fn(&Path) -> Vec<String> + 'static,
    stdin: Option<Vec<u8>>,
    needle: &'static str,
) -> Case {
    Case {
        kind: Some(kind),
        name,
        setup: Box::new(args),
        stdin,
        fsize_limit: None,
        expect: Expect::Error(needle),
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// The committed baseline of `kitchen_sink.pb`.
fn committed_baseline() -> String {
    let path = fixtures().join("baselines/kitchen_sink.pb.json");
    path.to_str().unwrap().to_string()
}

fn baseline_json() -> serde_json::Value {
    serde_json::from_slice(&fs::read(committed_baseline()).unwrap()).unwrap()
}

/// A case diffing the committed baseline against its instance, with `extra`
/// arguments.
fn committed_baseline_case(
    kind: &'static str,
    name: &'static str,
    extra: &'static [&'static str],
    needle: &'static str,
) -> Case {
    command_case(
        kind,
        name,
        move |_| {
            let mut args = vec![
                "diff".into(),
                committed_baseline(),
                oracle("kitchen_sink.pb"),
            ];
            args.extend(strings(extra));
            args
        },
        None,
        needle,
    )
}

/// A case diffing a baseline, edited by `edit`, against the instance it
/// was made from.
fn baseline_case(
    kind: &'static str,
    name: &'static str,
    edit: impl Fn(&mut serde_json::Value) + 'static,
    needle: &'static str,
) -> Case {
    command_case(
        kind,
        name,
        move |dir| {
            let mut doc = baseline_json();
            edit(&mut doc);
            let baseline = write(dir, "old.json", &serde_json::to_vec(&doc).unwrap());
            vec!["diff".into(), baseline, oracle("kitchen_sink.pb")]
        },
        None,
        needle,
    )
}

/// A case checking the kitchen sink against a budget file with this text.
fn budget_case(
    kind: &'static str,
    name: &'static str,
    budget: &'static str,
    needle: &'static str,
) -> Case {
    command_case(
        kind,
        name,
        move |dir| {
            let budget = write(dir, "budget.yaml", budget.as_bytes());
            strings(&["check", &oracle("kitchen_sink.pb"), "--budget", &budget])
        },
        None,
        needle,
    )
}

pub(super) fn cases() -> Vec<Case> {
    let kitchen = fs::read(oracle("kitchen_sink.pb")).unwrap();
    let moderate = fs::read(oracle("moderate.pb")).unwrap();
    assert!(
        moderate.len() > 1024,
        "the stdin limit case needs more than 1 KiB"
    );
    vec![
        command_case(
            "pattern-no-match",
            "a quoted pattern that matches nothing",
            |dir| {
                let pattern = dir.join("runs/*.ommx");
                strings(&["inspect", pattern.to_str().unwrap()])
            },
            None,
            "runs/*.ommx: the pattern matches no file",
        ),
        command_case(
            "stdin-twice",
            "inspect - -",
            |_| strings(&["inspect", "-", "-"]),
            Some(kitchen.clone()),
            "-: standard input can be read only once",
        ),
        command_case(
            "stdin-twice",
            "diff - -",
            |_| strings(&["diff", "-", "-"]),
            Some(kitchen.clone()),
            "-: standard input can be read only once",
        ),
        command_case(
            "stream-too-long",
            "diff reading more stdin than --max-decompressed",
            |_| {
                let new = oracle("kitchen_sink.pb");
                strings(&["diff", "-", &new, "--max-decompressed", "1KiB"])
            },
            Some(moderate.clone()),
            "<stdin>: the input stream is longer than 1KiB",
        ),
        command_case(
            "decompressed-too-large",
            "check of gzip input past its --max-decompressed",
            {
                let packed = gzip(&moderate);
                move |dir| {
                    let file = write(dir, "moderate.pb.gz", &packed);
                    strings(&["check", &file, "--baseline", &file, "--max-decompressed", "1KiB"])
                }
            },
            None,
            "moderate.pb.gz: gzip data decompresses to more than 1KiB",
        ),
        command_case(
            "io",
            "a budget file that does not exist",
            |dir| {
                let budget = dir.join("missing.yaml");
                let file = oracle("kitchen_sink.pb");
                strings(&["check", &file, "--budget", budget.to_str().unwrap()])
            },
            None,
            "missing.yaml: cannot read: No such file or directory",
        ),
        command_case(
            "baseline-syntax",
            "a baseline cut short",
            |dir| {
                let text = fs::read(committed_baseline()).unwrap();
                let baseline = write(dir, "cut.json", &text[..text.len() / 2]);
                vec!["diff".into(), baseline, oracle("kitchen_sink.pb")]
            },
            None,
            "cut.json: not valid JSON: EOF while parsing",
        ),
        baseline_case(
            "not-a-baseline",
            "JSON without a schema_version",
            |doc| *doc = serde_json::json!({"hello": "world"}),
            "JSON but not a memprof baseline (the output of `memprof inspect --format json`): it has no schema_version",
        ),
        baseline_case(
            "not-a-baseline",
            "a baseline without its tree",
            |doc| {
                doc.as_object_mut().unwrap().remove("tree");
            },
            "not a memprof baseline (the output of `memprof inspect --format json`): missing field `tree`",
        ),
        baseline_case(
            "baseline-version",
            "a baseline from a future memprof",
            |doc| doc["schema_version"] = 999.into(),
            "baseline schema_version 999 is not supported",
        ),
        baseline_case(
            "baseline-accounting",
            "a baseline made with other accounting",
            |doc| doc["accounting"] = "ommx 3.0.0 logical_memory_profile".into(),
            "baseline was made with accounting \"ommx 3.0.0 logical_memory_profile\", this memprof uses \"ommx 2.9.3 logical_memory_profile\"",
        ),
        baseline_case(
            "baseline-malformed",
            "a baseline whose total does not add up",
            |doc| {
                let total = doc["total_bytes"].as_u64().unwrap();
                doc["total_bytes"] = (total + 1).into();
            },
            "malformed baseline: total_bytes is",
        ),
        committed_baseline_case(
            "baseline-too-large",
            "a baseline larger than --max-decompressed",
            &["--max-decompressed", "1KiB"],
            "kitchen_sink.pb.json: the baseline is larger than 1KiB, the --max-decompressed limit",
        ),
        committed_baseline_case(
            "baseline-wire",
            "a baseline compared in the wire view",
            &["--view", "wire"],
            "a baseline holds the in-memory view only; the wire view (--view wire, both) needs the instance itself",
        ),
        committed_baseline_case(
            "layer-out-of-range",
            "--layer past a baseline's layers",
            &["--layer", "3"],
            "--layer 3 is out of range: the baseline has 1 instance layer",
        ),
        budget_case(
            "budget-invalid",
            "a budget size with a unit memprof does not know",
            "rules:\n  - path: total\n    max: 5 kilobytes\n",
            "budget.yaml: invalid budget: rules[0].max: unknown unit \"kilobytes\" in \"5 kilobytes\"",
        ),
        budget_case(
            "budget-invalid",
            "a budget rule with a misspelt key",
            "rules:\n  - path: total\n    max_grwoth: 5%\n",
            "invalid budget: rules[0]: unknown field `max_grwoth`",
        ),
        budget_case(
            "budget-invalid",
            "a budget without rules",
            "rules: []\n",
            "budget.yaml: invalid budget: it has no rules",
        ),
        budget_case(
            "budget-invalid",
            "a budget rule without a limit",
            "rules:\n  - path: total\n    message: hello\n",
            "invalid budget: rule 1 (path \"total\") sets no limit",
        ),
        command_case(
            "budget-invalid",
            "a budget whose YAML aliases expand to gigabytes",
            |dir| {
                // Under 1 MiB on disk; 15,000 copies of a 400 KB message once
                // the aliases are expanded (it took 14 GB before the cap).
                let mut text = format!(
                    "rules:\n  - {{path: total, max: 1 MiB, message: &m \"{}\"}}\n",
                    "x".repeat(400_000)
                );
                text.push_str(&"  - {path: total, max: 1 MiB, message: *m}\n".repeat(15_000));
                let budget = write(dir, "budget.yaml", text.as_bytes());
                strings(&["check", &oracle("kitchen_sink.pb"), "--budget", &budget])
            },
            None,
            "invalid budget: rules[10].message: its text adds up to more than 4 MiB once YAML aliases are expanded",
        ),
        command_case(
            "budget-too-large",
            "a budget file past the size cap",
            |dir| {
                let mut text = String::from("rules:\n");
                while text.len() <= 1 << 20 {
                    text.push_str("  - {path: \"**;x\", max: 1 MiB}\n");
                }
                let budget = write(dir, "budget.yaml", text.as_bytes());
                strings(&["check", &oracle("kitchen_sink.pb"), "--budget", &budget])
            },
            None,
            "budget.yaml: the budget file is larger than 1048576 bytes, the limit",
        ),
        budget_case(
            "budget-needs-baseline",
            "a growth limit without --baseline",
            "rules:\n  - path: total\n    max_growth: 5%\n",
            "budget.yaml: rule 1 (path \"total\") sets max_growth, which needs --baseline",
        ),
        command_case(
            "update-baseline-not-a-file",
            "check --baseline - --update-baseline",
            |_| {
                let file = oracle("kitchen_sink.pb");
                strings(&["check", &file, "--baseline", "-", "--update-baseline"])
            },
            Some(kitchen.clone()),
            "<stdin>: --update-baseline needs a baseline file to write, not standard input, a pipe or a FIFO",
        ),
        command_case(
            "flamegraph-needs-file",
            "diff --flamegraph -",
            |_| {
                let file = oracle("kitchen_sink.pb");
                strings(&["diff", &file, &file, "--flamegraph", "-"])
            },
            None,
            "--flamegraph needs a file name: it writes two graphs",
        ),
        command_case(
            "output-is-input",
            "--trace naming the input",
            move |dir| {
                let file = write(dir, "k.pb", &kitchen);
                strings(&["--trace", &file, "inspect", &file])
            },
            None,
            "k.pb: refusing to write the output over the input file",
        ),
        command_case(
            "trace-is-output",
            "--trace naming the -o file",
            |dir| {
                let out = dir.join("out.txt");
                let out = out.to_str().unwrap();
                strings(&["--trace", out, "inspect", &oracle("kitchen_sink.pb"), "-o", out])
            },
            None,
            "out.txt: --trace names the same file as the command's output",
        ),
        command_case(
            "view-both-format",
            "--view both with a format other than table",
            |_| {
                let file = oracle("kitchen_sink.pb");
                strings(&["inspect", &file, "--view", "both", "--format", "json"])
            },
            None,
            "--view both is only available with --format table, not --format json",
        ),
        command_case(
            "explain-several-instances",
            "explain on a multi-instance archive",
            |_| strings(&["explain", &oracle("multi.ommx"), "Instance"]),
            None,
            "explain works on one instance at a time and this archive has 3; pick one with --layer",
        ),
        command_case(
            "explain-no-path",
            "explain of a path the profile lacks",
            |_| strings(&["explain", &oracle("kitchen_sink.pb"), "Nope"]),
            None,
            "the profile has no path \"Nope\"",
        ),
    ]
}
