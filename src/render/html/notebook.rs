//! The report page as a notebook cell's output (the Python wheel's
//! `_repr_html_`): a static summary, then the page in a frame of its own.
//!
//! The summary (the total, the largest paths, a note) is plain HTML that a
//! notebook's sanitizer keeps: JupyterLab shows an untrusted notebook's
//! HTML sanitized, without frames or scripts, and prefers that to any other
//! type the output carries, so the summary is what such a notebook shows.
//! Where scripts run, the page hides the summary once it is drawn (see
//! `followHeight` in web/src/report.js).
//!
//! The page goes into the frame gzip-compressed and base64-encoded, inside
//! a loader that inflates it with the browser's `DecompressionStream` and
//! writes it into the frame: about a third of the page's size (most of it
//! the bundled script), and no HTML escaping of a minified script in an
//! attribute. The frame starts with no height; the page gives it its own.

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Result;
use flate2::{write::GzEncoder, Compression};

use super::html_text;
use super::page::{Changes, FlameView, InputFacts, Page};
use crate::diff::Status;
use crate::units::{human, human_exact, percent, signed_human, thousands};

/// Rows of the summary's table.
pub const SUMMARY_ROWS: usize = 8;

/// Writes the notebook output of `page`: its summary and its frame.
pub fn render(page: &Page, out: &mut dyn Write) -> Result<()> {
    let mut html = Vec::new();
    super::write_page(page, &mut html)?;
    let mut gzip = GzEncoder::new(Vec::new(), Compression::best());
    gzip.write_all(&html)?;
    let packed = base64(&gzip.finish()?);
    let loader = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body><script>{LOADER}\
         (\"{packed}\")</script></body></html>"
    );
    write!(
        out,
        "<div class=\"ommx-memprof\">\n{summary}<iframe class=\"ommx-memprof-report\" \
         title=\"{title}\" srcdoc=\"{srcdoc}\" \
         style=\"display:block;width:100%;height:0;border:0\"></iframe>\n</div>\n",
        summary = summary(page),
        title = attribute(&page.title),
        srcdoc = attribute(&loader),
    )?;
    Ok(())
}

/// Inflates the page and writes it over the loader's document.
const LOADER: &str = "(async (packed) => {\
const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));\
const page = new Blob([bytes]).stream().pipeThrough(new DecompressionStream(\"gzip\"));\
const text = await new Response(page).text();\
document.open(); document.write(text); document.close();\
})";

/// The static summary: what the page says first, readable without it.
fn summary(page: &Page) -> String {
    let mut s = String::from("<div class=\"ommx-memprof-summary\">\n");
    match &page.changes {
        None => profile_summary(&mut s, &page.inputs[0], &page.views[0]),
        Some(changes) => diff_summary(&mut s, &page.inputs, changes),
    }
    s.push_str(
        "<p><em>A static summary of memprof's report. The interactive report (the graph to zoom \
         and search, the tables) runs in a trusted notebook only: trust this one (JupyterLab: \
         Trust Notebook, in the command palette; or <code>jupyter trust NOTEBOOK.ipynb</code>) \
         and open it again, or run the cell again.</em></p>\n</div>\n",
    );
    s
}

fn profile_summary(s: &mut String, input: &InputFacts, view: &FlameView) {
    let _ = writeln!(
        s,
        "<p><strong>memprof</strong>: <code>{name}</code> holds <strong>{total}</strong>, \
         {accounting} ({layers}).{real}</p>",
        name = html_text(&input.name),
        total = human_exact(input.logical_bytes),
        accounting = html_text(&input.accounting),
        layers = html_text(&input.layers),
        real = input
            .real_memory
            .as_ref()
            .map_or(String::new(), |r| format!(
                " Loading it takes ~{} at its peak in {}, estimated.",
                human(r.load_peak_bytes),
                html_text(&r.runtime)
            )),
    );
    let total = input.logical_bytes;
    let paths = largest_paths(view);
    table_head(
        s,
        "the largest paths by the bytes they hold",
        &["bytes", "% of total"],
    );
    for (path, bytes) in paths.iter().take(SUMMARY_ROWS) {
        row(
            s,
            &path_cell(path),
            &[human(*bytes), percent(*bytes, total)],
        );
    }
    if paths.len() > SUMMARY_ROWS {
        let rest: u64 = paths[SUMMARY_ROWS..].iter().map(|p| p.1).sum();
        let n = paths.len() - SUMMARY_ROWS;
        let label = format!(
            "({} other path{})",
            thousands(n as u64),
            if n == 1 { "" } else { "s" }
        );
        row(s, &label, &[human(rest), percent(rest, total)]);
    }
    row(
        s,
        "<strong>total</strong>",
        &[human(total), percent(total, total)],
    );
    s.push_str("</tbody></table>\n");
}

