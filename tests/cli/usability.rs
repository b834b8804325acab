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
    assert!(svg.contains("counts them; total 4.2 KiB</text>"), "{svg}");
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
