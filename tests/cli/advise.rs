//! `memprof advise`: each rule on a crafted instance whose saving is worked
//! out by hand below, from OMMX 2.9.3's accounting (fixtures/README.md):
//! an unlabelled variable is 153 B with its map key; a constraint is 121 B
//! besides its function (key 8, id 8, equality 1, empty name 24, subscripts
//! 24, parameters 32, description 24); a function is 32 B plus 24 (Linear),
//! 32 (Quadratic) or 48 (Polynomial) per stored term; a string is 24 B plus
//! its length.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use memprof::ommx_v1 as pb;
use prost::Message;
use serde_json::{json, Value};

use crate::{fails, memprof, ok, oracle};

fn var(id: u64) -> pb::DecisionVariable {
    pb::DecisionVariable {
        id,
        kind: pb::decision_variable::Kind::Continuous as i32,
        bound: Some(pb::Bound {
            lower: 0.0,
            upper: 1.0,
        }),
        ..Default::default()
    }
}

fn named_var(id: u64, name: &str) -> pb::DecisionVariable {
    pb::DecisionVariable {
        name: Some(name.to_string()),
        ..var(id)
    }
}

fn linear(terms: &[(u64, f64)], constant: f64) -> pb::Function {
    pb::Function {
        function: Some(pb::function::Function::Linear(pb::Linear {
            terms: terms
                .iter()
                .map(|&(id, coefficient)| pb::LinearTerm { id, coefficient })
                .collect(),
            constant,
        })),
    }
}

fn polynomial(terms: &[(&[u64], f64)]) -> pb::Function {
    pb::Function {
        function: Some(pb::function::Function::Polynomial(pb::Polynomial {
            terms: terms
                .iter()
                .map(|&(ids, coefficient)| pb::Monomial {
                    ids: ids.to_vec(),
                    coefficient,
                })
                .collect(),
        })),
    }
}

fn constraint(id: u64, function: pb::Function) -> pb::Constraint {
    pb::Constraint {
        id,
        equality: pb::Equality::LessThanOrEqualToZero as i32,
        function: Some(function),
        ..Default::default()
    }
}

fn removed(id: u64, function: pb::Function, reason: &str) -> pb::RemovedConstraint {
    pb::RemovedConstraint {
        constraint: Some(constraint(id, function)),
        removed_reason: reason.to_string(),
        ..Default::default()
    }
}

fn instance(variables: Vec<pb::DecisionVariable>, objective: pb::Function) -> pb::Instance {
    pb::Instance {
        decision_variables: variables,
        objective: Some(objective),
        sense: 1,
        ..Default::default()
    }
}

/// Writes `instance` and runs `advise --format json` (plus `args`) on it.
fn advise(dir: &Path, instance: &pb::Instance, args: &[&str]) -> Value {
    let path = dir.join("instance.pb");
    fs::write(&path, instance.encode_to_vec()).unwrap();
    let mut all = vec!["advise", path.to_str().unwrap(), "--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(&all)).unwrap()
}

fn layer(doc: &Value) -> &Value {
    let layers = doc["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    &layers[0]
}

fn rules(doc: &Value) -> Vec<&str> {
    layer(doc)["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect()
}

fn rule<'a>(doc: &'a Value, id: &str) -> &'a Value {
    layer(doc)["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rule"] == id)
        .unwrap_or_else(|| panic!("no {id} recommendation in {doc:#}"))
}

fn saving(doc: &Value, id: &str) -> u64 {
    rule(doc, id)["saving_bytes"].as_u64().unwrap()
}

/// Bytes of an instance with no entities, besides its objective: sense 1,
/// three entity maps 3 × 24, hints 2 × 24, dependency 32 + 144, parameters
/// `None` 48, description `None` 168, annotations 48.
const BARE: u64 = 1 + 72 + 48 + 176 + 48 + 168 + 48;

