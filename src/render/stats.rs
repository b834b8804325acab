//! `memprof stats` as tables, JSON or YAML.

use std::io::Write;

use anyhow::Result;
use comfy_table::CellAlignment;

use crate::render::width::{Give, Grid};
use serde::Serialize;

use crate::profiled::envelope::Envelope;

use super::data::{input_json, layer_refs, InputJson, LayerRef};
use super::format::{Format, DATA};
use super::Document;
use crate::api::Stats;
use crate::drill::stats::{Distribution, StatsLine};
use crate::drill::EntityRef;
use crate::names::Choice;
use crate::profile::family::UNNAMED;
use crate::units::{human, thousands};

/// How the percentiles are computed, stated in every document.
pub const METHOD: &str =
    "nearest-rank; exact while a distribution has at most 64 distinct values, \
    else from log buckets keeping 8 significant bits (reported as the bucket's lower bound, \
    at most 0.78% below the true value; see each distribution's `exact`)";

#[derive(Debug, Serialize)]
struct StatsJson<'a> {
    accounting: &'static str,
    input: InputJson,
    layers: Vec<LayerRef>,
    total_bytes: u64,
    percentiles: &'static str,
    kinds: &'a [StatsLine],
    families: &'a [StatsLine],
}

fn figures(d: &Distribution, bytes: bool) -> String {
    let f = |v: u64| if bytes { human(v) } else { thousands(v) };
    let approx = if d.exact { "" } else { "~" };
    format!(
        "{} / {approx}{} / {approx}{} / {approx}{} / {}",
        f(d.min),
        f(d.p50),
        f(d.p90),
        f(d.p99),
        f(d.max)
    )
}

fn largest(e: &EntityRef, bytes: u64) -> String {
    format!("{} {} ({})", e.display_id(), e.display_name(), human(bytes))
}

fn table(rows: &[StatsLine], families: bool, limit: usize) -> Grid {
    let mut table = crate::render::width::table();
    let mut header = vec!["kind"];
    if families {
        header.push("family");
    }
    header.extend([
        "count",
        "total",
        "bytes min / p50 / p90 / p99 / max",
        "terms min / p50 / p90 / p99 / max",
        "largest (id name)",
    ]);
    let columns = header.len();
    table.set_header(header);
    if families {
        table.column_mut(1).expect("a column").give(Give::KeepStart);
    }
    table
        .column_mut(columns - 1)
        .expect("a column")
        .give(Give::KeepStart);
    for s in rows.iter().take(limit) {
        let mut row = vec![s.kind.label().to_string()];
        if families {
            row.push(match &s.family {
                Some(Some(name)) => crate::profiled::escape_control(name).into_owned(),
                _ => UNNAMED.to_string(),
            });
        }
        row.extend([
            crate::units::thousands(s.count),
            human(s.bytes.total),
            figures(&s.bytes, true),
            s.terms
                .as_ref()
                .map_or_else(|| "-".to_string(), |t| figures(t, false)),
            largest(&s.largest, s.largest_bytes),
        ]);
        table.add_row(row);
    }
    if rows.len() > limit {
        table.add_note(format!(
            "({} more families; raise --top to see them)",
            rows.len() - limit
        ));
    }
    let first = if families { 2 } else { 1 };
    for col in first..first + 4 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// `stats`'s document: the distributions, with at most `top` family rows
/// in the table.
pub struct StatsView<'a> {
    pub stats: &'a Stats,
    pub top: usize,
}

impl Document for StatsView<'_> {
    const NAME: &'static str = "stats";
    const FORMATS: &'static [Choice<Format>] = DATA;

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        write_table(self, out)
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        let profile = self.stats.profile();
        let doc = StatsJson {
            accounting: profile.account.describe(),
            input: input_json(profile.profiled),
            layers: layer_refs(profile.profiled),
            total_bytes: profile.total_bytes(),
            percentiles: METHOD,
            kinds: &self.stats.kinds,
            families: &self.stats.families,
        };
        Envelope::new(doc).write(yaml, out)
    }
}

fn write_table(view: &StatsView<'_>, out: &mut dyn Write) -> Result<()> {
    let profile = &view.stats.profile();
    let (kinds, families, top) = (&view.stats.kinds, &view.stats.families, view.top);
    crate::render::header::write_summary(profile, out)?;
    writeln!(
        out,
        "percentiles: nearest-rank; ~ marks figures from log buckets (≤ 0.78% low)"
    )?;
    writeln!(out)?;
    writeln!(out, "{}", table(kinds, false, usize::MAX))?;
    writeln!(out)?;
    writeln!(
        out,
        "families (entities sharing a name), largest total first:"
    )?;
    writeln!(out, "{}", table(families, true, top))?;
    Ok(())
}
