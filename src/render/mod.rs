//! Output formats. Each format is one module and a view of the same
//! [`Profile`]: the aggregate of the selected instance layers (under one root
//! frame per layer when there are several) and the document it came from.

pub mod advice;
pub mod check;
pub mod diff;
pub mod explain;
pub mod files;
pub mod folded;
pub mod format;
pub mod header;
pub mod html;
pub mod json;
pub mod layers;
pub mod records;
pub mod registry;
pub mod side_by_side;
pub mod speedscope;
pub mod stats;
pub mod style;
pub mod svg;
pub mod svg_frames;
pub mod table;
pub mod top;
pub mod tree;
pub mod width;

pub use crate::profile::family::{escape_frame, escape_frame_chars};
pub use crate::report::{escape_control, file_frame, layer_frame, Account, Profile};
pub use format::Format;

/// Which bytes a profile shows (`--view`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum View {
    /// OMMX 2.9.3's logical in-memory bytes.
    #[default]
    Memory,
    /// Encoded protobuf bytes per path; the total is the instance's size.
    Wire,
    /// Both side by side, with the in-memory/on-disk ratio (table format).
    Both,
}

impl crate::names::Named for View {
    const ALL: &'static [Self] = &[View::Memory, View::Wire, View::Both];
    fn name(self) -> &'static str {
        match self {
            View::Memory => "memory",
            View::Wire => "wire",
            View::Both => "both",
        }
    }
}

/// `memprof inspect`'s output: the profile in `format`, and a row per input
/// when several were profiled together.
pub fn profile(
    profile: &Profile<'_>,
    per_file: Option<&[files::FileSummary]>,
    view: &ViewOptions,
    format: Format,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    match format {
        Format::Folded => folded::render(profile, out)?,
        Format::Tree => tree::render(profile, view, out)?,
        Format::Table => {
            table::render(profile, view, out)?;
            if let Some(files) = per_file {
                writeln!(out)?;
                files::render_table(files, out)?;
            }
        }
        Format::Json => json::render(profile, per_file, false, out)?,
        Format::Yaml => json::render(profile, per_file, true, out)?,
        Format::Speedscope => speedscope::render(profile, out)?,
        Format::Markdown | Format::Junit => return Err(format::unsupported(format, "inspect")),
    }
    Ok(())
}

/// Options of the human views.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewOptions {
    pub depth: Option<usize>,
    pub min_percent: f64,
    pub top: usize,
}

impl ViewOptions {
    /// The tree's default cut: levels shown, and the share under which
    /// siblings fold into "(N others)" (about 60 lines for the bundled
    /// fixtures: a screenful).
    pub const DEPTH: usize = 3;
    pub const MIN_PERCENT: f64 = 2.0;

    /// The views `inspect` asks for, and the wheel's `tree()`/`table()` alike:
    /// a screenful unless `all` (every level and path), `depth` and
    /// `min_percent` overriding either.
    pub fn asked(depth: Option<usize>, min_percent: Option<f64>, all: bool, top: usize) -> Self {
        Self {
            depth: depth.or((!all).then_some(Self::DEPTH)),
            min_percent: min_percent.unwrap_or(if all { 0.0 } else { Self::MIN_PERCENT }),
            top,
        }
    }
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