#[test]
fn an_instance_with_nothing_to_change_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let empty = instance(vec![], linear(&[], 0.0));
    let doc = advise(dir.path(), &empty, &[]);
    assert_eq!(layer(&doc)["total_bytes"], BARE + 32);
    // Only the comparison with OMMX 3.0, whose per-instance tables make an
    // empty instance larger: nothing to save.
    assert_eq!(rules(&doc), ["ommx-3-layout"]);
    assert_eq!(saving(&doc, "ommx-3-layout"), 0);
    assert_eq!(layer(&doc)["estimated_saving_bytes"], 0);
    let path = dir.path().join("instance.pb");
    let table = ok(&["advise", path.to_str().unwrap()]);
    assert!(
        table.contains("no change you can make in OMMX 2.9.3 would save memory"),
        "{table}"
    );
    assert!(table.contains("saves nothing"), "{table}");
    // Read from a stream, it is compared with 3.0 all the same: the table
    // is the file's, but for the lines that name and size the input.
    let out = memprof()
        .args(["advise", "-"])
        .write_stdin(empty.encode_to_vec())
        .output()
        .unwrap();
    let streamed = String::from_utf8(out.stdout).unwrap();
    let named = |t: &str| {
        let rest = t.lines().filter(|l| !l.starts_with("file"));
        rest.collect::<Vec<_>>().join("\n")
    };
    assert!(streamed.starts_with("file:        <stdin>"), "{streamed}");
    assert_eq!(named(&streamed), named(&table));
}

#[test]
fn unused_variables() {
    let dir = tempfile::tempdir().unwrap();
    // x1 is in the objective, x2 is assigned by a dependency on x1, x4 is in
    // a one-hot hint; x3 (named "spare") is used by nothing: 153 + 5 B.
    let mut inst = instance(
        vec![var(1), var(2), named_var(3, "spare"), var(4)],
        linear(&[(1, 1.0)], 0.0),
    );
    inst.constraints = vec![constraint(7, linear(&[(1, 1.0)], -1.0))];
    inst.decision_variable_dependency = BTreeMap::from([(2, linear(&[(1, 2.0)], 0.0))]);
    inst.constraint_hints = Some(pb::ConstraintHints {
        one_hot_constraints: vec![pb::OneHot {
            constraint_id: 7,
            decision_variables: vec![4],
        }],
        ..Default::default()
    });
    let doc = advise(dir.path(), &inst, &[]);
    let r = rule(&doc, "unused-variables");
    assert_eq!(r["change"], "ommx");
    assert_eq!(r["saving_bytes"], 153 + 5);
    assert_eq!(
        r["title"],
        "1 of 4 variables is used by no objective, constraint, named function, hint or \
         dependency; it takes 158 B"
    );
    assert_eq!(r["details"]["unused"], 1);
    assert_eq!(r["sample"][0]["id"], 3);
    assert_eq!(r["sample"][0]["name"], "spare");
}

