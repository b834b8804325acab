//! The check report for a GitHub job summary or pull-request comment: the
//! overall verdict first, then a table per file and the failures with their
//! messages. Kept under GitHub's 65,536 characters: files that do not fit are
//! named as left out.

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Result;

use super::{file_title, no_rules, rule_name, verdict};
use crate::check::{exceeding, holding, Verdicts};
use crate::render::diff::{code, COMMENT_LIMIT};
use crate::units;

const FOOTER_ROOM: usize = 600;

fn file_section(file: &crate::check::FileVerdict) -> String {
    let mut s = String::new();
    let mark = if file.pass { "✅" } else { "❌" };
    let _ = writeln!(s, "#### {mark} {}\n", code(&file_title(file)));
    if file.results.is_empty() {
        let _ = writeln!(s, "{}\n", upper_first(no_rules(file)));
        return s;
    }
    s.push_str("| rule | limit | worst path | measured | verdict |\n|---|---|---|---:|---|\n");
    for r in &file.results {
        let worst = r.worst.as_ref();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            code(&r.path),
            code(&format!("{} {}", r.limit.key(), r.limit_text)),
            worst.map_or("-".to_string(), |w| code(&w.path)),
            worst.map_or("-".to_string(), |w| w.measured.replace('|', "\\|")),
            if r.pass {
                verdict(r)
            } else {
                format!("**{}**", verdict(r))
            }
        );
    }
    for r in file.results.iter().filter(|r| !r.pass) {
        let _ = write!(s, "\n- **exceeded** {}", code(&rule_name(r)));
        if let Some(m) = &r.message {
            let _ = write!(s, ": {}", m.replace('\n', " "));
        }
        s.push('\n');
        for f in r.failures.iter().take(20) {
            let _ = writeln!(s, "  - {}: {}", code(&f.path), f.measured);
        }
        let more = r.failures.len().saturating_sub(20) + r.failures_not_listed;
        if more > 0 {
            let _ = writeln!(s, "  - … {} more", units::thousands(more as u64));
        }
    }
    s.push('\n');
    s
}

/// `text` with its first letter a capital, to start a paragraph.
fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>() + "."
    })
}

pub(super) fn write(verdicts: &Verdicts, out: &mut dyn Write) -> Result<()> {
    let mut text = String::new();
    if verdicts.pass {
        let _ = writeln!(
            text,
            "### memprof check: ✅ {}\n",
            holding(verdicts.files.len())
        );
    } else {
        let _ = writeln!(
            text,
            "### memprof check: ❌ {}\n",
            exceeding(verdicts.failed_files(), verdicts.files.len())
        );
    }
    if let Some(b) = &verdicts.budget {
        let _ = writeln!(text, "Budget: {}\n", code(b));
    }
    let mut chars = text.chars().count();
    let mut left_out = Vec::new();
    // Failing files first, so a cut never hides a failure when a passing
    // file could go instead.
    let mut order: Vec<&crate::check::FileVerdict> = verdicts.files.iter().collect();
    order.sort_by_key(|f| f.pass);
    for file in order {
        let section = file_section(file);
        let len = section.chars().count();
        if chars + len + FOOTER_ROOM >= COMMENT_LIMIT {
            left_out.push(file);
            continue;
        }
        text.push_str(&section);
        chars += len;
    }
    if !left_out.is_empty() {
        let failing = left_out.iter().filter(|f| !f.pass).count();
        let _ = writeln!(
            text,
            "_{} not shown ({} failing) to stay under GitHub's limit of 65,536 characters; `memprof check --format json` has them all._",
            units::count(left_out.len() as u64, "file", "files"),
            units::thousands(failing as u64)
        );
    }
    out.write_all(text.as_bytes())?;
    Ok(())
}
