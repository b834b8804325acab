//! The report page: one self-contained HTML file holding a [`Page`] as
//! inline JSON and the script that draws it (the flamegraph by
//! d3-flame-graph, the tables by d3), so it works offline and from a CI
//! artifact or a notebook alike.
//!
//! The script and its stylesheet are built from `web/` (pinned by its
//! `package-lock.json`) into `web/dist/`, which is committed: building
//! memprof needs no Node, and the binary embeds the files. CI checks that
//! the committed files are what the lock file builds.

pub mod flame;
pub mod page;

use std::io::Write;

use anyhow::Result;

use super::{Document, Format};
use crate::names::{bare, Choice};
pub use page::{Analyses, Page, TopFound};

/// The bundled page script (d3, d3-flame-graph and the page's own code).
const SCRIPT: &str = include_str!("../../../web/dist/report.js");
/// Its stylesheet.
const STYLE: &str = include_str!("../../../web/dist/report.css");
/// The licences of the bundled libraries, shown at the foot of the page.
const LICENSES: &str = include_str!("../../../web/dist/LICENSES.txt");

/// `report`'s document: the page, one HTML file.
impl Document for Page {
    const NAME: &'static str = "report";
    const FORMATS: &'static [Choice<Format>] = &[bare(Format::Html)];

    fn html(&self, out: &mut dyn Write) -> Result<()> {
        write_page(self, out)
    }
}

fn write_page(page: &Page, out: &mut dyn Write) -> Result<()> {
    let data = script_json(&serde_json::to_string(page)?);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"generator\" content=\"{tool}\">\n<title>{title}</title>\n\
         <style>\n{STYLE}</style>\n</head>\n<body>\n\
         <main id=\"memprof-report\"><noscript>This report is drawn by its script: \
         open it in a browser with JavaScript enabled.</noscript></main>\n\
         <footer class=\"licenses\"><details><summary>Third-party licences of the \
         page's script</summary><pre>{licenses}</pre></details></footer>\n\
         <script type=\"application/json\" id=\"memprof-data\">{data}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        tool = page.tool,
        title = html_text(&page.title),
        licenses = html_text(LICENSES),
    )?;
    Ok(())
}

/// Nothing is fetched: the page holds everything it shows.
const CSP: &str =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` (only ever
/// inside strings in JSON) become escapes, so no `</script>` or `<!--` can
/// end the element early, and so do the two line separators old parsers
/// took for line ends.
fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text as HTML element content.
fn html_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_json_cannot_close_its_element() {
        let hostile = r#"{"name":"</script><script>alert(1)</script><!-- & \u2028"}"#;
        let safe = script_json(hostile);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        let original: serde_json::Value = serde_json::from_str(hostile).unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn the_embedded_assets_cannot_end_their_elements() {
        for (what, text, end) in [
            ("script", SCRIPT, "</script"),
            ("stylesheet", STYLE, "</style"),
        ] {
            let lower = text.to_ascii_lowercase();
            assert!(!lower.contains(end), "the {what} holds {end}");
            assert!(!lower.contains("<!--"), "the {what} holds <!--");
        }
        assert!(LICENSES.contains("d3-flame-graph") && LICENSES.contains("Apache License"));
    }
}
