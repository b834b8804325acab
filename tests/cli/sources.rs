//! Baselines and budgets are read once: a pipe given as `/dev/fd/N` (what
//! the shell's `<(...)` passes), a named FIFO and `-` (standard input) give
//! `check --baseline`, `check --budget` and `diff` the same output and exit
//! status as the regular file they carry.

use std::path::{Path, PathBuf};
use std::process::{Command as Std, Output};
use std::time::Duration;

use super::{fixtures, memprof, oracle};

/// How the file under test reaches memprof.
#[derive(Debug, Clone, Copy)]
enum Source {
    File,
    /// `<(cat FILE)`: bash passes `/dev/fd/N`, the read end of a pipe.
    ProcessSubstitution,
    /// A named FIFO that a writer fills once memprof opens it.
    Fifo,
    /// `-`, the file on standard input.
    Stdin,
}

const SOURCES: [Source; 4] = [
    Source::File,
    Source::ProcessSubstitution,
    Source::Fifo,
    Source::Stdin,
];

/// The output of `memprof ARGS`, where the argument `@` is `file` given
/// through `source`; every name memprof gives that argument is replaced by
/// `@` so that outputs of different sources compare.
fn run(source: Source, args: &[&str], file: &Path) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (out, named) = match source {
        Source::File => {
            let name = file.to_str().unwrap().to_string();
            let args = with(args, &name);
            (timed(memprof().args(&args)), vec![name])
        }
        Source::Stdin => {
            let args = with(args, "-");
            let out = timed(
                memprof()
                    .args(&args)
                    .write_stdin(std::fs::read(file).unwrap()),
            );
            (out, vec!["<stdin>".to_string()])
        }
        Source::ProcessSubstitution => {
            let bin = assert_cmd::cargo::cargo_bin("memprof");
            // "$0" is memprof, "$1" the file; `@` becomes <(cat "$1").
            let words: Vec<String> = args
                .iter()
                .map(|a| match *a {
                    "@" => "<(cat \"$1\")".to_string(),
                    a => format!("'{a}'"),
                })
                .collect();
            let script = format!("exec \"$0\" {}", words.join(" "));
            let out = Std::new("bash")
                .env_remove("COLUMNS")
                .args(["-c", &script])
                .arg(&bin)
                .arg(file)
                .output()
                .unwrap();
            (out, vec![])
        }
        Source::Fifo => {
            let fifo = dir.path().join("baseline.fifo");
            let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
            let (to, content) = (fifo.clone(), std::fs::read(file).unwrap());
            // Opening a FIFO to write waits for its reader.
            let writer = std::thread::spawn(move || {
                let _ = std::fs::write(&to, content);
            });
            let name = fifo.to_str().unwrap().to_string();
            let out = timed(memprof().args(with(args, &name)));
            // Had memprof not opened it, the writer would wait forever.
            if !writer.is_finished() {
                let _ = std::fs::File::open(&fifo);
            }
            writer.join().unwrap();
            (out, vec![name])
        }
    };
    let text = |bytes: &[u8]| {
        let mut text = String::from_utf8(bytes.to_vec()).unwrap();
        for name in &named {
            text = text.replace(name.as_str(), "@");
        }
        // What bash names the pipe: /dev/fd/63 or so.
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("/dev/fd/") {
            out.push_str(&rest[..at]);
            out.push('@');
            rest = rest[at + "/dev/fd/".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        }
        out.push_str(rest);
        out
    };
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn with(args: &[&str], name: &str) -> Vec<String> {
    args.iter()
        .map(|a| if *a == "@" { name } else { a }.to_string())
        .collect()
}

/// Runs `cmd`, failing the test if it hangs.
fn timed(cmd: &mut assert_cmd::Command) -> Output {
    cmd.timeout(Duration::from_secs(60)).output().unwrap()
}

fn baseline(name: &str) -> PathBuf {
    fixtures().join("baselines").join(name)
}

/// What memprof suggests after a failed check: lines that name commands,
/// which depend on where the baseline came from.
fn is_next_step(line: &str) -> bool {
    line.contains(": to see why: ")
        || line.starts_with("memprof: if the growth")
        || line.starts_with("memprof: no --update-baseline")
}

/// Every source gives the exit status, stdout and stderr (less the next
/// steps) the regular file gives; returns those of each source.
fn same_from_every_source(args: &[&str], file: &Path) -> Vec<(Option<i32>, String, String)> {
    let runs: Vec<_> = SOURCES.iter().map(|s| run(*s, args, file)).collect();
    let steps_aside = |(code, out, err): &(Option<i32>, String, String)| {
        let err: Vec<String> = err
            .lines()
            .filter(|l| !is_next_step(l))
            .map(str::to_string)
            .collect();
        (*code, out.clone(), err)
    };
    for (source, got) in SOURCES.iter().zip(&runs).skip(1) {
        assert_eq!(
            steps_aside(got),
            steps_aside(&runs[0]),
            "memprof {args:?} with {source:?} differs from the file"
        );
    }
    runs
}

/// The next steps memprof printed.
fn next_steps(err: &str) -> Vec<&str> {
    err.lines().filter(|l| is_next_step(l)).collect()
}

#[test]
fn a_baseline_from_a_pipe_a_fifo_or_stdin_is_a_baseline() {
    let moderate = oracle("moderate.pb");
    let kitchen_sink = oracle("kitchen_sink.pb");
    let same = baseline("moderate.pb.json");
    // moderate.pb's baseline by its name, holding a smaller profile.
    let dir = tempfile::tempdir().unwrap();
    let smaller = dir.path().join("moderate.pb.json");
    std::fs::copy(baseline("kitchen_sink.pb.json"), &smaller).unwrap();
    for (format, pass, fail) in [
        ("table", "overall: PASS", "overall: FAIL"),
        ("json", "\"pass\": true", "\"pass\": false"),
    ] {
        let args = ["check", &moderate, "--baseline", "@", "-f", format];
        let (code, out, err) = same_from_every_source(&args, &same).remove(0);
        assert_eq!((code, err.as_str()), (Some(0), ""), "{out}");
        assert!(out.contains(pass), "{out}");
        // Grown past the baseline: exit 1, with the same report.
        let runs = same_from_every_source(&args, &smaller);
        let (code, out, err) = &runs[0];
        assert_eq!(*code, Some(1), "{out}{err}");
        assert!(out.contains(fail), "{out}");
        assert!(err.starts_with("memprof: check failed: 1 of 1"), "{err}");
        // The diff that shows why reads the baseline as it was given; only
        // a file can take the growth (a pipe or a FIFO cannot be written back).
        let grew = format!("memprof: {moderate} grew past the default rule (total max_growth 0%)");
        let why = format!("{grew}: to see why: memprof diff @ {moderate}");
        let update =
            format!("memprof: if the growth is intended: memprof check {moderate} --baseline @ --update-baseline");
        let from_stdin = format!("{grew}: to see why: memprof diff - {moderate}");
        let steps: Vec<Vec<&str>> = runs.iter().map(|(_, _, err)| next_steps(err)).collect();
        assert_eq!(
            steps,
            [
                vec![why.as_str(), update.as_str()],
                vec![why.as_str()],
                vec![why.as_str()],
                vec![from_stdin.as_str()],
            ]
        );
    }
    // diff takes a baseline on either side.
    for args in [
        ["diff", "@", kitchen_sink.as_str(), "-f", "json"],
        ["diff", kitchen_sink.as_str(), "@", "-f", "table"],
    ] {
        let (code, out, err) = same_from_every_source(&args, &same).remove(0);
        assert_eq!((code, err.as_str()), (Some(0), ""));
        assert!(out.contains("@"), "the baseline is named: {out}");
    }
    let args = ["diff", "@", &moderate, "-f", "json"];
    let (_, out, _) = same_from_every_source(&args, &same).remove(0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["total"]["delta"], 0, "{doc}");
    assert!(doc["paths"].as_array().unwrap().len() > 10);
}

#[test]
fn only_a_baseline_file_is_updated() {
    let moderate = oracle("moderate.pb");
    let smaller = baseline("kitchen_sink.pb.json");
    let args = ["check", &moderate, "--baseline", "@", "--update-baseline"];
    for source in &SOURCES[1..] {
        let (code, out, err) = run(*source, &args, &smaller);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (
                Some(2),
                "",
                "memprof: error: @: --update-baseline needs a baseline file to write, \
                 not standard input, a pipe or a FIFO\n"
            ),
            "{source:?}"
        );
    }
}

