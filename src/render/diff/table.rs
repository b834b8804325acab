//! The counts side by side, then the changed paths as a table, largest
//! change first (`--top N`, default 25), with what was left out and a total
//! row.

use std::io::{self, Write};

use comfy_table::CellAlignment;

use crate::render::width::Grid;

use super::{change_text, signed_count, DiffView};
use crate::render::width::Give;
use crate::units::{count, human, signed_human, thousands};

pub const DEFAULT_TOP: usize = 25;

fn right_align(table: &mut Grid, from: usize, to: usize) {
    for col in from..to {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

pub(super) fn write(view: &DiffView<'_>, out: &mut dyn Write) -> io::Result<()> {
    let options = &view.options;
    view.write_header(out)?;
    writeln!(out)?;
    let mut counts = crate::render::width::table();
    counts.set_header(vec!["count", "old", "new", "delta"]);
    for c in &view.counts {
        counts.add_row(vec![
            c.name.to_string(),
            thousands(c.old),
            thousands(c.new),
            signed_count(c.delta),
        ]);
    }
    right_align(&mut counts, 1, 4);
    writeln!(out, "{counts}")?;
    writeln!(out)?;

    let diff = &view.diff;
    let changed = view.changed();
    let top = options.top.unwrap_or(DEFAULT_TOP);
    let mut table = crate::render::width::table();
    table.set_header(vec!["path", "old", "new", "delta", "change"]);
    table.column_mut(0).expect("a column").give(Give::KeepEnd);
    for &id in changed.iter().take(top) {
        let n = diff.node(id);
        table.add_row(vec![
            diff.path(id).to_string(),
            human(n.old_bytes()),
            human(n.new_bytes()),
            signed_human(n.delta()),
            change_text(n),
        ]);
    }
    if changed.is_empty() {
        table.add_note("(no path changed)");
    }
    if changed.len() > top {
        table.add_note(format!(
            "({} not shown; raise --top to see them)",
            count(
                (changed.len() - top) as u64,
                "smaller change",
                "smaller changes"
            )
        ));
    }
    let unchanged = view.unchanged_count();
    if unchanged > 0 {
        table.add_note(format!(
            "({} not shown)",
            count(unchanged as u64, "unchanged path", "unchanged paths")
        ));
    }
    let root = diff.root();
    table.add_row(vec![
        "total".to_string(),
        human(root.old_bytes()),
        human(root.new_bytes()),
        signed_human(root.delta()),
        change_text(root),
    ]);
    right_align(&mut table, 1, 5);
    writeln!(out, "{table}")
}
