//! Images read by name from OMMX's local registry (fixtures/registry/, one
//! root written by ommx 2.9.3 and 3.0.0b7: see fixtures/registry/make.py):
//! each instance layer equals the package's own profile, `ls` lists both
//! layouts, the hostile registries are one-line errors, and no memprof
//! command changes a byte or a time of the registry.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::{expected_folded, fails, fixtures, memprof, ok, oracle};

fn root() -> PathBuf {
    fixtures().join("registry/root")
}

fn root_arg() -> String {
    root().to_str().unwrap().to_string()
}

/// An image of fixtures/registry/images.txt: the reference memprof takes,
/// its layout, its instance layers' media types and digests.
type Listed = (String, String, Vec<(String, String)>);

/// Every image of fixtures/registry/images.txt.
fn images() -> Vec<Listed> {
    let text = fs::read_to_string(fixtures().join("registry/images.txt")).unwrap();
    text.lines()
        .map(|line| {
            let parts: Vec<&str> = line.split('\t').collect();
            // 2.9.3 keeps a digest as the tag `sha256:HEX`; it is named by `@`.
            let name = match parts[0].split_once(":sha256:") {
                Some((name, hex)) => format!("{name}@sha256:{hex}"),
                None => parts[0].to_string(),
            };
            let layers = parts[2]
                .split(',')
                .map(|l| {
                    let (media, digest) = l.split_once('=').unwrap();
                    (media.to_string(), digest.to_string())
                })
                .collect();
            (name, parts[1].to_string(), layers)
        })
        .collect()
}

fn slug(image: &str) -> String {
    image.replace(['/', ':', '@'], "_")
}

/// Is `image` of `layout` the one a name reads (3.0's copy of a name in
/// both layouts wins)?
fn reachable(image: &str, layout: &str, all: &[Listed]) -> bool {
    layout == "3.0" || !all.iter().any(|(n, l, _)| n == image && l == "3.0")
}

