//! `path OLD NEW` lines: own bytes of every path on either side, sorted as
//! whole strings. This is what `inferno-diff-folded` writes and what
//! inferno's flamegraph reads as a differential profile.

use std::io::{self, Write};

use super::DiffView;

pub(super) fn write(view: &DiffView<'_>, out: &mut dyn Write) -> io::Result<()> {
    for (path, old, new) in view.diff.folded_lines() {
        writeln!(out, "{path} {old} {new}")?;
    }
    Ok(())
}
