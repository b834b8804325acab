//! Baselines: the JSON document of `memprof inspect --format json`
//! (written by `render/json.rs` in [`crate::profiled::envelope::Envelope`]) read back into a [`ProfiledInput`], so a
//! profile saved earlier can stand wherever an instance is accepted by
//! `diff` and `check`.
//!
//! Only what the profile needs is read: the layers with their counts and
//! the tree (names, inclusive and own bytes, inclusive leaves). Unknown extra
//! fields are ignored, so a newer memprof may add fields without breaking
//! older baselines; a changed meaning bumps `schema_version`, which is
//! checked. Every node must reconcile (its bytes are its own plus its
//! children's), so a hand-edited baseline that does not add up is refused
//! rather than compared.

use std::collections::HashSet;

use serde::Deserialize;

use crate::input::Selection;
use crate::profile::{Aggregate, Frame, NodeId};
use crate::profiled::envelope::SCHEMA_VERSION;
pub use crate::profiled::loaded::BaselineInfo;
use crate::profiled::{
    layer_frame, Accounting, Container, InputInfo, InstanceSummary, ProfiledInput,
    ProfiledInstance, Schema,
};

/// Largest baseline file read: a baseline takes about four times its size
/// in memory while it is parsed and rebuilt.
pub const MAX_BASELINE: u64 = 256 << 20;

/// Why a JSON file is not a usable baseline. Messages do not repeat the file
/// name; the caller puts it in front.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("not valid JSON: {0}")]
    Syntax(serde_json::Error),
    #[error(
        "JSON but not a memprof baseline (the output of `memprof inspect --format json`): {0}"
    )]
    NotBaseline(String),
    #[error("baseline schema_version {found} is not supported (this memprof reads {SCHEMA_VERSION}); regenerate it with `memprof inspect --format json`")]
    Version { found: u64 },
    #[error("baseline was made with accounting {found:?}, this memprof uses {:?}", Accounting::Ommx29.describe())]
    Accounting { found: String },
    #[error("malformed baseline: {0}")]
    Malformed(String),
    #[error("the baseline is larger than {}, the --max-decompressed limit (which also bounds baseline files); raise it if the file is trusted", crate::units::size_text(*.0))]
    TooLarge(u64),
    #[error("the baseline is larger than {}, memprof's limit for baseline files (one of 65,536 name families is about 220 MB); it takes several times its size in memory", crate::units::size_text(MAX_BASELINE))]
    TooBig,
    #[error("--layer {requested} is out of range: the baseline has {}", crate::units::count(*available as u64, "instance layer", "instance layers"))]
    LayerOutOfRange { requested: usize, available: usize },
}