#[test]
fn every_image_read_by_name_equals_its_ommx_profile() {
    let all = images();
    let mut checked = 0;
    for (name, layout, layers) in &all {
        if !reachable(name, layout, &all) {
            continue;
        }
        // images.txt names 2.9.3's digest tag as 2.9.3 writes it.
        let stem = slug(&name.replace("@sha256:", ":sha256:"));
        for k in 0..layers.len() {
            for accounting in ["2.9.3", "3.0"] {
                let path = fixtures().join(format!(
                    "registry/expected/{layout}/{stem}.layer{k}.{accounting}.folded"
                ));
                if !path.exists() {
                    continue;
                }
                let got = ok(&[
                    "inspect",
                    name,
                    "--registry",
                    &root_arg(),
                    "--layer",
                    &k.to_string(),
                    "--accounting",
                    accounting,
                    "-f",
                    "folded",
                ]);
                assert_eq!(
                    got,
                    expected_folded(&path),
                    "{name} layer {k} ({accounting})"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "only {checked} layers checked");
}

#[test]
fn the_root_comes_from_the_environment_and_the_origin_is_said() {
    let json = memprof()
        .env("OMMX_LOCAL_REGISTRY_ROOT", root())
        .args(["inspect", "ghcr.io/memprof/fixtures/both:v1", "-f", "json"])
        .output()
        .unwrap();
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let input = &doc["input"];
    assert_eq!(input["name"], "ghcr.io/memprof/fixtures/both:v1");
    assert_eq!(input["container"], "registry");
    // In both layouts: 3.0's copy is read, and said to be.
    assert_eq!(input["registry"]["layout"], "3.0");
    assert_eq!(
        input["registry"]["image"],
        "ghcr.io/memprof/fixtures/both:v1"
    );
    assert_eq!(input["registry"]["root"], root_arg());
    assert!(input["registry"]["manifest_digest"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));

    let tree = ok(&[
        "inspect",
        "localhost:5000/memprof/multi:v2",
        "--registry",
        &root_arg(),
    ]);
    let line = tree.lines().nth(1).unwrap();
    assert!(
        line.starts_with("registry:    OMMX 2.9.3's local registry at ")
            && line.contains("localhost__5000/memprof/multi/__v2"),
        "{tree}"
    );
}

#[test]
fn a_path_that_exists_wins_over_a_name() {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(oracle("empty.pb"), dir.path().join("x:v1")).unwrap();
    let out = memprof()
        .current_dir(dir.path())
        .args(["inspect", "x:v1", "--registry", &root_arg(), "-f", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["input"]["container"], "raw");
}

#[test]
fn a_name_not_there_says_where_it_was_looked_for() {
    let err = fails(&["inspect", "ghcr.io/nope/x:v1", "--registry", &root_arg()]);
    assert_eq!(
        err,
        format!(
            "memprof: error: ghcr.io/nope/x:v1 is not in the local registry at {} (OMMX 2.9.3 \
             and 3.0 layouts searched), nor a file; `ommx` pulls it with \
             Artifact.load(\"ghcr.io/nope/x:v1\")",
            root_arg()
        )
    );
    // A registry that is not there at all: the same.
    let none = tempfile::tempdir().unwrap();
    let missing = none.path().join("no-registry");
    let err = fails(&[
        "ls",
        "ghcr.io/nope/x:v1",
        "--registry",
        missing.to_str().unwrap(),
    ]);
    assert!(err.contains("is not in the local registry at"), "{err}");
    // A bare word is a file that is not there, never an image.
    let err = fails(&["inspect", "nothing.ommx", "--registry", &root_arg()]);
    assert!(!err.contains("registry"), "{err}");
}

#[test]
fn ls_lists_both_layouts_and_their_logical_bytes() {
    let listing: serde_json::Value =
        serde_json::from_str(&ok(&["ls", "--registry", &root_arg(), "-f", "json"])).unwrap();
    assert_eq!(listing["layouts"], serde_json::json!(["3.0", "2.9.3"]));
    let listed = listing["images"].as_array().unwrap();
    let all = images();
    assert_eq!(listed.len(), all.len());
    for (name, layout, layers) in &all {
        let entry = listed
            .iter()
            .find(|e| {
                let reference = match e["tag"].as_str().unwrap().starts_with("sha256:") {
                    true => format!(
                        "{}@{}",
                        e["name"].as_str().unwrap(),
                        e["tag"].as_str().unwrap()
                    ),
                    false => format!(
                        "{}:{}",
                        e["name"].as_str().unwrap(),
                        e["tag"].as_str().unwrap()
                    ),
                };
                &reference == name && e["layout"] == layout.as_str()
            })
            .unwrap_or_else(|| panic!("{name} ({layout}) not listed"));
        let digests: Vec<&str> = entry["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["digest"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = layers.iter().map(|(_, d)| d.as_str()).collect();
        assert_eq!(digests, want, "{name}");
        assert!(entry["logical_bytes"].is_null());
    }

    // --logical: each layer's total is the package's, in the accounting a
    // layer gets by default (2.9.3's for ommx.v1, 3.0's for ommx.v2).
    let logical: serde_json::Value = serde_json::from_str(&ok(&[
        "ls",
        "--registry",
        &root_arg(),
        "--logical",
        "-f",
        "json",
    ]))
    .unwrap();
    for entry in logical["images"].as_array().unwrap() {
        let layout = entry["layout"].as_str().unwrap();
        let tag = entry["tag"].as_str().unwrap().replace(':', "_");
        let stem = slug(&format!("{}:{tag}", entry["name"].as_str().unwrap()));
        for (k, layer) in entry["instances"].as_array().unwrap().iter().enumerate() {
            let accounting = match layer["media_type"].as_str().unwrap().contains(".v1.") {
                true => "2.9.3",
                false => "3.0",
            };
            let path = fixtures().join(format!(
                "registry/expected/{layout}/{stem}.layer{k}.{accounting}.folded"
            ));
            let total: u64 = fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{}", path.display()))
                .lines()
                .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
                .sum();
            assert_eq!(layer["logical_bytes"], total, "{stem} layer {k}");
        }
    }

    let table = ok(&["ls", "--registry", &root_arg()]);
    assert!(
        table.contains("7 images (OMMX 3.0's index.sqlite3 and OMMX 2.9.3's image directories)"),
        "{table}"
    );
}

/// Every file under `dir`: its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                files.insert(
                    path.clone(),
                    (
                        fs::read(&path).unwrap_or_default(),
                        meta.modified().unwrap(),
                    ),
                );
            }
        }
    }
    files
}

