//! `memprof ls`: an archive's layers with media type, digest, size,
//! annotations and whether they are profiled.

use std::io::Write;

use anyhow::Result;

use super::escape_control;
use super::format::Format;
use super::Document;
use crate::input::{Container, InputInfo, Schema};
use crate::names::{bare, Choice};
use crate::profiled::envelope::Envelope;
use crate::profiled::registry::Origin;
use crate::render::width::Give;
use crate::units::human_exact;

/// What `ls` offers, for an input's layers and the registry's images alike.
pub const LS: &[Choice<Format>] = &[bare(Format::Table), bare(Format::Json), bare(Format::Yaml)];

/// An input's layers (`ls FILE`).
impl Document for InputInfo {
    const NAME: &'static str = "ls";
    const FORMATS: &'static [Choice<Format>] = LS;

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        render_table(self, out)
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        render_data(self, yaml, out)
    }
}

fn render_table(doc: &InputInfo, out: &mut dyn Write) -> Result<()> {
    let kind = match doc.container {
        Container::Raw if doc.raw_schema == Some(Schema::V2) => {
            "raw ommx.v2.Instance bytes (OMMX 3.0; no layers)"
        }
        Container::Raw => "raw ommx.v1.Instance bytes (no layers)",
        Container::Archive => "OMMX artifact archive (OCI image layout in tar)",
        Container::Directory => "OMMX artifact directory (OCI image layout)",
        Container::Artifact => "OMMX artifact (its layers, handed over by OMMX)",
        Container::Registry => "an image of OMMX's local registry",
    };
    let title = format!(
        "{}: {kind}{}",
        doc.name,
        if doc.gzip { ", gzip-compressed" } else { "" }
    );
    writeln!(out, "{}", crate::render::width::wrap(&title, "  "))?;
    if let Some(origin) = &doc.registry {
        let from = format!("  {}", super::header::registry_line(origin));
        writeln!(out, "{}", crate::render::width::wrap(&from, "    "))?;
    }
    if doc.layers.is_empty() {
        return Ok(());
    }
    let mut table = crate::render::width::table();
    table.set_header(vec![
        "#",
        "media type",
        "digest",
        "size",
        "annotations",
        "profiled",
    ]);
    table.column_mut(1).expect("a column").give(Give::KeepStart);
    table.column_mut(2).expect("a column").give(Give::KeepStart);
    table.column_mut(4).expect("a column").give(Give::Wrap);
    table.column_mut(5).expect("a column").give(Give::Wrap);
    for layer in &doc.layers {
        let annotations: Vec<String> = layer
            .annotations
            .iter()
            .map(|(k, v)| format!("{}={}", escape_control(k), escape_control(v)))
            .collect();
        let profiled = match (layer.instance_index, &layer.not_profiled) {
            (Some(i), _) => format!("yes (--layer {i})"),
            (None, Some(why)) => format!("no: {why}"),
            (None, None) => "no".to_string(),
        };
        table.add_row(vec![
            layer.index.to_string(),
            escape_control(&layer.media_type).into_owned(),
            escape_control(&layer.digest.chars().take(7 + 12).collect::<String>()).into_owned(),
            human_exact(layer.size),
            annotations.join("\n"),
            profiled,
        ]);
    }
    writeln!(out, "{table}")?;
    Ok(())
}

fn render_data(doc: &InputInfo, yaml: bool, out: &mut dyn Write) -> Result<()> {
    #[derive(serde::Serialize)]
    struct Listing<'a> {
        name: &'a str,
        container: Container,
        gzip: bool,
        file_bytes: Option<u64>,
        /// Raw input read as ommx.v2 (absent otherwise, as before v2).
        #[serde(skip_serializing_if = "Option::is_none")]
        schema: Option<Schema>,
        /// Where in OMMX's local registry an image named by reference was read.
        #[serde(skip_serializing_if = "Option::is_none")]
        registry: Option<&'a Origin>,
        layers: &'a [crate::input::LayerInfo],
    }
    let listing = Listing {
        name: &doc.name,
        container: doc.container,
        gzip: doc.gzip,
        file_bytes: doc.file_bytes,
        schema: doc.raw_schema.filter(|s| *s == Schema::V2),
        registry: doc.registry.as_deref(),
        layers: &doc.layers,
    };
    Envelope::untooled(listing).write(yaml, out)
}