/// The one field read before the rest: which schema the document follows.
#[derive(Debug, Deserialize)]
struct VersionDoc {
    #[serde(default)]
    schema_version: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct BaselineDoc {
    accounting: String,
    #[serde(default)]
    tool: Option<String>,
    input: InputDoc,
    layers: Vec<LayerDoc>,
    total_bytes: u64,
    tree: NodeDoc,
}

#[derive(Debug, Deserialize)]
struct InputDoc {
    name: String,
    container: String,
    gzip: bool,
    file_bytes: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct LayerDoc {
    index: Option<usize>,
    title: Option<String>,
    summary: SummaryDoc,
    #[serde(default)]
    real_memory: Option<crate::profiled::real::RealMemory>,
}

/// Mirrors [`InstanceSummary`]'s serialized fields.
#[derive(Debug, Clone, Deserialize)]
struct SummaryDoc {
    variables: u64,
    constraints: u64,
    removed_constraints: u64,
    named_functions: u64,
    terms: u64,
    wire_bytes: u64,
}

impl From<SummaryDoc> for InstanceSummary {
    // Spelled out with a default rest so a field added to InstanceSummary
    // later (absent from older baselines) still compiles.
    #[allow(clippy::needless_update)]
    fn from(s: SummaryDoc) -> Self {
        InstanceSummary {
            variables: s.variables,
            constraints: s.constraints,
            removed_constraints: s.removed_constraints,
            named_functions: s.named_functions,
            terms: s.terms,
            wire_bytes: s.wire_bytes,
            ..Default::default()
        }
    }
}

#[derive(Debug, Deserialize)]
struct NodeDoc {
    name: String,
    bytes: u64,
    own_bytes: u64,
    leaves: u64,
    children: Vec<NodeDoc>,
}

/// Whether the content starts (after whitespace) like a JSON object, the
/// only shape a baseline has.
pub fn looks_like_json_object(head: &[u8]) -> bool {
    head.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

fn malformed(text: String) -> BaselineError {
    BaselineError::Malformed(text)
}

/// Reads a baseline, keeping the instance layers `selection` asks for.
/// `name` names the baseline file in the report.
pub fn parse(
    bytes: &[u8],
    name: String,
    selection: Selection,
) -> Result<(ProfiledInput, BaselineInfo), BaselineError> {
    // First only the version, skipping everything else without building
    // it; then the document straight into its types, never as a generic
    // JSON value (which costs several times the file's size).
    let head: VersionDoc = match serde_json::from_slice(bytes) {
        Ok(head) => head,
        Err(e) if e.is_syntax() || e.is_eof() || e.is_io() => return Err(BaselineError::Syntax(e)),
        Err(_) if !looks_like_json_object(bytes) => {
            return Err(BaselineError::NotBaseline("not a JSON object".into()))
        }
        Err(e) => return Err(BaselineError::NotBaseline(e.to_string())),
    };
    match head.schema_version {
        None => {
            return Err(BaselineError::NotBaseline(
                "it has no schema_version".into(),
            ))
        }
        Some(v) => match v.as_u64() {
            Some(found) if found == u64::from(SCHEMA_VERSION) => {}
            Some(found) => return Err(BaselineError::Version { found }),
            None => {
                let what = match &v {
                    serde_json::Value::Number(n) if n.is_f64() => "a decimal, not a whole number",
                    serde_json::Value::Number(_) => "negative",
                    _ => "not a number",
                };
                return Err(BaselineError::NotBaseline(format!(
                    "schema_version is {v}, {what} (this memprof reads {SCHEMA_VERSION})"
                )));
            }
        },
    }
    let doc: BaselineDoc =
        serde_json::from_slice(bytes).map_err(|e| BaselineError::NotBaseline(e.to_string()))?;
    let known = [
        Accounting::Ommx29.describe(),
        Accounting::Ommx30.describe(),
        crate::profiled::view::MIXED_ACCOUNTING,
    ];
    if !known.contains(&doc.accounting.as_str()) {
        return Err(BaselineError::Accounting {
            found: doc.accounting,
        });
    }
    let container = match doc.input.container.as_str() {
        "raw" => Container::Raw,
        "archive" => Container::Archive,
        "directory" => Container::Directory,
        "artifact" => Container::Artifact,
        "registry" => Container::Registry,
        other => return Err(malformed(format!("unknown input container {other:?}"))),
    };
    if doc.tree.name != "total" {
        return Err(malformed(format!(
            "the tree's root is named {:?}, expected \"total\"",
            doc.tree.name
        )));
    }
    check_node(&doc.tree, "total")?;
    if doc.total_bytes != doc.tree.bytes {
        return Err(malformed(format!(
            "total_bytes is {} but the tree holds {}",
            doc.total_bytes, doc.tree.bytes
        )));
    }
    let instances = split_layers(&doc)?;
    let available = instances.len();
    let instances: Vec<ProfiledInstance> = match selection {
        Selection::All => instances,
        Selection::ListOnly => Vec::new(),
        Selection::Layer(n) => {
            let picked: Vec<ProfiledInstance> = instances
                .into_iter()
                .filter(|i| i.instance_index.unwrap_or(0) == n)
                .collect();
            if picked.is_empty() {
                return Err(BaselineError::LayerOutOfRange {
                    requested: n,
                    available,
                });
            }
            picked
        }
    };
    let profiled = ProfiledInput {
        input: InputInfo {
            name,
            file_bytes: doc.input.file_bytes,
            container,
            gzip: doc.input.gzip,
            layers: Vec::new(),
            raw_schema: None,
            registry: None,
        },
        instances,
    };
    let info = BaselineInfo {
        input: doc.input.name,
        tool: doc.tool,
    };
    Ok((profiled, info))
}

/// Checks that every node reconciles with its children and that no frame
/// name is empty, repeated among siblings or able to break a path.
fn check_node(node: &NodeDoc, path: &str) -> Result<(), BaselineError> {
    let mut bytes = node.own_bytes;
    let mut leaves = 0u64;
    let mut names = HashSet::new();
    for child in &node.children {
        if child.name.is_empty() || child.name.contains(|c: char| c == ';' || c.is_control()) {
            return Err(malformed(format!(
                "{path}: child name {:?} cannot be a frame",
                child.name
            )));
        }
        if !names.insert(child.name.as_str()) {
            return Err(malformed(format!(
                "{path}: child {:?} appears twice",
                child.name
            )));
        }
        let child_path = if path == "total" {
            child.name.clone()
        } else {
            format!("{path};{}", child.name)
        };
        check_node(child, &child_path)?;
        bytes = bytes
            .checked_add(child.bytes)
            .ok_or_else(|| malformed(format!("{path}: bytes overflow")))?;
        leaves = leaves
            .checked_add(child.leaves)
            .ok_or_else(|| malformed(format!("{path}: leaves overflow")))?;
    }
    if bytes != node.bytes {
        return Err(malformed(format!(
            "{path}: bytes is {} but own bytes and children add up to {bytes}",
            node.bytes
        )));
    }
    if i64::try_from(bytes).is_err() {
        return Err(malformed(format!("{path}: {bytes} bytes is out of range")));
    }
    if leaves > node.leaves {
        return Err(malformed(format!(
            "{path}: leaves is {} but its children alone have {leaves}",
            node.leaves
        )));
    }
    Ok(())
}

/// Adds `node`'s subtree below `parent`.
fn insert(aggregate: &mut Aggregate, parent: NodeId, node: &NodeDoc) {
    let own_leaves = node.leaves - node.children.iter().map(|c| c.leaves).sum::<u64>();
    aggregate.add(parent, node.own_bytes, own_leaves);
    for child in &node.children {
        let id = aggregate.child(parent, &Frame::Owned(child.name.clone()));
        insert(aggregate, id, child);
    }
}

/// Rebuilds one aggregate per instance layer: a single layer owns the whole
/// tree; several each own the root child named by their layer frame (the
/// inverse of [`crate::profiled::Profile::new`]).
fn split_layers(doc: &BaselineDoc) -> Result<Vec<ProfiledInstance>, BaselineError> {
    let accounting = if doc.accounting == Accounting::Ommx30.describe() {
        Accounting::Ommx30
    } else {
        Accounting::Ommx29
    };
    let instance = |layer: &LayerDoc, aggregate: Aggregate| ProfiledInstance {
        instance_index: layer.index,
        observed_as: layer.index,
        title: layer.title.clone(),
        summary: InstanceSummary::from(layer.summary.clone()),
        aggregate,
        // A baseline holds the in-memory view only.
        wire: None,
        // A baseline does not record the schema; its accounting tells.
        schema: match accounting {
            Accounting::Ommx29 => Schema::V1,
            Accounting::Ommx30 => Schema::V2,
        },
        accounting,
        gathered: None,
        real_memory: layer.real_memory,
        compared: Vec::new(),
    };
    match doc.layers.as_slice() {
        [] => Err(malformed("it lists no instance layer".into())),
        [one] => {
            let mut aggregate = Aggregate::new();
            insert(&mut aggregate, Aggregate::ROOT, &doc.tree);
            Ok(vec![instance(one, aggregate)])
        }
        many => {
            if doc.tree.own_bytes != 0 {
                return Err(malformed(
                    "a multi-layer tree holds bytes outside its layers".into(),
                ));
            }
            let mut used = vec![false; doc.tree.children.len()];
            let mut out = Vec::with_capacity(many.len());
            for layer in many {
                let frame = layer_frame(layer.index.unwrap_or(0), layer.title.as_deref());
                let mut aggregate = Aggregate::new();
                if let Some(pos) = doc.tree.children.iter().position(|c| c.name == frame) {
                    used[pos] = true;
                    let child = &doc.tree.children[pos];
                    insert(&mut aggregate, Aggregate::ROOT, child);
                }
                out.push(instance(layer, aggregate));
            }
            if let Some(pos) = used.iter().position(|u| !u) {
                return Err(malformed(format!(
                    "root child {:?} names no listed layer",
                    doc.tree.children[pos].name
                )));
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(tree: serde_json::Value) -> Vec<u8> {
        serde_json::json!({
            "schema_version": 1,
            "tool": "memprof test",
            "accounting": Accounting::Ommx29.describe(),
            "input": {"name": "x.pb", "container": "raw", "gzip": false, "file_bytes": 10},
            "layers": [{"index": null, "title": null, "summary": {
                "variables": 1, "constraints": 2, "removed_constraints": 0,
                "named_functions": 0, "terms": 3, "wire_bytes": 10}}],
            "summary": {},
            "total_bytes": tree["bytes"],
            "tree": tree,
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn reads_a_tree_back_into_an_aggregate() {
        let bytes = doc(
            serde_json::json!({"name": "total", "bytes": 10, "own_bytes": 0,
            "leaves": 3, "children": [
                {"name": "A", "bytes": 10, "own_bytes": 4, "leaves": 3, "children": [
                    {"name": "B", "bytes": 6, "own_bytes": 6, "leaves": 2, "children": []}]}]}),
        );
        let (profiled, info) = parse(&bytes, "b.json".into(), Selection::All).unwrap();
        assert_eq!(info.input, "x.pb");
        let agg = &profiled.instances[0].aggregate;
        assert_eq!(
            agg.folded_lines(),
            vec![("A".to_string(), 4), ("A;B".to_string(), 6)]
        );
        assert_eq!(agg.totals()[Aggregate::ROOT].leaves, 3);
        assert_eq!(profiled.instances[0].summary.terms, 3);
    }

    #[test]
    fn refuses_trees_that_do_not_add_up() {
        let bytes = doc(
            serde_json::json!({"name": "total", "bytes": 11, "own_bytes": 0,
            "leaves": 1, "children": [
                {"name": "A", "bytes": 10, "own_bytes": 10, "leaves": 1, "children": []}]}),
        );
        let err = parse(&bytes, "b.json".into(), Selection::All).unwrap_err();
        assert!(err.to_string().contains("add up to 10"), "{err}");
    }

    #[test]
    fn tells_other_json_apart() {
        let err = parse(br#"{"schemaVersion": 2}"#, "x".into(), Selection::All).unwrap_err();
        assert!(err.to_string().contains("not a memprof baseline"), "{err}");
        let err = parse(br#"{"schema_version": 9}"#, "x".into(), Selection::All).unwrap_err();
        assert!(err.to_string().contains("schema_version 9"), "{err}");
        let err = parse(b"{", "x".into(), Selection::All).unwrap_err();
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        for (version, says) in [
            (
                "1.0",
                "schema_version is 1.0, a decimal, not a whole number (this memprof reads 1)",
            ),
            ("-1", "schema_version is -1, negative"),
            ("\"1\"", "schema_version is \"1\", not a number"),
        ] {
            let text = format!("{{\"schema_version\": {version}}}");
            let err = parse(text.as_bytes(), "x".into(), Selection::All).unwrap_err();
            assert!(err.to_string().contains(says), "{err}");
        }
    }
}
