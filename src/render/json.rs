//! The tree as data (JSON and YAML): the baseline format of memprof.
//! Integers only, keys in a fixed order, children largest first.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::files::FileSummary;
use super::Profile;
use crate::decode::{Container, InstanceSummary, Report};
use crate::profile::Aggregate;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub struct Document {
    pub schema_version: u32,
    pub tool: &'static str,
    pub accounting: &'static str,
    pub input: InputInfo,
    /// The instance layers profiled (`null` index for raw input).
    pub layers: Vec<LayerRef>,
    pub summary: InstanceSummary,
    pub total_bytes: u64,
    /// Per-input figures, when several inputs were profiled together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FileSummary>>,
    pub tree: TreeNode,
}

#[derive(Debug, Serialize)]
pub struct InputInfo {
    pub name: String,
    pub container: Container,
    pub gzip: bool,
    pub file_bytes: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct LayerRef {
    pub index: Option<usize>,
    pub title: Option<String>,
    pub summary: InstanceSummary,
}

#[derive(Debug, Serialize)]
pub struct TreeNode {
    pub name: String,
    pub bytes: u64,
    pub own_bytes: u64,
    pub leaves: u64,
    pub children: Vec<TreeNode>,
}

fn node(profile: &Profile<'_>, id: usize) -> TreeNode {
    let n = profile.aggregate.node(id);
    TreeNode {
        name: if id == Aggregate::ROOT {
            "total".to_string()
        } else {
            n.name.to_string()
        },
        bytes: profile.totals[id].bytes,
        own_bytes: n.own_bytes,
        leaves: profile.totals[id].leaves,
        children: profile
            .sorted_children(id)
            .into_iter()
            .map(|c| node(profile, c))
            .collect(),
    }
}

pub const TOOL: &str = concat!("memprof ", env!("CARGO_PKG_VERSION"));

/// The input part of every JSON document.
pub fn input_info(report: &Report) -> InputInfo {
    let doc = &report.document;
    InputInfo {
        name: doc.name.clone(),
        container: doc.container,
        gzip: doc.gzip,
        file_bytes: doc.file_bytes,
    }
}

/// The instance layers of every JSON document.
pub fn layer_refs(report: &Report) -> Vec<LayerRef> {
    report
        .instances
        .iter()
        .map(|i| LayerRef {
            index: i.instance_index,
            title: i.title.clone(),
            summary: i.summary.clone(),
        })
        .collect()
}

/// Writes any document as pretty JSON or YAML.
pub fn write_data<T: Serialize>(value: &T, yaml: bool, out: &mut dyn Write) -> Result<()> {
    if yaml {
        serde_yaml::to_writer(&mut *out, value)?;
    } else {
        serde_json::to_writer_pretty(&mut *out, value)?;
        writeln!(out)?;
    }
    Ok(())
}

pub fn document(profile: &Profile<'_>) -> Document {
    Document {
        schema_version: SCHEMA_VERSION,
        tool: TOOL,
        accounting: profile.accounting_describe(),
        input: input_info(profile.report),
        layers: layer_refs(profile.report),
        summary: profile.summary(),
        total_bytes: profile.total_bytes(),
        files: None,
        tree: node(profile, Aggregate::ROOT),
    }
}

pub fn render_json(profile: &Profile<'_>, out: &mut dyn Write) -> Result<()> {
    write_json(&document(profile), out)
}

pub fn render_yaml(profile: &Profile<'_>, out: &mut dyn Write) -> Result<()> {
    serde_yaml::to_writer(&mut *out, &document(profile))?;
    Ok(())
}

/// The document of several inputs profiled together, with a row per input.
pub fn document_of_files(profile: &Profile<'_>, files: &[FileSummary]) -> Document {
    Document {
        files: Some(files.to_vec()),
        ..document(profile)
    }
}

pub fn write_json(document: &Document, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, document)?;
    writeln!(out)?;
    Ok(())
}

pub fn write_yaml(document: &Document, out: &mut dyn Write) -> Result<()> {
    serde_yaml::to_writer(&mut *out, document)?;
    Ok(())
}
