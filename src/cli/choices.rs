//! The values the command line offers for the library's plain enums
//! (formats, views, grouping, entity kinds, severities), so the library
//! below knows nothing of argument parsing. A parser built from a table
//! behaves as a derived `ValueEnum` would: the same help, the same error
//! for an unknown value. Each command's formats are its document's own
//! ([`Document::FORMATS`]), read here, never restated.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::api::{EntityKind, GroupBy, KindFilter, Named, Severity, Verdicts};
use crate::names::{bare, choice, Choice};
use crate::render::advice::AdviceView;
use crate::render::diff::DiffView;
use crate::render::format::DATA;
use crate::render::layers::LS;
use crate::render::{Document, Format, ProfileView, View};

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

pub const INSPECT_FORMATS: Choices<Format> = Choices(ProfileView::FORMATS);

/// `top`, `stats` and `explain`.
pub const DATA_FORMATS: Choices<Format> = Choices(DATA);

pub const ADVISE_FORMATS: Choices<Format> = Choices(AdviceView::FORMATS);

pub const LS_FORMATS: Choices<Format> = Choices(LS);

pub const DIFF_FORMATS: Choices<Format> = Choices(DiffView::FORMATS);

pub const CHECK_FORMATS: Choices<Format> = Choices(Verdicts::FORMATS);

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
