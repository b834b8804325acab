//! The largest paths as a table: inclusive and own bytes, share of the
//! total, leaf count; `--top N` rows, then the rest folded into one row and
//! a total row.

use std::io::{self, Write};

use comfy_table::CellAlignment;

use super::ProfileView;
use crate::profile::Aggregate;
use crate::render::width::Give;
use crate::units::{human, percent};

pub(super) fn write(view: &ProfileView<'_>, out: &mut dyn Write) -> io::Result<()> {
    let (profile, options) = (view.profile, &view.options);
    crate::render::header::write_summary(profile, out)?;
    crate::render::header::write_real_memory(profile, out)?;
    writeln!(out)?;
    let total = profile.total_bytes();
    let mut ids: Vec<usize> = (1..profile.aggregate.len()).collect();
    let paths: Vec<String> = (0..profile.aggregate.len())
        .map(|id| profile.aggregate.frames_of(id).join(";"))
        .collect();
    ids.sort_by(|&a, &b| {
        profile.totals[b]
            .bytes
            .cmp(&profile.totals[a].bytes)
            .then_with(|| paths[a].cmp(&paths[b]))
    });
    let mut table = crate::render::width::table();
    table.set_header(vec!["path", "inclusive", "own", "% of total", "leaves"]);
    table.column_mut(0).expect("a column").give(Give::KeepEnd);
    for &id in ids.iter().take(options.top) {
        let t = profile.totals[id];
        let node = profile.aggregate.node(id);
        table.add_row(vec![
            paths[id].clone(),
            human(t.bytes),
            human(node.own_bytes),
            percent(t.bytes, total),
            crate::units::thousands(t.leaves),
        ]);
    }
    if ids.len() > options.top {
        table.add_note(format!(
            "({} not shown; raise --top to see them)",
            crate::units::count(
                (ids.len() - options.top) as u64,
                "smaller path",
                "smaller paths"
            )
        ));
    }
    let root = profile.totals[Aggregate::ROOT];
    table.add_row(vec![
        "total".to_string(),
        human(root.bytes),
        String::new(),
        percent(root.bytes, total),
        crate::units::thousands(root.leaves),
    ]);
    for col in 1..5 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{table}")
}
