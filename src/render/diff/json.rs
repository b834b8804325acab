//! The diff as data: both sources, the counts, the total and every path
//! (changed or not), largest change first. Integers for sizes; the relative
//! change is a number, or `null` for a path that had no bytes before.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::DiffView;
use crate::diff::{Count, DiffNode, Status};
use crate::profiled::envelope::Envelope;
use crate::profiled::Loaded;

#[derive(Serialize)]
struct DiffJson<'a> {
    old: Side<'a>,
    new: Side<'a>,
    counts: &'a [Count],
    total: Row<'a>,
    paths: Vec<Row<'a>>,
}

#[derive(Serialize)]
struct Side<'a> {
    name: &'a str,
    /// The input a baseline was made from; `null` for an instance.
    baseline_of: Option<&'a str>,
    layers: String,
}

#[derive(Serialize)]
struct Row<'a> {
    path: &'a str,
    status: Status,
    old_bytes: u64,
    new_bytes: u64,
    delta: i64,
    delta_percent: Option<f64>,
    old_leaves: u64,
    new_leaves: u64,
}

fn side(source: &Loaded) -> Side<'_> {
    Side {
        name: source.name(),
        baseline_of: source.baseline.as_ref().map(|b| b.input.as_str()),
        layers: source.profile().layer_label(),
    }
}

fn row<'a>(path: &'a str, node: &DiffNode) -> Row<'a> {
    Row {
        path,
        status: node.status(),
        old_bytes: node.old_bytes(),
        new_bytes: node.new_bytes(),
        delta: node.delta(),
        delta_percent: node.delta_percent(),
        old_leaves: node.old_leaves(),
        new_leaves: node.new_leaves(),
    }
}

/// The diff as JSON or (`yaml`) YAML.
pub(super) fn write(view: &DiffView<'_>, yaml: bool, out: &mut dyn Write) -> Result<()> {
    let diff = &view.diff;
    let doc = DiffJson {
        old: side(view.old),
        new: side(view.new),
        counts: &view.counts,
        total: row("total", diff.root()),
        paths: diff
            .ranked()
            .into_iter()
            .map(|id| row(diff.path(id), diff.node(id)))
            .collect(),
    };
    Envelope::new(doc).write(yaml, out)
}
