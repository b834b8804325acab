//! inferno's flamegraph, finished for memprof's frame names: what inferno's
//! options cannot say. inferno cuts a label that does not fit at a
//! character count (`Constraint.fu..`, or from the left in a browser:
//! `..ack]`), leaves the root frame unlabelled until a browser's script
//! writes "all" into it, and colours a differential graph by each frame's
//! share of the largest change, so that beside one large change every
//! other frame is the same pale pink.
//!
//! [`finish`] rewrites, in inferno's output, each frame's label (the whole
//! name when it fits, else its meaningful end: the field of `Type.field`,
//! the part of `Container[part]`), the root frame's title and label (the
//! input and its total), and, when asked, each frame's fill from its path.
//! The graph must have a fixed width (inferno's script then keeps these
//! labels until a frame is zoomed, and rewrites only what it zooms).
//!
//! inferno writes each frame as `<g><title>NAME (INFO)</title><rect x=".."
//! y=".." width="P%" .. fill=".." fg:x="X" fg:w="W"/><text ..>LABEL</text></g>`
//! inside `<svg id="frames">`; a frame's depth is its row, its parent the
//! frame of the row before whose samples hold its own.

use std::collections::HashMap;
use std::ops::Range;

/// The width inferno draws at (its default), in pixels.
pub const IMAGE_WIDTH: usize = 1200;
/// inferno's label font size and average character width (in font sizes).
const FONT_SIZE: f64 = 12.0;
const FONT_WIDTH: f64 = 0.59;

/// A frame's fill from its path (frames joined by `;`, the root's empty);
/// `None` keeps inferno's.
pub type Fill<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What to change in a graph.
pub struct Finish<'a> {
    /// The root frame's name: the input and its total.
    pub root: String,
    /// Whether the root is the top row (an icicle graph).
    pub inverted: bool,
    /// New fills, when given.
    pub fill: Option<Fill<'a>>,
}

/// One frame of inferno's output: where its parts are, and what they say.
struct Frame {
    /// The text inside `<title>`.
    title: Range<usize>,
    /// The value of the rect's `fill`.
    fill: Range<usize>,
    /// The text inside `<text>`.
    text: Range<usize>,
    name: String,
    width_pct: f64,
    y: f64,
    x: u64,
    w: u64,
}

/// The graph with the labels, root and fills rewritten; `svg` unchanged
/// when it holds no frames (or not in the shape expected).
pub fn finish(svg: &str, finish: &Finish<'_>) -> String {
    let Some(frames) = frames(svg) else {
        return svg.to_string();
    };
    let Some(root) = root(&frames, finish.inverted) else {
        return svg.to_string();
    };
    let paths = finish.fill.map(|_| paths(&frames, root, finish.inverted));
    // Replacements, in order of position.
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let (name, title) = if i == root {
            let info = &svg[f.title.clone()];
            let info = info.rfind(" (").map_or("", |at| &info[at..]);
            (finish.root.as_str(), Some(format!("{}{info}", finish.root)))
        } else {
            (f.name.as_str(), None)
        };
        if let Some(title) = title {
            edits.push((f.title.clone(), escape(&title)));
        }
        if let (Some(fill), Some(paths)) = (finish.fill, &paths) {
            if let Some(colour) = paths.get(&i).and_then(|p| fill(p)) {
                edits.push((f.fill.clone(), colour));
            }
        }
        let fit = fit_chars(f.width_pct);
        let label = if i == root {
            middle(name, fit)
        } else {
            label(name, fit)
        };
        edits.push((f.text.clone(), escape(&label)));
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(svg.len() + 1024);
    let mut at = 0;
    for (range, text) in edits {
        out.push_str(&svg[at..range.start]);
        out.push_str(&text);
        at = range.end;
    }
    out.push_str(&svg[at..]);
    out
}

/// How many characters inferno fits in a frame `width_pct` wide.
fn fit_chars(width_pct: f64) -> usize {
    (width_pct / (100.0 * FONT_SIZE * FONT_WIDTH / IMAGE_WIDTH as f64)) as usize
}

