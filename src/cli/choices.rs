//! The values the command line offers for the library's plain enums
//! (formats, views, grouping, entity kinds, severities): their names and
//! help live here, so the library below knows nothing of argument parsing.
//! A parser built from a table behaves as a derived `ValueEnum` would: the
//! same help, the same error for an unknown value.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::advise::Severity;
use crate::drill::{EntityKind, KindFilter};
use crate::profile::family::GroupBy;
use crate::render::{Format, View};

/// One value: what it parses to, its name, and its help (none: listed
/// briefly as `[possible values: ...]`).
pub struct Choice<T> {
    pub value: T,
    pub name: &'static str,
    pub help: Option<&'static str>,
}

const fn choice<T>(value: T, name: &'static str, help: &'static str) -> Choice<T> {
    Choice {
        value,
        name,
        help: Some(help),
    }
}

const fn bare<T>(value: T, name: &'static str) -> Choice<T> {
    Choice {
        value,
        name,
        help: None,
    }
}

/// A value parser over a table of [`Choice`]s.
#[derive(Clone, Copy)]
pub struct Choices<T: 'static>(pub &'static [Choice<T>]);

impl<T> Choices<T> {
    fn possible(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        self.0.iter().map(|c| {
            let value = PossibleValue::new(c.name);
            match c.help {
                Some(help) => value.help(help),
                None => value,
            }
        })
    }
}

impl<T: Copy + Send + Sync + 'static> TypedValueParser for Choices<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let name = PossibleValuesParser::new(self.possible()).parse_ref(cmd, arg, value)?;
        Ok(self
            .0
            .iter()
            .find(|c| c.name == name)
            .expect("the parser accepts the table's names only")
            .value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.possible()))
    }
}

pub const INSPECT_FORMATS: Choices<Format> = Choices(&[
    choice(
        Format::Folded,
        "folded",
        "OMMX's folded stacks: `frame;frame;... BYTES`, exactly as \
         `Instance.logical_memory_profile()` prints them",
    ),
    choice(Format::Tree, "tree", "An indented tree of inclusive bytes"),
    choice(Format::Table, "table", "The largest paths as a table"),
    choice(
        Format::Json,
        "json",
        "The tree as JSON (the baseline format)",
    ),
    choice(Format::Yaml, "yaml", "The tree as YAML"),
]);

/// `top`, `stats` and `explain`.
pub const DATA_FORMATS: Choices<Format> = Choices(&[
    choice(Format::Table, "table", "A table for people"),
    choice(Format::Json, "json", "JSON, integers only, fixed key order"),
    choice(Format::Yaml, "yaml", "The same document as YAML"),
]);

pub const ADVISE_FORMATS: Choices<Format> = Choices(&[
    choice(
        Format::Table,
        "table",
        "A table, largest saving first, then each recommendation's details",
    ),
    bare(Format::Json, "json"),
    bare(Format::Yaml, "yaml"),
]);

pub const LS_FORMATS: Choices<Format> = Choices(&[
    bare(Format::Table, "table"),
    bare(Format::Json, "json"),
    bare(Format::Yaml, "yaml"),
]);

pub const DIFF_FORMATS: Choices<Format> = Choices(&[
    choice(
        Format::Table,
        "table",
        "Changed paths as a table, largest change first, with the counts",
    ),
    choice(
        Format::Tree,
        "tree",
        "The changed part of the tree, every level summing to its parent",
    ),
    choice(
        Format::Json,
        "json",
        "Every path with old and new bytes as data",
    ),
    choice(Format::Yaml, "yaml", "The same document as YAML"),
    choice(
        Format::Markdown,
        "markdown",
        "A pull-request comment (under 65,536 characters)",
    ),
    choice(
        Format::Folded,
        "folded",
        "`path OLD NEW` lines of own bytes: inferno's differential input",
    ),
]);

pub const CHECK_FORMATS: Choices<Format> = Choices(&[
    choice(
        Format::Table,
        "table",
        "Every rule with its measured value, limit and verdict",
    ),
    choice(Format::Json, "json", "The same as data"),
    choice(Format::Yaml, "yaml", "The same document as YAML"),
    choice(
        Format::Markdown,
        "markdown",
        "A job summary or pull-request comment (under 65,536 characters)",
    ),
    choice(
        Format::Junit,
        "junit",
        "JUnit XML: one test case per limit of each rule, one suite per file",
    ),
]);

pub const VIEWS: Choices<View> = Choices(&[
    choice(
        View::Memory,
        "memory",
        "OMMX 2.9.3's logical in-memory bytes",
    ),
    choice(
        View::Wire,
        "wire",
        "Encoded protobuf bytes per path; the total is the instance's size",
    ),
    choice(
        View::Both,
        "both",
        "Both side by side, with the in-memory/on-disk ratio (table format)",
    ),
]);

pub const GROUP_BY: Choices<GroupBy> = Choices(&[
    choice(GroupBy::None, "none", "No family frames: OMMX's own paths"),
    choice(
        GroupBy::Name,
        "name",
        "One frame per entity name (the family), under each entity container",
    ),
]);

pub const KINDS: Choices<KindFilter> = Choices(&[
    bare(KindFilter::Only(EntityKind::Constraint), "constraint"),
    bare(KindFilter::Only(EntityKind::Removed), "removed"),
    bare(KindFilter::Only(EntityKind::Variable), "variable"),
    bare(
        KindFilter::Only(EntityKind::NamedFunction),
        "named-function",
    ),
    bare(KindFilter::Only(EntityKind::Indicator), "indicator"),
    bare(
        KindFilter::Only(EntityKind::RemovedIndicator),
        "removed-indicator",
    ),
    bare(KindFilter::Only(EntityKind::OneHot), "one-hot"),
    bare(
        KindFilter::Only(EntityKind::RemovedOneHot),
        "removed-one-hot",
    ),
    bare(KindFilter::Only(EntityKind::Sos1), "sos1"),
    bare(KindFilter::Only(EntityKind::RemovedSos1), "removed-sos1"),
    bare(KindFilter::All, "all"),
]);

pub const SEVERITIES: Choices<Severity> = Choices(&[
    bare(Severity::Info, "info"),
    bare(Severity::Low, "low"),
    bare(Severity::Medium, "medium"),
    bare(Severity::High, "high"),
]);
