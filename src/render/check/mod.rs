//! The formats of `memprof check`, each a view of one [`CheckReport`].

pub mod json;
pub mod junit;
pub mod markdown;
pub mod table;

use crate::check::{FileReport, LimitResult};

/// The formats of `memprof check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// Every rule with its measured value, limit and verdict.
    Table,
    /// The same as data.
    Json,
    /// The same document as YAML.
    Yaml,
    /// A job summary or pull-request comment (under 65,536 characters).
    Markdown,
    /// JUnit XML: one test case per limit of each rule, one suite per file.
    Junit,
}

/// The verdict cell: `ok`, `ok (12 paths)`, `EXCEEDED`, `EXCEEDED at 2 of 12 paths`.
pub fn verdict(result: &LimitResult) -> String {
    match (result.pass, result.matched) {
        (true, 0) => "ok (no path matches)".to_string(),
        (true, 1) => "ok".to_string(),
        (true, n) => format!("ok ({n} paths)"),
        (false, 1) => "EXCEEDED".to_string(),
        (false, n) => format!(
            "EXCEEDED at {} of {n} paths",
            result.failures.len() + result.failures_not_listed
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

/// "file (against baseline)" for headings.
pub fn file_title(file: &FileReport) -> String {
    match &file.baseline {
        Some(b) => format!("{} (against {b})", file.file),
        None if file.added => format!("{} (added: no baseline yet)", file.file),
        None => file.file.clone(),
    }
}