#[test]
fn removed_constraints_and_the_combined_saving() {
    let dir = tempfile::tempdir().unwrap();
    // x1, x2 unlabelled and used; x3 "u" unused (154 B).
    let mut inst = instance(
        vec![var(1), var(2), named_var(3, "u")],
        linear(&[(1, 1.0)], 0.0),
    );
    // Active: x1 + x2 (Linear, 2 terms: 80 B).
    inst.constraints = vec![constraint(1, linear(&[(1, 1.0), (2, 1.0)], 0.0))];
    // Removed: x1 (56 B) with reason "r": key 8, id 8, equality 1, function
    // 56, name 24, subscripts 24, parameters 32, description 24, reason
    // 24 + 1, reason parameters 32 = 234 B.
    inst.removed_constraints = vec![removed(9, linear(&[(1, 1.0)], 0.0), "r")];
    let doc = advise(dir.path(), &inst, &[]);
    // Total: bare 561, objective 56, variables 153 + 153 + 154, constraint
    // 121 + 80, removed 234.
    assert_eq!(layer(&doc)["total_bytes"], BARE + 56 + 460 + 201 + 234);
    assert_eq!(saving(&doc, "removed-constraints"), 234);
    assert_eq!(rule(&doc, "removed-constraints")["sample"][0]["id"], 9);
    assert_eq!(saving(&doc, "unused-variables"), 154);
    // CSR: x1 + x2 is 8 + 2 × 16 = 40 (was 80), x1 is 24 (was 56).
    assert_eq!(saving(&doc, "representation-csr"), 40 + 32);
    // Metadata content: the name "u" and the reason "r".
    assert_eq!(saving(&doc, "metadata-overhead"), 2);
    let mut sorted = rules(&doc);
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "metadata-overhead",
            "ommx-3-layout",
            "removed-constraints",
            "representation-csr",
            "unused-variables"
        ]
    );
    // Combined, each byte once, over the changes made in OMMX: the removed
    // constraint (234) and x3 (154) go whole, so neither their labels nor
    // the removed function count again, and no label content is left. The
    // CSR layout and OMMX 3.0 are no changes to the instance: not in it.
    let combined = 234 + 154;
    assert_eq!(layer(&doc)["estimated_saving_bytes"], combined);
    let naive: u64 = layer(&doc)["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["change"] == "ommx")
        .map(|r| r["saving_bytes"].as_u64().unwrap())
        .sum();
    assert!(naive > combined);
}

#[test]
fn identical_functions_exact_and_up_to_a_factor() {
    let dir = tempfile::tempdir().unwrap();
    let mut inst = instance(vec![var(1), var(2)], linear(&[(1, 1.0)], 0.0));
    // Four 80-byte functions equal up to a factor: x1 + 2 x2 twice (one
    // exact repeat), 3 × it, and as a removed constraint 2 × it; x1 + 3 x2
    // is different.
    inst.constraints = vec![
        constraint(1, linear(&[(1, 1.0), (2, 2.0)], 0.0)),
        constraint(2, linear(&[(2, 2.0), (1, 1.0)], 0.0)),
        constraint(3, linear(&[(1, 3.0), (2, 6.0)], 0.0)),
        constraint(4, linear(&[(1, 1.0), (2, 3.0)], 0.0)),
    ];
    inst.removed_constraints = vec![removed(5, linear(&[(1, 2.0), (2, 4.0)], 0.0), "x")];
    let doc = advise(dir.path(), &inst, &[]);
    let r = rule(&doc, "identical-functions");
    // Shared, a layout OMMX does not offer: one 80-byte function kept,
    // three 16-byte references instead of three copies: 4 × 80 - 80 - 3 × 16.
    assert_eq!(
        (&r["change"], &r["severity"]),
        (&json!("not-in-ommx"), &json!("info"))
    );
    assert_eq!(r["saving_bytes"], 4 * 80 - 80 - 3 * 16);
    assert_eq!(r["bytes_concerned"], 4 * 80);
    assert_eq!(r["details"]["sets"], 1);
    assert_eq!(r["details"]["exact_repeats"], 1);
    assert_eq!(r["details"]["scaled_repeats"], 2);
    let sample: Vec<(u64, &str)> = r["sample"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_u64().unwrap(), s["detail"].as_str().unwrap()))
        .collect();
    assert_eq!(
        sample,
        [
            (2, "the same function as constraint 1"),
            (3, "3 × the function of constraint 1"),
            (5, "2 × the function of constraint 1"),
        ]
    );
    assert_eq!(
        r["paths"],
        serde_json::json!([
            "Instance.constraints;Constraint.function",
            "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.function"
        ])
    );
}

