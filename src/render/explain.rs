//! `memprof explain` as text, JSON or YAML.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::profiled::envelope::Envelope;

use super::data::{input_json, InputJson};
use super::format::{Format, DATA};
use super::Document;
use crate::api::Explained;
use crate::drill::explain::{thousands, Explanation};
use crate::names::Choice;
use crate::profiled::Profile;
use crate::units::{human_exact, percent};

#[derive(Debug, Serialize)]
struct ExplainJson<'a> {
    accounting: &'static str,
    input: InputJson,
    explanations: &'a [Explanation],
}

impl Document for Explained {
    const NAME: &'static str = "explain";
    const FORMATS: &'static [Choice<Format>] = DATA;

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        write_table(&self.profile(), &self.explanations, out)
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        let profile = self.profile();
        let doc = ExplainJson {
            accounting: profile.account.describe(),
            input: input_json(profile.profiled),
            explanations: &self.explanations,
        };
        Envelope::new(doc).write(yaml, out)
    }
}

fn write_table(
    profile: &Profile<'_>,
    explanations: &[Explanation],
    out: &mut dyn Write,
) -> Result<()> {
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
