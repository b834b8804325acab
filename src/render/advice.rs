//! `memprof advise` output: a table with the details of each recommendation
//! below it (human units), or the same as JSON/YAML (integers, fixed key
//! order, `schema_version`).

use std::io::Write;

use anyhow::Result;
use comfy_table::CellAlignment;
use serde::Serialize;

use super::data::{input_json, InputJson};
use super::format::Format;
use super::Document;
use crate::advise::{Change, LayerAdvice, Measure, NotComputed, Recommendation, Sample, Severity};
use crate::api::{Advice, FileRun};
use crate::names::{bare, choice, Choice};
use crate::profiled::envelope::Envelope;
use crate::profiled::Accounting;
use crate::profiled::Profile;
use crate::units::{count, exact, exact_share, human, thousands};

/// `advise`'s document: the advice of each input, shown from
/// `min_severity` up; its tables one input after another, or as data one
/// input's document, or, for several, one holding each input's in argument
/// order.
pub struct AdviceView<'a> {
    pub advice: &'a [FileRun<Advice>],
    pub min_severity: Severity,
}

impl AdviceView<'_> {
    /// `write` given each input's advice as shown.
    fn with_files<R>(&self, write: impl FnOnce(&[FileAdvice<'_>]) -> R) -> R {
        let profiles: Vec<Profile<'_>> =
            self.advice.iter().map(|run| run.value.profile()).collect();
        let files: Vec<FileAdvice<'_>> = profiles
            .iter()
            .zip(self.advice)
            .map(|(profile, run)| FileAdvice {
                profile,
                layers: &run.value.layers,
                min_severity: self.min_severity,
            })
            .collect();
        write(&files)
    }
}

impl Document for AdviceView<'_> {
    const NAME: &'static str = "advise";
    const FORMATS: &'static [Choice<Format>] = &[
        choice(
            Format::Table,
            "A table, largest saving first, then each recommendation's details",
        ),
        bare(Format::Json),
        bare(Format::Yaml),
    ];

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        self.with_files(|files| {
            for (i, file) in files.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                render_table(file, out)?;
            }
            Ok(())
        })
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        #[derive(Serialize)]
        struct Many<'a> {
            files: Vec<Envelope<AdviceJson<'a>>>,
        }
        self.with_files(|files| match files {
            [one] => Envelope::new(document(one)).write(yaml, out),
            _ => Envelope::untooled(Many {
                files: files.iter().map(|f| Envelope::new(document(f))).collect(),
            })
            .write(yaml, out),
        })
    }
}

/// One input's advice as shown: each layer's, and the severity floor.
struct FileAdvice<'a> {
    profile: &'a Profile<'a>,
    layers: &'a [LayerAdvice],
    min_severity: Severity,
}

impl FileAdvice<'_> {
    fn shown<'l>(&self, layer: &'l LayerAdvice) -> Vec<&'l Recommendation> {
        layer
            .recommendations
            .iter()
            .filter(|r| r.severity >= self.min_severity)
            .collect()
    }
}

#[derive(Serialize)]
struct Thresholds {
    high: f64,
    medium: f64,
    low: f64,
}

#[derive(Serialize)]
struct AdviceJson<'a> {
    accounting: &'static str,
    input: InputJson,
    min_severity: Severity,
    /// Lower bounds of each severity: the saving in percent of the total.
    severity_thresholds_percent: Thresholds,
    layers: Vec<LayerJson<'a>>,
}

#[derive(Serialize)]
struct LayerJson<'a> {
    /// A layer's own accounting, when it is not the document's.
    #[serde(skip_serializing_if = "Option::is_none")]
    accounting: Option<&'static str>,
    index: Option<usize>,
    title: Option<&'a str>,
    total_bytes: u64,
    file_bytes: u64,
    estimated_saving_bytes: u64,
    estimated_saving_percent: f64,
    file_saving_bytes: u64,
    /// All recommendations, including those below `min_severity`.
    recommendations_found: usize,
    recommendations: Vec<&'a Recommendation>,
    /// Rules not computed under the layer's accounting, with the reason.
    #[serde(skip_serializing_if = "<[NotComputed]>::is_empty")]
    not_computed: &'a [NotComputed],
}

/// The document's accounting: OMMX 3.0's when every layer is counted so,
/// else OMMX 2.9.3's (layers counted otherwise say theirs).
fn accounting(view: &FileAdvice<'_>) -> Accounting {
    let all_30 = !view.layers.is_empty()
        && view
            .layers
            .iter()
            .all(|l| l.accounting == Accounting::Ommx30);
    if all_30 {
        Accounting::Ommx30
    } else {
        Accounting::Ommx29
    }
}

