//! Issue 18: the tool as a new user meets it: pipelines without a FILE,
//! folded stacks into `flamegraph`, flags that mean what their help says.

use super::{fixtures, memprof};

fn run_stdin(args: &[&str], stdin: Vec<u8>) -> Vec<u8> {
    let out = memprof().args(args).write_stdin(stdin).output().unwrap();
    assert!(
        out.status.success(),
        "memprof {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn file(name: &str) -> String {
    fixtures().join("oracle").join(name).display().to_string()
}

/// The SVG without its subtitle, which names where the numbers came from.
fn frames_only(svg: &[u8]) -> String {
    let svg = String::from_utf8(svg.to_vec()).unwrap();
    let start = svg.find("<text id=\"subtitle\"").unwrap();
    let end = start + svg[start..].find("</text>").unwrap();
    format!("{}{}", &svg[..start], &svg[end..])
}

#[test]
fn flamegraph_without_file_reads_instances_archives_and_folded_stacks_from_stdin() {
    for fixture in ["kitchen_sink.pb", "multi.ommx"] {
        let path = file(fixture);
        let bytes = std::fs::read(&path).unwrap();
        let from_file = run_stdin(
            &["flamegraph", &path, "-o", "-", "--title", "T"],
            Vec::new(),
        );
        // The root frame names the input: the file, or <stdin>.
        let from_file = String::from_utf8(from_file)
            .unwrap()
            .replace(&format!(">{path}: "), ">&lt;stdin&gt;: ")
            .into_bytes();
        let from_stdin = run_stdin(&["flamegraph", "-o", "-", "--title", "T"], bytes);
        assert_eq!(from_file, from_stdin, "{fixture}");

        // inferno users' pipeline: folded stacks in, the same graph out.
        let folded = run_stdin(&["inspect", &path, "--format", "folded"], Vec::new());
        let from_folded = run_stdin(&["flamegraph", "-o", "-", "--title", "T"], folded);
        assert_eq!(
            frames_only(&from_file),
            frames_only(&from_folded),
            "{fixture}"
        );
        let svg = String::from_utf8(from_folded).unwrap();
        assert!(
            svg.contains("bytes of the folded stacks; total "),
            "{fixture}"
        );
    }
}

#[test]
fn folded_stacks_in_a_file_are_read_too_and_named_in_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("k.folded");
    std::fs::copy(fixtures().join("oracle/kitchen_sink.folded"), &folded).unwrap();
    let svg = run_stdin(
        &["flamegraph", folded.to_str().unwrap(), "-o", "-"],
        Vec::new(),
    );
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.contains("k.folded (folded stacks)</text>"), "{svg}");
    assert!(svg.contains("total_samples=\"4298\""));
}

