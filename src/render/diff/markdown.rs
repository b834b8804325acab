//! A pull-request comment: the total, the counts, and the changed paths
//! largest first. GitHub refuses comments of 65,536 characters or more, so
//! rows stop before that and the comment says how many were left out.

use std::io::Write;

use anyhow::Result;

use super::{change_text, signed_count, DiffView};
use crate::units::{count, human, signed_human, thousands};

/// GitHub's limit on a comment body, in characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// Room kept for the closing lines.
const FOOTER_ROOM: usize = 600;

/// `text` as a Markdown code span that survives backticks and table pipes.
pub fn code(text: &str) -> String {
    let (mut run, mut longest_run) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest_run = longest_run.max(run);
    }
    let fence = "`".repeat(longest_run + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", text.replace('|', "\\|"))
}

pub(super) fn write(view: &DiffView<'_>, out: &mut dyn Write) -> Result<()> {
    let options = &view.options;
    let mut text = String::new();
    let root = view.diff.root();
    text.push_str(&format!(
        "### memprof diff: {} → {}\n\n",
        code(view.old.name()),
        code(view.new.name())
    ));
    let (old_counts, new_counts) = (
        view.old.profile().accounting_name(),
        view.new.profile().accounting_name(),
    );
    let counted = if old_counts == new_counts {
        format!("logical bytes as {old_counts} counts them")
    } else {
        format!("logical bytes, old as {old_counts} counts them, new as {new_counts} does")
    };
    text.push_str(&format!(
        "**Total: {} → {} ({}, {})** — {counted}; KiB/MiB are 1024-based.\n\n",
        human(root.old_bytes()),
        human(root.new_bytes()),
        signed_human(root.delta()),
        change_text(root)
    ));
    text.push_str("| count | old | new | delta |\n|---|---:|---:|---:|\n");
    for c in &view.counts {
        text.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.name,
            thousands(c.old),
            thousands(c.new),
            signed_count(c.delta)
        ));
    }
    text.push('\n');
    let changed = view.changed();
    if changed.is_empty() {
        text.push_str("No path changed.\n");
        out.write_all(text.as_bytes())?;
        return Ok(());
    }
    let wanted = options.top.unwrap_or(usize::MAX).min(changed.len());
    text.push_str("| path | old | new | delta | change |\n|---|---:|---:|---:|---:|\n");
    let mut chars = text.chars().count();
    let mut shown = 0;
    for &id in &changed[..wanted] {
        let n = view.diff.node(id);
        let row = format!(
            "| {} | {} | {} | {} | {} |\n",
            code(view.diff.path(id)),
            human(n.old_bytes()),
            human(n.new_bytes()),
            signed_human(n.delta()),
            change_text(n)
        );
        let len = row.chars().count();
        if chars + len + FOOTER_ROOM >= COMMENT_LIMIT {
            break;
        }
        text.push_str(&row);
        chars += len;
        shown += 1;
    }
    let left_out = changed.len() - shown;
    if left_out > 0 {
        let why = if shown < wanted {
            "to keep this comment under GitHub's limit of 65,536 characters".to_string()
        } else {
            "by --top".to_string()
        };
        text.push_str(&format!(
            "\n_{} of {} not shown ({why}); `memprof diff --format json` lists them all._\n",
            thousands(left_out as u64),
            count(changed.len() as u64, "changed path", "changed paths")
        ));
    }
    let unchanged = view.unchanged_count();
    if unchanged > 0 {
        text.push_str(&format!(
            "\n_{} not listed._\n",
            count(unchanged as u64, "unchanged path", "unchanged paths")
        ));
    }
    out.write_all(text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::code;

    #[test]
    fn code_spans_survive_backticks_and_pipes() {
        assert_eq!(code("a;b"), "`a;b`");
        assert_eq!(code("x`y"), "``x`y``");
        assert_eq!(code("`a|b"), "`` `a\\|b ``");
    }
}
