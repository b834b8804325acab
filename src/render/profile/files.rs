//! The per-file summary of a run over several inputs (`inspect` with more
//! than one file): one row per file, in argument order, and a total row.

use std::io::{self, Write};

use comfy_table::CellAlignment;

use crate::profiled::files::FileSummary;
use crate::render::width::Give;
use crate::units::human;

pub(super) fn write(files: &[FileSummary], out: &mut dyn Write) -> io::Result<()> {
    let mut table = crate::render::width::table();
    table.set_header(vec![
        "file",
        "instances",
        "variables",
        "constraints",
        "terms",
        "file bytes",
        "logical bytes",
        "time",
    ]);
    table.column_mut(0).expect("a column").give(Give::KeepEnd);
    let opt = |b: Option<u64>| b.map_or_else(|| "-".to_string(), human);
    for f in files {
        table.add_row(vec![
            f.file.clone(),
            f.instances.to_string(),
            crate::units::thousands(f.variables),
            crate::units::thousands(f.constraints),
            crate::units::thousands(f.terms),
            opt(f.file_bytes),
            human(f.logical_bytes),
            format!("{:.3} s", f.seconds),
        ]);
    }
    let sum = |get: fn(&FileSummary) -> u64| files.iter().map(get).sum::<u64>();
    let file_bytes = files.iter().map(|f| f.file_bytes).sum::<Option<u64>>();
    table.add_row(vec![
        format!(
            "total ({})",
            crate::units::count(files.len() as u64, "file", "files")
        ),
        files.iter().map(|f| f.instances).sum::<usize>().to_string(),
        crate::units::thousands(sum(|f| f.variables)),
        crate::units::thousands(sum(|f| f.constraints)),
        crate::units::thousands(sum(|f| f.terms)),
        opt(file_bytes),
        human(sum(|f| f.logical_bytes)),
        String::new(),
    ]);
    for col in 1..8 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{table}")
}
