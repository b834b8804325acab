//! `memprof explain` as text, JSON or YAML.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::report::envelope::Envelope;

use super::format::{unsupported, Format};
use super::json::{input_info, InputInfo};
use super::Profile;
use crate::drill::explain::{thousands, Explanation};
use crate::units::{human_exact, percent};

#[derive(Debug, Serialize)]
struct ExplainJson<'a> {
    accounting: &'static str,
    input: InputInfo,
    explanations: &'a [Explanation],
}

/// `explain`'s document in `format`.
pub fn render(
    explained: &crate::api::Explained,
    format: Format,
    out: &mut dyn Write,
) -> Result<()> {
    render_explanations(&explained.profile(), &explained.explanations, format, out)
}

fn render_explanations(
    profile: &Profile<'_>,
    explanations: &[Explanation],
    format: Format,
    out: &mut dyn Write,
) -> Result<()> {
    let yaml = match format {
        Format::Table => None,
        Format::Json => Some(false),
        Format::Yaml => Some(true),
        Format::Folded | Format::Tree | Format::Markdown | Format::Junit | Format::Speedscope => {
            return Err(unsupported(format, "explain"))
        }
    };
    if let Some(yaml) = yaml {
        let doc = ExplainJson {
            accounting: profile.account.describe(),
            input: input_info(profile.report),
            explanations,
        };
        return Envelope::new(doc).write(yaml, out);
    }
    for (i, x) in explanations.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(
            out,
            "{}: {}, {} of {}",
            x.path,
            human_exact(x.bytes),
            percent(x.bytes, profile.total_bytes()),
            human_exact(profile.total_bytes()),
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
