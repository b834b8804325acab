//! How wide the human tables may be: `$COLUMNS` when set, else the
//! terminal's width when stdout is a terminal; unlimited otherwise (a pipe
//! or a file keeps every table's natural width, so scripts and snapshots
//! see the same bytes on every machine). Commands writing to a file (`-o`)
//! turn fitting off ([`set_fit`]).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

static FIT: AtomicBool = AtomicBool::new(true);

/// Whether tables are fitted to the terminal (false while writing a file).
pub fn set_fit(fit: bool) {
    FIT.store(fit, Ordering::Relaxed);
}

/// The width the tables must fit in, if any.
pub fn limit() -> Option<u16> {
    if !FIT.load(Ordering::Relaxed) {
        return None;
    }
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0)
    {
        return Some(columns);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    console::Term::stdout()
        .size_checked()
        .map(|(_rows, columns)| columns)
}

/// A table in memprof's style that wraps its cells to fit [`limit`].
pub fn table() -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    if let Some(width) = limit() {
        table.set_content_arrangement(ContentArrangement::Dynamic);
        table.set_width(width);
    }
    table
}