#[test]
fn text_that_is_almost_folded_is_not_taken_for_folded_stacks() {
    for text in [
        "Instance.sense 1\nnot a folded line\n",
        "Instance.sense\n",
        "Instance.sense 1.5\n",
    ] {
        let out = memprof()
            .args(["flamegraph", "-o", "-"])
            .write_stdin(text)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn inspect_without_file_reads_stdin() {
    let path = file("kitchen_sink.pb");
    let from_file = run_stdin(&["inspect", &path, "--format", "json"], Vec::new());
    let from_stdin = run_stdin(
        &["inspect", "--format", "json"],
        std::fs::read(&path).unwrap(),
    );
    let name = |json: &[u8]| -> serde_json::Value {
        let mut doc: serde_json::Value = serde_json::from_slice(json).unwrap();
        doc.as_object_mut().unwrap().remove("input");
        doc
    };
    assert_eq!(name(&from_file), name(&from_stdin));
}

#[test]
fn flamegraph_subtitle_uses_human_units() {
    let svg = run_stdin(
        &["flamegraph", &file("kitchen_sink.pb"), "-o", "-"],
        Vec::new(),
    );
    let svg = String::from_utf8(svg).unwrap();
    assert!(
        svg.contains("counts them; total 4.2 KiB (4,298 B)</text>"),
        "{svg}"
    );
}

/// `--min-width` is in pixels of the 1180-pixel frame area, as its help says.
#[test]
fn min_width_is_pixels() {
    let frames = |pixels: &str| -> Vec<u64> {
        let svg = run_stdin(
            &[
                "flamegraph",
                &file("kitchen_sink.pb"),
                "-o",
                "-",
                "--min-width",
                pixels,
            ],
            Vec::new(),
        );
        let svg = String::from_utf8(svg).unwrap();
        svg.split("fg:w=\"")
            .skip(1)
            .map(|s| s[..s.find('"').unwrap()].parse().unwrap())
            .collect()
    };
    let all = frames("0");
    let wide = frames("30");
    assert!(wide.len() < all.len() && !wide.is_empty());
    let total = 4298.0;
    for w in &wide {
        assert!(
            *w as f64 / total * 1180.0 >= 30.0,
            "{w} bytes is under 30 px"
        );
    }
    let kept = all
        .iter()
        .filter(|w| **w as f64 / total * 1180.0 >= 30.0)
        .count();
    assert_eq!(kept, wide.len());
}

#[test]
fn completions_for_every_shell_and_a_bash_script_that_parses() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = String::from_utf8(run_stdin(&["completions", shell], Vec::new())).unwrap();
        for sub in ["inspect", "flamegraph", "check", "completions"] {
            assert!(script.contains(sub), "{shell}: {sub}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let bash = dir.path().join("memprof.bash");
    std::fs::write(&bash, run_stdin(&["completions", "bash"], Vec::new())).unwrap();
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&bash)
        .status()
        .unwrap();
    assert!(status.success());
    let out = memprof().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn man_pages_for_memprof_and_each_subcommand() {
    let page = String::from_utf8(run_stdin(&["man"], Vec::new())).unwrap();
    assert!(page.contains(".TH memprof 1"), "{page}");
    for sub in [
        "inspect",
        "flamegraph",
        "ls",
        "diff",
        "check",
        "top",
        "explain",
        "stats",
        "advise",
    ] {
        assert!(page.contains(sub), "{sub}");
        let sub_page = String::from_utf8(run_stdin(&["man", sub], Vec::new())).unwrap();
        assert!(
            sub_page.contains(&format!(".TH memprof-{sub} 1")),
            "{sub_page}"
        );
    }
    let out = memprof().args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// MPS, LP and QPLIB text (and folded stacks given to `inspect`) fail the
/// instance decode, then the error says what they are and how to convert them.
#[test]
fn text_models_are_named_with_how_to_convert_them() {
    let cases = [
        (
            "NAME          TESTLP\nROWS\n N  COST\n L  LIM1\n",
            "an MPS model",
            "Instance.load_mps",
        ),
        (
            "\\ model\nMinimize\n obj: x + 2 y\nSubject To\n c1: x + y >= 1\nEnd\n",
            "an LP-format model",
            "load_mps",
        ),
        (
            "! ---\nMIPBAND # problem name\nQML # type\nMinimize # sense\n3 # variables\n",
            "a QPLIB model",
            "Instance.load_qplib",
        ),
        (
            "Instance.constraints;Constraint.id 40\nInstance.sense 1\n",
            "folded stacks",
            "memprof flamegraph",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (text, kind, how) in cases {
        let path = dir.path().join("model.txt");
        std::fs::write(&path, text).unwrap();
        let line = super::fails(&["inspect", path.to_str().unwrap()]);
        assert!(
            line.contains(&format!(
                "not an OMMX instance or archive: the content looks like {kind}"
            )),
            "{line}"
        );
        assert!(line.contains(how), "{line}");
    }
}

/// Every command that writes takes `-o`; the file holds what stdout would.
#[test]
fn every_writing_command_takes_output() {
    let ks = file("kitchen_sink.pb");
    let multi = file("multi.ommx");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    for args in [
        vec!["ls", multi.as_str()],
        vec!["top", ks.as_str()],
        vec!["stats", ks.as_str()],
        vec!["explain", ks.as_str(), "Instance.constraints"],
        vec!["inspect", ks.as_str()],
        vec!["advise", ks.as_str()],
    ] {
        let stdout = run_stdin(&args, Vec::new());
        let mut with_output = args.clone();
        with_output.extend(["-o", out]);
        assert!(run_stdin(&with_output, Vec::new()).is_empty(), "{args:?}");
        assert_eq!(std::fs::read(out).unwrap(), stdout, "{args:?}");
    }
    // And never over the input.
    let line = super::fails(&["top", &ks, "-o", &ks]);
    assert!(
        line.contains("refusing to write the output over the input"),
        "{line}"
    );
}

/// `-n N` / `--top N` is the count everywhere; top's old `--n` still works.
#[test]
fn one_name_for_the_count() {
    let ks = file("kitchen_sink.pb");
    let top = run_stdin(&["top", &ks, "-f", "json", "-n", "2"], Vec::new());
    assert_eq!(
        top,
        run_stdin(&["top", &ks, "-f", "json", "--top", "2"], Vec::new())
    );
    assert_eq!(
        top,
        run_stdin(&["top", &ks, "-f", "json", "--n", "2"], Vec::new())
    );
    for args in [
        vec!["inspect", ks.as_str(), "-f", "table"],
        vec!["stats", ks.as_str()],
        vec!["diff", ks.as_str(), ks.as_str()],
    ] {
        let mut short = args.clone();
        short.extend(["-n", "2"]);
        let mut long = args.clone();
        long.extend(["--top", "2"]);
        assert_eq!(
            run_stdin(&short, Vec::new()),
            run_stdin(&long, Vec::new()),
            "{args:?}"
        );
    }
}

/// JSON and YAML wherever a machine reads the output: the same document.
#[test]
fn yaml_wherever_there_is_json() {
    let ks = file("kitchen_sink.pb");
    let multi = file("multi.ommx");
    let baseline = fixtures().join("baselines/kitchen_sink.pb.json");
    let baseline = baseline.to_str().unwrap();
    for args in [
        vec!["ls", multi.as_str()],
        vec!["diff", ks.as_str(), baseline],
        vec!["check", ks.as_str(), "--baseline", baseline],
        vec!["inspect", ks.as_str()],
        vec!["top", ks.as_str()],
        vec!["stats", ks.as_str()],
        vec!["explain", ks.as_str(), "total"],
        vec!["advise", ks.as_str()],
    ] {
        let mut json = args.clone();
        json.extend(["-f", "json"]);
        let mut yaml = args.clone();
        yaml.extend(["-f", "yaml"]);
        let json: serde_json::Value =
            serde_json::from_slice(&run_stdin(&json, Vec::new())).unwrap();
        let yaml: serde_json::Value =
            serde_yaml::from_slice(&run_stdin(&yaml, Vec::new())).unwrap();
        assert_eq!(json, yaml, "{args:?}");
    }
}

#[test]
fn explain_total_explains_every_byte() {
    let ks = file("kitchen_sink.pb");
    let json = run_stdin(&["explain", &ks, "total", "-f", "json"], Vec::new());
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let text = doc.to_string();
    assert!(text.contains("4298"), "{text}");
}

/// `--view both` works without naming a format (it is a table), and is
/// refused, naming the option, where it cannot be shown.
#[test]
fn view_both_is_a_table_by_default() {
    let obj = file("obj_linear.pb");
    let both = run_stdin(&["inspect", &obj, "--view", "both"], Vec::new());
    let table = run_stdin(
        &["inspect", &obj, "--view", "both", "-f", "table"],
        Vec::new(),
    );
    assert_eq!(both, table);
    assert!(String::from_utf8(both).unwrap().contains("memory / disk"));
    let line = super::fails(&["inspect", &obj, "--view", "both", "-f", "json"]);
    assert!(
        line.contains("--view both is only available with --format table"),
        "{line}"
    );
}

/// The largest entity of `stats` is the first of `top`, ties included.
#[test]
fn top_and_stats_break_ties_alike() {
    // moderate.pb has 300 variables of 231 B and less; the one with the
    // smaller id wins, as in top.
    let ks = file("moderate.pb");
    for kind in ["constraint", "variable"] {
        let top: serde_json::Value = serde_json::from_slice(&run_stdin(
            &["top", &ks, "--kind", kind, "-n", "1", "-f", "json"],
            Vec::new(),
        ))
        .unwrap();
        let stats: serde_json::Value = serde_json::from_slice(&run_stdin(
            &["stats", &ks, "--kind", kind, "-f", "json"],
            Vec::new(),
        ))
        .unwrap();
        let first = &top["entities"][0];
        let text = stats.to_string();
        let largest = &stats["kinds"][0]["largest"];
        assert_eq!(largest["id"], first["id"], "{kind}: {text}");
    }
}

#[test]
fn trace_to_stdout_is_refused() {
    let line = super::fails(&["--trace", "-", "inspect", &file("kitchen_sink.pb")]);
    assert!(line.contains("--trace -"), "{line}");
}

/// The widest table line (box-drawing lines only; headers may be longer).
fn widest_table_line(text: &str) -> usize {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| l.starts_with(['┌', '│', '╞', '└']))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}

#[test]
fn tables_fit_columns() {
    // Run from the fixtures' folder with relative names, so that no line's
    // width depends on where the repository is checked out.
    let (ks, multi) = ("oracle/kitchen_sink.pb", "oracle/multi.ommx");
    let baseline = "baselines/multi.ommx.json";
    let budget = "budgets/fixtures.yaml";
    let run = |args: &[&str], columns: Option<&str>| {
        let mut command = memprof();
        command.current_dir(fixtures()).args(args);
        if let Some(width) = columns {
            command.env("COLUMNS", width);
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for args in [
        vec!["ls", multi],
        vec!["inspect", multi, "-f", "table"],
        vec!["inspect", ks, multi, "-f", "table"],
        vec!["inspect", ks, "--view", "both"],
        vec!["top", ks],
        vec!["top", multi],
        vec!["stats", ks],
        vec!["stats", ks, "--kind", "constraint"],
        vec!["advise", ks],
        vec!["diff", ks, multi],
        vec!["check", multi, "--baseline", baseline, "--budget", budget],
    ] {
        let natural = run(&args, None);
        let words = |text: &str| -> std::collections::BTreeSet<String> {
            let all: Vec<&str> = text
                .split(|c: char| c.is_whitespace() || "│┆╞╡═┌┐└┘├┤┬┴┼─╪".contains(c))
                .filter(|w| !w.is_empty())
                .collect();
            // Times (`0.003 s`) differ from run to run: not compared.
            let timed = |i: usize| all[i].parse::<f64>().is_ok() && all.get(i + 1) == Some(&"s");
            (0..all.len())
                .filter(|&i| !timed(i))
                .map(|i| all[i].to_string())
                .collect()
        };
        let whole = words(&natural);
        for width in ["80", "100"] {
            let fitted = run(&args, Some(width));
            let limit: usize = width.parse().unwrap();
            assert!(widest_table_line(&fitted) <= limit, "{args:?}:\n{fitted}");
            // Every line fits, unless it is one word too long for any line.
            for line in fitted.lines() {
                let wide = console::measure_text_width(line) > limit;
                assert!(
                    !wide || line.split_whitespace().count() == 1,
                    "{args:?}: {line}"
                );
            }
            // No word or number was split: each is one of the natural
            // output's, or a cut one that says so.
            for word in words(&fitted) {
                // A key of the one-line-per-column layout is a header and a colon.
                let key = word.strip_suffix(':').is_some_and(|w| whole.contains(w));
                assert!(
                    whole.contains(&word) || word.contains('…') || key,
                    "{args:?} at {width} columns split {word:?}:\n{fitted}"
                );
            }
        }
    }
}

/// At 80 columns one instance's `top` stays a table: a quantity's exact
/// figure goes below it (`2.3 KiB` over `(2,336 B)`) rather than the rows
/// turning into `column: value` lines.
#[test]
fn top_at_80_columns_stacks_exact_figures_and_stays_a_table() {
    let out = memprof()
        .args(["top", &file("moderate.pb"), "-n", "3"])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(widest_table_line(&text) <= 80, "{text}");
    let row = |start: &str| {
        text.lines()
            .position(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no row {start:?}:\n{text}"))
    };
    let first = row("│ 1 ┆ objective");
    let line = text.lines().nth(first).unwrap();
    assert!(
        line.contains("2.3 KiB") && line.contains("1.6 KiB"),
        "{text}"
    );
    let below = text.lines().nth(first + 1).unwrap();
    assert!(
        below.contains("(2,336 B)") && below.contains("(1,605 B)"),
        "{text}"
    );
    assert!(!text.contains("kind:"), "{text}");
}

/// On a terminal, tables fit its width; `-o FILE` from the same terminal
/// keeps the natural width.
#[test]
fn tables_fit_the_terminal_but_not_a_file() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no `script` to make a pseudo-terminal with; skipped");
        return;
    }
    let binary = assert_cmd::cargo::cargo_bin("memprof");
    let multi = file("multi.ommx");
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("ls.txt");
    let in_pty = |command: String| {
        let out = std::process::Command::new("script")
            .args([
                "-qec",
                &format!("stty rows 40 cols 70; {command}"),
                "/dev/null",
            ])
            .env_remove("COLUMNS")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let on_terminal = in_pty(format!("{} ls {multi}", binary.display()));
    assert!(on_terminal.contains("media type"), "{on_terminal}");
    assert!(widest_table_line(&on_terminal) <= 70, "{on_terminal}");
    in_pty(format!(
        "{} ls {multi} -o {}",
        binary.display(),
        saved.display()
    ));
    let natural = String::from_utf8(run_stdin(&["ls", &multi], Vec::new())).unwrap();
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), natural);
}

/// Runs `command` in a pseudo-terminal (`script`), the bar shown after
/// 100 ms; returns what the terminal received (stdout and stderr).
fn in_terminal(command: &str) -> Option<String> {
    std::process::Command::new("script")
        .arg("--version")
        .output()
        .ok()?;
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("stty rows 40 cols 160; {command}"),
            "/dev/null",
        ])
        .env("MEMPROF_PROGRESS_DELAY_MS", "100")
        .output()
        .unwrap();
    assert!(out.status.success(), "{command}");
    Some(String::from_utf8_lossy(&out.stdout).replace('\r', "\n"))
}

/// On a terminal, input of unknown size gets a spinner naming it with bytes
/// and rate (no invented ETA); several inputs one bar counting files; none
/// with --quiet, and none when stderr is not a terminal.
#[test]
fn progress_bars_tell_the_truth() {
    let binary = assert_cmd::cargo::cargo_bin("memprof");
    let binary = binary.display();
    let moderate = file("moderate.pb");
    let ks = file("kitchen_sink.pb");
    let slow = format!("(cat {moderate}; sleep 1.5)");
    let Some(screen) = in_terminal(&format!(
        "{slow} | {binary} inspect - -f folded > /dev/null"
    )) else {
        eprintln!("no `script` to make a pseudo-terminal with; skipped");
        return;
    };
    let line = screen
        .lines()
        .rfind(|l| l.contains("<stdin>"))
        .unwrap_or_else(|| panic!("no bar naming <stdin>:\n{screen}"));
    assert!(line.contains("40.60 KiB read, "), "{line}");
    assert!(line.contains("/s"), "{line}");
    assert!(!screen.contains("eta"), "{screen}");

    let screen = in_terminal(&format!(
        "{slow} | {binary} inspect {ks} - -f folded > /dev/null"
    ))
    .unwrap();
    assert!(screen.contains("1/2 files"), "{screen}");
    // advise and check share the one bar over several inputs too.
    let dir = tempfile::tempdir().unwrap();
    let budget = dir.path().join("budget.yaml");
    std::fs::write(&budget, "rules:\n  - path: total\n    max: 1 GiB\n").unwrap();
    for command in [
        format!("advise {ks} -"),
        format!("check {ks} - --budget {}", budget.display()),
    ] {
        let screen = in_terminal(&format!("{slow} | {binary} {command} > /dev/null")).unwrap();
        assert!(screen.contains("1/2 files"), "{command}: {screen}");
    }

    let quiet = in_terminal(&format!(
        "{slow} | {binary} inspect - -f folded -q > /dev/null"
    ))
    .unwrap();
    assert_eq!(quiet.trim(), "", "--quiet draws nothing");

    // Not a terminal: nothing on stderr.
    let out = memprof()
        .args(["inspect", "-", "-f", "folded"])
        .env("MEMPROF_PROGRESS_DELAY_MS", "0")
        .write_stdin(std::fs::read(&moderate).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty());
}

/// A gzip-compressed instance's bar follows the compressed position against
/// the file's size, the one total known in advance.
#[test]
fn a_gzip_input_bar_counts_compressed_bytes_against_the_file_size() {
    let dir = tempfile::tempdir().unwrap();
    let lp = dir.path().join("lp.pb");
    // Large enough (30 MB, about half a second) that the run outlasts the
    // bar's 100 ms delay: a smaller one ends before any bar is drawn.
    let generated = std::process::Command::new(assert_cmd::cargo::cargo_bin("memprof-gen"))
        .args([
            "lp",
            "--constraints",
            "40000",
            "--terms",
            "50",
            "--variables",
            "20000",
            "-o",
        ])
        .arg(&lp)
        .output()
        .unwrap();
    assert!(generated.status.success());
    let gz = dir.path().join("lp.pb.gz");
    std::fs::write(&gz, crate::gzip(&std::fs::read(&lp).unwrap())).unwrap();
    let total = indicatif::HumanBytes(std::fs::metadata(&gz).unwrap().len()).to_string();
    let binary = assert_cmd::cargo::cargo_bin("memprof");
    let Some(screen) = in_terminal(&format!(
        "{} inspect {} -f folded > /dev/null",
        binary.display(),
        gz.display()
    )) else {
        eprintln!("no `script` to make a pseudo-terminal with; skipped");
        return;
    };
    let line = screen
        .lines()
        .rfind(|l| l.contains("lp.pb.gz"))
        .unwrap_or_else(|| panic!("no bar naming the file:\n{screen}"));
    assert!(line.contains(&format!("/{total} ")), "{total}: {line}");
    assert!(!line.contains(" read, "), "a bar, not a spinner: {line}");
}

/// `--color`: always colours labels and verdicts, never does not, and auto
/// only on a terminal without NO_COLOR, never into a file; --help follows.
#[test]
fn color_is_asked_for_or_given_to_a_terminal_without_no_color() {
    const ESC: &str = "\u{1b}[";
    let ks = file("kitchen_sink.pb");
    let run = |args: &[&str], no_color: bool| {
        let mut cmd = memprof();
        cmd.args(args);
        if no_color {
            cmd.env("NO_COLOR", "1");
        } else {
            cmd.env_remove("NO_COLOR");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let coloured = run(&["inspect", &ks, "--color", "always"], true);
    assert!(
        coloured.contains(&format!("{ESC}1mfile:{ESC}0m")),
        "{coloured}"
    );
    let budget = fixtures().join("budgets/fixtures.yaml");
    let baseline = fixtures().join("baselines/kitchen_sink.pb.json");
    let check = run(
        &[
            "check",
            &ks,
            "--budget",
            budget.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
            "--color=always",
        ],
        false,
    );
    assert!(check.contains(&format!("{ESC}32m{ESC}1mPASS")), "{check}");
    for args in [
        vec!["inspect", ks.as_str(), "--color", "never"],
        vec!["inspect", ks.as_str()],
    ] {
        assert!(
            !run(&args, false).contains(ESC),
            "{args:?}: piped, so plain"
        );
    }

    let binary = assert_cmd::cargo::cargo_bin("memprof");
    let binary = binary.display();
    let Some(screen) = in_terminal(&format!("{binary} inspect {ks}")) else {
        eprintln!("no `script` to make a pseudo-terminal with; skipped");
        return;
    };
    assert!(screen.contains(ESC), "a terminal gets colour:\n{screen}");
    let plain = in_terminal(&format!("NO_COLOR=1 {binary} inspect {ks}")).unwrap();
    assert!(!plain.contains(ESC), "NO_COLOR:\n{plain}");
    let help = in_terminal(&format!("{binary} --help --color never")).unwrap();
    assert!(!help.contains(ESC), "--help --color never:\n{help}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tree.txt");
    in_terminal(&format!("{binary} inspect {ks} -o {}", out.display())).unwrap();
    assert!(
        !std::fs::read_to_string(&out).unwrap().contains(ESC),
        "a file is plain"
    );
}

/// Every subcommand's help ends with examples, and each example is a
/// command line memprof parses (a renamed flag would break it here first).
#[test]
fn every_help_ends_with_examples_that_parse() {
    use clap::Parser;
    let commands = [
        "inspect",
        "flamegraph",
        "report",
        "ls",
        "diff",
        "check",
        "top",
        "explain",
        "stats",
        "advise",
        "completions",
        "man",
    ];
    for command in commands {
        let out = memprof().args([command, "--help"]).output().unwrap();
        assert!(out.status.success(), "{command}");
        let help = String::from_utf8(out.stdout).unwrap();
        let (_, examples) = help
            .rsplit_once("Examples:\n")
            .unwrap_or_else(|| panic!("{command} --help has no examples:\n{help}"));
        let lines: Vec<&str> = examples.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!((2..=4).contains(&lines.len()), "{command}: {lines:?}");
        for line in lines {
            // Each `memprof ...` part of a pipeline, without redirections.
            for part in line.split(" | ") {
                let part = part.split(" > ").next().unwrap().trim();
                assert!(part.starts_with("memprof "), "{command}: {line}");
                let words = shell_words(part);
                if let Err(e) = memprof::cli::Cli::try_parse_from(&words) {
                    panic!("{command}: {part:?} does not parse: {e}");
                }
            }
        }
    }
}

/// A command line's words, single quotes kept together.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// Bare `memprof` prints a short usage on several lines with the commands
/// most runs use, and exits 2 (nothing was asked).
#[test]
fn bare_memprof_prints_a_short_usage() {
    let out = memprof().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(
        text.lines().count() >= 8 && text.lines().count() <= 15,
        "{text}"
    );
    assert!(text.contains("Usage: memprof <COMMAND>"), "{text}");
    assert!(text.contains("memprof inspect problem.ommx"), "{text}");
    assert!(text.contains("memprof --help"), "{text}");
    assert!(out.stdout.is_empty());
}

/// A stream's size is said in the units a file's is, and `check` starts
/// with its first line, not a blank one.
#[test]
fn one_number_style_for_files_and_streams() {
    let moderate = file("moderate.pb");
    let bytes = std::fs::read(&moderate).unwrap();
    let header = |out: Vec<u8>| {
        let text = String::from_utf8(out).unwrap();
        let line = text.lines().find(|l| l.starts_with("file bytes:"));
        line.unwrap_or_else(|| panic!("{text}")).to_string()
    };
    let from_file = header(run_stdin(&["inspect", &moderate, "-f", "tree"], Vec::new()));
    let from_stdin = header(run_stdin(&["inspect", "-", "-f", "tree"], bytes));
    assert_eq!(from_file, "file bytes:  40.6 KiB (41,577 B)");
    assert_eq!(from_stdin, format!("{from_file} of instance data"));
    // Under 1 KiB the bytes are said once.
    let small = header(run_stdin(
        &["inspect", &file("kitchen_sink.pb")],
        Vec::new(),
    ));
    assert_eq!(small, "file bytes:  857 B");

    let baselines = fixtures().join("baselines");
    let check = run_stdin(
        &[
            "check",
            &moderate,
            "--baseline",
            baselines.to_str().unwrap(),
        ],
        Vec::new(),
    );
    let check = String::from_utf8(check).unwrap();
    assert!(
        check.starts_with(&format!("{moderate} (against ")),
        "{check:?}"
    );
    assert!(
        check.ends_with("\n\noverall: PASS (every budget holds in 1 file)\n"),
        "{check}"
    );
}
