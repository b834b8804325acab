//! Issue 45: errors that read well. Text that is not an instance is named
//! as text, with what it looks like.

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
