//! Output formats. Each format is one module and a view of the same
//! [`Profile`]: the aggregate of the selected instance layers (under one root
//! frame per layer when there are several) and the document it came from.

pub mod advice;
pub mod check;
pub mod diff;
pub mod explain;
pub mod files;
pub mod folded;
pub mod json;
pub mod layers;
pub mod side_by_side;
pub mod stats;
pub mod style;
pub mod svg;
pub mod table;
pub mod top;
pub mod tree;
pub mod units;
pub mod width;

use std::io::Write;

use crate::decode::{Accounting, InstanceSummary, Report, Schema};

/// The JSON `accounting` of a profile whose layers follow both accountings.
pub const MIXED_ACCOUNTING: &str =
    "ommx 2.9.3 (ommx.v1 layers) and 3.0.0b7 (ommx.v2 layers) logical_memory_profile";
use crate::profile::aggregate::Totals;
pub use crate::profile::family::{escape_frame, escape_frame_chars};
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

/// The formats of the drill-down commands (`top`, `stats`, `explain`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DataFormat {
    /// A table for people.
    #[default]
    Table,
    /// JSON, integers only, fixed key order.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// Which bytes a profile shows (`--view`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// OMMX 2.9.3's logical in-memory bytes.
    #[default]
    Memory,
    /// Encoded protobuf bytes per path; the total is the instance's size.
    Wire,
    /// Both side by side, with the in-memory/on-disk ratio (table format).
    Both,
}

/// The accounting one profile follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Account {
    /// OMMX 2.9.3's logical in-memory bytes.
    #[default]
    Memory,
    /// Encoded protobuf bytes.
    Wire,
}

impl Account {
    /// The JSON `accounting` field.
    pub fn describe(self) -> &'static str {
        match self {
            Account::Memory => "ommx 2.9.3 logical_memory_profile",
            Account::Wire => "protobuf wire bytes",
        }
    }
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

/// The root frame naming an instance layer when several are shown:
/// `layer[1]`, or `layer[0] (title)` (the parenthesis keeps a title that
/// ends in digits from reading as a count).
pub fn layer_frame(index: usize, title: Option<&str>) -> String {
    match title {
        Some(t) => format!("layer[{index}] ({})", escape_frame_chars(t)),
        None => format!("layer[{index}]"),
    }
}

