//! `memprof diff`'s document, [`DiffView`] (the two sources, their
//! profiles and the [`Diff`] of their paths), and a file per format; and
//! the pair of flamegraphs `--flamegraph` draws of it (`svg.rs`).

mod folded;
mod json;
mod markdown;
pub mod svg;
mod table;
mod tree;

pub(crate) use markdown::{code, COMMENT_LIMIT};

use std::io::{self, Write};

use super::{Document, Format};
use crate::diff::{self, Count, Diff, DiffNode, Status};
use crate::names::{choice, Choice};
use crate::profiled::Loaded;
use crate::units::{human, signed_human, signed_percent, thousands};

/// Options of the human views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiffViewOptions {
    /// Most path rows (table, markdown); `None` for the format's default.
    pub top: Option<usize>,
    /// Deepest tree level shown.
    pub depth: Option<usize>,
}

/// `diff`'s document, which every diff format renders: the two sources,
/// the [`Diff`] of their paths, their counts, and the options of the human
/// views.
pub struct DiffView<'a> {
    pub old: &'a Loaded,
    pub new: &'a Loaded,
    pub diff: Diff,
    pub counts: Vec<Count>,
    pub options: DiffViewOptions,
}

impl Document for DiffView<'_> {
    const NAME: &'static str = "diff";
    const FORMATS: &'static [Choice<Format>] = &[
        choice(
            Format::Table,
            "Changed paths as a table, largest change first, with the counts",
        ),
        choice(
            Format::Tree,
            "The changed part of the tree, every level summing to its parent",
        ),
        choice(Format::Json, "Every path with old and new bytes as data"),
        choice(Format::Yaml, "The same document as YAML"),
        choice(
            Format::Markdown,
            "A pull-request comment (under 65,536 characters)",
        ),
        choice(
            Format::Folded,
            "`path OLD NEW` lines of own bytes: inferno's differential input",
        ),
    ];

    fn table(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        Ok(table::write(self, out)?)
    }

    fn tree(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        Ok(tree::write(self, out)?)
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> anyhow::Result<()> {
        json::write(self, yaml, out)
    }

    fn markdown(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        markdown::write(self, out)
    }

    fn folded(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        Ok(folded::write(self, out)?)
    }
}

impl<'a> DiffView<'a> {
    /// The diff of `old` and `new`, its human views cut by `options`.
    pub fn new(old: &'a Loaded, new: &'a Loaded, options: DiffViewOptions) -> Self {
        let (old_profile, new_profile) = (old.profile(), new.profile());
        let diff = Diff::of(&old_profile, &new_profile);
        let root = diff.root();
        let counts = diff::counts(
            &old_profile.summary(),
            &new_profile.summary(),
            root.old.unwrap_or_default(),
            root.new.unwrap_or_default(),
        );
        Self {
            old,
            new,
            diff,
            counts,
            options,
        }
    }

    /// Paths that changed, largest change first.
    pub fn changed(&self) -> Vec<usize> {
        self.diff
            .ranked()
            .into_iter()
            .filter(|&id| self.diff.node(id).status() != Status::Unchanged)
            .collect()
    }

    pub fn unchanged_count(&self) -> usize {
        (1..self.diff.len())
            .filter(|&id| self.diff.node(id).status() == Status::Unchanged)
            .count()
    }

    /// The two-line header of the human formats.
    pub fn write_header(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "old:    {} ({})", self.old.name(), self.old.describe())?;
        writeln!(out, "new:    {} ({})", self.new.name(), self.new.describe())?;
        let root = self.diff.root();
        writeln!(
            out,
            "total:  {} -> {} ({}, {}; KiB/MiB are 1024-based)",
            human(root.old_bytes()),
            human(root.new_bytes()),
            signed_human(root.delta()),
            change_text(root)
        )
    }
}

/// The relative change, or what happened to a path that exists on one side.
pub fn change_text(node: &DiffNode) -> String {
    match node.status() {
        Status::Added => "added".to_string(),
        Status::Removed => "removed".to_string(),
        _ => match node.delta_percent() {
            Some(p) => signed_percent(p),
            None => "new".to_string(),
        },
    }
}

/// A count difference with its sign: `+1,204`, `-3`, `0`.
pub fn signed_count(delta: i64) -> String {
    let size = thousands(delta.unsigned_abs());
    match delta.signum() {
        1 => format!("+{size}"),
        -1 => format!("-{size}"),
        _ => size,
    }
}
