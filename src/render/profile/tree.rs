//! An indented tree of inclusive bytes. `--depth` and `--min-percent` fold
//! what they cut into an "(N others)" row, and a node that holds bytes of its
//! own next to shown children gets a "(self)" row, so every level sums to its
//! parent. A row never stands for one child (the child is shown instead,
//! not opened), and a node whose children would all fold shows none, as a
//! node at the depth cut does: "(N others)" alone would only repeat it.

use std::io::{self, Write};

use super::{ProfileView, ViewOptions};
use crate::profile::Aggregate;
use crate::profiled::Profile;
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
    let (shown, folded): (Vec<usize>, Vec<usize>) = profile
        .sorted_children(id)
        .into_iter()
        .partition(|&c| profile.totals[c].bytes as f64 >= threshold);
    let node = profile.aggregate.node(id);
    let row = |c: usize| {
        let t = profile.totals[c];
        let name = profile.aggregate.node(c).name.to_string();
        (t.bytes, t.leaves, name)
    };
    // (the child to open, if any; the row's name, bytes and leaves)
    let mut entries: Vec<(Option<usize>, String, u64, u64)> = shown
        .iter()
        .map(|&c| {
            let (bytes, leaves, name) = row(c);
            (Some(c), name, bytes, leaves)
        })
        .collect();
    let alone = entries.is_empty() && node.own_bytes == 0;
    if alone && folded.len() > 1 {
        return;
    }
    // One child too small to open is shown by its name, with its siblings.
    if let &[one] = folded.as_slice() {
        let (bytes, leaves, name) = row(one);
        entries.push((None, name, bytes, leaves));
    }
    if node.own_bytes > 0 && (!entries.is_empty() || !folded.is_empty()) {
        entries.push((None, "(self)".to_string(), node.own_bytes, node.own_leaves));
    }
    match folded.as_slice() {
        [] | [_] => {}
        many => {
            let bytes = many.iter().map(|&c| profile.totals[c].bytes).sum();
            let leaves = many.iter().map(|&c| profile.totals[c].leaves).sum();
            let others = units::count(many.len() as u64, "other", "others");
            entries.push((None, format!("({others})"), bytes, leaves));
        }
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

pub(super) fn write(view: &ProfileView<'_>, out: &mut dyn Write) -> io::Result<()> {
    let (profile, options) = (view.profile, &view.options);
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
