//! `memprof explain` as text, JSON or YAML.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::json::{input_info, write_data, InputInfo, SCHEMA_VERSION, TOOL};
use crate::units::human;
use super::{DataFormat, Profile};
use crate::drill::explain::{thousands, Explanation};

#[derive(Debug, Serialize)]
struct ExplainDocument<'a> {
    schema_version: u32,
    tool: &'static str,
    accounting: &'static str,
    input: InputInfo,
    explanations: &'a [Explanation],
}

pub fn render(
    profile: &Profile<'_>,
    explanations: &[Explanation],
    format: DataFormat,
    out: &mut dyn Write,
) -> Result<()> {
    if format != DataFormat::Table {
        let doc = ExplainDocument {
            schema_version: SCHEMA_VERSION,
            tool: TOOL,
            accounting: profile.account.describe(),
            input: input_info(profile.report),
            explanations,
        };
        return write_data(&doc, format == DataFormat::Yaml, out);
    }
    for (i, x) in explanations.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(
            out,
            "{}: {} ({} B, {:.1}% of {} B)",
            x.path,
            human(x.bytes),
            thousands(x.bytes),
            x.bytes as f64 * 100.0 / profile.total_bytes().max(1) as f64,
            thousands(profile.total_bytes()),
        )?;
        for g in &x.groups {
            writeln!(out)?;
            writeln!(out, "  {}", g.path)?;
            writeln!(out, "    rule: {}", g.rule)?;
            writeln!(out, "    {}", g.arithmetic())?;
        }
        writeln!(out)?;
        if x.groups.len() > 1 {
            let terms: Vec<String> = x.groups.iter().map(|g| thousands(g.bytes)).collect();
            writeln!(
                out,
                "  total: {} = {} B",
                terms.join(" + "),
                thousands(x.bytes)
            )?;
        } else {
            writeln!(out, "  total: {} B", thousands(x.bytes))?;
        }
    }
    Ok(())
}