/// A frame's label in `fit` characters: its name, else its meaningful end
/// (`…function` of `Constraint.function`, `…[stack]` of `Vec[stack]`), cut
/// on the right when even that is too long; nothing below three characters.
pub fn label(name: &str, fit: usize) -> String {
    let chars = name.chars().count();
    if chars < fit {
        return name.to_string();
    }
    let short = match (name.find('['), name.rfind('.')) {
        (Some(b), _) if b > 0 && name.ends_with(']') => format!("…{}", &name[b..]),
        (_, Some(d)) if d > 0 && d + 1 < name.len() => format!("…{}", &name[d + 1..]),
        _ => name.to_string(),
    };
    cut(&short, fit)
}

/// `text` in `fit` characters, cut on the right with an ellipsis; nothing
/// when fewer than three characters and the ellipsis would fit.
fn cut(text: &str, fit: usize) -> String {
    if text.chars().count() < fit {
        text.to_string()
    } else if fit >= 4 {
        let mut out: String = text.chars().take(fit - 1).collect();
        out.push('…');
        out
    } else {
        String::new()
    }
}

/// `text` in at most `max` characters, its middle cut out (a path keeps
/// its start and its file name).
pub fn middle(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_string();
    }
    if max < 5 {
        return String::new();
    }
    let tail = (max - 1) / 2;
    let head = max - 1 - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// The most characters of a title (inferno's 17-pixel monospace, centred
/// clear of the search button) and of a subtitle.
pub const TITLE_CHARS: usize = 100;
pub const SUBTITLE_CHARS: usize = 160;

/// `PREFIX NAME -> NAME (DETAIL)`, fitted to [`TITLE_CHARS`]: the names
/// shortened to their file names, then the whole cut in the middle, when
/// it is too long.
pub fn title(prefix: &str, names: &[&str], detail: &str) -> String {
    let whole = format!("{prefix}{} ({detail})", names.join(" -> "));
    if whole.chars().count() <= TITLE_CHARS {
        return whole;
    }
    let bases: Vec<&str> = names
        .iter()
        .map(|n| n.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or(n))
        .collect();
    middle(
        &format!("{prefix}{} ({detail})", bases.join(" -> ")),
        TITLE_CHARS,
    )
}

/// Every frame, or `None` when the graph is not in the shape expected.
fn frames(svg: &str) -> Option<Vec<Frame>> {
    let mut at = svg.find("<svg id=\"frames\"")?;
    let mut frames = Vec::new();
    while let Some(found) = svg[at..].find("<g><title>") {
        let start = at + found;
        let end = start + svg[start..].find("</g>")?;
        frames.push(frame(svg, start..end)?);
        at = end;
    }
    Some(frames)
}

fn frame(svg: &str, g: Range<usize>) -> Option<Frame> {
    let part = &svg[g.clone()];
    let title_start = g.start + "<g><title>".len();
    let title = title_start..g.start + part.find("</title>")?;
    let rect = g.start + part.find("<rect ")?;
    let rect_end = rect + svg[rect..].find("/>")?;
    let attr = |name: &str| -> Option<Range<usize>> {
        let key = format!(" {name}=\"");
        let start = rect + svg[rect..rect_end].find(&key)? + key.len();
        Some(start..start + svg[start..rect_end].find('"')?)
    };
    let number =
        |name: &str| -> Option<f64> { svg[attr(name)?].trim_end_matches('%').parse().ok() };
    let text_tag = rect_end + svg[rect_end..g.end].find("<text ")?;
    let text_start = text_tag + svg[text_tag..g.end].find('>')? + 1;
    let text = text_start..text_start + svg[text_start..g.end].find("</text>")?;
    let full = unescape(&svg[title.clone()]);
    let name = match full.rfind(" (") {
        Some(at) => full[..at].to_string(),
        None => full,
    };
    Some(Frame {
        title,
        fill: attr("fill")?,
        text,
        name,
        width_pct: number("width")?,
        y: number("y")?,
        x: svg[attr("fg:x")?].parse().ok()?,
        w: svg[attr("fg:w")?].parse().ok()?,
    })
}

