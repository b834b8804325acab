//! Drill-down: `top`, families (`--group-by name`), `stats`, the wire view
//! and `explain`, on crafted instances and on every oracle fixture.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use memprof::ommx_v1 as pb;
use prost::Message;

use crate::{fails, ok, oracle, pb_files};

fn linear(ids: &[u64]) -> pb::Function {
    pb::Function {
        function: Some(pb::function::Function::Linear(pb::Linear {
            terms: ids
                .iter()
                .map(|&id| pb::LinearTerm {
                    id,
                    coefficient: 1.5,
                })
                .collect(),
            constant: 0.0,
        })),
    }
}

fn variable(id: u64, name: Option<&str>, subscripts: &[i64]) -> pb::DecisionVariable {
    pb::DecisionVariable {
        id,
        kind: pb::decision_variable::Kind::Continuous as i32,
        bound: Some(pb::Bound {
            lower: 0.0,
            upper: 1.0,
        }),
        name: name.map(str::to_string),
        subscripts: subscripts.to_vec(),
        ..Default::default()
    }
}

fn constraint(id: u64, name: Option<&str>, subscripts: &[i64], terms: u64) -> pb::Constraint {
    let ids: Vec<u64> = (0..terms).collect();
    pb::Constraint {
        id,
        equality: pb::Equality::LessThanOrEqualToZero as i32,
        function: Some(linear(&ids)),
        name: name.map(str::to_string),
        subscripts: subscripts.to_vec(),
        ..Default::default()
    }
}

/// Constraint names, subscripts and term counts of the crafted instance:
/// a family of three, hostile names, an unnamed and an empty-named one.
const CONSTRAINTS: &[(u64, Option<&str>, &[i64], u64)] = &[
    (1, Some("flow"), &[0, 1], 3),
    (2, Some("flow"), &[0, 2], 7),
    (3, Some("flow"), &[1, 2], 5),
    (4, Some("a;b"), &[], 2),
    (5, Some("cap 12"), &[], 9),
    (6, None, &[], 1),
    (7, Some(""), &[], 4),
    (8, Some("BTreeMap[key]"), &[], 2),
    (9, Some("(unnamed)"), &[], 2),
    (10, Some("flow"), &[2, 2], 7),
];

