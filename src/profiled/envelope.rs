//! The one envelope of every JSON and YAML document memprof writes: the
//! schema version first, the tool that wrote it, then the document's own
//! fields. Documents carry codes and integers only; prose belongs to the
//! text formats.

use std::io::Write;

use serde::Serialize;

/// The version of every document's schema, bumped whenever a field changes
/// meaning or disappears (baselines of another version are refused).
pub const SCHEMA_VERSION: u32 = 1;

/// `memprof X.Y.Z`, the `tool` field.
pub const TOOL: &str = concat!("memprof ", env!("CARGO_PKG_VERSION"));

/// A document: `schema_version`, `tool` (absent from the listings that
/// never had it), then `body`'s fields in their order.
#[derive(Debug, Serialize)]
pub struct Envelope<T> {
    schema_version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'static str>,
    #[serde(flatten)]
    body: T,
}

impl<T: Serialize> Envelope<T> {
    /// `body` under the current schema version, naming this memprof.
    pub fn new(body: T) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool: Some(TOOL),
            body,
        }
    }

    /// `body` under the current schema version, without a `tool` field
    /// (`ls` and several-file `advise` documents, as they always were).
    pub fn untooled(body: T) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool: None,
            body,
        }
    }

    pub fn body(&self) -> &T {
        &self.body
    }

    /// Pretty JSON (with a final newline) or YAML.
    pub fn write(&self, yaml: bool, out: &mut dyn Write) -> anyhow::Result<()> {
        if yaml {
            serde_yaml::to_writer(&mut *out, self)?;
        } else {
            serde_json::to_writer_pretty(&mut *out, self)?;
            writeln!(out)?;
        }
        Ok(())
    }
}