#[test]
fn representation_variant_and_csr() {
    let dir = tempfile::tempdir().unwrap();
    // Objective x1 + 2 x2 as a Polynomial: 32 + 2 × 48 = 128; as Linear 80.
    let mut inst = instance(
        vec![var(1), var(2)],
        polynomial(&[(&[1], 1.0), (&[2], 2.0)]),
    );
    // A Quadratic arm holding 3 linear terms: 32 + 3 × 32 = 128; as Linear
    // 104. A degree-2 Polynomial x1 x2 + x1: 128; as Quadratic 96.
    let quadratic_arm = pb::Function {
        function: Some(pb::function::Function::Quadratic(pb::Quadratic {
            linear: Some(pb::Linear {
                terms: vec![
                    pb::LinearTerm {
                        id: 1,
                        coefficient: 1.0,
                    },
                    pb::LinearTerm {
                        id: 2,
                        coefficient: 1.0,
                    },
                ],
                constant: -1.0,
            }),
            ..Default::default()
        })),
    };
    inst.constraints = vec![
        constraint(1, quadratic_arm),
        constraint(2, polynomial(&[(&[1, 2], 1.0), (&[1], 1.0)])),
    ];
    let doc = advise(dir.path(), &inst, &[]);
    let v = rule(&doc, "representation-variant");
    assert_eq!(v["saving_bytes"], (128 - 80) + (128 - 104) + (128 - 96));
    assert_eq!(v["details"]["functions"], 3);
    assert_eq!(v["change"], "ommx");
    // CSR over the constraint functions: 8 per row, 8 per id and 8 per
    // coefficient: 8 + (8 + 16 + 16) = 48 and 8 + 24 + 16 = 48, against
    // 128 + 128.
    let m = rule(&doc, "representation-csr");
    assert_eq!(m["bytes_concerned"], 256);
    assert_eq!(m["saving_bytes"], 256 - 96);
    assert_eq!(m["details"]["stored_terms"], 5);
    // Though it saves more, CSR is a layout OMMX does not offer: listed
    // after the variants, as info, and not in the combined saving.
    assert_eq!(m["severity"], "info");
    assert!(
        rules(&doc)
            .iter()
            .position(|r| *r == "representation-variant")
            < rules(&doc).iter().position(|r| *r == "representation-csr")
    );
    assert_eq!(layer(&doc)["estimated_saving_bytes"], 48 + 24 + 32);
}

#[test]
fn a_lone_constant_and_zero_take_their_cheapest_variant() {
    let dir = tempfile::tempdir().unwrap();
    // The objective 5 as a Linear constant: 32 + 24; as a Constant: 40.
    let mut inst = instance(vec![var(1)], linear(&[], 5.0));
    // A constraint on 0 (the constant arm 0.0, Zero: 40 B) takes 32 as an
    // empty Linear.
    let zero = pb::Function {
        function: Some(pb::function::Function::Constant(0.0)),
    };
    inst.constraints = vec![constraint(1, zero)];
    let doc = advise(dir.path(), &inst, &[]);
    let v = rule(&doc, "representation-variant");
    assert_eq!(v["saving_bytes"], 16 + 8);
    let details: Vec<&str> = v["sample"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["detail"].as_str().unwrap())
        .collect();
    assert_eq!(
        details,
        [
            "Zero of degree 0 with 0 terms: 40 B, 32 B as Linear",
            "Linear of degree 0 with 1 term: 56 B, 40 B as Constant"
        ]
    );
}

#[test]
fn ommx_3_samples_entities_in_both_accountings() {
    let dir = tempfile::tempdir().unwrap();
    let mut inst = instance(vec![var(1), named_var(2, "x")], linear(&[(1, 1.0)], 0.0));
    inst.constraints = vec![constraint(1, linear(&[(1, 1.0), (2, 1.0)], 0.0))];
    let doc = advise(dir.path(), &inst, &[]);
    let r = rule(&doc, "ommx-3-layout");
    assert_eq!(r["change"], "ommx-3.0");
    // An unlabelled variable: 153 B in 2.9.3; in 3.0 its row, id 8, kind 1
    // and bound 16. The name "x" adds a label entry in 3.0 (its key and
    // String, 8 + 24 + 1) and 1 B in 2.9.3.
    let details: Vec<(u64, &str)> = r["sample"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_u64().unwrap(), s["detail"].as_str().unwrap()))
        .collect();
    assert_eq!(details[0], (1, "153 B in OMMX 2.9.3, 25 B in OMMX 3.0"));
    assert_eq!(details[1], (2, "154 B in OMMX 2.9.3, 58 B in OMMX 3.0"));
    assert_eq!(details.len(), 3, "two variables and the constraint");
    let (v29, v30) = (
        r["details"]["ommx29_bytes"].as_u64().unwrap(),
        r["details"]["ommx30_bytes"].as_u64().unwrap(),
    );
    assert_eq!(v29, layer(&doc)["total_bytes"].as_u64().unwrap());
    assert_eq!(r["saving_bytes"], v29.saturating_sub(v30));
}

