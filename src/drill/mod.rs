//! Drill-down analyses riding on the streaming pass: each is an
//! [`EntityObserver`](crate::pass::EntityObserver) that sees every accepted
//! entity once and keeps only what it reports, so memory is bounded by what
//! is asked for (top-N, families), never by the instance size.
//!
//! - [`top`]: the largest single entities;
//! - [`stats`]: per-kind and per-family distributions;
//! - [`explain`]: how one path's bytes were computed.

pub mod explain;
pub mod stats;
pub mod top;

pub use crate::model::EntityKind;
pub use crate::pass::EntityView;

/// `--kind`: which entities an analysis looks at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KindFilter {
    Only(EntityKind),
    #[default]
    All,
}

impl crate::names::Named for KindFilter {
    const ALL: &'static [Self] = &[
        KindFilter::Only(EntityKind::Objective),
        KindFilter::Only(EntityKind::Constraint),
        KindFilter::Only(EntityKind::Removed),
        KindFilter::Only(EntityKind::Variable),
        KindFilter::Only(EntityKind::NamedFunction),
        KindFilter::Only(EntityKind::Indicator),
        KindFilter::Only(EntityKind::RemovedIndicator),
        KindFilter::Only(EntityKind::OneHot),
        KindFilter::Only(EntityKind::RemovedOneHot),
        KindFilter::Only(EntityKind::Sos1),
        KindFilter::Only(EntityKind::RemovedSos1),
        KindFilter::All,
    ];
    fn name(self) -> &'static str {
        KindFilter::name(self)
    }
}

impl KindFilter {
    /// The name `--kind` takes, as documents repeat it.
    pub fn name(self) -> &'static str {
        match self {
            KindFilter::Only(kind) => kind.label(),
            KindFilter::All => "all",
        }
    }

    pub fn admits(self, kind: EntityKind) -> bool {
        match self {
            KindFilter::All => true,
            KindFilter::Only(only) => only == kind,
        }
    }
}

/// An entity named for a report: `flow[3,7]`, or `(unnamed)`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EntityRef {
    /// The instance layer, for archives.
    pub layer: Option<usize>,
    pub kind: EntityKind,
    /// `None` for the objective, which has no id.
    pub id: Option<u64>,
    pub name: Option<String>,
    pub subscripts: Vec<i64>,
}

impl EntityRef {
    pub fn new(layer: Option<usize>, e: &EntityView<'_>) -> Self {
        Self {
            layer,
            kind: e.kind,
            id: (e.kind != EntityKind::Objective).then_some(e.id),
            name: e.name.map(str::to_string),
            subscripts: e.subscripts.to_vec(),
        }
    }

    /// The id for people: `-` for the objective.
    pub fn display_id(&self) -> String {
        self.id.map_or_else(|| "-".to_string(), |id| id.to_string())
    }

    /// `name[1,2]` for people: the name as written (control characters
    /// escaped), `(unnamed)` without one, `-` for the objective.
    pub fn display_name(&self) -> String {
        if self.kind == EntityKind::Objective {
            return "-".to_string();
        }
        let name = match &self.name {
            None => crate::profile::family::UNNAMED.to_string(),
            Some(n) => crate::profiled::escape_control(n).into_owned(),
        };
        if self.subscripts.is_empty() {
            name
        } else {
            let subs: Vec<String> = self.subscripts.iter().map(i64::to_string).collect();
            format!("{name}[{}]", subs.join(","))
        }
    }
}
