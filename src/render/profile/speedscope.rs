//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>):
//! the profile as one sampled profile weighed in bytes, which speedscope,
//! and the viewers that read its files, open as they open memray's or
//! py-spy's.
//!
//! A sample is a folded line: its frames, root first, and its own bytes as
//! its weight, in the folded lines' order, so the weights add up to the
//! total. Frames are shared by name, as speedscope shares a function's
//! frames: a frame that stands at several places (`PolynomialBase.terms`
//! under the objective and under the constraints) is one frame, which
//! speedscope's sandwich view sums over every place. Several layers or
//! inputs stand under their root frames, as in the folded lines.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::ProfileView;
use crate::profiled::Profile;

/// The schema speedscope reads the file by.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Debug, Serialize)]
pub struct File {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub shared: Shared,
    pub profiles: Vec<SampledProfile>,
    pub name: String,
    #[serde(rename = "activeProfileIndex")]
    pub active_profile_index: usize,
    pub exporter: String,
}

#[derive(Debug, Serialize)]
pub struct Shared {
    pub frames: Vec<FrameName>,
}

#[derive(Debug, Serialize)]
pub struct FrameName {
    pub name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SampledProfile {
    /// Always `sampled`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: String,
    /// Always `bytes`.
    pub unit: &'static str,
    pub start_value: u64,
    pub end_value: u64,
    /// Indices into `shared.frames`, root first.
    pub samples: Vec<Vec<usize>>,
    pub weights: Vec<u64>,
}

/// The profile as speedscope's file.
pub fn file(profile: &Profile<'_>) -> File {
    let aggregate = &profile.aggregate;
    let mut frames: Vec<FrameName> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut samples = Vec::new();
    let mut weights = Vec::new();
    for (id, _path) in aggregate.folded_nodes() {
        let stack = aggregate
            .frames_of(id)
            .into_iter()
            .map(|name| {
                *index.entry(name).or_insert_with(|| {
                    frames.push(FrameName {
                        name: name.to_string(),
                    });
                    frames.len() - 1
                })
            })
            .collect();
        samples.push(stack);
        weights.push(aggregate.node(id).own_bytes);
    }
    let name = &profile.profiled.input.name;
    let what = match profile.account {
        crate::profiled::Account::Memory => {
            format!("logical bytes as {} counts them", profile.accounting_name())
        }
        crate::profiled::Account::Wire => "encoded protobuf bytes".to_string(),
    };
    File {
        schema: SCHEMA,
        shared: Shared { frames },
        profiles: vec![SampledProfile {
            kind: "sampled",
            name: format!("{name} ({}): {what}", profile.layer_label()),
            unit: "bytes",
            start_value: 0,
            end_value: weights.iter().sum(),
            samples,
            weights,
        }],
        name: format!("memprof: {name}"),
        active_profile_index: 0,
        exporter: format!("memprof {}", env!("CARGO_PKG_VERSION")),
    }
}

/// The profile as speedscope's JSON, on one line and a newline.
pub(super) fn write(view: &ProfileView<'_>, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer(&mut *out, &file(view.profile))?;
    writeln!(out)?;
    Ok(())
}
