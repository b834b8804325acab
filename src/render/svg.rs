//! The flamegraph, rendered in-process by inferno from the folded lines.

use std::io::Write;

use anyhow::{Context, Result};
use inferno::flamegraph::{self, color::BasicPalette, Direction, Palette, TextTruncateDirection};

use super::svg_frames::{self, Finish};
use super::Profile;

#[derive(Debug, Clone, Default)]
pub struct SvgOptions {
    pub title: Option<String>,
    pub inverted: bool,
    pub min_width: Option<f64>,
}

pub fn render(profile: &Profile<'_>, options: &SvgOptions, out: &mut dyn Write) -> Result<()> {
    let lines: Vec<String> = profile
        .aggregate
        .folded_lines()
        .into_iter()
        .map(|(path, bytes)| format!("{path} {bytes}"))
        .collect();
    let name = &profile.report.document.name;
    let title = svg_frames::title("memprof: ", &[name], &profile.layer_label());
    let what = match profile.account {
        super::Account::Memory => {
            format!("logical bytes as {} counts them", profile.accounting_name())
        }
        super::Account::Wire => "encoded protobuf bytes".to_string(),
    };
    draw(
        &lines,
        title,
        name,
        &what,
        profile.total_bytes(),
        options,
        out,
    )
}

/// The flamegraph of folded stacks read as input (`memprof inspect --format
/// folded | memprof flamegraph`), from the input `name`.
pub fn render_folded(
    name: &str,
    lines: &[(String, u64)],
    options: &SvgOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let total = lines.iter().map(|(_, bytes)| bytes).sum();
    let lines: Vec<String> = lines
        .iter()
        .map(|(path, bytes)| format!("{path} {bytes}"))
        .collect();
    let title = svg_frames::title("memprof: ", &[name], "folded stacks");
    draw(
        &lines,
        title,
        name,
        "bytes of the folded stacks",
        total,
        options,
        out,
    )
}

/// The width of inferno's frame area in pixels (1200 wide, 10 padding each
/// side), which `--min-width` pixels are relative to.
const FRAME_AREA: f64 = 1180.0;

/// `--min-width`'s default in pixels, inferno's own.
pub const DEFAULT_MIN_WIDTH: f64 = 0.1;

/// Draws the graph of `lines` at a fixed width (so that the labels written
/// here stay, with or without the browser's script), its root frame named
/// after `input` and the total.
fn draw(
    lines: &[String],
    default_title: String,
    input: &str,
    what: &str,
    total: u64,
    options: &SvgOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let human = crate::units::human(total);
    let mut opts = flamegraph::Options::default();
    opts.title = options.title.clone().unwrap_or(default_title);
    opts.subtitle = Some(svg_frames::middle(
        &format!("{what}; total {human}"),
        svg_frames::SUBTITLE_CHARS,
    ));
    opts.image_width = Some(svg_frames::IMAGE_WIDTH);
    // What a zoom relabels, inferno cuts on the right, as it cuts here.
    opts.text_truncate_direction = TextTruncateDirection::Right;
    opts.count_name = "bytes".to_string();
    opts.colors = Palette::Basic(BasicPalette::Mem);
    opts.deterministic = true;
    opts.hash = true;
    if options.inverted {
        opts.direction = Direction::Inverted;
    }
    // inferno 0.12 reads `min_width` as a percentage of the total width, though
    // its documentation says pixels; memprof's flag means pixels.
    let pixels = options.min_width.unwrap_or(DEFAULT_MIN_WIDTH);
    opts.min_width = pixels * 100.0 / FRAME_AREA;
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)
        .context("flamegraph rendering failed")?;
    let finish = Finish {
        root: format!("{input}: {human}"),
        inverted: options.inverted,
        fill: None,
    };
    let svg = String::from_utf8(svg).context("inferno wrote invalid UTF-8")?;
    out.write_all(svg_frames::finish(&svg, &finish).as_bytes())?;
    Ok(())
}
