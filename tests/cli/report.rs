//! `memprof report`: the page's document agrees with what `inspect`, `top`,
//! `stats` and `advise` say of the same input, a diff's with `diff`; bad
//! input leaves no page behind. (What the page does in a browser is tested
//! in a browser: tests/browser/.)

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::{fails, memprof, ok, oracle};

/// The page's document, as its script reads it.
fn document(page: &str) -> Value {
    let open = r#"<script type="application/json" id="memprof-data">"#;
    let start = page.find(open).expect("the page holds its data") + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

/// The tree of a view, rebuilt from its preorder columns: (path, bytes).
fn paths(view: &Value) -> Vec<(String, u64)> {
    let t = &view["tree"];
    let names = t["names"].as_array().unwrap();
    let column = |k: &str| -> Vec<u64> {
        t[k].as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (name, bytes, children) = (column("name"), column("bytes"), column("children"));
    let mut out = Vec::new();
    let mut open: Vec<(String, u64)> = Vec::new();
    for i in 0..name.len() {
        while open.last().is_some_and(|(_, left)| *left == 0) {
            open.pop();
        }
        let frame = names[name[i] as usize].as_str().unwrap();
        let path = match open.last_mut() {
            None => String::new(),
            Some((parent, left)) => {
                *left -= 1;
                if parent.is_empty() {
                    frame.to_string()
                } else {
                    format!("{parent};{frame}")
                }
            }
        };
        out.push((path.clone(), bytes[i]));
        open.push((path, children[i]));
    }
    out
}

#[test]
fn the_page_holds_what_the_other_commands_say() {
    let ks = oracle("kitchen_sink.pb");
    let page = ok(&["report", &ks, "-o", "-"]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<title>memprof report: "));
    let doc = document(&page);
    let inspect = json(&["inspect", &ks, "--format", "json"]);
    let input = &doc["inputs"][0];
    assert_eq!(input["logical_bytes"], inspect["total_bytes"]);
    assert_eq!(input["counts"], inspect["summary"]);
    // Every path of the tree, with inspect's bytes (nothing is folded in
    // so small an instance).
    let views = doc["views"].as_array().unwrap();
    assert_eq!(views.len(), 2);
    let tree = paths(&views[0]);
    assert_eq!(tree[0], (String::new(), 4298));
    let folded = ok(&["inspect", &ks, "--format", "folded"]);
    let leaves: u64 = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(leaves, 4298);
    for line in folded.lines() {
        let (path, _) = line.rsplit_once(' ').unwrap();
        assert!(tree.iter().any(|(p, _)| p == path), "{path} is on the page");
    }
    let wire = paths(&views[1]);
    assert_eq!(wire[0].1, input["counts"]["wire_bytes"].as_u64().unwrap());
    // The tables: top's, stats', advise's.
    let top = json(&["top", &ks, "-n", "100", "--format", "json"]);
    let rows = doc["top"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), top["entities"].as_array().unwrap().len());
    for (row, e) in rows.iter().zip(top["entities"].as_array().unwrap()) {
        assert_eq!((&row["id"], &row["bytes"]), (&e["id"], &e["bytes"]));
    }
    let stats = json(&["stats", &ks, "--format", "json"]);
    let kinds = doc["kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), stats["kinds"].as_array().unwrap().len());
    assert_eq!(kinds[0]["bytes"], stats["kinds"][0]["bytes"]);
    let families = doc["families"]["rows"].as_array().unwrap();
    assert_eq!(families.len(), stats["families"].as_array().unwrap().len());
    let advise = json(&["advise", &ks, "--format", "json"]);
    let layer = &doc["advice"]["layers"][0];
    assert_eq!(
        layer["estimated_saving_bytes"],
        advise["layers"][0]["estimated_saving_bytes"]
    );
    assert_eq!(
        layer["recommendations"].as_array().unwrap().len(),
        advise["layers"][0]["recommendations"]
            .as_array()
            .unwrap()
            .len()
    );
    // Same input, same bytes.
    assert_eq!(page, ok(&["report", &ks, "-o", "-"]));
}

/// The page's analyses are shown the stream on threads of their own when it
/// is decoded on several (the advice's function rules apart from its
/// others, the comparison with those that take its costs): the page is the
/// same at any thread count, the sequential pass's.
#[test]
fn the_page_is_the_same_at_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let lp = dir.path().join("lp.pb");
    fs::write(&lp, super::parallel::generated_lp(dir.path())).unwrap();
    let lp = lp.to_str().unwrap();
    let run = |threads| {
        String::from_utf8(super::parallel::stdout_on(
            threads,
            &["report", lp, "-o", "-"],
        ))
        .unwrap()
    };
    let one = run("1");
    let doc = document(&one);
    let layer = &doc["advice"]["layers"][0];
    assert!(
        !layer["recommendations"].as_array().unwrap().is_empty(),
        "{layer}"
    );
    assert!(!doc["top"]["rows"].as_array().unwrap().is_empty());
    for threads in ["2", "3", "16"] {
        assert!(one == run(threads), "{threads} threads");
    }
}

/// Issue 47: an ommx.v2 instance's page shows the advice `advise` gives under
/// OMMX 3.0, rule for rule, with the one rule that has no 3.0 meaning.
#[test]
fn a_3_0_page_holds_3_0s_advice() {
    let v2 = crate::fixtures().join("v2/oracle/removed_constraints.pb");
    let v2 = v2.to_str().unwrap();
    let doc = document(&ok(&["report", v2, "-o", "-"]));
    let advise = json(&["advise", v2, "--format", "json"]);
    let (page, cli) = (&doc["advice"]["layers"][0], &advise["layers"][0]);
    let rules = |layer: &Value| -> Vec<String> {
        let recs = layer["recommendations"].as_array().unwrap();
        recs.iter().map(|r| r["rule"].to_string()).collect()
    };
    assert_eq!(rules(page), rules(cli));
    assert!(rules(page).len() >= 3, "{page}");
    assert_eq!(
        page["estimated_saving_bytes"],
        cli["estimated_saving_bytes"]
    );
    assert_eq!(page["not_computed"], cli["not_computed"]);
    assert_eq!(page["not_computed"][0]["rule"], "ommx-3-layout");
    assert_eq!(page["accounting"], "OMMX 3.0.0b7");
}

#[test]
fn a_diff_page_lists_what_diff_lists() {
    let (old, new) = (oracle("obj_linear.pb"), oracle("obj_linear_constant.pb"));
    let doc = document(&ok(&["report", &old, &new, "-o", "-"]));
    let diff = json(&["diff", &old, &new, "--format", "json"]);
    let roles: Vec<&str> = doc["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["old", "new"]);
    let view = &doc["views"][0];
    assert_eq!(doc["views"].as_array().unwrap().len(), 1);
    assert_eq!(view["tree"]["bytes"][0], diff["total"]["new_bytes"]);
    assert_eq!(view["tree"]["old_bytes"][0], diff["total"]["old_bytes"]);
    let changes = &doc["changes"];
    let changed: Vec<&Value> = diff["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] != "unchanged")
        .collect();
    assert_eq!(changes["changed"].as_u64().unwrap() as usize, changed.len());
    for row in changes["rows"].as_array().unwrap() {
        let path = row["path"].as_str().unwrap();
        let d = changed.iter().find(|p| p["path"] == path).expect(path);
        assert_eq!(
            (&row["old"], &row["new"]),
            (&d["old_bytes"], &d["new_bytes"])
        );
        assert_eq!(row["status"], d["status"]);
    }
    // The tables describe the new side: its variables and its objective.
    let rows = doc["top"]["rows"].as_array().unwrap();
    assert_eq!(
        rows.len() as u64,
        doc["inputs"][1]["counts"]["variables"].as_u64().unwrap() + 1
    );
    assert_eq!(rows.iter().filter(|r| r["kind"] == "objective").count(), 1);
}

#[test]
fn the_old_side_may_be_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    let ks = oracle("kitchen_sink.pb");
    fs::write(&base, ok(&["inspect", &ks, "--format", "json"])).unwrap();
    let out = dir.path().join("page.html");
    ok(&[
        "report",
        base.to_str().unwrap(),
        &ks,
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc = document(&fs::read_to_string(&out).unwrap());
    assert_eq!(doc["inputs"][0]["baseline_of"].as_str(), Some(ks.as_str()));
    assert_eq!(doc["changes"]["changed"], 0);
}

#[test]
fn bad_input_writes_no_page() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page.html");
    let out_arg = out.to_str().unwrap();
    let junk = dir.path().join("junk.pb");
    fs::write(&junk, b"\xff\xff\xff\xff not an instance").unwrap();
    let err = fails(&["report", junk.to_str().unwrap(), "-o", out_arg]);
    assert!(err.contains("junk.pb"), "{err}");
    assert!(!out.exists());
    // A baseline cannot be the new side: its entities are gone.
    let base = dir.path().join("base.json");
    let ks = oracle("kitchen_sink.pb");
    fs::write(&base, ok(&["inspect", &ks, "--format", "json"])).unwrap();
    let err = fails(&["report", &ks, base.to_str().unwrap(), "-o", out_arg]);
    assert!(err.contains("base.json"), "{err}");
    assert!(!out.exists());
    let err = fails(&["report", &ks, "-o", &ks]);
    assert!(err.contains("kitchen_sink.pb"), "{err}");
    assert!(Path::new(&ks).exists());
}

#[test]
fn the_page_fetches_nothing() {
    let page = ok(&["report", &oracle("multi.ommx"), "-o", "-"]);
    let policy = r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none';"#;
    assert!(page.contains(policy));
    for fetch in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!page.contains(fetch), "{fetch}");
    }
    let out = memprof()
        .args(["report", &oracle("multi.ommx"), "-o", "-", "--layer", "1"])
        .output()
        .unwrap();
    let doc = document(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(doc["inputs"][0]["layers"], "instance layer 1");
}
