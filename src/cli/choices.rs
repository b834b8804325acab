//! The values the command line offers for the library's plain enums
//! (formats, views, grouping, entity kinds, severities): their names and
//! help live here, so the library below knows nothing of argument parsing.
//! A parser built from a table behaves as a derived `ValueEnum` would: the
//! same help, the same error for an unknown value.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::api::{EntityKind, GroupBy, KindFilter, Named, Severity};
use crate::render::{Format, View};

/// One value the command line offers and its help (none: listed briefly
/// as `[possible values: ...]`); its name is the type's own ([`Named`]).
pub struct Choice<T> {
    pub value: T,
    pub help: Option<&'static str>,
}

const fn choice<T>(value: T, help: &'static str) -> Choice<T> {
    Choice {
        value,
        help: Some(help),
    }
}

const fn bare<T>(value: T) -> Choice<T> {
    Choice { value, help: None }
}

/// A value parser over a table of [`Choice`]s.
#[derive(Clone, Copy)]
pub struct Choices<T: 'static>(pub &'static [Choice<T>]);

impl<T: Named> Choices<T> {
    fn possible(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        self.0.iter().map(|c| {
            let value = PossibleValue::new(c.value.name());
            match c.help {
                Some(help) => value.help(help),
                None => value,
            }
        })
    }
}

impl<T: Named + Send + Sync> TypedValueParser for Choices<T> {
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
            .find(|c| c.value.name() == name)
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
        "OMMX's folded stacks: `frame;frame;... BYTES`, exactly as \
         `Instance.logical_memory_profile()` prints them",
    ),
    choice(Format::Tree, "An indented tree of inclusive bytes"),
    choice(Format::Table, "The largest paths as a table"),
    choice(Format::Json, "The tree as JSON (the baseline format)"),
    choice(Format::Yaml, "The tree as YAML"),
    choice(
        Format::Speedscope,
        "speedscope's JSON file (speedscope.app opens it): one sample per folded \
         line, weighed in bytes",
    ),
]);

/// `top`, `stats` and `explain`.
pub const DATA_FORMATS: Choices<Format> = Choices(&[
    choice(Format::Table, "A table for people"),
    choice(Format::Json, "JSON, integers only, fixed key order"),
    choice(Format::Yaml, "The same document as YAML"),
]);

pub const ADVISE_FORMATS: Choices<Format> = Choices(&[
    choice(
        Format::Table,
        "A table, largest saving first, then each recommendation's details",
    ),
    bare(Format::Json),
    bare(Format::Yaml),
]);

pub const LS_FORMATS: Choices<Format> =
    Choices(&[bare(Format::Table), bare(Format::Json), bare(Format::Yaml)]);

pub const DIFF_FORMATS: Choices<Format> = Choices(&[
    choice(
        Format::Table,
        "Changed paths as a table, largest change first, with the counts",
    ),
    choice(
        Format::Tree,
        "The changed part of the tree, every level summing to its parent",
    ),
    choice(Format::Json, "Every path with old and new bytes as data"),
    choice(Format::Yaml, "The same document as YAML"),
    choice(
        Format::Markdown,
        "A pull-request comment (under 65,536 characters)",
    ),
    choice(
        Format::Folded,
        "`path OLD NEW` lines of own bytes: inferno's differential input",
    ),
]);

pub const CHECK_FORMATS: Choices<Format> = Choices(&[
    choice(
        Format::Table,
        "Every rule with its measured value, limit and verdict",
    ),
    choice(Format::Json, "The same as data"),
    choice(Format::Yaml, "The same document as YAML"),
    choice(
        Format::Markdown,
        "A job summary or pull-request comment (under 65,536 characters)",
    ),
    choice(
        Format::Junit,
        "JUnit XML: one test case per limit of each rule, one suite per file",
    ),
]);

pub const VIEWS: Choices<View> = Choices(&[
    choice(View::Memory, "OMMX 2.9.3's logical in-memory bytes"),
    choice(
        View::Wire,
        "Encoded protobuf bytes per path; the total is the instance's size",
    ),
    choice(
        View::Both,
        "Both side by side, with the in-memory/on-disk ratio (table format)",
    ),
]);

pub const GROUP_BY: Choices<GroupBy> = Choices(&[
    choice(GroupBy::None, "No family frames: OMMX's own paths"),
    choice(
        GroupBy::Name,
        "One frame per entity name (the family), under each entity container",
    ),
]);

/// `top --kind`: every kind of entity that owns bytes.
pub const TOP_KINDS: Choices<KindFilter> = Choices(&[
    choice(KindFilter::Only(EntityKind::Objective), "The objective"),
    choice(KindFilter::Only(EntityKind::Constraint), "Constraints"),
    choice(KindFilter::Only(EntityKind::Removed), "Removed constraints"),
    choice(KindFilter::Only(EntityKind::Variable), "Decision variables"),
    choice(
        KindFilter::Only(EntityKind::NamedFunction),
        "Named functions (0 B under OMMX 2.9.3, which does not count them)",
    ),
    choice(
        KindFilter::Only(EntityKind::OneHot),
        "One-hot constraint hints (OMMX 3.0: one-hot constraints)",
    ),
    choice(
        KindFilter::Only(EntityKind::Sos1),
        "SOS1 constraint hints (OMMX 3.0: SOS1 constraints)",
    ),
    choice(
        KindFilter::Only(EntityKind::Indicator),
        "OMMX 3.0's indicator constraints",
    ),
    choice(
        KindFilter::Only(EntityKind::RemovedIndicator),
        "OMMX 3.0's removed indicator constraints",
    ),
    choice(
        KindFilter::Only(EntityKind::RemovedOneHot),
        "OMMX 3.0's removed one-hot constraints",
    ),
    choice(
        KindFilter::Only(EntityKind::RemovedSos1),
        "OMMX 3.0's removed SOS1 constraints",
    ),
    choice(KindFilter::All, "Every kind"),
]);

/// `stats --kind`: the kinds with many entities (the objective is one).
pub const KINDS: Choices<KindFilter> = Choices(&[
    bare(KindFilter::Only(EntityKind::Constraint)),
    bare(KindFilter::Only(EntityKind::Removed)),
    bare(KindFilter::Only(EntityKind::Variable)),
    bare(KindFilter::Only(EntityKind::NamedFunction)),
    bare(KindFilter::Only(EntityKind::Indicator)),
    bare(KindFilter::Only(EntityKind::RemovedIndicator)),
    bare(KindFilter::Only(EntityKind::OneHot)),
    bare(KindFilter::Only(EntityKind::RemovedOneHot)),
    bare(KindFilter::Only(EntityKind::Sos1)),
    bare(KindFilter::Only(EntityKind::RemovedSos1)),
    bare(KindFilter::All),
]);

pub const SEVERITIES: Choices<Severity> = Choices(&[
    bare(Severity::Info),
    bare(Severity::Low),
    bare(Severity::Medium),
    bare(Severity::High),
]);