#[test]
fn no_command_changes_the_registry() {
    let before = snapshot(&root());
    let r = root_arg();
    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("x.svg");
    let html = out.path().join("x.html");
    let knapsack = "ghcr.io/memprof/fixtures/knapsack:v3";
    let multi = "localhost:5000/memprof/multi:v2";
    let runs: Vec<Vec<&str>> = vec![
        vec!["ls", "--registry", &r],
        vec!["ls", "--registry", &r, "--logical", "-f", "json"],
        vec!["ls", knapsack, "--registry", &r],
        vec!["inspect", knapsack, multi, "--registry", &r, "-f", "table"],
        vec![
            "flamegraph",
            multi,
            "--registry",
            &r,
            "-o",
            svg.to_str().unwrap(),
        ],
        vec![
            "report",
            knapsack,
            "--registry",
            &r,
            "-o",
            html.to_str().unwrap(),
        ],
        vec!["top", multi, "--registry", &r],
        vec!["stats", knapsack, "--registry", &r],
        vec![
            "explain",
            multi,
            "Instance.decision_variables",
            "--layer",
            "1",
            "--registry",
            &r,
        ],
        vec![
            "advise",
            "memprof.example/fixtures/mixed:v2",
            "--registry",
            &r,
        ],
        vec!["diff", multi, "--accounting", "2.9,3.0", "--registry", &r],
        vec!["check", knapsack, "--baseline", knapsack, "--registry", &r],
    ];
    for args in &runs {
        ok(args);
    }
    assert_eq!(
        snapshot(&root()),
        before,
        "a memprof command changed the registry"
    );
}

/// A copy of the fixture registry to damage.
fn copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(root().join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let child = rel.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                fs::create_dir(dir.path().join(&child)).unwrap();
                stack.push(child);
            } else {
                fs::copy(entry.path(), dir.path().join(&child)).unwrap();
            }
        }
    }
    dir
}