/// Text from an input (a title, an annotation, a name in an archive), made
/// safe for a terminal: control characters, and the invisible marks that
/// reorder text (bidirectional overrides), are written as escapes (`\x1b`,
/// `\n`, `\u{202e}`); everything else is kept.
pub fn escape_control(text: &str) -> std::borrow::Cow<'_, str> {
    let hazard = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hazard) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hazard(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if hazard(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The root frame naming one input when several are shown: `file[0] (name)`.
pub fn file_frame(index: usize, name: &str) -> String {
    format!("file[{index}] ({})", escape_frame_chars(name))
}

/// What every format renders.
pub struct Profile<'a> {
    pub report: &'a Report,
    pub account: Account,
    pub aggregate: Aggregate,
    pub totals: Vec<Totals>,
}

impl<'a> Profile<'a> {
    /// The logical profile of the report's instances.
    pub fn new(report: &'a Report) -> Self {
        Self::of(report, Account::Memory)
    }

    /// Combines the report's instances under `account`: one alone stands at
    /// the root; several each get a layer root frame. The wire account must
    /// have been collected ([`crate::decode::ProfileOptions::wire`]).
    pub fn of(report: &'a Report, account: Account) -> Self {
        let pick = |instance: &'a crate::decode::ProfiledInstance| match account {
            Account::Memory => &instance.aggregate,
            Account::Wire => instance
                .wire
                .as_ref()
                .expect("the wire view is collected whenever it is shown"),
        };
        let aggregate = match report.instances.as_slice() {
            [one] => pick(one).clone(),
            many => {
                let mut all = Aggregate::new();
                for instance in many {
                    let frame = layer_frame(
                        instance.instance_index.unwrap_or(0),
                        instance.title.as_deref(),
                    );
                    all.merge_under(&[Frame::Owned(frame)], pick(instance));
                }
                all
            }
        };
        let totals = aggregate.totals();
        Self {
            report,
            account,
            aggregate,
            totals,
        }
    }

    /// Several inputs in one profile: each file's profile (layer frames
    /// included) under a root frame of its own. `combined` holds every
    /// instance of every file, for the summary.
    pub fn of_files(reports: &[(&str, &Report)], combined: &'a Report, account: Account) -> Self {
        let mut aggregate = Aggregate::new();
        for (i, (name, report)) in reports.iter().enumerate() {
            let one = Profile::of(report, account);
            aggregate.merge_under(&[Frame::Owned(file_frame(i, name))], &one.aggregate);
        }
        let totals = aggregate.totals();
        Self {
            report: combined,
            account,
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

    /// "all 3 instance layers", "instance layer 1 \"title\"" or "raw instance",
    /// with the schema when it is not plain ommx.v1 counted by OMMX 2.9.3.
    pub fn layer_label(&self) -> String {
        match self.report.instances.as_slice() {
            [one] => {
                let label = match one.instance_index {
                    None => "raw instance".to_string(),
                    Some(i) => match &one.title {
                        Some(t) => format!("instance layer {i} ({})", escape_control(t)),
                        None => format!("instance layer {i}"),
                    },
                };
                match (one.schema, one.accounting) {
                    (Schema::V1, Accounting::Ommx29) => label,
                    (Schema::V2, _) => format!("{label}, ommx.v2"),
                    (Schema::V1, Accounting::Ommx30) => {
                        format!("{label}, ommx.v1 as OMMX 3.0 loads it")
                    }
                }
            }
            many => format!("all {} instance layers", many.len()),
        }
    }

    /// Whose accounting the in-memory numbers follow: "OMMX 2.9.3",
    /// "OMMX 3.0.0b7", or both (per layer) for a mixed archive.
    pub fn accounting_name(&self) -> String {
        match self.accountings() {
            [Some(a), None] | [None, Some(a)] => format!("OMMX {}", a.version()),
            [Some(_), Some(_)] => "OMMX 2.9.3 (ommx.v1 layers) and 3.0.0b7 (ommx.v2 layers)".into(),
            [None, None] => format!("OMMX {}", Accounting::Ommx29.version()),
        }
    }

    /// "OMMX 2.9.3's estimate", or both accountings' for a mixed archive.
    fn estimate(&self) -> String {
        match self.accountings() {
            [Some(_), Some(_)] => {
                "OMMX 2.9.3's estimate for ommx.v1 layers, 3.0.0b7's for ommx.v2".to_string()
            }
            _ => format!("{}'s estimate", self.accounting_name()),
        }
    }

    /// The JSON `accounting` field.
    pub fn accounting_describe(&self) -> &'static str {
        match (self.account, self.accountings()) {
            (Account::Wire, _) => self.account.describe(),
            (Account::Memory, [None, Some(a)]) => a.describe(),
            (Account::Memory, [Some(_), Some(_)]) => MIXED_ACCOUNTING,
            (Account::Memory, _) => self.account.describe(),
        }
    }

    /// `[2.9.3 if any instance follows it, 3.0 if any does]`.
    fn accountings(&self) -> [Option<Accounting>; 2] {
        let has = |a| {
            self.report
                .instances
                .iter()
                .any(|i| i.accounting == a)
                .then_some(a)
        };
        [has(Accounting::Ommx29), has(Accounting::Ommx30)]
    }

    /// The node at `path` (`;`-separated frames), if the profile has it.
    pub fn find(&self, path: &str) -> Option<usize> {
        let mut id = Aggregate::ROOT;
        for frame in path.split(';') {
            id = *self
                .aggregate
                .node(id)
                .children
                .iter()
                .find(|&&c| self.aggregate.node(c).name == frame)?;
        }
        Some(id)
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
        writeln!(out, "{}{}", style::label("file:", 13), doc.name)?;
        writeln!(out, "{}{}", style::label("layer:", 13), self.layer_label())?;
        writeln!(
            out,
            "{}{}, {}, {}, {}",
            style::label("entities:", 13),
            units::count(s.variables, "variable", "variables"),
            units::count(s.constraints, "constraint", "constraints"),
            units::count(
                s.removed_constraints,
                "removed constraint",
                "removed constraints"
            ),
            units::count(s.terms, "stored term", "stored terms"),
        )?;
        match doc.file_bytes {
            Some(b) => writeln!(
                out,
                "{}{} ({} B)",
                style::label("file bytes:", 13),
                units::human(b),
                units::thousands(b)
            )?,
            None => writeln!(
                out,
                "{}{} B of instance data",
                style::label("file bytes:", 13),
                units::thousands(s.wire_bytes)
            )?,
        }
        self.write_total(out)
    }

    /// The header line naming the total and what it counts.
    pub fn write_total(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let (label, what) = match self.account {
            Account::Memory => ("logical:", self.estimate()),
            Account::Wire => (
                "wire:",
                "encoded protobuf, the size of the instance data".to_string(),
            ),
        };
        writeln!(
            out,
            "{}{} ({} B, {what}; KiB/MiB are 1024-based)",
            style::label(label, 13),
            units::human(self.total_bytes()),
            units::thousands(self.total_bytes())
        )
    }
}
