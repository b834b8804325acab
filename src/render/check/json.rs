//! The check report as data: the overall verdict, and per file every limit
//! of every rule with its worst path and all failing paths.

use std::io::Write;

use anyhow::Result;

use crate::check::CheckReport;

/// The same document as YAML.
pub fn render_yaml(report: &CheckReport, out: &mut dyn Write) -> Result<()> {
    serde_yaml::to_writer(&mut *out, report)?;
    Ok(())
}

pub fn render(report: &CheckReport, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)?;
    Ok(())
}
