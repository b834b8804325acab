//! Catalogue cases for issue 14's hostile inputs: tiny files that claim or
//! provoke far more than they hold (huge length prefixes, references to
//! undefined variables repeated millions of times, pathological archives,
//! huge baselines and budgets). Each runs under the catalogue's peak-memory
//! bound, so a regression to memory proportional to the claim fails here.

use prost::Message;
use serde_json::json;

use super::{
    blob_name, descriptor, file_case, index_with, layout, manifest_with, small_instance, varint,
    write, Case, Expect, RawTar, INSTANCE,
};
use crate::{gzip, oracle};
use memprof::ommx_v1 as pb;

const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

/// A manifest of one instance layer carrying `annotations` annotations of
/// `value_len`-byte values.
fn annotated_manifest(
    instance: &[u8],
    annotations: usize,
    value_len: usize,
    tag: usize,
) -> Vec<u8> {
    let mut layer = descriptor(INSTANCE, instance);
    let map: serde_json::Map<String, serde_json::Value> = (0..annotations)
        .map(|i| (format!("a{tag}.{i}"), json!("v".repeat(value_len))))
        .collect();
    layer["annotations"] = serde_json::Value::Object(map);
    manifest_with(json!([layer]))
}

/// A gzip stream of `zeros_mib` MiB of zeros in 1 MiB members, cheap to build.
fn gzip_zeros(zeros_mib: usize) -> Vec<u8> {
    let member = gzip(&vec![0u8; 1 << 20]);
    member.repeat(zeros_mib)
}

