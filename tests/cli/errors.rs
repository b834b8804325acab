//! Issue 45: errors that read well. Text that is not an instance is named
//! as text, with what it looks like; a mistyped command line gets clap's
//! message under `memprof: error:`, and a bare file a tip to inspect it;
//! `inspect` shows a saved baseline instead of refusing it.

use super::{fixtures, memprof};

/// Runs memprof in `dir` and returns its exit status and stderr, asserting
/// nothing on stdout.
fn stderr_in(dir: &std::path::Path, args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let out = memprof()
        .current_dir(dir)
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap();
    assert!(out.stdout.is_empty(), "{args:?}");
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn text_is_named_as_text_with_what_it_looks_like() {
    let readme = std::fs::read(fixtures().join("../README.md")).unwrap();
    let cases: [(&str, &[u8], &str); 8] = [
        ("README.md", &readme, "Markdown text"),
        (
            "badges.md",
            b"[![CI](ci.svg)](ci)\n\nText.\n",
            "Markdown text",
        ),
        (
            "budget.yaml",
            b"# the CI budget\nrules:\n  - path: total\n    max: 1 KiB\n",
            "YAML text",
        ),
        ("sizes.csv", b"id,name,bytes\n1,x,3\n2,y,4\n", "CSV text"),
        (
            "Cargo.toml",
            b"[package]\nname = \"x\"\n",
            "TOML or INI text",
        ),
        ("notes.txt", b"remember the milk\n", "plain text"),
        (
            "page.html",
            b"<!DOCTYPE html>\n<html></html>\n",
            "HTML text",
        ),
        (
            "model.mps",
            b"NAME  M\nROWS\n N  COST\n",
            "an MPS model (text); ",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, text, kind) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        let (code, stderr) = stderr_in(dir.path(), &["inspect", name], b"");
        assert_eq!(code, Some(2), "{name}: {stderr}");
        let want = format!(
            "memprof: error: {name}: not an OMMX instance or archive: the content looks like {kind}"
        );
        if kind.ends_with("; ") {
            assert!(stderr.starts_with(&want), "{stderr}");
        } else {
            assert_eq!(stderr, format!("{want}\n"));
        }
    }
    // Whatever the command, the schema or the way in.
    let want = "not an OMMX instance or archive: the content looks like Markdown text\n";
    let kitchen_sink = fixtures().join("oracle/kitchen_sink.pb");
    for (args, stdin) in [
        (vec!["inspect", "-"], &readme),
        (vec!["inspect", "--schema", "v2", "README.md"], &Vec::new()),
        (vec!["ls", "README.md"], &Vec::new()),
        (
            vec!["diff", kitchen_sink.to_str().unwrap(), "README.md"],
            &Vec::new(),
        ),
        (
            vec!["flamegraph", "README.md", "-o", "out.svg"],
            &Vec::new(),
        ),
    ] {
        let (code, stderr) = stderr_in(dir.path(), &args, stdin);
        let name = if args[1] == "-" {
            "<stdin>"
        } else {
            "README.md"
        };
        assert_eq!(code, Some(2), "{args:?}");
        assert_eq!(
            stderr,
            format!("memprof: error: {name}: {want}"),
            "{args:?}"
        );
    }
}

/// Runs memprof in `dir`: exit status, stdout, stderr.
fn run_in(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = memprof().current_dir(dir).args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

#[test]
fn argument_errors_print_as_clap_prints_them_under_one_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run_in(dir.path(), &["check", "x.pb"]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert_eq!(
        stderr,
        "memprof: error: the following required arguments were not provided:
  <--baseline <B>|--budget <FILE>>

Usage: memprof check <--baseline <B>|--budget <FILE>> <FILE>...

For more information, try '--help'.
"
    );
    let (code, _, stderr) = run_in(dir.path(), &["inspect", "x.pb", "--format", "nope"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "memprof: error: invalid value 'nope' for '--format <FORMAT>'
  [possible values: folded, tree, table, json, yaml, speedscope]

For more information, try '--help'.
"
    );
    // Help and the version still print as they do, on stdout, with 0.
    for args in [["--help"], ["--version"]] {
        let (code, stdout, stderr) = run_in(dir.path(), &args);
        assert_eq!(code, Some(0), "{args:?}");
        assert!(
            stdout.starts_with("memprof") || stdout.starts_with("See where"),
            "{stdout}"
        );
        assert!(stderr.is_empty(), "{stderr}");
    }
}

#[test]
fn a_bare_file_suggests_inspect() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures().join("oracle/kitchen_sink.pb"),
        dir.path().join("moderate.pb"),
    )
    .unwrap();
    std::fs::write(dir.path().join("my problem"), b"").unwrap();
    let usage = "\nUsage: memprof [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.\n";
    for (args, tip) in [
        (vec!["moderate.pb"], "memprof inspect moderate.pb"),
        // The rest of the command line comes along, quoted for the shell.
        (
            vec!["--color", "never", "my problem", "-f", "json"],
            "memprof inspect --color never 'my problem' -f json",
        ),
        // Not there, but named like an instance.
        (vec!["runs/big.ommx"], "memprof inspect runs/big.ommx"),
    ] {
        let (code, stdout, stderr) = run_in(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(stdout.is_empty());
        let word = args.iter().find(|a| a.contains(['.', ' '])).unwrap();
        assert_eq!(
            stderr,
            format!(
                "memprof: error: unrecognized subcommand '{word}'\n\n  \
                 tip: to profile a file, run: {tip}\n{usage}"
            )
        );
    }
    // What names no file keeps clap's message alone.
    let (code, _, stderr) = run_in(dir.path(), &["nothing"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!("memprof: error: unrecognized subcommand 'nothing'\n{usage}")
    );
    // And the tip's command works.
    let (code, stdout, _) = run_in(dir.path(), &["inspect", "moderate.pb"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("Instance"), "{stdout}");
}

/// `inspect` (and `flamegraph`) show a saved baseline as the profile it
/// holds, in every format: the instance's output but for the file's name.
#[test]
fn inspect_shows_a_baseline_as_its_profile() {
    let dir = tempfile::tempdir().unwrap();
    for fixture in ["kitchen_sink.pb", "multi.ommx"] {
        let instance = fixtures().join("oracle").join(fixture);
        let instance = instance.to_str().unwrap();
        let (code, json, _) = run_in(dir.path(), &["inspect", instance, "-f", "json"]);
        assert_eq!(code, Some(0));
        std::fs::write(dir.path().join("saved.json"), &json).unwrap();
        for format in ["tree", "table", "json", "yaml", "folded"] {
            let (_, want, _) = run_in(dir.path(), &["inspect", instance, "-f", format]);
            let (code, got, stderr) = run_in(dir.path(), &["inspect", "saved.json", "-f", format]);
            assert_eq!(code, Some(0), "{fixture} {format}: {stderr}");
            assert_eq!(
                got,
                want.replace(instance, "saved.json"),
                "{fixture} {format}"
            );
        }
        // Read from stdin too, and one layer of it.
        let out = memprof()
            .args(["inspect", "-", "-f", "folded", "--layer", "0"])
            .write_stdin(json.as_bytes())
            .output()
            .unwrap();
        let (_, want, _) = run_in(
            dir.path(),
            &["inspect", instance, "-f", "folded", "--layer", "0"],
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{fixture}");
        // A flame graph of it is the instance's.
        let (code, _, stderr) =
            run_in(dir.path(), &["flamegraph", "saved.json", "-o", "saved.svg"]);
        assert_eq!(code, Some(0), "{stderr}");
        let made = run_in(dir.path(), &["flamegraph", instance, "-o", "instance.svg"]);
        assert_eq!(made.0, Some(0), "{}", made.2);
        let svg = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(
            svg("saved.svg"),
            svg("instance.svg").replace(instance, "saved.json"),
            "{fixture}"
        );
    }
    // The wire view is the one thing a baseline does not hold.
    let (code, _, stderr) = run_in(dir.path(), &["inspect", "saved.json", "--view", "wire"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "memprof: error: saved.json: a baseline holds the in-memory view only; the wire view \
         (--view wire, both) needs the instance itself\n"
    );
}