fn document<'a>(view: &'a FileAdvice<'a>) -> AdviceJson<'a> {
    let threshold = |s: Severity| {
        Severity::THRESHOLDS
            .iter()
            .find(|(t, _)| *t == s)
            .map_or(0.0, |(_, p)| *p)
    };
    let accounting = accounting(view);
    AdviceJson {
        accounting: accounting.describe(),
        input: input_json(view.profile.profiled),
        min_severity: view.min_severity,
        severity_thresholds_percent: Thresholds {
            high: threshold(Severity::High),
            medium: threshold(Severity::Medium),
            low: threshold(Severity::Low),
        },
        layers: view
            .layers
            .iter()
            .map(|l| LayerJson {
                accounting: (l.accounting != accounting).then(|| l.accounting.describe()),
                index: l.index,
                title: l.title.as_deref(),
                total_bytes: l.total_bytes,
                file_bytes: l.file_bytes,
                estimated_saving_bytes: l.estimated_saving_bytes,
                estimated_saving_percent: l.estimated_saving_percent,
                file_saving_bytes: l.file_saving_bytes,
                recommendations_found: l.recommendations.len(),
                recommendations: view.shown(l),
                not_computed: &l.not_computed,
            })
            .collect(),
    }
}

fn sample_text(s: &Sample) -> String {
    let mut text = s.entity.to_string();
    if let Some(id) = s.id {
        text.push_str(&format!(" {id}"));
    }
    if let Some(name) = &s.name {
        text.push_str(&format!(" {name:?}"));
    }
    format!("{text}: {}", s.detail)
}

/// The samples, those alike (the same kind of entity, name and detail: they
/// differ by id alone) together, in the order of the first of each.
fn alike_samples(samples: &[Sample]) -> Vec<Vec<&Sample>> {
    let mut groups: Vec<Vec<&Sample>> = Vec::new();
    for s in samples {
        let same = |g: &&mut Vec<&Sample>| {
            let first = g[0];
            (first.entity, &first.name, &first.detail) == (s.entity, &s.name, &s.detail)
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(group) => group.push(s),
            None => groups.push(vec![s]),
        }
    }
    groups
}

/// One sample, or several alike once, with their ids and count:
/// `variable 1, 2, 3 (3 alike): 153 B in OMMX 2.9.3, 25 B in OMMX 3.0`.
fn samples_text(alike: &[&Sample]) -> String {
    let [first, ..] = alike else {
        return String::new();
    };
    if alike.len() == 1 {
        return sample_text(first);
    }
    let mut text = first.entity.to_string();
    let ids: Vec<String> = alike
        .iter()
        .filter_map(|s| s.id.map(|id| id.to_string()))
        .collect();
    if !ids.is_empty() {
        text.push_str(&format!(" {}", ids.join(", ")));
    }
    if let Some(name) = &first.name {
        text.push_str(&format!(" {name:?}"));
    }
    format!("{text} ({} alike): {}", alike.len(), first.detail)
}

fn share(r: &Recommendation) -> String {
    match r.measure {
        Measure::Logical => format!("{:.1}%", r.saving_percent),
        Measure::File => format!("{:.1}% of file", r.saving_percent),
    }
}

/// A byte count for a table cell: binary units from 1 KiB, separators below.
fn cell(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{} B", thousands(bytes))
    } else {
        human(bytes)
    }
}

/// The summary: what the changes the user can make save together, and what
/// the others are.
fn summary(layer: &LayerAdvice) -> String {
    let version = layer.accounting.version();
    let recs = &layer.recommendations;
    let changes = recs
        .iter()
        .filter(|r| r.change == Change::Ommx && r.measure == Measure::Logical)
        .count() as u64;
    let mut text = format!("summary:     total {}; ", exact(layer.total_bytes));
    if changes > 0 {
        text.push_str(&format!(
            "{} you can make in OMMX {version} to what it holds would save {} together, \
             each byte counted once",
            match changes {
                1 => "the 1 change".to_string(),
                n => format!("the {n} changes"),
            },
            exact_share(layer.estimated_saving_bytes, layer.total_bytes)
        ));
    } else {
        text.push_str(&format!(
            "no change you can make in OMMX {version} would save memory"
        ));
    }
    if layer.file_saving_bytes > 0 {
        text.push_str(&format!(
            "; the file, {}, would be {} smaller without its zero and duplicate terms",
            exact(layer.file_bytes),
            exact(layer.file_saving_bytes)
        ));
    }
    let ommx30 = recs.iter().any(|r| r.change == Change::Ommx30);
    let elsewhere = recs
        .iter()
        .filter(|r| r.change == Change::NotInOmmx)
        .count() as u64;
    let others = match (ommx30, elsewhere) {
        (false, 0) => None,
        (true, 0) => Some("moving to OMMX 3.0 (a pre-release) is".to_string()),
        (false, n) => Some(format!(
            "{} OMMX does not offer {}",
            count(n, "layout", "layouts"),
            if n == 1 { "is" } else { "are" }
        )),
        (true, n) => Some(format!(
            "moving to OMMX 3.0 (a pre-release) and {} OMMX does not offer are",
            count(n, "layout", "layouts")
        )),
    };
    if let Some(others) = others {
        text.push_str(&format!(". Not in this sum: {others} shown for comparison"));
    }
    text
}

