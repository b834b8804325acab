//! The repository's fixture files, as the unit tests read them.

use std::path::PathBuf;

/// Every raw `ommx.v2` fixture (`fixtures/v2/oracle` and `fixtures/v2/from_v1`, the `.pb`
/// files), in a fixed order.
pub(crate) fn raw_v2() -> Vec<PathBuf> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/v2");
    let mut paths = Vec::new();
    for dir in ["oracle", "from_v1"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(format!("{root}/{dir}"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "pb"))
            .collect();
        found.sort();
        paths.extend(found);
    }
    assert!(!paths.is_empty(), "no raw v2 fixture under {root}");
    paths
}
