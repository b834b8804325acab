//! `flamegraph`'s document, [`Flamegraph`], drawn in-process by inferno
//! from the folded lines: of a profile, or of folded stacks read as input.

use std::io::Write;

use anyhow::{Context, Result};
use inferno::flamegraph::{self, color::BasicPalette, Direction, Palette, TextTruncateDirection};

use super::svg_frames::{self, Finish};
use super::{Document, Format, Profile};
use crate::names::{bare, Choice};

#[derive(Debug, Clone, Default)]
pub struct SvgOptions {
    pub title: Option<String>,
    /// Upside down (an icicle graph): roots at the top.
    pub inverted: bool,
    /// Leaves first: each stack turned around, its last frame at the root
    /// (inferno's `reverse_stack_order`).
    pub reverse: bool,
    pub min_width: Option<f64>,
}

/// `flamegraph`'s document: the stacks drawn, and how.
pub struct Flamegraph<'a> {
    pub stacks: Stacks<'a>,
    pub options: SvgOptions,
}

/// What a flamegraph draws.
pub enum Stacks<'a> {
    /// A profile's folded lines.
    Profile(&'a Profile<'a>),
    /// Folded stacks read as input (`memprof inspect --format folded |
    /// memprof flamegraph`), from the input `name`.
    Folded {
        name: &'a str,
        lines: &'a [(String, u64)],
    },
}

impl Document for Flamegraph<'_> {
    const NAME: &'static str = "flamegraph";
    const FORMATS: &'static [Choice<Format>] = &[bare(Format::Svg)];

    fn svg(&self, out: &mut dyn Write) -> Result<()> {
        match self.stacks {
            Stacks::Profile(profile) => of_profile(profile, &self.options, out),
            Stacks::Folded { name, lines } => of_folded(name, lines, &self.options, out),
        }
    }
}

fn of_profile(profile: &Profile<'_>, options: &SvgOptions, out: &mut dyn Write) -> Result<()> {
    let lines: Vec<String> = profile
        .aggregate
        .folded_lines()
        .into_iter()
        .map(|(path, bytes)| format!("{path} {bytes}"))
        .collect();
    let name = &profile.profiled.input.name;
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

fn of_folded(
    name: &str,
    lines: &[(String, u64)],
    options: &SvgOptions,
    out: &mut dyn Write,
) -> Result<()> {
    // The input's counts were checked to add up within u64.
    let total = lines
        .iter()
        .fold(0u64, |sum, (_, bytes)| sum.saturating_add(*bytes));
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

/// The most frames drawn in one stack: an instance's profile is a dozen
/// deep, but folded input may hold a line of a million frames (a 2 MB
/// line made a 185 MB picture). Deeper frames are drawn as one frame,
/// [`CUT_FRAME`], and the subtitle says how many stacks were cut.
pub const MAX_DRAWN_DEPTH: usize = 1024;

/// The frame that stands for the frames of a stack past [`MAX_DRAWN_DEPTH`].
pub const CUT_FRAME: &str = "[deeper frames not drawn]";

/// `lines` (`stack count`) with each stack cut to [`MAX_DRAWN_DEPTH`]
/// frames, and how many were cut. A stack drawn leaves first (`reverse`)
/// keeps its last frames instead, the frames nearest its root standing for
/// the cut ones, so that the graph's root row still holds the leaves.
fn bounded(lines: &[String], reverse: bool) -> (Vec<std::borrow::Cow<'_, str>>, usize) {
    let mut cut = 0;
    let lines = lines
        .iter()
        .map(|line| {
            // More than the most frames: at least as many `;` as frames drawn.
            if line.match_indices(';').nth(MAX_DRAWN_DEPTH - 1).is_none() {
                return line.as_str().into();
            }
            cut += 1;
            let (stack, count) = line.rsplit_once(' ').expect("a folded line");
            if reverse {
                let (at, _) = stack
                    .rmatch_indices(';')
                    .nth(MAX_DRAWN_DEPTH - 2)
                    .expect("a stack deeper than the bound");
                format!("{CUT_FRAME};{} {count}", &stack[at + 1..]).into()
            } else {
                let (at, _) = stack
                    .match_indices(';')
                    .nth(MAX_DRAWN_DEPTH - 2)
                    .expect("a stack deeper than the bound");
                format!("{};{CUT_FRAME} {count}", &stack[..at]).into()
            }
        })
        .collect();
    (lines, cut)
}

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
    let (lines, cut) = bounded(lines, options.reverse);
    let human = crate::units::human_exact(total);
    let mut opts = flamegraph::Options::default();
    opts.title = options.title.clone().unwrap_or(default_title);
    // Said first, so that a long subtitle is not cut there.
    let cut = match cut {
        0 => String::new(),
        n => format!(
            "{} deeper than {} frames cut there; ",
            crate::units::count(n as u64, "stack", "stacks"),
            crate::units::thousands(MAX_DRAWN_DEPTH as u64)
        ),
    };
    let order = if options.reverse {
        "leaves first, callers above; "
    } else {
        ""
    };
    opts.subtitle = Some(svg_frames::middle(
        &format!("{cut}{order}{what}; total {human}"),
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
    opts.reverse_stack_order = options.reverse;
    // inferno 0.12 reads `min_width` as a percentage of the total width, though
    // its documentation says pixels; memprof's flag means pixels.
    let pixels = options.min_width.unwrap_or(DEFAULT_MIN_WIDTH);
    opts.min_width = pixels * 100.0 / FRAME_AREA;
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(|l| l.as_ref()), &mut svg)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_deeper_than_the_bound_are_cut_to_it() {
        let frames = |n: usize| {
            (0..n)
                .map(|i| format!("f{i}"))
                .collect::<Vec<_>>()
                .join(";")
        };
        let lines = vec![
            format!("{} 5", frames(MAX_DRAWN_DEPTH)),
            format!("{} 7", frames(MAX_DRAWN_DEPTH + 1)),
            format!("{} 9", frames(1_000_000)),
        ];
        let (drawn, cut) = bounded(&lines, false);
        assert_eq!(cut, 2);
        assert_eq!(drawn[0], lines[0]);
        for (line, count) in drawn[1..].iter().zip(["7", "9"]) {
            let (stack, c) = line.rsplit_once(' ').unwrap();
            assert_eq!(c, count);
            let stack: Vec<&str> = stack.split(';').collect();
            assert_eq!(stack.len(), MAX_DRAWN_DEPTH);
            assert_eq!(
                stack[MAX_DRAWN_DEPTH - 2],
                format!("f{}", MAX_DRAWN_DEPTH - 2)
            );
            assert_eq!(stack[MAX_DRAWN_DEPTH - 1], CUT_FRAME);
        }
        // Leaves first, a stack keeps its leaf end.
        let (drawn, cut) = bounded(&lines, true);
        assert_eq!(cut, 2);
        assert_eq!(drawn[0], lines[0]);
        for (line, (count, depth)) in drawn[1..]
            .iter()
            .zip([("7", MAX_DRAWN_DEPTH + 1), ("9", 1_000_000)])
        {
            let (stack, c) = line.rsplit_once(' ').unwrap();
            assert_eq!(c, count);
            let stack: Vec<&str> = stack.split(';').collect();
            assert_eq!(stack.len(), MAX_DRAWN_DEPTH);
            assert_eq!(stack[0], CUT_FRAME);
            assert_eq!(stack[1], format!("f{}", depth - MAX_DRAWN_DEPTH + 1));
            assert_eq!(stack[MAX_DRAWN_DEPTH - 1], format!("f{}", depth - 1));
        }
    }
}