/// The crafted instance: 10 variables (x[0..8] and two unnamed), the
/// constraints above, and one removed constraint of family "flow".
fn crafted() -> pb::Instance {
    let mut variables: Vec<_> = (0..8)
        .map(|i| variable(i, Some("x"), &[i as i64]))
        .collect();
    variables.push(variable(8, None, &[]));
    variables.push(variable(9, Some("y"), &[]));
    pb::Instance {
        decision_variables: variables,
        objective: Some(linear(&[0, 1])),
        constraints: CONSTRAINTS
            .iter()
            .map(|&(id, name, subs, terms)| constraint(id, name, subs, terms))
            .collect(),
        removed_constraints: vec![pb::RemovedConstraint {
            constraint: Some(constraint(11, Some("flow"), &[9, 9], 8)),
            removed_reason: "relaxed".to_string(),
            removed_reason_parameters: Default::default(),
        }],
        sense: pb::instance::Sense::Minimize as i32,
        ..Default::default()
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// `path bytes` lines of folded output.
fn folded(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .map(|l| {
            let (path, bytes) = l.rsplit_once(' ').unwrap();
            (path.to_string(), bytes.parse().unwrap())
        })
        .collect()
}

fn total(text: &str) -> u64 {
    folded(text).iter().map(|l| l.1).sum()
}

/// The folded profile with the family frame (the second frame under an
/// entity container) taken out and equal paths summed.
fn without_families(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (path, bytes) in folded(text) {
        let mut frames: Vec<&str> = path.split(';').collect();
        let grouped = matches!(
            frames[0],
            "Instance.decision_variables" | "Instance.constraints" | "Instance.removed_constraints"
        );
        if grouped && frames.len() > 2 {
            frames.remove(1);
        }
        *out.entry(frames.join(";")).or_insert(0) += bytes;
    }
    out
}

#[test]
fn families_get_one_escaped_frame_each_and_keep_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "crafted.pb", &crafted().encode_to_vec());
    let plain = ok(&["inspect", &file, "-f", "folded"]);
    let grouped = ok(&["inspect", &file, "-f", "folded", "--group-by", "name"]);
    assert_eq!(total(&plain), total(&grouped));
    let plain_lines: BTreeMap<String, u64> = folded(&plain).into_iter().collect();
    assert_eq!(without_families(&grouped), plain_lines);

    let mut families = BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for (path, _) in folded(&grouped) {
        let frames: Vec<&str> = path.split(';').collect();
        if frames.len() > 2 && frames[0].starts_with("Instance.") {
            families
                .entry(frames[0].to_string())
                .or_default()
                .insert(frames[1].to_string());
        }
    }
    let constraint_families: Vec<&str> = families["Instance.constraints"]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        constraint_families,
        [
            "%28unnamed)",
            "%42TreeMap[key]",
            "(empty name)",
            "(unnamed)",
            "a%3Bb",
            "cap%2012",
            "flow",
        ]
    );
    let variable_families: Vec<&str> = families["Instance.decision_variables"]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(variable_families, ["(unnamed)", "x", "y"]);
    assert!(families["Instance.removed_constraints"].contains("flow"));
    // The container's own stack part stays directly under it.
    assert!(grouped.contains("\nInstance.constraints;BTreeMap[stack] 24\n"));

    // The "flow" family holds exactly its four constraints: per constraint
    // 8 (key) + 8 (id) + 1 (equality) + 32 + 24·terms + name 28 +
    // subscripts 24 + 16 + parameters 32 + description 24.
    let flow: u64 = folded(&grouped)
        .iter()
        .filter(|(p, _)| p.starts_with("Instance.constraints;flow;"))
        .map(|l| l.1)
        .sum();
    let terms = 3 + 7 + 5 + 7;
    assert_eq!(
        flow,
        4 * (8 + 8 + 1 + 32 + 28 + 24 + 16 + 32 + 24) + 24 * terms
    );

    // The JSON tree and the flamegraph take the same frames.
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", &file, "-f", "json", "--group-by", "name"])).unwrap();
    assert_eq!(doc["total_bytes"], total(&plain));
    let svg = ok(&["flamegraph", &file, "--group-by", "name", "-o", "-"]);
    assert!(
        svg.contains("cap%2012"),
        "family frames reach the flamegraph"
    );
}

#[test]
fn grouping_changes_no_total_on_any_oracle_fixture() {
    for path in pb_files("oracle") {
        let p = path.to_str().unwrap();
        let plain = ok(&["inspect", p, "-f", "folded"]);
        let grouped = ok(&["inspect", p, "-f", "folded", "--group-by", "name"]);
        let plain_lines: BTreeMap<String, u64> = folded(&plain).into_iter().collect();
        assert_eq!(without_families(&grouped), plain_lines, "{p}");
    }
}

#[test]
fn wire_total_is_the_blob_size_on_every_oracle_fixture() {
    let mut checked = 0;
    for path in pb_files("oracle") {
        let p = path.to_str().unwrap();
        let size = fs::metadata(&path).unwrap().len();
        let wire = ok(&["inspect", p, "-f", "folded", "--view", "wire"]);
        assert_eq!(total(&wire), size, "{p}");
        let grouped = ok(&[
            "inspect",
            p,
            "-f",
            "folded",
            "--view",
            "wire",
            "--group-by",
            "name",
        ]);
        assert_eq!(total(&grouped), size, "{p} grouped");
        checked += 1;
    }
    assert!(checked >= 30);

    // Each instance layer of an archive: its blob's size.
    let layers: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(oracle("multi.layers.json")).unwrap()).unwrap();
    let sizes: Vec<u64> = layers["layers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["mediaType"] == "application/org.ommx.v1.instance")
        .map(|l| l["size"].as_u64().unwrap())
        .collect();
    let multi = oracle("multi.ommx");
    for (k, size) in sizes.iter().enumerate() {
        let k = k.to_string();
        let wire = ok(&[
            "inspect", &multi, "--layer", &k, "-f", "folded", "--view", "wire",
        ]);
        assert_eq!(total(&wire), *size, "layer {k}");
    }
    let all = ok(&["inspect", &multi, "-f", "folded", "--view", "wire"]);
    assert_eq!(total(&all), sizes.iter().sum::<u64>());
}