/// The blob of the first instance layer of `image` in `layout`, in `root`.
fn blob(root: &Path, image: &str, layout: &str) -> PathBuf {
    let (_, _, layers) = images()
        .into_iter()
        .find(|(n, l, _)| n == image && l == layout)
        .unwrap();
    let hex = layers[0].1.strip_prefix("sha256:").unwrap().to_string();
    match layout {
        "3.0" => root.join("blobs/sha256").join(hex),
        _ => {
            let found = walk(root)
                .into_iter()
                .find(|p| p.ends_with(&hex) && !p.starts_with(root.join("blobs")));
            found.unwrap()
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn fails_in(root: &Path, image: &str) -> String {
    fails(&["inspect", image, "--registry", root.to_str().unwrap()])
}

#[cfg(unix)]
#[test]
fn hostile_registries_are_one_line_errors() {
    let knapsack = "ghcr.io/memprof/fixtures/knapsack:v3";
    let full = "ghcr.io/memprof/fixtures/description_full:v1";

    // A blob the manifest names is gone.
    let dir = copy();
    fs::remove_file(blob(dir.path(), knapsack, "3.0")).unwrap();
    let err = fails_in(dir.path(), knapsack);
    assert!(
        err.starts_with(&format!("memprof: error: {knapsack}: blob sha256:")),
        "{err}"
    );
    assert!(err.contains("is missing from the local registry"), "{err}");

    // A blob whose content is not its digest's.
    let dir = copy();
    let path = blob(dir.path(), full, "2.9.3");
    let mut bytes = fs::read(&path).unwrap();
    bytes.push(0);
    fs::write(&path, bytes).unwrap();
    let err = fails_in(dir.path(), full);
    assert!(
        err.starts_with(&format!("memprof: error: {full}: blob sha256:")),
        "{err}"
    );
    assert!(err.contains("does not match its digest"), "{err}");

    // A link out of the root: a blob, and a whole image directory.
    let outside = tempfile::tempdir().unwrap();
    let dir = copy();
    let path = blob(dir.path(), knapsack, "3.0");
    let elsewhere = outside.path().join("blob");
    fs::rename(&path, &elsewhere).unwrap();
    symlink(&elsewhere, &path);
    let err = fails_in(dir.path(), knapsack);
    assert!(
        err.starts_with(&format!("memprof: error: {knapsack}: ")),
        "{err}"
    );
    assert!(err.contains("outside the registry root"), "{err}");
    let image_dir = dir
        .path()
        .join("ghcr.io/memprof/fixtures/description_full/__v1");
    let moved = outside.path().join("__v1");
    fs::rename(&image_dir, &moved).unwrap();
    symlink(&moved, &image_dir);
    let err = fails_in(dir.path(), full);
    assert!(
        err.starts_with(&format!("memprof: error: {full}: ")),
        "{err}"
    );
    assert!(err.contains("outside the registry root"), "{err}");

    // An index of a newer OMMX: an unknown schema version, a missing table.
    let dir = copy();
    sql(dir.path(), "PRAGMA user_version = 5");
    let err = fails_in(dir.path(), knapsack);
    assert!(
        err.contains("has schema version 5; memprof reads OMMX 3.0.0b7's index (version 2)"),
        "{err}"
    );
    assert!(err.contains("newer OMMX"), "{err}");
    let err = fails(&["ls", "--registry", dir.path().to_str().unwrap()]);
    assert!(err.contains("schema version 5"), "{err}");
    let dir = copy();
    sql(dir.path(), "DROP TABLE artifact_manifests");
    let err = fails_in(dir.path(), knapsack);
    assert!(err.contains("has no table artifact_manifests"), "{err}");
}

/// Runs `statement` on a copy's index (checkpointing its log into it).
fn sql(root: &Path, statement: &str) {
    let conn = rusqlite::Connection::open(root.join("index.sqlite3")).unwrap();
    conn.execute_batch(statement).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
}

#[test]
fn an_index_without_a_log_reads_the_same() {
    let dir = copy();
    sql(dir.path(), "SELECT 1");
    drop(rusqlite::Connection::open(dir.path().join("index.sqlite3")).unwrap());
    let _ = fs::remove_file(dir.path().join("index.sqlite3-wal"));
    let _ = fs::remove_file(dir.path().join("index.sqlite3-shm"));
    let before = snapshot(dir.path());
    let image = "memprof.example/fixtures/mixed:v2";
    let args = |r: &Path| {
        ok(&[
            "inspect",
            image,
            "--registry",
            r.to_str().unwrap(),
            "-f",
            "folded",
        ])
    };
    assert_eq!(args(dir.path()), args(&root()));
    assert_eq!(
        snapshot(dir.path()),
        before,
        "no log or shared memory file made"
    );
}

#[test]
fn a_log_in_use_is_read_without_waiting_for_its_writer() {
    // OMMX running: a commit still in the write-ahead log (no checkpoint),
    // and a write transaction open, holding the index's write lock.
    let dir = copy();
    let writer = rusqlite::Connection::open(dir.path().join("index.sqlite3")).unwrap();
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint = 0;
             INSERT INTO refs SELECT name, 'fresh', manifest_digest, updated_at FROM refs
                 WHERE name = 'ghcr.io/memprof/fixtures/knapsack' AND reference = 'v3';
             BEGIN IMMEDIATE;
             INSERT INTO refs SELECT name, 'pending', manifest_digest, updated_at FROM refs
                 WHERE name = 'ghcr.io/memprof/fixtures/knapsack' AND reference = 'v3';",
        )
        .unwrap();
    let r = dir.path().to_str().unwrap();
    let committed = ok(&[
        "inspect",
        "ghcr.io/memprof/fixtures/knapsack:fresh",
        "--registry",
        r,
        "-f",
        "folded",
    ]);
    let want = ok(&[
        "inspect",
        "ghcr.io/memprof/fixtures/knapsack:v3",
        "--registry",
        r,
        "-f",
        "folded",
    ]);
    assert_eq!(committed, want);
    let err = fails(&[
        "inspect",
        "ghcr.io/memprof/fixtures/knapsack:pending",
        "--registry",
        r,
    ]);
    assert!(err.contains("is not in the local registry"), "{err}");
    writer.execute_batch("COMMIT").unwrap();
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}
