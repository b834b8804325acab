//! Drill-down analyses riding on the streaming pass: each is an
//! [`EntityObserver`](crate::decode::EntityObserver) that sees every accepted
//! entity once and keeps only what it reports, so memory is bounded by what
//! is asked for (top-N, families), never by the instance size.
//!
//! - [`top`]: the largest single entities;
//! - [`stats`]: per-kind and per-family distributions;
//! - [`explain`]: how one path's bytes were computed.

pub mod explain;
pub mod stats;
pub mod top;

use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::pass::NamedFunction;

pub use crate::pass::EntityKind;

/// `--kind`: which entities an analysis looks at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KindFilter {
    Constraint,
    Removed,
    Variable,
    NamedFunction,
    #[default]
    All,
}

impl KindFilter {
    /// The name `--kind` takes, as documents repeat it.
    pub fn name(self) -> &'static str {
        match self {
            KindFilter::Constraint => "constraint",
            KindFilter::Removed => "removed",
            KindFilter::Variable => "variable",
            KindFilter::NamedFunction => "named-function",
            KindFilter::All => "all",
        }
    }

    pub fn admits(self, kind: EntityKind) -> bool {
        matches!(
            (self, kind),
            (KindFilter::All, _)
                | (KindFilter::Constraint, EntityKind::Constraint)
                | (KindFilter::Removed, EntityKind::Removed)
                | (KindFilter::Variable, EntityKind::Variable)
                | (KindFilter::NamedFunction, EntityKind::NamedFunction)
        )
    }
}

/// What the analyses need of one entity, borrowed from it.
#[derive(Debug, Clone, Copy)]
pub struct EntityView<'a> {
    pub kind: EntityKind,
    pub id: u64,
    pub name: Option<&'a str>,
    pub subscripts: &'a [i64],
    /// Stored monomials of its function; `None` for variables.
    pub terms: Option<u64>,
}

impl<'a> EntityView<'a> {
    pub fn variable(v: &'a DecisionVariable) -> Self {
        Self {
            kind: EntityKind::Variable,
            id: v.id,
            name: v.name.as_deref(),
            subscripts: &v.subscripts,
            terms: None,
        }
    }

    pub fn constraint(c: &'a Constraint) -> Self {
        Self {
            kind: EntityKind::Constraint,
            id: c.id,
            name: c.name.as_deref(),
            subscripts: &c.subscripts,
            terms: Some(c.function.stored_terms() as u64),
        }
    }

    pub fn removed(r: &'a RemovedConstraint) -> Self {
        Self {
            kind: EntityKind::Removed,
            ..Self::constraint(&r.constraint)
        }
    }

    pub fn named_function(n: &'a NamedFunction) -> Self {
        Self {
            kind: EntityKind::NamedFunction,
            id: n.id,
            name: n.name.as_deref(),
            subscripts: &n.subscripts,
            terms: Some(n.function.stored_terms() as u64),
        }
    }
}

/// An entity named for a report: `flow[3,7]`, or `(unnamed)`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EntityRef {
    /// The instance layer, for archives.
    pub layer: Option<usize>,
    pub kind: EntityKind,
    pub id: u64,
    pub name: Option<String>,
    pub subscripts: Vec<i64>,
}

impl EntityRef {
    pub fn new(layer: Option<usize>, e: &EntityView<'_>) -> Self {
        Self {
            layer,
            kind: e.kind,
            id: e.id,
            name: e.name.map(str::to_string),
            subscripts: e.subscripts.to_vec(),
        }
    }

    /// `name[1,2]` for people, control characters escaped.
    pub fn display_name(&self) -> String {
        let name = match &self.name {
            None => crate::profile::family::UNNAMED.to_string(),
            Some(n) => crate::profile::family::escape_frame_chars(n),
        };
        if self.subscripts.is_empty() {
            name
        } else {
            let subs: Vec<String> = self.subscripts.iter().map(i64::to_string).collect();
            format!("{name}[{}]", subs.join(","))
        }
    }
}