#[test]
fn wire_view_shows_overhead_and_unknown_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut instance = crafted();
    instance.named_functions.push(pb::NamedFunction {
        id: 1,
        function: Some(linear(&[0])),
        name: Some("f".to_string()),
        ..Default::default()
    });
    let mut bytes = instance.encode_to_vec();
    // A constraint carrying the unused field 4 (varint 7): 2 unknown bytes.
    let mut body = constraint(20, Some("extra"), &[], 1).encode_to_vec();
    body.extend_from_slice(&[0x20, 0x07]);
    bytes.push(0x22);
    bytes.push(body.len() as u8);
    bytes.extend_from_slice(&body);
    // A top-level field 53 (varint 1): 3 unknown bytes.
    bytes.extend_from_slice(&[0xa8, 0x03, 0x01]);
    let file = write(dir.path(), "unknown.pb", &bytes);

    let wire = ok(&["inspect", &file, "-f", "folded", "--view", "wire"]);
    assert_eq!(total(&wire), bytes.len() as u64);
    let lines: BTreeMap<String, u64> = folded(&wire).into_iter().collect();
    assert_eq!(lines["Wire[unknown fields]"], 3);
    assert_eq!(lines["Instance.constraints;Wire[unknown fields]"], 2);
    // One tag byte per constraint element (11 of them), and their length
    // prefixes.
    assert_eq!(lines["Instance.constraints;Wire[tag]"], 11);
    let prefixes: usize = instance
        .constraints
        .iter()
        .map(|c| prost::encoding::encoded_len_varint(c.encoded_len() as u64))
        .sum();
    assert_eq!(
        lines["Instance.constraints;Wire[length]"],
        prefixes as u64 + 1
    );
    // Named functions are not in memory for 2.9.3 but are in the file.
    assert!(lines.contains_key("Instance.named_functions;NamedFunction.name"));
    // The payload of constraint names is their UTF-8 bytes.
    let names: u64 = CONSTRAINTS
        .iter()
        .filter_map(|c| c.1)
        .map(|n| n.len() as u64)
        .sum();
    assert_eq!(
        lines["Instance.constraints;Constraint.name"],
        names + "extra".len() as u64
    );

    let both = ok(&[
        "inspect", &file, "--view", "both", "-f", "table", "--top", "200",
    ]);
    assert!(both.contains("memory / disk"), "{both}");
    assert!(both.contains("Wire[unknown fields]"), "{both}");
    assert!(
        both.contains(&format!(
            "({} B, encoded protobuf",
            memprof::units::thousands(bytes.len() as u64)
        )),
        "{both}"
    );
    let err = fails(&["inspect", &file, "--view", "both", "-f", "json"]);
    assert!(
        err.contains("--view both is only available with --format table"),
        "{err}"
    );
    let svg = ok(&["flamegraph", &file, "--view", "wire", "-o", "-"]);
    assert!(svg.contains("encoded protobuf bytes"));
}

/// Logical bytes of a crafted constraint (OMMX 2.9.3's rules, spelled out).
fn constraint_bytes(name: Option<&str>, subscripts: usize, terms: u64) -> u64 {
    let name = 24 + name.map_or(0, |n| n.len() as u64);
    // key, id, equality, linear terms, name, subscripts, parameters, description
    8 + 8 + 1 + (32 + 24 * terms) + name + (24 + 8 * subscripts as u64) + 32 + 24
}

