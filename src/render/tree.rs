//! An indented tree of inclusive bytes. `--depth` and `--min-percent` fold
//! what they cut into an "(N others)" row, and a node that holds bytes of its
//! own next to shown children gets a "(self)" row, so every level sums to its
//! parent.

use std::io::{self, Write};

use super::{Profile, ViewOptions};
use crate::profile::Aggregate;
use crate::units::{self, human, percent};

struct Row {
    prefix: String,
    name: String,
    bytes: u64,
    leaves: u64,
}

fn collect(
    profile: &Profile<'_>,
    options: &ViewOptions,
    id: usize,
    depth: usize,
    indent: &str,
    rows: &mut Vec<Row>,
) {
    if options.depth.is_some_and(|d| depth >= d) {
        return;
    }
    let total = profile.total_bytes();
    let threshold = options.min_percent / 100.0 * total as f64;
    let mut shown = Vec::new();
    let (mut other_bytes, mut other_leaves, mut others) = (0, 0, 0);
    for child in profile.sorted_children(id) {
        let t = profile.totals[child];
        if (t.bytes as f64) < threshold {
            other_bytes += t.bytes;
            other_leaves += t.leaves;
            others += 1;
        } else {
            shown.push(child);
        }
    }
    let node = profile.aggregate.node(id);
    let mut entries: Vec<(Option<usize>, String, u64, u64)> = shown
        .iter()
        .map(|&c| {
            let t = profile.totals[c];
            (
                Some(c),
                profile.aggregate.node(c).name.to_string(),
                t.bytes,
                t.leaves,
            )
        })
        .collect();
    if node.own_bytes > 0 && (!entries.is_empty() || others > 0) {
        entries.push((None, "(self)".to_string(), node.own_bytes, node.own_leaves));
    }
    if others > 0 {
        entries.push((
            None,
            format!("({})", units::count(others, "other", "others")),
            other_bytes,
            other_leaves,
        ));
    }
    let count = entries.len();
    for (i, (child, name, bytes, leaves)) in entries.into_iter().enumerate() {
        let last = i + 1 == count;
        rows.push(Row {
            prefix: format!("{indent}{}", if last { "└─ " } else { "├─ " }),
            name,
            bytes,
            leaves,
        });
        if let Some(c) = child {
            let next = format!("{indent}{}", if last { "   " } else { "│  " });
            collect(profile, options, c, depth + 1, &next, rows);
        }
    }
}

pub fn render(profile: &Profile<'_>, options: &ViewOptions, out: &mut dyn Write) -> io::Result<()> {
    crate::render::header::write_summary(profile, out)?;
    crate::render::header::write_real_memory(profile, out)?;
    writeln!(out)?;
    let root = profile.totals[Aggregate::ROOT];
    let mut rows = vec![Row {
        prefix: String::new(),
        name: "total".to_string(),
        bytes: root.bytes,
        leaves: root.leaves,
    }];
    collect(profile, options, Aggregate::ROOT, 0, "", &mut rows);
    let width = rows
        .iter()
        .map(|r| r.prefix.chars().count() + r.name.chars().count())
        .max()
        .unwrap_or(0);
    let total = root.bytes;
    for r in rows {
        let label = format!("{}{}", r.prefix, r.name);
        let pad = width - label.chars().count();
        writeln!(
            out,
            "{label}{:pad$}  {:>10}  {:>6}  {:>9} {}",
            "",
            human(r.bytes),
            percent(r.bytes, total),
            units::thousands(r.leaves),
            if r.leaves == 1 { "leaf" } else { "leaves" },
        )?;
    }
    Ok(())
}
