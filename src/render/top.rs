//! `memprof top` as a table, JSON or YAML.

use std::io::Write;

use anyhow::Result;
use comfy_table::CellAlignment;
use serde::Serialize;

use crate::report::envelope::Envelope;

use super::format::{unsupported, Format};
use super::json::{input_info, layer_refs, InputInfo, LayerRef};
use super::Profile;
use crate::drill::top::TopEntity;
use crate::render::width::Give;
use crate::units::{human_exact, percent, thousands};

#[derive(Debug, Serialize)]
struct TopJson<'a> {
    accounting: &'static str,
    input: InputInfo,
    layers: Vec<LayerRef>,
    total_bytes: u64,
    kind: &'a str,
    n: usize,
    /// Largest first.
    entities: &'a [TopEntity],
}

/// How ties are ordered, below the table when they decided its cut.
const TIES: &str = "ties are listed by id, smaller first, then by kind";

/// What `top` found, and what it was asked.
struct TopReport<'a> {
    profile: &'a Profile<'a>,
    kind: &'a str,
    n: usize,
    entities: &'a [TopEntity],
    /// Entities left out with the bytes of the last row.
    ties_left_out: u64,
}

/// `top`'s document in `format`.
pub fn render(top: &crate::api::Top, format: Format, out: &mut dyn Write) -> Result<()> {
    let profile = top.profile();
    let report = TopReport {
        profile: &profile,
        kind: top.kind.name(),
        n: top.n,
        entities: &top.entities,
        ties_left_out: top.ties_left_out,
    };
    render_report(&report, format, out)
}

fn render_report(report: &TopReport<'_>, format: Format, out: &mut dyn Write) -> Result<()> {
    let profile = report.profile;
    let total = profile.total_bytes();
    let yaml = match format {
        Format::Table => None,
        Format::Json => Some(false),
        Format::Yaml => Some(true),
        Format::Folded | Format::Tree | Format::Markdown | Format::Junit | Format::Speedscope => {
            return Err(unsupported(format, "top"))
        }
    };
    if let Some(yaml) = yaml {
        let doc = TopJson {
            accounting: profile.account.describe(),
            input: input_info(profile.report),
            layers: layer_refs(profile.report),
            total_bytes: total,
            kind: report.kind,
            n: report.n,
            entities: report.entities,
        };
        return Envelope::new(doc).write(yaml, out);
    }
    crate::render::header::write_summary(profile, out)?;
    writeln!(out)?;
    let several_layers = profile.report.instances.len() > 1;
    let mut table = crate::render::width::table();
    let mut header = vec![
        "#",
        "kind",
        "id",
        "name",
        "terms",
        "bytes",
        "% of total",
        "on disk",
    ];
    if several_layers {
        header.insert(1, "layer");
    }
    table.set_header(header);
    let name = if several_layers { 4 } else { 3 };
    table
        .column_mut(name)
        .expect("a column")
        .give(Give::KeepStart);
    for (rank, e) in report.entities.iter().enumerate() {
        let mut row = vec![
            (rank + 1).to_string(),
            e.entity.kind.label().to_string(),
            e.entity.display_id(),
            e.entity.display_name(),
            e.terms.map_or_else(|| "-".to_string(), thousands),
            human_exact(e.bytes),
            percent(e.bytes, total),
            human_exact(e.wire_bytes),
        ];
        if several_layers {
            row.insert(
                1,
                e.entity.layer.map_or_else(String::new, |l| l.to_string()),
            );
        }
        table.add_row(row);
    }
    let first_number = if several_layers { 3 } else { 2 };
    for col in [first_number + 3, first_number + 5] {
        if let Some(c) = table.column_mut(col) {
            c.give(Give::Stack);
        }
    }
    for col in [
        0,
        first_number,
        first_number + 2,
        first_number + 3,
        first_number + 4,
        first_number + 5,
    ] {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{table}")?;
    if report.entities.is_empty() {
        writeln!(out, "(no {} entities)", report.kind)?;
    }
    if let (Some(last), n @ 1..) = (report.entities.last(), report.ties_left_out) {
        let (tie, is) = if n == 1 {
            ("ties", "is")
        } else {
            ("tie", "are")
        };
        let tie = format!(
            "{} {tie} with the last row at {} and {is} not listed ({TIES})",
            crate::units::count(n, "more entity", "more entities"),
            human_exact(last.bytes),
        );
        writeln!(out, "{}", crate::render::width::wrap(&tie, ""))?;
    }
    Ok(())
}
