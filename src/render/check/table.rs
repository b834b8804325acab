//! Per file: a table of every limit of every rule with the worst matched
//! path, its measured value and the verdict; then each failure with the
//! rule's message; then one overall line.

use std::io::{self, Write};

use super::{file_title, no_rules, rule_name, verdict};
use crate::check::{exceeding, holding, Verdicts};
use crate::render::width::Give;
use crate::units::thousands;

pub(super) fn write(verdicts: &Verdicts, out: &mut dyn Write) -> io::Result<()> {
    if let Some(budget) = &verdicts.budget {
        writeln!(out, "budget: {budget}")?;
    }
    for (i, file) in verdicts.files.iter().enumerate() {
        // A blank line between sections, none before the first.
        if i > 0 || verdicts.budget.is_some() {
            writeln!(out)?;
        }
        let title = format!(
            "{}: {}",
            file_title(file),
            crate::render::style::verdict(file.pass, if file.pass { "PASS" } else { "FAIL" })
        );
        writeln!(out, "{}", crate::render::width::wrap(&title, "  "))?;
        if file.results.is_empty() {
            let line = format!("  {}", no_rules(file));
            writeln!(out, "{}", crate::render::width::wrap(&line, "  "))?;
            continue;
        }
        let mut table = crate::render::width::table();
        table.set_header(vec![
            "rule",
            "path",
            "limit",
            "worst path",
            "measured",
            "verdict",
        ]);
        table.column_mut(1).expect("a column").give(Give::KeepEnd);
        table.column_mut(3).expect("a column").give(Give::KeepEnd);
        table.column_mut(4).expect("a column").give(Give::Stack);
        for r in &file.results {
            let (worst, measured) = match &r.worst {
                Some(w) => (w.path.clone(), w.measured.clone()),
                None => ("-".to_string(), "-".to_string()),
            };
            table.add_row(vec![
                if r.rule == 0 {
                    "default".to_string()
                } else {
                    r.rule.to_string()
                },
                r.path.clone(),
                format!("{} {}", r.limit.key(), r.limit_text),
                worst,
                measured,
                verdict(r),
            ]);
        }
        writeln!(out, "{table}")?;
        for r in file.results.iter().filter(|r| !r.pass) {
            writeln!(out, "  exceeded: {}", rule_name(r))?;
            for f in &r.failures {
                writeln!(out, "    {}: {}", f.path, f.measured)?;
            }
            if r.failures_not_listed > 0 {
                writeln!(
                    out,
                    "    … {} more",
                    thousands(r.failures_not_listed as u64)
                )?;
            }
            if let Some(m) = &r.message {
                writeln!(out, "    {m}")?;
            }
        }
    }
    writeln!(out)?;
    if verdicts.pass {
        writeln!(
            out,
            "overall: {} ({})",
            crate::render::style::good("PASS"),
            holding(verdicts.files.len())
        )
    } else {
        writeln!(
            out,
            "overall: {} ({})",
            crate::render::style::bad("FAIL"),
            exceeding(verdicts.failed_files(), verdicts.files.len())
        )
    }
}
