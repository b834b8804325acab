//! Where OMMX 3.0 and memprof used to part (issue 32): v1 constraint hints
//! under the migration view, archive annotations 3.0 folds into an instance,
//! which of two failed readings a raw payload reports, and hostile streams.

use std::fs;

use crate::{fails, ok};

/// Writes `bytes` as `name` under `dir` and returns the path.
fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// A v1 payload whose hints name a constraint that does not exist, or list
/// a variable twice, is refused by 2.9.3 and read by 3.0, which drops the
/// hints unread: the migration view follows 3.0.
#[test]
fn migration_view_drops_hints_as_ommx_3_does() {
    let dir = tempfile::tempdir().unwrap();
    // Objective constant 1; then field 7, the constraint hints.
    let objective = hex::decode("1a0909000000000000f03f").unwrap();
    // Binary variables 0 and 1, constraint 0 (x0 + 1 <= 0), objective 1.
    let rows = hex::decode(
        "1204080010011204080110012215080010011a0f120d0a0b080011000000000000f03f1a09090000000000\
         00f03f",
    )
    .unwrap();
    let cases = [
        // A one-hot hint on constraint 5, which does not exist.
        ("dangling", objective.clone(), "3a0412020805", "OMMX 2.9.3 rejects this instance: one-hot hint on constraint 5 refers to constraint 5, which is not defined"),
        // An SOS1 hint listing variable 0 twice.
        ("repeated", rows.clone(), "3a0a1a08080012001a020000", "OMMX 2.9.3 rejects this instance: SOS1 hint on constraint 0 lists decision variable 0 more than once"),
        // A one-hot hint on an undefined variable 7.
        ("undefined", rows.clone(), "3a0712050800120107", "OMMX 2.9.3 rejects this instance: one-hot hint on constraint 0 uses decision variable 7, which is not defined"),
    ];
    for (name, body, hints, refusal) in cases {
        let with = file(
            &dir,
            &format!("{name}.pb"),
            &[body.clone(), hex::decode(hints).unwrap()].concat(),
        );
        let without = file(&dir, &format!("{name}_plain.pb"), &body);
        let err = fails(&["inspect", &with]);
        assert_eq!(err, format!("memprof: error: {with}: {refusal}"));
        let as_3_0 = ok(&["inspect", &with, "--accounting", "3.0", "-f", "folded"]);
        assert_eq!(
            as_3_0,
            ok(&["inspect", &without, "--accounting", "3.0", "-f", "folded"]),
            "{name}"
        );
        assert!(!as_3_0.contains("hint"), "{as_3_0}");
    }
    // Hints 3.0 cannot decode are refused by both.
    let bad = file(
        &dir,
        "bad.pb",
        &[objective, hex::decode("3a021001").unwrap()].concat(),
    );
    let err = fails(&["inspect", &bad, "--accounting", "3.0"]);
    assert!(
        err.contains(
            "ConstraintHints.one_hot_constraints: Instance.constraint_hints: invalid wire type"
        ),
        "{err}"
    );
}

/// The profile of each line `folded` has, by path.
fn lines(folded: &str) -> std::collections::BTreeMap<&str, u64> {
    folded
        .lines()
        .map(|l| {
            let (path, bytes) = l.rsplit_once(' ').unwrap();
            (path, bytes.parse().unwrap())
        })
        .collect()
}

/// OMMX 3.0 reads a layer's title (and the other `org.ommx.v1.instance.*`
/// annotations, and user annotations) into the instance it loads from the
/// layer, v1 or v2; 2.9.3 reads the payload alone.
#[test]
fn ommx_3_folds_a_layers_annotations_into_its_instance() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    // `Instance.minimize()` as v1 bytes, added twice: with a title and user
    // annotation, and bare.
    let v1 = hex::decode("1a090900000000000000002801").unwrap();
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&v1)));
    let layer = |annotations: serde_json::Value| {
        serde_json::json!({"mediaType": "application/org.ommx.v1.instance",
                           "digest": digest, "size": v1.len(), "annotations": annotations})
    };
    let tar = crate::oci_tar(
        &[(&format!("blobs/sha256/{}", &digest[7..]), v1.clone())],
        serde_json::json!([
            layer(serde_json::json!({"org.ommx.v1.instance.title": "t",
                                     "org.ommx.v1.instance.variables": "0",
                                     "org.ommx.user.k": "v"})),
            layer(serde_json::json!({})),
        ]),
    );
    let archive = file(&dir, "titled.ommx", &tar);
    let layer_as = |n: &str, accounting: &str| {
        ok(&[
            "inspect",
            &archive,
            "--layer",
            n,
            "--accounting",
            accounting,
            "-f",
            "folded",
        ])
    };
    let titled = layer_as("0", "3.0");
    let got = lines(&titled);
    // 3.0.0b7's numbers for this layer.
    assert_eq!(got["Instance.description;Description.name"], 25, "{titled}");
    for field in [
        "authors;Vec[stack]",
        "created_by;Option[stack]",
        "description;Option[stack]",
    ] {
        assert_eq!(
            got[format!("Instance.description;Description.{field}").as_str()],
            24
        );
    }
    assert!(!got.contains_key("Instance.description;Option[stack]"));
    assert_eq!(
        got["Instance.annotations;HashMap[key]"],
        24 + 15,
        "{titled}"
    );
    assert_eq!(got["Instance.annotations"], 24 + 1, "{titled}");
    // The bare layer, and 2.9.3's view of either, have no description.
    let bare = layer_as("1", "3.0");
    assert_eq!(lines(&bare)["Instance.description;Option[stack]"], 168);
    assert_eq!(
        bare,
        ok(&[
            "inspect",
            &file(&dir, "bare.pb", &v1),
            "--accounting",
            "3.0",
            "-f",
            "folded"
        ])
    );
    for n in ["0", "1"] {
        assert_eq!(
            lines(&layer_as(n, "2.9"))["Instance.description;Option[stack]"],
            168
        );
    }
    // Both layers at once: each with its own annotations.
    let both = ok(&["inspect", &archive, "--accounting", "3.0", "-f", "folded"]);
    assert!(
        both.contains("layer[0] (t);Instance.description;Description.name 25\n"),
        "{both}"
    );
    assert!(
        both.contains("layer[1];Instance.description;Option[stack] 168\n"),
        "{both}"
    );
}
