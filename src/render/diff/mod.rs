//! The formats of `memprof diff`, each a view of one [`DiffView`]: the two
//! sources, their profiles and the [`Diff`] of their paths.

pub mod folded;
pub mod json;
pub mod markdown;
pub mod svg;
pub mod table;
pub mod tree;

use std::io::{self, Write};

use super::format::{unsupported, Format};
use crate::diff::{self, Count, Diff, DiffNode, Status};
use crate::report::Loaded;
use crate::units::{human, signed_human, signed_percent, thousands};

/// `view` in `format`.
pub fn render(
    view: &DiffView<'_>,
    options: &DiffViewOptions,
    format: Format,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match format {
        Format::Table => table::render(view, options, out)?,
        Format::Tree => tree::render(view, options, out)?,
        Format::Json => json::render(view, false, out)?,
        Format::Yaml => json::render(view, true, out)?,
        Format::Markdown => markdown::render(view, options, out)?,
        Format::Folded => folded::render(view, out)?,
        Format::Junit | Format::Speedscope => return Err(unsupported(format, "diff")),
    }
    Ok(())
}

/// Options of the human views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiffViewOptions {
    /// Most path rows (table, markdown); `None` for the format's default.
    pub top: Option<usize>,
    /// Deepest tree level shown.
    pub depth: Option<usize>,
}

/// What every diff format renders.
pub struct DiffView<'a> {
    pub old: &'a Loaded,
    pub new: &'a Loaded,
    pub diff: Diff,
    pub counts: Vec<Count>,
}

impl<'a> DiffView<'a> {
    pub fn new(old: &'a Loaded, new: &'a Loaded) -> Self {
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