fn diff_summary(s: &mut String, inputs: &[InputFacts], changes: &Changes) {
    let (old, new) = (&inputs[0], &inputs[inputs.len() - 1]);
    let delta = new.logical_bytes as i64 - old.logical_bytes as i64;
    let _ = writeln!(
        s,
        "<p><strong>memprof diff</strong>: <code>{}</code> → <code>{}</code>: \
         <strong>{} → {}</strong> ({}, {}).</p>",
        html_text(&old.name),
        html_text(&new.name),
        human(old.logical_bytes),
        human(new.logical_bytes),
        signed_human(delta),
        html_text(&new.accounting),
    );
    table_head(s, "the largest changes", &["old", "new", "change"]);
    for r in changes.rows.iter().take(SUMMARY_ROWS) {
        let status = match r.status {
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Changed | Status::Unchanged => "",
        };
        let change = signed_human(r.new as i64 - r.old as i64);
        let change = if status.is_empty() {
            change
        } else {
            format!("{change} ({status})")
        };
        row(
            s,
            &path_cell(&r.path),
            &[human(r.old), human(r.new), change],
        );
    }
    if changes.changed > SUMMARY_ROWS {
        let n = changes.changed - SUMMARY_ROWS;
        let label = format!(
            "({} more changed path{})",
            thousands(n as u64),
            if n == 1 { "" } else { "s" }
        );
        row(s, &label, &[String::new(), String::new(), String::new()]);
    }
    let total = [
        human(old.logical_bytes),
        human(new.logical_bytes),
        signed_human(delta),
    ];
    row(s, "<strong>total</strong>", &total);
    s.push_str("</tbody></table>\n");
}

/// Every path holding bytes of its own (a leaf, or a frame with bytes
/// besides its children's), largest first: they add up to the total.
fn largest_paths(view: &FlameView) -> Vec<(String, u64)> {
    let t = &view.tree;
    let mut own = t.bytes.clone();
    let mut paths: Vec<String> = Vec::with_capacity(t.bytes.len());
    // The frames whose children are still to come, with how many.
    let mut open: Vec<(usize, u32)> = Vec::new();
    for i in 0..t.bytes.len() {
        while open.last().is_some_and(|&(_, left)| left == 0) {
            open.pop();
        }
        let name = &t.names[t.name[i] as usize];
        let path = match open.last_mut() {
            None => String::new(),
            Some((parent, left)) => {
                *left -= 1;
                own[*parent] = own[*parent].saturating_sub(t.bytes[i]);
                match *parent {
                    0 => name.clone(),
                    p => format!("{};{name}", paths[p]),
                }
            }
        };
        paths.push(path);
        open.push((i, t.children[i]));
    }
    let mut held: Vec<(String, u64)> = paths
        .into_iter()
        .zip(own)
        .enumerate()
        .filter(|(_, (_, own))| *own > 0)
        .map(|(i, (path, own))| (if i == 0 { "(the root)".into() } else { path }, own))
        .collect();
    held.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    held
}

fn table_head(s: &mut String, first: &str, rest: &[&str]) {
    let _ = write!(
        s,
        "<table><thead><tr><th style=\"text-align:left\">{first}</th>"
    );
    for h in rest {
        let _ = write!(s, "<th style=\"text-align:right\">{h}</th>");
    }
    s.push_str("</tr></thead><tbody>\n");
}

fn row(s: &mut String, first: &str, rest: &[String]) {
    let _ = write!(s, "<tr><td style=\"text-align:left\">{first}</td>");
    for cell in rest {
        let _ = write!(
            s,
            "<td style=\"text-align:right;white-space:nowrap\">{cell}</td>"
        );
    }
    s.push_str("</tr>\n");
}

/// A path in monospace that breaks only after a `;`.
fn path_cell(path: &str) -> String {
    format!("<code>{}</code>", html_text(path).replace(';', ";<wbr>"))
}

/// Text as a double-quoted attribute's value.
fn attribute(s: &str) -> String {
    html_text(s).replace('"', "&quot;")
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_paths_are_those_holding_bytes_and_add_up_to_the_total() {
        // total 100: a 60 (own 10) over b 30 and c 20; d 40.
        let tree = super::super::flame::FlameTree {
            names: ["total", "a", "b", "c", "d"].map(String::from).to_vec(),
            name: vec![0, 1, 2, 3, 4],
            bytes: vec![100, 60, 30, 20, 40],
            leaves: vec![4, 3, 1, 1, 1],
            children: vec![2, 2, 0, 0, 0],
            old_bytes: None,
            old_leaves: None,
            min_bytes: 0,
            folded: 0,
        };
        let view = FlameView {
            id: "memory",
            label: "Logical bytes",
            note: String::new(),
            tree,
        };
        let paths = largest_paths(&view);
        let expected = [("d", 40), ("a;b", 30), ("a;c", 20), ("a", 10)];
        assert_eq!(paths, expected.map(|(p, b)| (p.to_string(), b)));
    }

    #[test]
    fn base64_is_the_standard_alphabet_with_padding() {
        for (bytes, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"\xff\xfe\xfd", "//79"),
        ] {
            assert_eq!(base64(bytes), text);
        }
    }
}
