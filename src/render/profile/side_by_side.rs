//! `--view both --format table`: every path's in-memory and on-disk bytes
//! side by side, with their ratio. Paths are matched by name: the wire view
//! uses the in-memory path names (see [`crate::profile::wire_view`]), plus
//! `Wire[...]` overhead paths and the fields 2.9.3 does not count in memory.

use std::collections::BTreeMap;
use std::io::{self, Write};

use comfy_table::CellAlignment;

use super::ProfileView;
use crate::profile::Aggregate;
use crate::profiled::Profile;
use crate::render::width::Give;
use crate::units::human;

/// In-memory bytes per on-disk byte, `-` when there are no disk bytes.
pub fn ratio(memory: u64, wire: u64) -> String {
    if wire == 0 {
        "-".to_string()
    } else {
        format!("{:.2}×", memory as f64 / wire as f64)
    }
}

/// Inclusive bytes of every path of `profile`.
fn inclusive(profile: &Profile<'_>) -> BTreeMap<String, u64> {
    (1..profile.aggregate.len())
        .map(|id| {
            (
                profile.aggregate.frames_of(id).join(";"),
                profile.totals[id].bytes,
            )
        })
        .collect()
}

/// One row per path (in either view), largest in memory first, then largest
/// on disk, then by name.
pub fn rows(memory: &Profile<'_>, wire: &Profile<'_>) -> Vec<(String, u64, u64)> {
    let mut joined: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (path, bytes) in inclusive(memory) {
        joined.entry(path).or_default().0 = bytes;
    }
    for (path, bytes) in inclusive(wire) {
        joined.entry(path).or_default().1 = bytes;
    }
    let mut rows: Vec<(String, u64, u64)> =
        joined.into_iter().map(|(p, (m, w))| (p, m, w)).collect();
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(b.2.cmp(&a.2))
            .then_with(|| a.0.cmp(&b.0))
    });
    rows
}

/// The table of `view` with its wire side, `wire`, beside it.
pub(super) fn write(
    view: &ProfileView<'_>,
    wire: &Profile<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (memory, options) = (view.profile, &view.options);
    crate::render::header::write_summary(memory, out)?;
    crate::render::header::write_total(wire, out)?;
    crate::render::header::write_real_memory(memory, out)?;
    writeln!(out)?;
    let rows = rows(memory, wire);
    let mut table = crate::render::width::table();
    table.set_header(vec!["path", "in memory", "on disk", "memory / disk"]);
    table.column_mut(0).expect("a column").give(Give::KeepEnd);
    for (path, m, w) in rows.iter().take(options.top) {
        table.add_row(vec![path.clone(), human(*m), human(*w), ratio(*m, *w)]);
    }
    if rows.len() > options.top {
        table.add_note(format!(
            "({} not shown; raise --top to see them)",
            crate::units::count(
                (rows.len() - options.top) as u64,
                "smaller path",
                "smaller paths"
            )
        ));
    }
    let (m, w) = (
        memory.totals[Aggregate::ROOT].bytes,
        wire.totals[Aggregate::ROOT].bytes,
    );
    table.add_row(vec!["total".to_string(), human(m), human(w), ratio(m, w)]);
    for col in 1..4 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{table}")
}
