//! The per-file summary of a run over several inputs (`inspect` with more
//! than one file): one row per file, in argument order, and a total row.

use std::io::{self, Write};

use comfy_table::CellAlignment;
use serde::Serialize;

use super::Profile;
use crate::batch::FileRun;
use crate::input::Report;
use crate::units::human;

/// One input's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileSummary {
    pub file: String,
    pub instances: usize,
    pub variables: u64,
    pub constraints: u64,
    pub terms: u64,
    /// Size of the input as stored, when known (not for stdin).
    pub file_bytes: Option<u64>,
    pub logical_bytes: u64,
    /// Wall time to read and profile this input (the only figure that
    /// varies from run to run).
    pub seconds: f64,
}

impl FileSummary {
    pub fn of(run: &FileRun<Report>) -> Self {
        let profile = Profile::new(&run.value);
        let summary = profile.summary();
        Self {
            file: run.name.clone(),
            instances: run.value.instances.len(),
            variables: summary.variables,
            constraints: summary.constraints,
            terms: summary.terms,
            file_bytes: run.value.document.file_bytes,
            logical_bytes: profile.total_bytes(),
            seconds: run.elapsed.as_secs_f64(),
        }
    }
}

pub fn render_table(files: &[FileSummary], out: &mut dyn Write) -> io::Result<()> {
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
        format!("total ({} files)", files.len()),
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
