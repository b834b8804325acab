//! JUnit XML for CI test reporters: one suite per file, one test case per
//! limit of each rule, a `<failure>` naming the failing paths.

use std::io::Write;

use anyhow::Result;

use super::{rule_name, verdict};
use crate::check::Verdicts;

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            // XML 1.0 cannot carry other control characters, even escaped.
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn write(verdicts: &Verdicts, out: &mut dyn Write) -> Result<()> {
    let tests: usize = verdicts.files.iter().map(|f| f.results.len()).sum();
    let failures: usize = verdicts
        .files
        .iter()
        .map(|f| f.results.iter().filter(|r| !r.pass).count())
        .sum();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="memprof check" tests="{tests}" failures="{failures}" errors="0">"#
    )?;
    for file in &verdicts.files {
        let failed = file.results.iter().filter(|r| !r.pass).count();
        writeln!(
            out,
            r#"  <testsuite name="{}" tests="{}" failures="{failed}" errors="0">"#,
            escape(&file.file),
            file.results.len()
        )?;
        for r in &file.results {
            let name = escape(&rule_name(r));
            if r.pass {
                writeln!(
                    out,
                    r#"    <testcase classname="memprof.check" name="{name}"/>"#
                )?;
                continue;
            }
            let mut body = String::new();
            for f in &r.failures {
                body.push_str(&format!("{}: {}\n", f.path, f.measured));
            }
            if r.failures_not_listed > 0 {
                body.push_str(&format!(
                    "… {} more\n",
                    crate::units::thousands(r.failures_not_listed as u64)
                ));
            }
            let message = match &r.message {
                Some(m) => format!("{}: {m}", verdict(r)),
                None => verdict(r),
            };
            writeln!(
                out,
                r#"    <testcase classname="memprof.check" name="{name}">"#
            )?;
            writeln!(
                out,
                r#"      <failure message="{}" type="budget">{}</failure>"#,
                escape(&message),
                escape(&body)
            )?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")?;
    Ok(())
}