/// The root: the one frame of the bottom row (the top one when inverted).
fn root(frames: &[Frame], inverted: bool) -> Option<usize> {
    let key = |i: usize| if inverted { -frames[i].y } else { frames[i].y };
    (0..frames.len()).max_by(|&a, &b| key(a).total_cmp(&key(b)))
}

/// Each frame's path (frames below the root joined by `;`; the root's is
/// empty), from the rows:
/// a frame's parent is the frame of the row nearer the root whose samples
/// hold its first sample.
fn paths(frames: &[Frame], root: usize, inverted: bool) -> HashMap<usize, String> {
    let mut rows: Vec<f64> = frames.iter().map(|f| f.y).collect();
    rows.sort_by(|a, b| {
        if inverted {
            a.total_cmp(b)
        } else {
            b.total_cmp(a)
        }
    });
    rows.dedup();
    let depth = |y: f64| rows.iter().position(|&r| r == y).unwrap_or(0);
    // Per depth, the frames by first sample.
    let mut by_depth: Vec<Vec<usize>> = vec![Vec::new(); rows.len()];
    for (i, f) in frames.iter().enumerate() {
        by_depth[depth(f.y)].push(i);
    }
    for row in &mut by_depth {
        row.sort_by_key(|&i| frames[i].x);
    }
    let mut paths: HashMap<usize, String> = HashMap::from([(root, String::new())]);
    for d in 1..by_depth.len() {
        for &i in &by_depth[d] {
            let f = &frames[i];
            let above = &by_depth[d - 1];
            let at = above.partition_point(|&p| frames[p].x <= f.x);
            let Some(&parent) = at.checked_sub(1).and_then(|a| above.get(a)) else {
                continue;
            };
            let p = &frames[parent];
            if f.x >= p.x + p.w {
                continue;
            }
            let path = match paths.get(&parent) {
                Some(prefix) if parent == root => {
                    debug_assert!(prefix.is_empty());
                    f.name.clone()
                }
                Some(prefix) => format!("{prefix};{}", f.name),
                None => continue,
            };
            paths.insert(i, path);
        }
    }
    paths
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// ColorBrewer's RdBu ramp, red to blue.
const RD_BU: [[u8; 3]; 11] = [
    [0x67, 0x00, 0x1f],
    [0xb2, 0x18, 0x2b],
    [0xd6, 0x60, 0x4d],
    [0xf4, 0xa5, 0x82],
    [0xfd, 0xdb, 0xc7],
    [0xf7, 0xf7, 0xf7],
    [0xd1, 0xe5, 0xf0],
    [0x92, 0xc5, 0xde],
    [0x43, 0x93, 0xc3],
    [0x21, 0x66, 0xac],
    [0x05, 0x30, 0x61],
];

/// The fill of a path that went from `old` to `new` bytes, as the report
/// page colours it: growth red, shrinkage blue, by the ratio of the sides
/// on a square-root scale (fourfold, added or removed is the darkest; any
/// change at least a fifth of the way); unchanged grey.
pub fn diff_fill(old: u64, new: u64) -> String {
    if old == new {
        return "rgb(217,217,217)".to_string();
    }
    let t = match (old, new) {
        (0, _) => 1.0,
        (_, 0) => -1.0,
        _ => {
            let r = ((new as f64 / old as f64).log2().abs() / 2.0).min(1.0);
            r.sqrt().max(0.2) * if new > old { 1.0 } else { -1.0 }
        }
    };
    // -1 (shrank) .. 1 (grew) onto the ramp, the darkest ends left out
    // (black labels stay legible).
    let at = (0.5 - 0.36 * t) * (RD_BU.len() - 1) as f64;
    let (i, frac) = (at.floor() as usize, at.fract());
    let (a, b) = (RD_BU[i], RD_BU[(i + 1).min(RD_BU.len() - 1)]);
    let mix = |k: usize| (a[k] as f64 + (b[k] as f64 - a[k] as f64) * frac).round() as u8;
    format!("rgb({},{},{})", mix(0), mix(1), mix(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_keep_their_meaningful_end() {
        assert_eq!(label("Constraint.function", 40), "Constraint.function");
        assert_eq!(label("Constraint.function", 12), "…function");
        assert_eq!(label("Constraint.function", 7), "…funct…");
        assert_eq!(label("FnvHashMap[stack]", 10), "…[stack]");
        assert_eq!(label("Vec[stack]", 5), "…[st…");
        assert_eq!(label("Linear", 3), "");
        assert_eq!(label("layer[0] (multi)", 12), "layer[0] (m…");
    }

    fn graph(inverted: bool) -> String {
        let lines = ["A;Constraint.function 600", "A;Vec[stack] 300", "B 100"];
        let mut opts = inferno::flamegraph::Options::default();
        opts.image_width = Some(IMAGE_WIDTH);
        opts.count_name = "bytes".into();
        if inverted {
            opts.direction = inferno::flamegraph::Direction::Inverted;
        }
        let mut svg = Vec::new();
        inferno::flamegraph::from_lines(&mut opts, lines.iter().copied(), &mut svg).unwrap();
        String::from_utf8(svg).unwrap()
    }

    #[test]
    fn finish_names_the_root_and_fills_each_frame_by_its_path() {
        for inverted in [false, true] {
            let fill = |path: &str| Some(format!("fill:{path}"));
            let finished = finish(
                &graph(inverted),
                &Finish {
                    root: "x.pb: 1000 B".into(),
                    inverted,
                    fill: Some(&fill),
                },
            );
            assert!(finished.contains("<title>x.pb: 1000 B (1,000 bytes, 100%)</title>"));
            assert!(finished.contains(">x.pb: 1000 B</text>"));
            for path in ["", "A", "A;Constraint.function", "A;Vec[stack]", "B"] {
                let fill = format!("fill=\"fill:{path}\"");
                assert_eq!(finished.matches(&fill).count(), 1, "{path} {inverted}");
            }
            assert!(finished.contains(">Constraint.function</text>"));
        }
    }

    #[test]
    fn a_graph_of_another_shape_is_left_alone() {
        let svg = "<svg><text>no frames</text></svg>";
        let same = finish(
            svg,
            &Finish {
                root: "r".into(),
                inverted: false,
                fill: None,
            },
        );
        assert_eq!(same, svg);
    }

    #[test]
    fn titles_fit() {
        let long = format!("/runs/{}/problem.ommx", "nested/".repeat(30));
        let t = title("memprof: ", &[&long], "raw instance");
        assert_eq!(t, "memprof: problem.ommx (raw instance)");
        let t = title("memprof: ", &["short.pb"], "raw instance");
        assert_eq!(t, "memprof: short.pb (raw instance)");
        let t = title("memprof diff: ", &[&long, "b/new.pb"], "widths: new bytes");
        assert_eq!(
            t,
            "memprof diff: problem.ommx -> new.pb (widths: new bytes)"
        );
        let huge = "x".repeat(300);
        let t = title("memprof: ", &[&huge], "all 3 instance layers");
        assert_eq!(t.chars().count(), TITLE_CHARS);
        assert!(
            t.ends_with("xx (all 3 instance layers)") && t.contains('…'),
            "{t}"
        );
        assert_eq!(middle("abcdefghij", 7), "abc…hij");
    }

    #[test]
    fn diff_fills_part_growth_from_shrinkage() {
        let rgb = |s: String| -> Vec<u8> {
            s[4..s.len() - 1]
                .split(',')
                .map(|v| v.parse().unwrap())
                .collect()
        };
        let grew = rgb(diff_fill(100, 110));
        let shrank = rgb(diff_fill(110, 100));
        assert!(grew[0] > grew[2] + 20, "{grew:?}");
        assert!(shrank[2] > shrank[0] + 20, "{shrank:?}");
        let added = rgb(diff_fill(0, 5));
        assert!(added[0] > 150 && added[2] < 80, "{added:?}");
        assert_eq!(diff_fill(7, 7), "rgb(217,217,217)");
        // Larger ratios are darker.
        let doubled = rgb(diff_fill(100, 200));
        assert!(doubled[1] < grew[1], "{doubled:?} {grew:?}");
    }
}
