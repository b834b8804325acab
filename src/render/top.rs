//! `memprof top` as a table, JSON or YAML.

use std::io::Write;

use anyhow::Result;
use comfy_table::CellAlignment;
use serde::Serialize;

use crate::profiled::envelope::Envelope;

use super::data::{input_json, layer_refs, InputJson, LayerRef};
use super::format::{Format, DATA};
use super::Document;
use crate::api::Top;
use crate::drill::top::TopEntity;
use crate::names::Choice;
use crate::render::width::Give;
use crate::units::{human_exact, percent, thousands};

#[derive(Debug, Serialize)]
struct TopJson<'a> {
    accounting: &'static str,
    input: InputJson,
    layers: Vec<LayerRef>,
    total_bytes: u64,
    kind: &'a str,
    n: usize,
    /// Largest first.
    entities: &'a [TopEntity],
}

/// How ties are ordered, below the table when they decided its cut.
const TIES: &str = "ties are listed by id, smaller first, then by kind";

impl Document for Top {
    const NAME: &'static str = "top";
    const FORMATS: &'static [Choice<Format>] = DATA;

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        write_table(self, out)
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        let profile = self.profile();
        let doc = TopJson {
            accounting: profile.account.describe(),
            input: input_json(profile.profiled),
            layers: layer_refs(profile.profiled),
            total_bytes: profile.total_bytes(),
            kind: self.kind.name(),
            n: self.n,
            entities: &self.entities,
        };
        Envelope::new(doc).write(yaml, out)
    }
}

fn write_table(top: &Top, out: &mut dyn Write) -> Result<()> {
    let profile = &top.profile();
    let total = profile.total_bytes();
    let kind = top.kind.name();
    crate::render::header::write_summary(profile, out)?;
    writeln!(out)?;
    let several_layers = profile.profiled.instances.len() > 1;
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
    for (rank, e) in top.entities.iter().enumerate() {
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
    if top.entities.is_empty() {
        writeln!(out, "(no {} entities)", kind)?;
    }
    if let (Some(last), n @ 1..) = (top.entities.last(), top.ties_left_out) {
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
