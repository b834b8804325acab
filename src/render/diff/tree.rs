//! The changed part of the tree: each level lists its changed children,
//! largest change first, and folds the unchanged ones (and any cut by
//! `--depth`) into one row, so every level sums to its parent on both sides.

use std::io::{self, Write};

use super::{change_text, DiffView, DiffViewOptions};
use crate::diff::Diff;
use crate::units::{human, signed_human, signed_percent, thousands};

struct Row {
    label: String,
    old: u64,
    new: u64,
    delta: i64,
    change: String,
}

fn collect(
    diff: &Diff,
    options: &DiffViewOptions,
    id: usize,
    depth: usize,
    indent: &str,
    rows: &mut Vec<Row>,
) {
    if options.depth.is_some_and(|d| depth >= d) {
        return;
    }
    let node = diff.node(id);
    let mut entries: Vec<(Option<usize>, Row)> = Vec::new();
    let (mut same, mut same_bytes) = (0usize, 0u64);
    for child in diff.sorted_children(id) {
        let c = diff.node(child);
        if c.changed {
            entries.push((
                Some(child),
                Row {
                    label: c.name.clone(),
                    old: c.old_bytes(),
                    new: c.new_bytes(),
                    delta: c.delta(),
                    change: change_text(c),
                },
            ));
        } else {
            same += 1;
            same_bytes += c.new_bytes();
        }
    }
    let own_changed = node.old_own != node.new_own;
    if (node.old_own > 0 || node.new_own > 0) && (!entries.is_empty() || same > 0) {
        let delta = node.new_own as i64 - node.old_own as i64;
        let change = if node.old_own == 0 {
            "new".to_string()
        } else {
            signed_percent(delta as f64 * 100.0 / node.old_own as f64)
        };
        let row = Row {
            label: "(self)".to_string(),
            old: node.old_own,
            new: node.new_own,
            delta,
            change,
        };
        if own_changed {
            entries.insert(0, (None, row));
        } else {
            entries.push((None, row));
        }
    }
    if same > 0 {
        entries.push((
            None,
            Row {
                label: format!("({} unchanged)", thousands(same as u64)),
                old: same_bytes,
                new: same_bytes,
                delta: 0,
                change: "0.0%".to_string(),
            },
        ));
    }
    let count = entries.len();
    for (i, (child, mut row)) in entries.into_iter().enumerate() {
        let last = i + 1 == count;
        row.label = format!("{indent}{}{}", if last { "└─ " } else { "├─ " }, row.label);
        rows.push(row);
        if let Some(c) = child {
            let next = format!("{indent}{}", if last { "   " } else { "│  " });
            collect(diff, options, c, depth + 1, &next, rows);
        }
    }
}

pub(super) fn write(view: &DiffView<'_>, out: &mut dyn Write) -> io::Result<()> {
    let options = &view.options;
    view.write_header(out)?;
    writeln!(out)?;
    let diff = &view.diff;
    let root = diff.root();
    let mut rows = vec![Row {
        label: "total".to_string(),
        old: root.old_bytes(),
        new: root.new_bytes(),
        delta: root.delta(),
        change: change_text(root),
    }];
    collect(diff, options, Diff::ROOT, 0, "", &mut rows);
    let width = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "{:width$}  {:>10}  {:>10}  {:>11}  {:>8}",
        "", "old", "new", "delta", "change"
    )?;
    for r in rows {
        let pad = width - r.label.chars().count();
        writeln!(
            out,
            "{}{:pad$}  {:>10}  {:>10}  {:>11}  {:>8}",
            r.label,
            "",
            human(r.old),
            human(r.new),
            signed_human(r.delta),
            r.change
        )?;
    }
    Ok(())
}
