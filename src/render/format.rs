//! The one list of output formats. Each document offers some of them
//! ([`super::Document::FORMATS`]); [`super::write`] matches on all of them,
//! so a new format is a compile error until it is handled there.

use crate::names::{choice, Choice, Named};

/// An output format (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OMMX's folded stacks (`inspect`), or `path OLD NEW` lines (`diff`).
    Folded,
    /// An indented tree.
    Tree,
    /// A table for people.
    Table,
    /// JSON: integers, fixed key order, one [`crate::profiled::envelope::Envelope`].
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// A pull-request comment.
    Markdown,
    /// JUnit XML for CI test reports.
    Junit,
    /// speedscope's JSON file format: one sample per folded line, weighed
    /// in bytes.
    Speedscope,
    /// A flamegraph's SVG (`flamegraph`, `diff --flamegraph`): a picture's
    /// one form, which its command chooses, not `--format`.
    Svg,
    /// The report page's HTML (`report`), likewise.
    Html,
}

impl Format {
    /// Whether a profile in this format shows the real-memory estimate
    /// (folded stacks do not: they are OMMX's own lines; nor do speedscope's
    /// file and the flamegraph, made of the same lines).
    pub fn shows_real_memory(self) -> bool {
        !matches!(self, Format::Folded | Format::Speedscope | Format::Svg)
    }

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Folded => "folded",
            Format::Tree => "tree",
            Format::Table => "table",
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Markdown => "markdown",
            Format::Junit => "junit",
            Format::Speedscope => "speedscope",
            Format::Svg => "svg",
            Format::Html => "html",
        }
    }
}

/// The formats users name (`--format`, the wheel's `format=`); the
/// pictures' forms, `svg` and `html`, are their commands' own.
impl Named for Format {
    const ALL: &'static [Self] = &[
        Format::Folded,
        Format::Tree,
        Format::Table,
        Format::Json,
        Format::Yaml,
        Format::Markdown,
        Format::Junit,
        Format::Speedscope,
    ];
    fn name(self) -> &'static str {
        Format::name(self)
    }
}

/// What `top`, `stats` and `explain` offer: the one table and its data.
pub const DATA: &[Choice<Format>] = &[
    choice(Format::Table, "A table for people"),
    choice(Format::Json, "JSON, integers only, fixed key order"),
    choice(Format::Yaml, "The same document as YAML"),
];