#[test]
fn metadata_against_payload() {
    let dir = tempfile::tempdir().unwrap();
    // One variable with a 10-char name and description, two subscripts and
    // one parameter: content 10 + 10 + 2 × 8 + (48 + 1 + 1) = 86 beyond the
    // empty 104, so the variable is 153 + 86 = 239 B.
    let mut v = named_var(1, "abcdefghij");
    v.description = Some("0123456789".into());
    v.subscripts = vec![1, 2];
    v.parameters = BTreeMap::from([("k".to_string(), "v".to_string())]);
    let mut inst = instance(vec![v], linear(&[(1, 1.0)], 0.0));
    let doc = advise(dir.path(), &inst, &[]);
    let total = BARE + 56 + 239;
    assert_eq!(layer(&doc)["total_bytes"], total);
    let r = rule(&doc, "metadata-overhead");
    // Labels: the variable's 190 and the instance's absent description
    // (168) and empty annotations (48). They do not dominate; the 86 B
    // they would save are 10.0% of 856: medium.
    let metadata = 190 + 168 + 48;
    assert_eq!(r["bytes_concerned"], metadata);
    assert_eq!(r["saving_bytes"], 86);
    assert_eq!(r["details"]["payload_bytes"], total - metadata);
    assert_eq!(r["details"]["dominates"], false);
    assert_eq!(r["severity"], "medium");
    // Within the variables it does dominate: 190 of 239.
    let kind = &r["details"]["per_kind"]["variables"];
    assert_eq!(
        (
            kind["metadata_bytes"].as_u64(),
            kind["payload_bytes"].as_u64()
        ),
        (Some(190), Some(49))
    );
    assert_eq!(
        r["title"],
        "Labels (names, subscripts, parameters, descriptions) take 406 B of the 856 B, 47.4%; \
         86 B of it is what they hold, the rest the empty fields every entity keeps. They are \
         more than half of the bytes of the variables"
    );

    // A 100-char annotation (24 + 4 + 24 + 100 more) tips the balance.
    inst.annotations = BTreeMap::from([("note".to_string(), "n".repeat(100))]);
    let doc = advise(dir.path(), &inst, &[]);
    let r = rule(&doc, "metadata-overhead");
    assert_eq!(r["bytes_concerned"], metadata + 152);
    assert_eq!(r["saving_bytes"], 86 + 152);
    assert_eq!(r["details"]["dominates"], true);
    // 238 of 1008 B: 23.6%, high.
    assert_eq!(r["saving_percent"], 23.61);
    assert_eq!(r["severity"], "high");
}

