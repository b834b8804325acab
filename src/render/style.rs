//! Colour in the human formats, in the help's styling: labels bold, a
//! verdict green or red. Off unless the command line turns it on
//! (`--color`, see `cli`), so the library, and the Python package built on
//! it, never write escape codes into text they hand back.

use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns colour on or off for this process.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

fn styled(text: &str, style: console::Style) -> String {
    if ENABLED.load(Ordering::Relaxed) {
        style.force_styling(true).apply_to(text).to_string()
    } else {
        text.to_string()
    }
}

/// A field label (`file:`), bold, padded to `width` columns as printed.
pub fn label(text: &str, width: usize) -> String {
    let pad = " ".repeat(width.saturating_sub(text.chars().count()));
    format!("{}{pad}", styled(text, console::Style::new().bold()))
}

/// A verdict that holds (`PASS`), bold green.
pub fn good(text: &str) -> String {
    styled(text, console::Style::new().bold().green())
}

/// A verdict that fails (`FAIL`), bold red.
pub fn bad(text: &str) -> String {
    styled(text, console::Style::new().bold().red())
}

/// A pass/fail verdict word, coloured by `pass`.
pub fn verdict(pass: bool, text: &str) -> String {
    if pass {
        good(text)
    } else {
        bad(text)
    }
}
