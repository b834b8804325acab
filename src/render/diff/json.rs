//! The diff as data: both sources, the counts, the total and every path
//! (changed or not), largest change first. Integers for sizes; the relative
//! change is a number, or `null` for a path that had no bytes before.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::DiffView;
use crate::diff::{Count, DiffNode, Status};
use crate::source::Source;

/// Bumped whenever a field changes meaning or disappears.
pub const DIFF_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    tool: &'static str,
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

fn side(source: &Source) -> Side<'_> {
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

pub fn render(view: &DiffView<'_>, out: &mut dyn Write) -> Result<()> {
    render_as(view, false, out)
}

/// The same document as YAML.
pub fn render_yaml(view: &DiffView<'_>, out: &mut dyn Write) -> Result<()> {
    render_as(view, true, out)
}

fn render_as(view: &DiffView<'_>, yaml: bool, out: &mut dyn Write) -> Result<()> {
    let diff = &view.diff;
    let doc = Document {
        schema_version: DIFF_SCHEMA_VERSION,
        tool: concat!("memprof ", env!("CARGO_PKG_VERSION")),
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
    if yaml {
        serde_yaml::to_writer(&mut *out, &doc)?;
        return Ok(());
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)?;
    Ok(())
}
