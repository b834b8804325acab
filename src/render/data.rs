//! What every document's data (JSON, YAML) opens with: the input it read
//! and the instance layers profiled.

use serde::Serialize;

use crate::input::{Container, InstanceSummary, ProfiledInput};
use crate::profiled::real::RealMemory;
use crate::profiled::registry::Origin;

#[derive(Debug, Serialize)]
pub struct InputJson {
    pub name: String,
    pub container: Container,
    pub gzip: bool,
    pub file_bytes: Option<u64>,
    /// Where in OMMX's local registry an image named by reference was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry: Option<Origin>,
}

#[derive(Debug, Serialize)]
pub struct LayerRef {
    pub index: Option<usize>,
    pub title: Option<String>,
    pub summary: InstanceSummary,
    /// The real-memory estimate (absent from a profile read back without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real_memory: Option<RealMemory>,
}

/// The input part of every JSON document.
pub fn input_json(profiled: &ProfiledInput) -> InputJson {
    let doc = &profiled.input;
    InputJson {
        name: doc.name.clone(),
        container: doc.container,
        gzip: doc.gzip,
        file_bytes: doc.file_bytes,
        registry: doc.registry.as_deref().cloned(),
    }
}

/// The instance layers of every JSON document.
pub fn layer_refs(profiled: &ProfiledInput) -> Vec<LayerRef> {
    profiled
        .instances
        .iter()
        .map(|i| LayerRef {
            index: i.instance_index,
            title: i.title.clone(),
            summary: i.summary.clone(),
            real_memory: i.real_memory,
        })
        .collect()
}