#[test]
fn duplicate_strings() {
    let dir = tempfile::tempdir().unwrap();
    let unit = BTreeMap::from([("unit".to_string(), "kg".to_string())]);
    let mut v1 = named_var(1, "alpha");
    v1.parameters = unit.clone();
    let mut v2 = named_var(2, "alpha");
    v2.parameters = unit;
    let mut inst = instance(
        vec![v1, v2, named_var(3, "alpha")],
        linear(&[(1, 1.0), (2, 1.0), (3, 1.0)], 0.0),
    );
    let mut c = constraint(1, linear(&[(1, 1.0)], 0.0));
    c.name = Some("alpha".into());
    inst.constraints = vec![c];
    inst.removed_constraints = vec![
        removed(2, linear(&[(2, 1.0)], 0.0), "presolve"),
        removed(3, linear(&[(3, 1.0)], 0.0), "presolve"),
    ];
    let doc = advise(dir.path(), &inst, &[]);
    let r = rule(&doc, "duplicate-strings");
    assert_eq!(
        (&r["change"], &r["severity"]),
        (&json!("not-in-ommx"), &json!("info"))
    );
    // Stored once, the text of "alpha" (×4), "unit" (×2), "kg" (×2) and
    // "presolve" (×2) saves 3 × 5 + 4 + 2 + 8; every 24-byte handle stays.
    assert_eq!(r["saving_bytes"], 15 + 4 + 2 + 8);
    assert_eq!(r["bytes_concerned"], 4 * 29 + 2 * 28 + 2 * 26 + 2 * 32);
    assert_eq!(r["details"]["distinct_repeated_strings"], 4);
    assert_eq!(r["details"]["occurrences"], 10);
    // Largest saving first.
    assert!(r["sample"][0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("\"alpha\" is stored 4 times, 15 B of it repeated"));
    assert_eq!(r["sample"][0]["id"], 1);
    let paths: Vec<&str> = r["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(paths.contains(&"Instance.removed_constraints;RemovedConstraint.removed_reason"));
    assert!(paths.contains(&"Instance.constraints;Constraint.name"));
}

#[test]
fn wasted_file_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut inst = instance(
        vec![var(1), var(2)],
        // x1 - x1 + 5: both terms cancel. Each term is 13 bytes on the wire
        // (0a 0b, 08 01, 11 + 8-byte double); the function shrinks from 38
        // to 12 bytes with its field prefix: 26.
        linear(&[(1, 1.0), (1, -1.0)], 5.0),
    );
    // x1 + 0 x2 + 2 x1: the zero term (0a 02 08 02, 4 bytes) and one copy
    // of x1 (13 bytes) go: 17.
    inst.constraints = vec![constraint(1, linear(&[(1, 1.0), (2, 0.0), (1, 2.0)], 0.0))];
    let bytes = inst.encoded_len() as u64;
    let doc = advise(dir.path(), &inst, &[]);
    let r = rule(&doc, "wasted-file-bytes");
    assert_eq!(r["measure"], "file");
    assert_eq!(r["saving_bytes"], 26 + 17);
    assert_eq!(r["details"]["zero_terms"], 1);
    assert_eq!(r["details"]["merged_terms"], 2 + 1);
    assert_eq!(layer(&doc)["file_bytes"], bytes);
    assert_eq!(layer(&doc)["file_saving_bytes"], 43);
    // The file saving is not mixed into the logical estimate.
    let logical: u64 = layer(&doc)["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["measure"] == "logical")
        .map(|r| r["saving_bytes"].as_u64().unwrap())
        .sum();
    assert!(layer(&doc)["estimated_saving_bytes"].as_u64().unwrap() <= logical);
}

#[test]
fn min_severity_filters_but_the_summary_counts_everything() {
    let kitchen = oracle("kitchen_sink.pb");
    let all: Value = serde_json::from_str(&ok(&["advise", &kitchen, "--format", "json"])).unwrap();
    let medium: Value = serde_json::from_str(&ok(&[
        "advise",
        &kitchen,
        "--format",
        "json",
        "--min-severity",
        "medium",
    ]))
    .unwrap();
    let (a, m) = (layer(&all), layer(&medium));
    assert_eq!(a["estimated_saving_bytes"], m["estimated_saving_bytes"]);
    assert_eq!(a["recommendations_found"], m["recommendations_found"]);
    let shown = m["recommendations"].as_array().unwrap();
    assert!(shown.len() < a["recommendations"].as_array().unwrap().len());
    let severities: Vec<&str> = shown
        .iter()
        .map(|r| r["severity"].as_str().unwrap())
        .collect();
    assert_eq!(severities, ["medium", "medium"]);
    // What the user can change first, by saving: the layouts OMMX does not
    // offer come last, below --min-severity low.
    let listed: Vec<(&str, &str)> = a["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["rule"].as_str().unwrap(), r["change"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("metadata-overhead", "ommx"),
            ("removed-constraints", "ommx"),
            ("wasted-file-bytes", "ommx"),
            ("representation-csr", "not-in-ommx"),
            ("duplicate-strings", "not-in-ommx"),
        ]
    );
}

#[test]
fn yaml_carries_the_json_document_and_layers_are_advised_apart() {
    let multi = oracle("multi.ommx");
    let json: Value = serde_json::from_str(&ok(&["advise", &multi, "-f", "json"])).unwrap();
    let yaml: Value = serde_yaml::from_str(&ok(&["advise", &multi, "-f", "yaml"])).unwrap();
    assert_eq!(json, yaml);
    let layers = json["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 3);
    for (i, l) in layers.iter().enumerate() {
        assert_eq!(l["index"], i);
        let inspect: Value = serde_json::from_str(&ok(&[
            "inspect",
            &multi,
            "-f",
            "json",
            "--layer",
            &i.to_string(),
        ]))
        .unwrap();
        assert_eq!(l["total_bytes"], inspect["total_bytes"]);
    }
    let table = ok(&["advise", &multi]);
    assert!(table.contains("== instance layer 2"), "{table}");
}

#[test]
fn output_is_deterministic_across_thread_counts() {
    // 22,000 entities: several decoding batches (up to 4,096 elements or
    // 512 KiB each), so threads do decode different parts of the stream.
    let dir = tempfile::tempdir().unwrap();
    let lp = dir.path().join("lp.pb");
    std::fs::write(&lp, super::parallel::generated_lp(dir.path())).unwrap();
    let lp = lp.to_str().unwrap();
    let run = |threads| super::parallel::stdout_on(threads, &["advise", lp, "-f", "json"]);
    let one = run("1");
    let doc: serde_json::Value = serde_json::from_slice(&one).unwrap();
    assert!(
        doc["layers"][0]["recommendations_found"].as_u64().unwrap() > 0,
        "{doc}"
    );
    assert_eq!(one, run("2"));
    assert_eq!(one, run("3"));
}

#[test]
fn rejected_instances_are_one_line_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rejected");
    let line = fails(&[
        "advise",
        dir.join("undefined_variable_constraint.pb")
            .to_str()
            .unwrap(),
    ]);
    assert!(line.contains("OMMX 2.9.3 rejects this instance"), "{line}");
}

/// Under OMMX 3.0's accounting a v1 file spends the same bytes on what
/// normalizing drops as under 2.9.3's (3.0 normalizes compact functions by
/// the same rules, and measured.py holds 2.9.3's claim to OMMX itself), so
/// wasted-file-bytes claims the same saving with the same details.
#[test]
fn wasted_file_bytes_under_ommx_3_is_2_9_3_s_for_a_v1_file() {
    let wasted = |doc: &Value| -> Option<(u64, Value)> {
        let r = layer(doc)["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == "wasted-file-bytes")?;
        Some((r["saving_bytes"].as_u64().unwrap(), r["details"].clone()))
    };
    let mut compared = 0;
    for name in [
        "cancelling_terms",
        "duplicate_terms",
        "zero_coefficients",
        "removed_constraints",
        "obj_quadratic_symmetric",
        "obj_poly_deg3",
    ] {
        let path = oracle(&format!("{name}.pb"));
        let path = path.as_str();
        let ommx29: Value = serde_json::from_str(&ok(&["advise", path, "-f", "json"])).unwrap();
        let ommx30: Value =
            serde_json::from_str(&ok(&["advise", path, "-f", "json", "--accounting", "3.0"]))
                .unwrap();
        let claim = wasted(&ommx29).unwrap_or_else(|| panic!("{name}: no claim under 2.9.3"));
        assert_eq!(wasted(&ommx30), Some(claim), "{name}");
        compared += 1;
    }
    assert_eq!(compared, 6);
}