/// A case running `args(dir)`, expecting an error containing `needle`.
fn command_case(
    kind: &'static str,
    name: &'static str,
    args: impl Fn(&std::path::Path) -> Vec<String> + 'static,
    needle: &'static str,
) -> Case {
    Case {
        kind: Some(kind),
        name,
        setup: Box::new(args),
        stdin: None,
        fsize_limit: None,
        expect: Expect::Error(needle),
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// A case reading one file that is hostile but valid: exit 0, a profile.
fn profile_case(name: &'static str, bytes: Vec<u8>) -> Case {
    Case {
        kind: None,
        name,
        setup: Box::new(move |dir| super::inspect(write(dir, name, &bytes), &[])),
        stdin: None,
        fsize_limit: None,
        expect: Expect::Profile,
    }
}

/// A tar header (GNU) of entry type `kind` declaring `size` bytes.
fn header(name: &str, kind: u8, size: u64) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    header.set_path(name).unwrap();
    header.set_entry_type(tar::EntryType::new(kind));
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    header.as_bytes().to_vec()
}

/// Field `field`, length-delimited, with `body`.
fn len_field(field: u32, body: &[u8]) -> Vec<u8> {
    let mut out = varint(u64::from(field) << 3 | 2);
    out.extend(varint(body.len() as u64));
    out.extend_from_slice(body);
    out
}

/// An objective that is the constant 1.
fn objective() -> Vec<u8> {
    pb::Instance {
        objective: Some(pb::Function {
            function: Some(pb::function::Function::Constant(1.0)),
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// A constraint `id` whose function is one monomial over `ids`.
fn monomial_constraint(id: u64, ids: Vec<u64>) -> Vec<u8> {
    let constraint = pb::Constraint {
        id,
        equality: 2,
        function: Some(pb::Function {
            function: Some(pb::function::Function::Polynomial(pb::Polynomial {
                terms: vec![pb::Monomial {
                    ids,
                    coefficient: 1.0,
                }],
            })),
        }),
        ..Default::default()
    };
    len_field(4, &constraint.encode_to_vec())
}

pub(super) fn cases() -> Vec<Case> {
    // 500 constraints, each x7^4000, x7 never defined: 2 million references
    // to one id (kept one by one, as they once were, they peaked near 200 MB).
    let repeated_references = {
        let mut bytes = objective();
        for id in 1..=500u64 {
            bytes.extend(monomial_constraint(id, vec![7; 4000]));
        }
        gzip(&bytes)
    };
    // More distinct undefined ids than the cap, 4,096 to a monomial.
    let distinct_references = {
        let mut bytes = objective();
        for c in 0..65u64 {
            bytes.extend(monomial_constraint(c, (c * 4096..(c + 1) * 4096).collect()));
        }
        gzip(&bytes)
    };
    // A variable whose length prefix claims 2 MiB, all present, under a
    // 1 MiB element limit; and one claiming a terabyte.
    let huge_variable = gzip(&len_field(2, &vec![b'a'; 2 << 20]));
    let terabyte_prefix = {
        let mut bytes = varint(2 << 3 | 2);
        bytes.extend(varint(1 << 40));
        bytes.extend([0u8; 4096]);
        bytes
    };
    let instance = small_instance();
    let [index, manifest, blob] = layout(&instance);
    // One manifest of 40,000 annotations, listed twice (memprof, as OMMX,
    // reads the first manifest listed only).
    let many_annotations = {
        let manifest = annotated_manifest(&instance, 40_000, 1, 0);
        let d = descriptor(MANIFEST, &manifest);
        RawTar::default()
            .file("index.json", &index_with(json!([d, d])))
            .file(&blob_name(&manifest), &manifest)
            .file(&blob_name(&instance), &instance)
            .finish()
    };
    // One 1 MiB manifest listed 17 times (its layers once, not 17 times).
    let listed_often = {
        let manifest = annotated_manifest(&instance, 1, 1 << 20, 0);
        let d = descriptor(MANIFEST, &manifest);
        RawTar::default()
            .file("index.json", &index_with(json!(vec![d; 17])))
            .file(&blob_name(&manifest), &manifest)
            .file(&blob_name(&instance), &instance)
            .finish()
    };
    // 64 distinct manifests of 100 KB (too large to be kept from the first
    // pass), stored in the reverse of their index order after 32 MiB of
    // filler: read in index order, each would decompress the archive again
    // (2 GiB in all, past the catalogue's time bound); the first alone is read.
    let reversed_manifests = {
        let manifests: Vec<Vec<u8>> = (0..64)
            .map(|tag| annotated_manifest(&instance, 1, 100_000, tag))
            .collect();
        let index = index_with(json!(manifests
            .iter()
            .map(|m| descriptor(MANIFEST, m))
            .collect::<Vec<_>>()));
        let mut out = gzip(&header("filler", b'0', 32 << 20));
        out.extend(gzip_zeros(32));
        let tar = manifests
            .iter()
            .rev()
            .fold(RawTar::default(), |t, m| t.file(&blob_name(m), m))
            .file("index.json", &index)
            .file(&blob_name(&instance), &instance)
            .finish();
        out.extend(gzip(&tar));
        out
    };
    // A GNU long name of 64 MiB (for an entry memprof then ignores) before a
    // valid layout, gzip-compressed.
    let long_name = {
        let mut out = gzip(&header("././@LongLink", b'L', 64 << 20));
        out.extend(gzip_zeros(64));
        out.extend(gzip(
            &RawTar::default()
                .file("named-by-the-long-name", b"")
                .files(&[index.clone(), manifest.clone(), blob.clone()])
                .finish(),
        ));
        out
    };
    // A pax header of 64 MiB.
    let pax = {
        let mut out = gzip(&header("pax", b'x', 64 << 20));
        out.extend(gzip_zeros(64));
        out
    };
    // 70 variables with distinct names of 16 KiB: past the 1 MiB of distinct
    // names `--group-by name` accepts.
    let long_names = {
        let mut bytes = objective();
        for id in 0..70u64 {
            let v = pb::DecisionVariable {
                id,
                kind: 3,
                name: Some(format!("{id:05}{}", "n".repeat(16 << 10))),
                ..Default::default()
            };
            bytes.extend(len_field(2, &v.encode_to_vec()));
        }
        gzip(&bytes)
    };
    // 300 variables of distinct names: with --group-by name, about 2,700 paths.
    let named_variables = {
        let mut bytes = objective();
        for id in 0..300u64 {
            let v = pb::DecisionVariable {
                id,
                kind: 3,
                name: Some(format!("v{id}")),
                ..Default::default()
            };
            bytes.extend(len_field(2, &v.encode_to_vec()));
        }
        bytes
    };
    let layout_files = layout(&instance);
    let layout_dir = move |dir: &std::path::Path| {
        let root = dir.join("layout");
        write(&root, "oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#);
        for (name, bytes) in &layout_files {
            write(&root, name, bytes);
        }
        root.to_str().unwrap().to_string()
    };
    let layout_dir2 = layout_dir.clone();
    vec![
        super::err_case(
            "empty",
            "empty\x1b[31m.pb",
            Vec::new(),
            "empty\\x1b[31m.pb: the input is empty",
        ),
        command_case(
            "output-in-input",
            "-o into the input layout directory",
            move |dir| {
                let root = layout_dir(dir);
                strings(&["inspect", &root, "-o", &format!("{root}/index.json")])
            },
            "index.json: refusing to write the output inside the input directory",
        ),
        command_case(
            "output-in-input",
            "--trace into the input layout directory",
            move |dir| {
                let root = layout_dir2(dir);
                let trace = format!("{root}/blobs/sha256/trace.json");
                strings(&["--trace", &trace, "inspect", &root])
            },
            "trace.json: refusing to write the output inside the input directory",
        ),
        command_case(
            "output-in-input",
            "check -o into the --baseline directory",
            |dir| {
                let baselines = crate::fixtures().join("baselines");
                let copy = dir.join("baselines");
                std::fs::create_dir_all(&copy).unwrap();
                for entry in std::fs::read_dir(&baselines).unwrap() {
                    let entry = entry.unwrap();
                    std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
                }
                let out = copy.join("kitchen_sink.pb.json");
                strings(&[
                    "check",
                    &oracle("kitchen_sink.pb"),
                    "--baseline",
                    copy.to_str().unwrap(),
                    "-o",
                    out.to_str().unwrap(),
                ])
            },
            "kitchen_sink.pb.json: refusing to write the output inside the input directory",
        ),
        command_case(
            "baseline-too-large",
            "a baseline file of 300 MiB (sparse)",
            |dir| {
                let path = write(dir, "huge.json", b"{");
                std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(300 << 20)
                    .unwrap();
                strings(&["diff", &path, &oracle("kitchen_sink.pb")])
            },
            "huge.json: the baseline is larger than 256MiB, memprof's limit for baseline files",
        ),
        command_case(
            "budget-invalid",
            "a budget nested 400,000 deep",
            |dir| {
                let text = format!("rules: {}", "[".repeat(400_000));
                let budget = write(dir, "budget.yaml", text.as_bytes());
                strings(&["check", &oracle("kitchen_sink.pb"), "--budget", &budget])
            },
            "budget.yaml: invalid budget: it nests [ ] or { } more than 64 levels deep",
        ),
        command_case(
            "budget-too-much-work",
            "10,000 rules against 2,700 paths",
            move |dir| {
                let instance = write(dir, "named.pb", &named_variables);
                let text = "rules:\n".to_string() + &"  - {path: '**', max: 1 GiB}\n".repeat(10_000);
                let budget = write(dir, "budget.yaml", text.as_bytes());
                strings(&["check", &instance, "--group-by", "name", "--budget", &budget])
            },
            "comparisons, more than memprof's limit of 20000000",
        ),
        file_case(
            "too-many-families",
            "long-names.pb.gz",
            long_names,
            &["--group-by", "name"],
            Expect::Error("--group-by name: the entities have more than 65536 distinct names"),
        ),
        profile_case("many-annotations.ommx", many_annotations),
        profile_case("listed-often.ommx", listed_often),
        profile_case("reversed-manifests.ommx.gz", reversed_manifests),
        profile_case("long-name.ommx.gz", long_name),
        file_case(
            "too-large",
            "pax.ommx.gz",
            pax,
            &[],
            Expect::Error("a pax header is 67108864 bytes, more than the 65536-byte limit"),
        ),
        file_case(
            "rejected",
            "repeated-references.pb.gz",
            repeated_references,
            &[],
            Expect::Error("constraint 1 uses decision variable 7, which is not defined"),
        ),
        file_case(
            "too-many-pending",
            "distinct-references.pb.gz",
            distinct_references,
            &[],
            Expect::Error("more than 262144 distinct variable ids are used before they are defined"),
        ),
        file_case(
            "element-too-large",
            "huge-variable.pb.gz",
            huge_variable,
            &["--max-element", "1MiB"],
            Expect::Error(
                "a length-delimited field at byte 1 is 2097152 bytes, more than 1MiB, the --max-element limit",
            ),
        ),
        // A stream cannot know it ends inside the element: refused at the
        // claim, unread (a file says "truncated").
        Case {
            kind: Some("element-too-large"),
            name: "stdin claiming a terabyte element",
            setup: Box::new(|_| super::inspect("-".into(), &[])),
            stdin: Some(terabyte_prefix),
            fsize_limit: None,
            expect: Expect::Error(
                "<stdin>: a length-delimited field at byte 1 is 1099511627776 bytes, more than \
                 32MiB, the --max-element limit; raise it if the input is trusted",
            ),
        },
    ]
}

/// Runs the binary with a deadline: (exit code, stdout, stderr), or a
/// failure naming the hang.
fn run_within(args: &[&str], seconds: u64) -> (Option<i32>, String, String) {
    use std::process::Stdio;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memprof"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(seconds) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("memprof {args:?} did not finish within {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_pattern_skips_fifos_it_matches() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(oracle("kitchen_sink.pb"), dir.path().join("a.pb")).unwrap();
    super::mkfifo(&dir.path().join("b.pb"));
    let pattern = dir.path().join("*.pb");
    let (code, stdout, stderr) = run_within(&["inspect", pattern.to_str().unwrap(), "-q"], 20);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("a.pb") || !stdout.is_empty(), "{stdout}");
    assert!(!stdout.contains("b.pb"), "{stdout}");
}

#[test]
fn outputs_to_a_fifo_or_dev_stdout_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    super::mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let input = oracle("kitchen_sink.pb");
    let (code, _, stderr) = run_within(
        &[
            "inspect",
            &input,
            "-f",
            "folded",
            "-o",
            fifo.to_str().unwrap(),
        ],
        20,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let folded = super::super::ok(&["inspect", &input, "-f", "folded"]);
    assert_eq!(reader.join().unwrap(), folded);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // Nothing else was created beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    let (code, stdout, stderr) = run_within(
        &["inspect", &input, "-f", "folded", "-o", "/dev/stdout"],
        20,
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, folded);
}

/// Every name in `dir`.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A shell without job control starts background commands with SIGINT
/// ignored, and a child would inherit that: the signal tests run memprof
/// as a terminal would, with every signal's default action.
fn with_default_signals(command: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // Only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}

#[test]
fn a_signal_while_stdin_is_spooled_leaves_no_file() {
    use std::io::Write;
    use std::process::Stdio;
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let tmp = tempfile::tempdir().unwrap();
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("memprof"));
        with_default_signals(&mut command);
        let mut child = command
            .args(["diff", "-", &oracle("kitchen_sink.pb")])
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Part of an instance, and stdin left open: memprof is spooling.
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&[0x12; 4096]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        child.wait().unwrap();
        assert_eq!(
            names_in(tmp.path()),
            Vec::<String>::new(),
            "signal {signal}"
        );
    }
}

#[test]
fn a_signal_while_the_output_is_written_leaves_no_file() {
    // 30,000 families: 270,000 folded lines, a large part of a debug
    // build's run spent rendering them. The signals are timed from a full
    // run to land late in it, mostly while the output is written (sooner
    // or later, the test still holds, it only proves less).
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = objective();
    for id in 0..30_000u64 {
        let v = pb::DecisionVariable {
            id,
            kind: 3,
            name: Some(format!("n{id}")),
            ..Default::default()
        };
        bytes.extend(len_field(2, &v.encode_to_vec()));
    }
    let input = write(dir.path(), "names.pb", &bytes);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let run = || {
        with_default_signals(&mut std::process::Command::new(
            assert_cmd::cargo::cargo_bin("memprof"),
        ))
        .args([
            "inspect",
            &input,
            "--group-by",
            "name",
            "-f",
            "folded",
            "-o",
        ])
        .arg(out.join("profile.txt"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
    };
    let started = std::time::Instant::now();
    assert!(run().wait().unwrap().success());
    let full = started.elapsed();
    let complete = std::fs::read(out.join("profile.txt")).unwrap();
    std::fs::remove_file(out.join("profile.txt")).unwrap();
    for (signal, percent) in [(libc::SIGTERM, 70), (libc::SIGKILL, 80), (libc::SIGINT, 90)] {
        let mut child = run();
        std::thread::sleep(full * percent / 100);
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        child.wait().unwrap();
        // Nothing at all, or the complete output: the run finished first,
        // or the signal came after the output was moved into place.
        match names_in(&out).as_slice() {
            [] => {}
            [name] if name == "profile.txt" => {
                let left = std::fs::read(out.join("profile.txt")).unwrap();
                assert!(left == complete, "signal {signal}: a partial output");
                std::fs::remove_file(out.join("profile.txt")).unwrap();
            }
            left => panic!("signal {signal}: left {left:?}"),
        }
    }
}

/// Whether `text` holds a control character other than a line end.
fn has_raw_controls(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn text_from_an_archive_reaches_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let instance = small_instance();
    let mut layer = descriptor(INSTANCE, &instance);
    layer["annotations"] = json!({
        "org.ommx.v1.instance.title": "t\x1b]0;pwned\x07",
        "k\nnext": "v\x1b[2J\u{202e}",
    });
    layer["mediaType"] = json!(INSTANCE);
    let manifest = manifest_with(json!([layer]));
    let index = index_with(json!([descriptor(MANIFEST, &manifest)]));
    let tar = RawTar::default()
        .file("index.json", &index)
        .file(&blob_name(&manifest), &manifest)
        .file(&blob_name(&instance), &instance)
        .finish();
    let path = write(dir.path(), "evil.ommx", &tar);
    for args in [
        vec!["ls", path.as_str()],
        vec!["inspect", path.as_str(), "--layer", "0", "-f", "tree"],
        vec!["inspect", path.as_str(), "-f", "table"],
        vec!["advise", path.as_str()],
    ] {
        let (code, stdout, stderr) = run_within(&args, 20);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!has_raw_controls(&stdout), "{args:?}: {stdout:?}");
        assert!(!has_raw_controls(&stderr), "{args:?}: {stderr:?}");
    }
    let (_, stdout, _) = run_within(&["ls", path.as_str()], 20);
    assert!(stdout.contains("t\\x1b]0;pwned\\x07"), "{stdout}");
    assert!(stdout.contains("k\\nnext=v\\x1b[2J\\u{202e}"), "{stdout}");
}

/// An argument error is clap's message on its lines (the error, tips, the
/// usage), under the one `memprof: error:` prefix, and no raw control
/// character reaches the terminal.
#[test]
fn argument_errors_are_clap_messages_under_the_prefix() {
    for args in [
        vec!["inspect", "x.pb", "--bogus"],
        // (`inspect` without FILE reads stdin; `top` needs its FILE.)
        vec!["top"],
        vec!["ls", "x", "--max-decompressed", "lots"],
        vec!["inspect", "x", "--format", "t\x07\x1b[2J"],
    ] {
        let (code, _, stderr) = run_within(&args, 20);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(stderr.lines().count() > 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("memprof: error: "), "{stderr}");
        assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
        assert!(
            stderr.ends_with("For more information, try '--help'.\n"),
            "{stderr}"
        );
        assert!(!has_raw_controls(&stderr), "{args:?}: {stderr:?}");
    }
}

#[test]
fn a_baseline_frame_with_a_control_character_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = super::super::ok(&["inspect", &oracle("kitchen_sink.pb"), "-f", "json"]);
    let evil = baseline.replacen(
        "\"Instance.objective\"",
        "\"Instance.objective\\u001b[31m\"",
        1,
    );
    assert_ne!(evil, baseline);
    let path = write(dir.path(), "evil.json", evil.as_bytes());
    let (code, _, stderr) = run_within(&["diff", &path, &oracle("kitchen_sink.pb")], 20);
    assert_eq!(code, Some(2));
    assert!(!has_raw_controls(&stderr), "{stderr:?}");
    assert!(stderr.contains("cannot be a frame"), "{stderr}");
}

#[test]
fn a_file_name_that_is_not_utf8_is_read() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9 \x1b.pb"));
    std::fs::copy(oracle("kitchen_sink.pb"), &path).unwrap();
    let folded = super::super::ok(&["inspect", &oracle("kitchen_sink.pb"), "-f", "folded"]);
    let run = |args: &[&std::ffi::OsStr]| {
        let out = super::super::memprof().args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = run(&[
        "inspect".as_ref(),
        path.as_os_str(),
        "-f".as_ref(),
        "folded".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, folded);
    // Found by a pattern, and named (escaped) in an error.
    let pattern = dir.path().join("caf*");
    let (code, stdout, stderr) = run(&[
        "inspect".as_ref(),
        pattern.as_os_str(),
        "-f".as_ref(),
        "folded".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, folded);
    let out = dir.path().join(std::ffi::OsStr::from_bytes(b"out\xff.txt"));
    let (code, _, stderr) = run(&[
        "inspect".as_ref(),
        path.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(out.is_file());
    std::fs::write(&path, b"").unwrap();
    let (code, _, stderr) = run(&["inspect".as_ref(), path.as_os_str()]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("\\x1b.pb: the input is empty"), "{stderr}");
}

#[test]
fn a_file_that_changes_while_it_is_read_is_not_profiled() {
    // An unknown field of 2 GiB of zeros, gzip-compressed (about two seconds
    // to inflate: the dependencies are optimized even in a test build, and
    // 256 MiB took about the 300 ms the test waits, so the run sometimes
    // ended just as the file changed); the file grows while memprof reads it.
    let dir = tempfile::tempdir().unwrap();
    let mut header = varint(20 << 3 | 2);
    header.extend(varint(2048 << 20));
    let mut bytes = gzip(&header);
    bytes.extend(gzip_zeros(2048));
    let path = write(dir.path(), "growing.pb.gz", &bytes);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memprof"))
        .args(["inspect", &path, "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    if child.try_wait().unwrap().is_some() {
        // Finished before the file changed: nothing to show on this machine.
        return;
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, &gzip(b"more")).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("growing.pb.gz: cannot read: the file changed size while it was read"),
        "{stderr}"
    );
}