#[test]
fn a_budget_from_a_pipe_a_fifo_or_stdin_is_a_budget() {
    let moderate = oracle("moderate.pb");
    let dir = tempfile::tempdir().unwrap();
    let holds = fixtures().join("budgets").join("fixtures.yaml");
    let exceeded = dir.path().join("small.yaml");
    std::fs::write(&exceeded, "rules:\n  - path: total\n    max: 1 KiB\n").unwrap();
    let same = baseline("moderate.pb.json");
    let with_baseline = [
        "check",
        &moderate,
        "--budget",
        "@",
        "--baseline",
        same.to_str().unwrap(),
    ];
    let (code, out, err) = same_from_every_source(&with_baseline, &holds).remove(0);
    assert_eq!((code, err.as_str()), (Some(0), ""), "{out}");
    assert!(out.starts_with("budget: @\n"), "{out}");
    let args = ["check", &moderate, "--budget", "@"];
    let (code, out, err) = same_from_every_source(&args, &exceeded).remove(0);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("EXCEEDED"), "{out}");
    // A budget that needs a baseline says so, naming the budget as given.
    let (code, _, err) = same_from_every_source(&args, &holds).remove(0);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "memprof: error: @: rule 1 (path \"total\") sets max_growth, which needs --baseline\n"
    );
}

#[test]
fn standard_input_is_read_once() {
    let moderate = oracle("moderate.pb");
    for args in [
        vec!["check", "-", "--budget", "-"],
        vec!["check", "-", "--baseline", "-"],
        vec!["check", &moderate, "--baseline", "-", "--budget", "-"],
        vec!["diff", "-", "-"],
    ] {
        let out = memprof().args(&args).write_stdin("").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            "memprof: error: -: standard input can be read only once\n",
            "{args:?}"
        );
    }
}
