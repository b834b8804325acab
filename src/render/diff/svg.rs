//! Differential flamegraphs, rendered in-process by inferno. A differential
//! graph draws frames as wide as one side's bytes and colours them by the
//! change (red grew, blue shrank), so one graph alone hides the paths that
//! exist on the other side only. memprof therefore draws two:
//!
//! * the *new* graph: widths are the new bytes; added paths show here;
//! * the *old* graph (inferno's "negated" differential): widths are the old
//!   bytes, colours still red for growth and blue for shrinkage; removed paths
//!   show here, in blue.

use std::io::Write;

use std::collections::HashMap;

use anyhow::{Context, Result};
use inferno::flamegraph::{self, color::BasicPalette, Palette, TextTruncateDirection};

use super::DiffView;
use crate::names::{bare, Choice};
use crate::render::svg_frames::{self, Finish};
use crate::render::{Document, Format};
use crate::units::{human, human_exact};

/// Which side sets the frame widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Widths {
    New,
    Old,
}

/// The name of the old-widths graph written beside `path`: `out.svg` →
/// `out.old.svg`.
pub fn old_graph_path(path: &std::path::Path) -> std::path::PathBuf {
    let stem = match path.extension() {
        Some(ext) if ext.eq_ignore_ascii_case("svg") => path.with_extension(""),
        _ => path.to_path_buf(),
    };
    let mut name = stem.into_os_string();
    name.push(".old.svg");
    name.into()
}

/// One graph of `diff --flamegraph`'s pair: the diff, with the frame
/// widths of one side; `companion` names the other side's graph.
pub struct DiffGraph<'a> {
    pub view: &'a DiffView<'a>,
    pub widths: Widths,
    pub companion: &'a str,
}

impl Document for DiffGraph<'_> {
    const NAME: &'static str = "diff --flamegraph";
    const FORMATS: &'static [Choice<Format>] = &[bare(Format::Svg)];

    fn svg(&self, out: &mut dyn Write) -> Result<()> {
        draw(self.view, self.widths, self.companion, out)
    }
}

fn draw(view: &DiffView<'_>, widths: Widths, companion: &str, out: &mut dyn Write) -> Result<()> {
    let lines: Vec<String> = view
        .diff
        .folded_lines()
        .into_iter()
        .map(|(path, old, new)| match widths {
            Widths::New => format!("{path} {old} {new}"),
            // inferno takes widths from the second count; negating makes the
            // colour new - old again.
            Widths::Old => format!("{path} {new} {old}"),
        })
        .collect();
    let mut opts = flamegraph::Options::default();
    let (side, shows) = match widths {
        Widths::New => ("new", "added paths show here; removed ones in"),
        Widths::Old => ("old", "removed paths show here; added ones in"),
    };
    let (old_name, new_name) = (view.old.name(), view.new.name());
    opts.title = svg_frames::title(
        "memprof diff: ",
        &[old_name, new_name],
        &format!("widths: {side} bytes"),
    );
    let root = view.diff.root();
    opts.subtitle = Some(svg_frames::middle(
        &format!(
            "red grew, blue shrank (darker: a larger ratio); total {} -> {}; {shows} {companion}",
            human_exact(root.old_bytes()),
            human_exact(root.new_bytes())
        ),
        svg_frames::SUBTITLE_CHARS,
    ));
    opts.image_width = Some(svg_frames::IMAGE_WIDTH);
    opts.text_truncate_direction = TextTruncateDirection::Right;
    opts.count_name = "bytes".to_string();
    opts.colors = Palette::Basic(BasicPalette::Mem);
    opts.deterministic = true;
    opts.hash = true;
    opts.negate_differentials = widths == Widths::Old;
    let side_total = match widths {
        Widths::New => root.new_bytes(),
        Widths::Old => root.old_bytes(),
    };
    if side_total == 0 {
        // inferno refuses an empty graph; say so in a graph of our own.
        write!(
            out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"1200\" height=\"60\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"30\">no bytes on the {side} side</text></svg>\n"
        )?;
        return Ok(());
    }
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)
        .context("flamegraph rendering failed")?;
    // inferno shades each frame by its share of the largest change; the
    // graph takes the report page's colours instead: by the ratio of the
    // frame's two sides.
    let diff = &view.diff;
    let ids: HashMap<&str, usize> = (0..diff.len()).map(|id| (diff.path(id), id)).collect();
    let fill = |path: &str| {
        let node = diff.node(*ids.get(path)?);
        Some(svg_frames::diff_fill(node.old_bytes(), node.new_bytes()))
    };
    let finish = Finish {
        root: format!(
            "{old_name} -> {new_name}: {} -> {}",
            human(root.old_bytes()),
            human(root.new_bytes())
        ),
        inverted: false,
        fill: Some(&fill),
    };
    let svg = String::from_utf8(svg).context("inferno wrote invalid UTF-8")?;
    out.write_all(svg_frames::finish(&svg, &finish).as_bytes())?;
    Ok(())
}
