//! `memprof inspect`'s document: the profile ([`Profile`], the aggregate
//! of the selected instance layers under one root frame per layer when
//! there are several), with a row per input when several were profiled
//! together. A file per format: OMMX's folded stacks, the tree, the table
//! (or, with `--view both`, the memory and wire views side by side), the
//! data (the baseline format) and speedscope's file.

mod files;
mod folded;
mod json;
mod side_by_side;
mod speedscope;
mod table;
mod tree;

use std::io::Write;

use anyhow::Result;

use super::{Document, Format};
use crate::names::{choice, Choice};
use crate::profiled::files::FileSummary;
use crate::profiled::Profile;

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

/// `inspect`'s document: a profile, as its view's options cut it.
pub struct ProfileView<'a> {
    pub profile: &'a Profile<'a>,
    /// The wire view of the same inputs, shown beside the profile in the
    /// table (`--view both`).
    pub wire: Option<&'a Profile<'a>>,
    /// A row per input, when several were profiled together.
    pub files: Option<&'a [FileSummary]>,
    pub options: ViewOptions,
}

impl<'a> ProfileView<'a> {
    /// `profile` alone, cut by `options`.
    pub fn new(profile: &'a Profile<'a>, options: ViewOptions) -> Self {
        Self {
            profile,
            wire: None,
            files: None,
            options,
        }
    }
}

impl Document for ProfileView<'_> {
    const NAME: &'static str = "inspect";
    const FORMATS: &'static [Choice<Format>] = &[
        choice(
            Format::Folded,
            "OMMX's folded stacks: `frame;frame;... BYTES`, exactly as \
             `Instance.logical_memory_profile()` prints them",
        ),
        choice(Format::Tree, "An indented tree of inclusive bytes"),
        choice(Format::Table, "The largest paths as a table"),
        choice(Format::Json, "The tree as JSON (the baseline format)"),
        choice(Format::Yaml, "The tree as YAML"),
        choice(
            Format::Speedscope,
            "speedscope's JSON file (speedscope.app opens it): one sample per folded \
             line, weighed in bytes",
        ),
    ];

    fn folded(&self, out: &mut dyn Write) -> Result<()> {
        Ok(folded::write(self, out)?)
    }

    fn tree(&self, out: &mut dyn Write) -> Result<()> {
        Ok(tree::write(self, out)?)
    }

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        match self.wire {
            Some(wire) => side_by_side::write(self, wire, out)?,
            None => table::write(self, out)?,
        }
        if let Some(files) = self.files {
            writeln!(out)?;
            files::write(files, out)?;
        }
        Ok(())
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        json::write(self, yaml, out)
    }

    fn speedscope(&self, out: &mut dyn Write) -> Result<()> {
        speedscope::write(self, out)
    }
}
