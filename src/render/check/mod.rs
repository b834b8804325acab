//! `memprof check`'s document, [`Verdicts`], and a file per format.

mod json;
mod junit;
mod markdown;
mod table;

use std::io::Write;

use anyhow::Result;

use super::{Document, Format};
use crate::check::{FileVerdict, LimitResult, Verdicts};
use crate::names::{choice, Choice};
use crate::units::thousands;

impl Document for Verdicts {
    const NAME: &'static str = "check";
    const FORMATS: &'static [Choice<Format>] = &[
        choice(
            Format::Table,
            "Every rule with its measured value, limit and verdict",
        ),
        choice(Format::Json, "The same as data"),
        choice(Format::Yaml, "The same document as YAML"),
        choice(
            Format::Markdown,
            "A job summary or pull-request comment (under 65,536 characters)",
        ),
        choice(
            Format::Junit,
            "JUnit XML: one test case per limit of each rule, one suite per file",
        ),
    ];

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        Ok(table::write(self, out)?)
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        json::write(self, yaml, out)
    }

    fn markdown(&self, out: &mut dyn Write) -> Result<()> {
        markdown::write(self, out)
    }

    fn junit(&self, out: &mut dyn Write) -> Result<()> {
        junit::write(self, out)
    }
}

/// The verdict cell: `ok`, `ok (12 paths)`, `EXCEEDED`, `EXCEEDED at 2 of 12 paths`.
pub fn verdict(result: &LimitResult) -> String {
    match (result.pass, result.matched) {
        (true, 0) => "ok (no path matches)".to_string(),
        (true, 1) => "ok".to_string(),
        (true, n) => format!("ok ({} paths)", thousands(n as u64)),
        (false, 1) => "EXCEEDED".to_string(),
        (false, n) => format!(
            "EXCEEDED at {} of {} paths",
            thousands((result.failures.len() + result.failures_not_listed) as u64),
            thousands(n as u64)
        ),
    }
}

/// `rule 2: Instance.constraints;** max 50 MiB`.
pub fn rule_name(result: &LimitResult) -> String {
    let rule = if result.rule == 0 {
        "default rule".to_string()
    } else {
        format!("rule {}", result.rule)
    };
    format!(
        "{rule}: {} {} {}",
        result.path,
        result.limit.key(),
        result.limit_text
    )
}

/// What a file that no rule applies to gets instead of an empty table:
/// every rule of the check compares with a baseline, and an added file has
/// none yet.
pub fn no_rules(file: &FileVerdict) -> &'static str {
    if file.added {
        "no rules: each rule of this check compares with a baseline, and this file has none yet"
    } else {
        "no rules apply to this file"
    }
}

/// "file (against baseline)" for headings.
pub fn file_title(file: &FileVerdict) -> String {
    match &file.baseline {
        Some(b) => format!("{} (against {b})", file.file),
        None if file.added => format!("{} (added: no baseline yet)", file.file),
        None => file.file.clone(),
    }
}
