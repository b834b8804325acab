//! The tree as data (JSON and YAML): the baseline format of memprof.
//! Integers only, keys in a fixed order, children largest first.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::ProfileView;
use crate::input::InstanceSummary;
use crate::profile::Aggregate;
use crate::profiled::envelope::Envelope;
use crate::profiled::files::FileSummary;
use crate::profiled::Profile;
use crate::render::data::{input_json, layer_refs, InputJson, LayerRef};

#[derive(Debug, Serialize)]
pub struct ProfileJson {
    pub accounting: &'static str,
    pub input: InputJson,
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

fn document(profile: &Profile<'_>) -> ProfileJson {
    ProfileJson {
        accounting: profile.accounting_describe(),
        input: input_json(profile.profiled),
        layers: layer_refs(profile.profiled),
        summary: profile.summary(),
        total_bytes: profile.total_bytes(),
        files: None,
        tree: node(profile, Aggregate::ROOT),
    }
}

/// The profile as JSON or (`yaml`) YAML, with a row per input when
/// several were profiled together: the baseline format.
pub(super) fn write(view: &ProfileView<'_>, yaml: bool, out: &mut dyn Write) -> Result<()> {
    let document = ProfileJson {
        files: view.files.map(<[FileSummary]>::to_vec),
        ..document(view.profile)
    };
    Envelope::new(document).write(yaml, out)
}
