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