#[test]
fn top_ranks_entities_by_bytes_then_id() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "crafted.pb", &crafted().encode_to_vec());
    let mut want: Vec<(u64, u64, &str)> = CONSTRAINTS
        .iter()
        .map(|&(id, name, subs, terms)| {
            (id, constraint_bytes(name, subs.len(), terms), "constraint")
        })
        .collect();
    // The removed one: its constraint, the reason "relaxed", its parameters.
    want.push((
        11,
        constraint_bytes(Some("flow"), 2, 8) + 24 + 7 + 32,
        "removed",
    ));
    // Equal sizes: the smaller id first.
    want.sort_by_key(|w| (std::cmp::Reverse(w.1), w.0));
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["top", &file, "-n", "5", "-f", "json"])).unwrap();
    let got: Vec<(u64, u64, &str)> = doc["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_u64().unwrap(),
                e["bytes"].as_u64().unwrap(),
                e["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want[..5]);
    // Ties: flow[0,2] (id 2) and flow[2,2] (id 10) are the same size.
    let ids: Vec<u64> = got.iter().map(|g| g.0).collect();
    let (two, ten) = (
        ids.iter().position(|&i| i == 2),
        ids.iter().position(|&i| i == 10),
    );
    assert!(two.is_some() && two < ten, "{ids:?}");
    let first = &doc["entities"][0];
    assert_eq!(first["name"], "flow");
    assert_eq!(first["subscripts"], serde_json::json!([9, 9]));
    assert_eq!(first["terms"], 8);
    assert!(first["wire_bytes"].as_u64().unwrap() > 0);

    let constraints: serde_json::Value = serde_yaml::from_str(&ok(&[
        "top",
        &file,
        "-n",
        "100",
        "--kind",
        "constraint",
        "-f",
        "yaml",
    ]))
    .unwrap();
    let kinds: Vec<&str> = constraints["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), CONSTRAINTS.len());
    assert!(kinds.iter().all(|&k| k == "constraint"));

    // Variables x[0..8] all cost 153 + 1 (name) + 8 (one subscript): the
    // smaller id first (whatever their encodings: x[0]'s id 0 is not
    // encoded at all).
    let vars: serde_json::Value = serde_json::from_str(&ok(&[
        "top", &file, "-n", "3", "--kind", "variable", "-f", "json",
    ]))
    .unwrap();
    let vars: Vec<(u64, u64)> = vars["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_u64().unwrap(), e["bytes"].as_u64().unwrap()))
        .collect();
    assert_eq!(vars, [(0, 162), (1, 162), (2, 162)]);

    // The tie rule is said where it decided the cut: five more variables of
    // 162 B are left out after x[2]; nothing ties at the cut of the two
    // largest entities.
    let ties = ok(&["top", &file, "-n", "3", "--kind", "variable"]);
    assert!(
        ties.ends_with(
            "\n5 more entities tie with the last row at 162 B and are not listed \
             (ties are listed by id, smaller first, then by kind)\n"
        ),
        "{ties}"
    );
    let table = ok(&["top", &file, "-n", "2"]);
    assert_ne!(want[1].1, want[2].1, "no tie at the cut");
    assert!(!table.contains("ties are listed"), "{table}");
    assert!(table.ends_with("┘\n"), "{table}");
    let total = doc["total_bytes"].as_u64().unwrap();
    let share = format!("{:.1}%", want[0].1 as f64 * 100.0 / total as f64);
    assert!(table.contains(&share), "{table}");
    assert!(table.contains("flow[9,9]"), "{table}");
}

/// Profiles `path` (one instance) with `group_by`, explains every path of
/// the profile and checks each explanation against it: its bytes and leaves,
/// and each group's arithmetic. Returns the number of paths checked.
pub(crate) fn explain_every_path(
    path: &Path,
    group_by: memprof::profile::family::GroupBy,
) -> usize {
    use memprof::drill::explain::Explainer;
    use memprof::input::read_with;
    use memprof::input::{Input, Limits, Selection};
    use memprof::pass::{Pass, ProfileOptions};
    let bar = indicatif::ProgressBar::hidden();
    let input = Input::Path(path.to_path_buf());
    let options = ProfileOptions {
        group_by,
        ..ProfileOptions::default()
    };
    // First the profile, to learn its paths; then explain them all.
    let mut nothing = ();
    let mut pass = Pass {
        options,
        ..Pass::new(&mut nothing)
    };
    let profiled = read_with(&input, Selection::All, &Limits::default(), &mut pass, &bar).unwrap();
    let aggregate = &profiled.instances[0].aggregate;
    let totals = aggregate.totals();
    let paths: Vec<String> = (1..aggregate.len())
        .map(|id| aggregate.frames_of(id).join(";"))
        .collect();
    let mut explainer = Explainer::new(&paths, group_by);
    let mut pass = Pass {
        options,
        ..Pass::new(&mut explainer)
    };
    read_with(&input, Selection::All, &Limits::default(), &mut pass, &bar).unwrap();
    assert_eq!(explainer.unexplained_bytes, 0, "{}", path.display());
    let mut checked = 0;
    for (i, x) in explainer.explanations().into_iter().enumerate() {
        let at = format!("{} {}", path.display(), x.path);
        assert_eq!(x.bytes, totals[i + 1].bytes, "{at}");
        let leaves: u64 = x.groups.iter().map(|g| g.leaves).sum();
        assert_eq!(leaves, totals[i + 1].leaves, "{at}");
        for g in &x.groups {
            let per_unit: u64 = g.units.iter().map(|u| u.bytes_per_unit * u.total).sum();
            assert_eq!(g.bytes, g.leaves * g.base + per_unit, "{}", g.path);
        }
        checked += 1;
    }
    checked
}

#[test]
fn explanations_add_up_to_every_reported_path_of_every_oracle_fixture() {
    use memprof::profile::family::GroupBy;
    let mut checked = 0;
    for path in pb_files("oracle") {
        for group_by in [GroupBy::None, GroupBy::Name] {
            checked += explain_every_path(&path, group_by);
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn explain_states_the_rule_and_the_arithmetic() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "crafted.pb", &crafted().encode_to_vec());
    let terms = "Instance.constraints;flow;Constraint.function;Linear;PolynomialBase.terms";
    let text = ok(&["explain", &file, terms, "--group-by", "name"]);
    // flow[...] has 3, 7, 5 and 7 terms.
    assert!(
        text.contains("4 functions of 3 to 7 terms (22 in all): 4 × 32 B + 22 × 24 B = 656 B"),
        "{text}"
    );
    assert!(text.contains("rule: a Linear function"), "{text}");
    let uniform = ok(&[
        "explain",
        &file,
        "Instance.constraints;cap%2012;Constraint.function",
        "--group-by",
        "name",
    ]);
    assert!(
        uniform.contains("1 function of 9 terms: 1 × (32 B + 9 × 24 B) = 248 B"),
        "{uniform}"
    );

    let doc: serde_json::Value = serde_json::from_str(&ok(&[
        "explain",
        &file,
        "Instance.constraints",
        "Instance.decision_variables;DecisionVariable.metadata",
        "-f",
        "json",
    ]))
    .unwrap();
    let profile: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", &file, "-f", "json"])).unwrap();
    let child = |name: &str| {
        profile["tree"]["children"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        doc["explanations"][0]["bytes"],
        child("Instance.constraints")["bytes"]
    );
    let ten_vars_of_metadata = doc["explanations"][1]["bytes"].as_u64().unwrap();
    // 10 × (name 24 + subscripts 24 + parameters 32 + description 24),
    // plus 9 names' bytes ("x" × 8, "y") and 8 subscripts.
    assert_eq!(ten_vars_of_metadata, 10 * 104 + 9 + 8 * 8);

    let err = fails(&["explain", &file, "Instance.nowhere"]);
    assert!(
        err.contains("the profile has no path \"Instance.nowhere\""),
        "{err}"
    );
    let err = fails(&["explain", &oracle("multi.ommx"), "Instance.constraints"]);
    assert!(err.contains("pick one with --layer"), "{err}");
    ok(&[
        "explain",
        &oracle("multi.ommx"),
        "--layer",
        "1",
        "Instance.sense",
    ]);
}

fn nearest_rank(mut values: Vec<u64>, p: f64) -> u64 {
    values.sort_unstable();
    let rank = ((p / 100.0 * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

#[test]
fn stats_give_per_kind_and_per_family_distributions() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "crafted.pb", &crafted().encode_to_vec());
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["stats", &file, "-f", "json"])).unwrap();
    assert!(doc["percentiles"]
        .as_str()
        .unwrap()
        .contains("nearest-rank"));
    let family = |kind: &str, name: serde_json::Value| {
        doc["families"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == kind && f["family"] == name)
            .unwrap_or_else(|| panic!("no family {kind} {name}"))
            .clone()
    };
    let flow = family("constraint", "flow".into());
    let flow_rows: Vec<_> = CONSTRAINTS.iter().filter(|c| c.1 == Some("flow")).collect();
    let bytes: Vec<u64> = flow_rows
        .iter()
        .map(|c| constraint_bytes(c.1, c.2.len(), c.3))
        .collect();
    let terms: Vec<u64> = flow_rows.iter().map(|c| c.3).collect();
    assert_eq!(flow["count"], 4);
    assert_eq!(flow["bytes"]["total"], bytes.iter().sum::<u64>());
    assert_eq!(flow["bytes"]["min"], *bytes.iter().min().unwrap());
    assert_eq!(flow["bytes"]["max"], *bytes.iter().max().unwrap());
    for (p, key) in [(50.0, "p50"), (90.0, "p90"), (99.0, "p99")] {
        assert_eq!(flow["bytes"][key], nearest_rank(bytes.clone(), p), "{key}");
        assert_eq!(flow["terms"][key], nearest_rank(terms.clone(), p), "{key}");
    }
    assert_eq!(flow["terms"]["p50"], 5);
    assert_eq!(flow["bytes"]["exact"], true);
    // Largest: 7 terms, ids 2 and 10 tie; the first in the stream wins.
    assert_eq!(flow["largest"]["id"], 2);
    assert_eq!(flow["largest"]["subscripts"], serde_json::json!([0, 2]));

    let unnamed = family("constraint", serde_json::Value::Null);
    assert_eq!(unnamed["count"], 1);
    let x = family("variable", "x".into());
    assert_eq!(
        (x["count"].as_u64(), x["bytes"]["p99"].as_u64()),
        (Some(8), Some(162))
    );
    assert!(x["terms"].is_null());
    let removed = family("removed", "flow".into());
    assert_eq!(removed["count"], 1);

    let kinds = doc["kinds"].as_array().unwrap();
    let constraints = kinds.iter().find(|k| k["kind"] == "constraint").unwrap();
    let all: Vec<u64> = CONSTRAINTS
        .iter()
        .map(|c| constraint_bytes(c.1, c.2.len(), c.3))
        .collect();
    assert_eq!(constraints["count"], CONSTRAINTS.len() as u64);
    assert_eq!(constraints["bytes"]["p90"], nearest_rank(all.clone(), 90.0));
    assert_eq!(constraints["bytes"]["total"], all.iter().sum::<u64>());
    // Kind totals add up to the entity containers of the profile, keys included.
    let profile: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", &file, "-f", "json"])).unwrap();
    let container = profile["tree"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Instance.constraints")
        .unwrap()["bytes"]
        .as_u64()
        .unwrap();
    assert_eq!(
        container,
        all.iter().sum::<u64>() + 24,
        "plus BTreeMap[stack]"
    );

    let only: serde_json::Value =
        serde_yaml::from_str(&ok(&["stats", &file, "--kind", "variable", "-f", "yaml"])).unwrap();
    assert_eq!(only["kinds"].as_array().unwrap().len(), 1);
    let table = ok(&["stats", &file, "--top", "2"]);
    assert!(table.contains("more families; raise --top"), "{table}");
    assert!(table.contains("flow"), "{table}");
}

#[test]
fn stats_switch_to_log_buckets_past_64_distinct_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let n = 150u64;
    let instance = pb::Instance {
        decision_variables: (0..n).map(|i| variable(i, None, &[])).collect(),
        objective: Some(linear(&[])),
        constraints: (1..=n)
            .map(|t| constraint(t, Some("wide"), &[], t))
            .collect(),
        ..Default::default()
    };
    let file = write(dir.path(), "wide.pb", &instance.encode_to_vec());
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["stats", &file, "--kind", "constraint", "-f", "json"])).unwrap();
    let wide = &doc["families"][0];
    assert_eq!(wide["family"], "wide");
    let bytes: Vec<u64> = (1..=n)
        .map(|t| constraint_bytes(Some("wide"), 0, t))
        .collect();
    assert_eq!(wide["bytes"]["exact"], false);
    // Terms 1..=150 are below 256: their buckets are exact values.
    assert_eq!(wide["terms"]["p50"], 75);
    for key in ["p50", "p90", "p99"] {
        let p: f64 = key[1..].parse().unwrap();
        let truth = nearest_rank(bytes.clone(), p);
        let got = wide["bytes"][key].as_u64().unwrap();
        assert!(
            got <= truth && (truth - got) * 128 <= truth,
            "{key}: {got} vs {truth}"
        );
    }
    assert_eq!(wide["bytes"]["min"], bytes[0]);
    assert_eq!(wide["bytes"]["max"], bytes[bytes.len() - 1]);
    assert_eq!(wide["largest"]["id"], n);
}

/// Bytes of the folded lines at `prefix` or below it.
fn under(folded_text: &str, prefix: &str) -> u64 {
    folded(folded_text)
        .iter()
        .filter(|(path, _)| path == prefix || path.starts_with(&format!("{prefix};")))
        .map(|(_, bytes)| bytes)
        .sum()
}

/// What `memprof top ARGS -f json` ranks: (kind, id, bytes, wire bytes).
fn ranked(args: &[&str]) -> Vec<(String, Option<u64>, u64, u64)> {
    let mut args = args.to_vec();
    args.extend(["-f", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    doc["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_string(),
                e["id"].as_u64(),
                e["bytes"].as_u64().unwrap(),
                e["wire_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn top_shows_an_objective_that_dominates() {
    let dir = tempfile::tempdir().unwrap();
    let qubo = dir.path().join("qubo.pb");
    let status = assert_cmd::Command::cargo_bin("memprof-gen")
        .unwrap()
        .args(["qubo", "--variables", "300", "-o", qubo.to_str().unwrap()])
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let qubo = qubo.to_str().unwrap();
    // The objective's field, as the wire view measures it.
    let wire = under(
        &ok(&["inspect", qubo, "--view", "wire", "-f", "folded"]),
        "Instance.objective",
    );
    for accounting in ["2.9", "3.0"] {
        let profile = ok(&["inspect", qubo, "--accounting", accounting, "-f", "folded"]);
        let objective = under(&profile, "Instance.objective");
        assert!(objective * 10 > total(&profile) * 9, "{objective}");
        let top = ranked(&["top", qubo, "-n", "1", "--accounting", accounting]);
        assert_eq!(top, [("objective".to_string(), None, objective, wire)]);
        let only = ranked(&[
            "top",
            qubo,
            "--kind",
            "objective",
            "--accounting",
            accounting,
        ]);
        assert_eq!(only, top);
    }
    // 300 × 299 / 2 quadratic terms and 300 linear ones.
    let table = ok(&["top", qubo, "-n", "2"]);
    let row = table
        .lines()
        .find(|l| l.contains("objective"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = row.split(['│', '┆']).map(str::trim).collect();
    assert_eq!(cells[1..6], ["1", "objective", "-", "-", "45,150"], "{row}");
    assert!(cells[6].ends_with(" MiB (1,444,832 B)"), "{row}");
}

#[test]
fn top_ranks_hints_and_every_v2_objective() {
    // OMMX 2.9.3's hints: each kind's entities are its container less the
    // container's Vec (24 B).
    for (fixture, kind, container, ids) in [
        (
            "hints_one_hot.pb",
            "one-hot",
            "Instance.constraint_hints;ConstraintHints.one_hot_constraints",
            vec![1, 2, 2],
        ),
        (
            "hints_sos1.pb",
            "sos1",
            "Instance.constraint_hints;ConstraintHints.sos1_constraints",
            vec![1, 5, 6],
        ),
    ] {
        let file = oracle(fixture);
        let hints = ranked(&["top", &file, "--kind", kind, "-n", "100"]);
        let mut got: Vec<u64> = hints.iter().map(|h| h.1.unwrap()).collect();
        got.sort();
        assert_eq!(got, ids, "{fixture}");
        let profile = ok(&["inspect", &file, "-f", "folded"]);
        let bytes: u64 = hints.iter().map(|h| h.2).sum();
        assert_eq!(bytes, under(&profile, container) - 24, "{fixture}");
        assert!(hints.iter().all(|h| h.0 == kind && h.3 > 0), "{hints:?}");
    }
    // ommx.v2 input: the objective is OMMX 3.0's, its field the wire view's.
    let mut checked = 0;
    for path in crate::fixtures().join("v2/oracle").read_dir().unwrap() {
        let path = path.unwrap().path();
        if path.extension().is_none_or(|e| e != "pb") {
            continue;
        }
        let file = path.to_str().unwrap();
        let expected = fs::read_to_string(path.with_extension("folded")).unwrap();
        let wire = ok(&["inspect", file, "--view", "wire", "-f", "folded"]);
        let objective = ranked(&["top", file, "--kind", "objective"]);
        let want = (
            "objective".to_string(),
            None,
            under(&expected, "Instance.objective"),
            under(&wire, "Instance.objective"),
        );
        assert_eq!(objective, [want], "{file}");
        checked += 1;
    }
    assert!(checked >= 15, "{checked}");
}

#[test]
fn tables_print_names_as_written_and_folded_stacks_escape_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut instance = crafted();
    instance
        .constraints
        .push(constraint(12, Some("制約%"), &[3], 10));
    instance
        .constraints
        .push(constraint(13, Some("tab\there"), &[], 10));
    let file = write(dir.path(), "names.pb", &instance.encode_to_vec());
    let top = ok(&["top", &file, "-n", "2", "--kind", "constraint"]);
    let names: Vec<&str> = top
        .lines()
        .filter(|l| l.starts_with('│') && !l.contains(" kind "))
        .map(|l| l.split('┆').nth(3).unwrap().trim())
        .collect();
    // A name as written; a control character, which a terminal would
    // obey, escaped.
    assert_eq!(names, ["制約%[3]", "tab\\there"], "{top}");
    let stats = ok(&["stats", &file]);
    assert!(stats.contains("│ constraint ┆ 制約% "), "{stats}");
    assert!(stats.contains("│ constraint ┆ a;b "), "{stats}");
    assert!(stats.contains("12 制約%[3] ("), "{stats}");
    // Folded stacks need the escapes: `;` and `%` are their syntax.
    let folded = ok(&["inspect", &file, "--group-by", "name", "-f", "folded"]);
    assert!(folded.contains("Instance.constraints;制約%25;"), "{folded}");
    assert!(folded.contains("Instance.constraints;a%3Bb;"), "{folded}");
}