/// What a recommendation asks of the user, after its severity.
fn change_text(r: &Recommendation, version: &str) -> String {
    match r.change {
        Change::Ommx => format!("a change in OMMX {version}"),
        Change::Ommx30 => "moving to OMMX 3.0, a pre-release".to_string(),
        Change::NotInOmmx => "a layout OMMX does not offer".to_string(),
    }
}

/// What following a recommendation saves, in words.
fn saving_text(r: &Recommendation) -> String {
    match (r.change, r.measure) {
        (Change::Ommx, Measure::Logical) => format!("saves {}", exact(r.saving_bytes)),
        (Change::Ommx, Measure::File) => format!("saves {} of the file", exact(r.saving_bytes)),
        (Change::Ommx30, _) if r.saving_bytes == 0 => "saves nothing".to_string(),
        (Change::Ommx30, _) => format!("would save {}", exact(r.saving_bytes)),
        (Change::NotInOmmx, _) => format!("{} less in that layout", exact(r.saving_bytes)),
    }
}

fn render_table(view: &FileAdvice<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    crate::render::header::write_summary(view.profile, out)?;
    for layer in view.layers {
        writeln!(out)?;
        if view.layers.len() > 1 {
            let name = match (&layer.index, &layer.title) {
                (Some(i), Some(t)) => format!("instance layer {i} ({})", super::escape_control(t)),
                (Some(i), None) => format!("instance layer {i}"),
                (None, _) => "raw instance".to_string(),
            };
            writeln!(out, "== {name} ==")?;
        }
        let found = layer.recommendations.len();
        let shown = view.shown(layer);
        if found == 0 {
            writeln!(
                out,
                "No recommendations: nothing in this instance would save memory or file bytes \
                 under OMMX {}'s accounting.",
                layer.accounting.version()
            )?;
            not_computed(layer, out)?;
            continue;
        }
        writeln!(
            out,
            "{}",
            crate::render::width::wrap(&summary(layer), &" ".repeat(13))
        )?;
        if shown.is_empty() {
            writeln!(
                out,
                "No recommendations at or above --min-severity {} ({found} below it).",
                view.min_severity.label()
            )?;
            not_computed(layer, out)?;
            continue;
        }
        writeln!(out)?;
        let mut table = crate::render::width::table();
        table.set_header(vec![
            "#",
            "rule",
            "change",
            "severity",
            "saving",
            "% of total",
            "concerned",
        ]);
        for (i, r) in shown.iter().enumerate() {
            table.add_row(vec![
                (i + 1).to_string(),
                r.rule.to_string(),
                r.change.label().to_string(),
                r.severity.label().to_string(),
                cell(r.saving_bytes),
                share(r),
                cell(r.bytes_concerned),
            ]);
        }
        for col in [4, 5, 6] {
            if let Some(c) = table.column_mut(col) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        writeln!(out, "{table}")?;
        if shown.len() < found {
            writeln!(
                out,
                "({} below --min-severity {} not shown)",
                found - shown.len(),
                view.min_severity.label()
            )?;
        }
        let version = layer.accounting.version();
        for (i, r) in shown.iter().enumerate() {
            writeln!(out)?;
            let heading = format!(
                "[{}] {} ({}, {}): {}",
                i + 1,
                r.rule,
                r.severity.label(),
                change_text(r, version),
                saving_text(r)
            );
            writeln!(out, "{}", crate::render::width::wrap(&heading, "    "))?;
            let prose = |label: &str, text: &str| {
                // Wrapped to the terminal, continuing under the text.
                crate::render::width::wrap(&format!("    {label:<11} {text}"), &" ".repeat(16))
            };
            writeln!(out, "{}", prose("finding:", &r.title))?;
            // A path is one word: when one would run past the terminal, the
            // paths go under their label instead of beside it.
            let beside = crate::render::width::limit().is_none_or(|width| {
                r.paths
                    .iter()
                    .all(|p| 16 + console::measure_text_width(p) <= usize::from(width))
            });
            for (j, path) in r.paths.iter().enumerate() {
                let label = if j == 0 { "paths:" } else { "" };
                if beside {
                    writeln!(out, "    {label:<11} {path}")?;
                } else {
                    if j == 0 {
                        writeln!(out, "    {label}")?;
                    }
                    writeln!(out, "      {path}")?;
                }
            }
            for (j, alike) in alike_samples(&r.sample).iter().enumerate() {
                let label = if j == 0 { "sample:" } else { "" };
                writeln!(out, "{}", prose(label, &samples_text(alike)))?;
            }
            writeln!(out, "{}", prose("suggestion:", &r.suggestion))?;
        }
        not_computed(layer, out)?;
    }
    Ok(())
}

/// The rules a layer's accounting leaves out, one line each.
fn not_computed(layer: &LayerAdvice, out: &mut dyn Write) -> std::io::Result<()> {
    if layer.not_computed.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "Not computed:")?;
    for n in &layer.not_computed {
        let line = format!("  {}: {}", n.rule, n.reason);
        writeln!(out, "{}", crate::render::width::wrap(&line, "    "))?;
    }
    Ok(())
}
