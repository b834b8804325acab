//! Output formats. Each format is one module and a view of the same
//! [`Profile`]: the aggregate of the selected instance layers (under one root
//! frame per layer when there are several) and the document it came from.

pub mod advice;
pub mod folded;
pub mod json;
pub mod layers;
pub mod svg;
pub mod table;
pub mod tree;
pub mod units;

use std::io::Write;

use crate::decode::{InstanceSummary, Report};
use crate::profile::aggregate::Totals;
use crate::profile::{Aggregate, Frame};

/// The formats of `memprof inspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// OMMX's folded stacks: `frame;frame;... BYTES`, exactly as
    /// `Instance.logical_memory_profile()` prints them.
    Folded,
    /// An indented tree of inclusive bytes.
    Tree,
    /// The largest paths as a table.
    Table,
    /// The tree as JSON (the baseline format).
    Json,
    /// The tree as YAML.
    Yaml,
}

/// Options of the human views.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewOptions {
    pub depth: Option<usize>,
    pub min_percent: f64,
    pub top: usize,
}

impl Default for ViewOptions {
    fn default() -> Self {
        Self {
            depth: None,
            min_percent: 0.0,
            top: 25,
        }
    }
}

/// Escapes a name taken from user data for use as one folded-stack frame:
/// `%`, `;`, control characters and a trailing space-digits run (which a
/// folded reader would take for the count) are percent-encoded.
pub fn escape_frame(name: &str) -> String {
    let mut out = escape_frame_chars(name);
    // "x 12" at the end of a line would read as a count: encode the space.
    if let Some(pos) = out.rfind(' ') {
        if pos + 1 < out.len() && out[pos + 1..].bytes().all(|b| b.is_ascii_digit()) {
            out.replace_range(pos..pos + 1, "%20");
        }
    }
    out
}

/// Percent-encodes `%`, `;` and control characters, which would break a
/// folded line.
pub fn escape_frame_chars(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '%' | ';' => out.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The root frame naming an instance layer when several are shown:
/// `layer[1]`, or `layer[0] (title)` (the parenthesis keeps a title that
/// ends in digits from reading as a count).
pub fn layer_frame(index: usize, title: Option<&str>) -> String {
    match title {
        Some(t) => format!("layer[{index}] ({})", escape_frame_chars(t)),
        None => format!("layer[{index}]"),
    }
}

/// What every format renders.
pub struct Profile<'a> {
    pub report: &'a Report,
    pub aggregate: Aggregate,
    pub totals: Vec<Totals>,
}

impl<'a> Profile<'a> {
    /// Combines the report's instances: one alone stands at the root; several
    /// each get a layer root frame.
    pub fn new(report: &'a Report) -> Self {
        let aggregate = match report.instances.as_slice() {
            [one] => one.aggregate.clone(),
            many => {
                let mut all = Aggregate::new();
                for instance in many {
                    let frame = layer_frame(
                        instance.instance_index.unwrap_or(0),
                        instance.title.as_deref(),
                    );
                    all.merge_under(&[Frame::Owned(frame)], &instance.aggregate);
                }
                all
            }
        };
        let totals = aggregate.totals();
        Self {
            report,
            aggregate,
            totals,
        }
    }

    pub fn total_bytes(&self) -> u64 {
        self.totals[Aggregate::ROOT].bytes
    }

    /// Sum of the instances' counts.
    pub fn summary(&self) -> InstanceSummary {
        let mut sum = InstanceSummary::default();
        for i in &self.report.instances {
            let s = &i.summary;
            sum.variables += s.variables;
            sum.constraints += s.constraints;
            sum.removed_constraints += s.removed_constraints;
            sum.named_functions += s.named_functions;
            sum.terms += s.terms;
            sum.wire_bytes += s.wire_bytes;
        }
        sum
    }

    /// "all 3 instance layers", "instance layer 1 \"title\"" or "raw instance".
    pub fn layer_label(&self) -> String {
        match self.report.instances.as_slice() {
            [one] => match one.instance_index {
                None => "raw instance".to_string(),
                Some(i) => match &one.title {
                    Some(t) => format!("instance layer {i} ({t})"),
                    None => format!("instance layer {i}"),
                },
            },
            many => format!("all {} instance layers", many.len()),
        }
    }

    /// Children of `id`, largest first, ties by name.
    pub fn sorted_children(&self, id: usize) -> Vec<usize> {
        let mut children = self.aggregate.node(id).children.clone();
        children.sort_by(|&a, &b| {
            self.totals[b]
                .bytes
                .cmp(&self.totals[a].bytes)
                .then_with(|| {
                    self.aggregate
                        .node(a)
                        .name
                        .cmp(&self.aggregate.node(b).name)
                })
        });
        children
    }

    /// The short header of the human formats.
    pub fn write_summary(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let s = self.summary();
        let doc = &self.report.document;
        writeln!(out, "file:        {}", doc.name)?;
        writeln!(out, "layer:       {}", self.layer_label())?;
        writeln!(
            out,
            "entities:    {} variables, {} constraints, {} removed constraints, {} stored terms",
            s.variables, s.constraints, s.removed_constraints, s.terms
        )?;
        match doc.file_bytes {
            Some(b) => writeln!(out, "file bytes:  {} ({b} B)", units::human(b))?,
            None => writeln!(out, "file bytes:  {} B of instance data", s.wire_bytes)?,
        }
        writeln!(
            out,
            "logical:     {} ({} B, OMMX 2.9.3's estimate; KiB/MiB are 1024-based)",
            units::human(self.total_bytes()),
            self.total_bytes()
        )
    }
}
