//! The kinds of entities an instance holds, in both schemas: what `top`,
//! `stats` and `--kind` name.

/// The kinds of entities. ommx.v1 has the first four; OMMX 3.0 adds the
/// indicator, one-hot and SOS1 collections, each with removed rows of its own
/// (`Removed` is a removed regular constraint, as in v1). Under OMMX 2.9.3's
/// accounting, `OneHot` and `Sos1` are the constraint hints of the same
/// names (3.0 turns them into those collections' rows). The objective, one
/// per instance, is the last kind: `top` ranks it with the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntityKind {
    Variable,
    Constraint,
    Removed,
    NamedFunction,
    Indicator,
    RemovedIndicator,
    OneHot,
    RemovedOneHot,
    Sos1,
    RemovedSos1,
    Objective,
}

impl EntityKind {
    pub const ALL: [EntityKind; 11] = [
        EntityKind::Variable,
        EntityKind::Constraint,
        EntityKind::Removed,
        EntityKind::NamedFunction,
        EntityKind::Indicator,
        EntityKind::RemovedIndicator,
        EntityKind::OneHot,
        EntityKind::RemovedOneHot,
        EntityKind::Sos1,
        EntityKind::RemovedSos1,
        EntityKind::Objective,
    ];

    /// The name used on the command line and in outputs.
    pub fn label(self) -> &'static str {
        match self {
            EntityKind::Variable => "variable",
            EntityKind::Constraint => "constraint",
            EntityKind::Removed => "removed",
            EntityKind::NamedFunction => "named-function",
            EntityKind::Indicator => "indicator",
            EntityKind::RemovedIndicator => "removed-indicator",
            EntityKind::OneHot => "one-hot",
            EntityKind::RemovedOneHot => "removed-one-hot",
            EntityKind::Sos1 => "sos1",
            EntityKind::RemovedSos1 => "removed-sos1",
            EntityKind::Objective => "objective",
        }
    }

    /// The kind in prose: `removed constraint`, `named function`.
    pub fn noun(self) -> &'static str {
        match self {
            EntityKind::Variable => "variable",
            EntityKind::Constraint => "constraint",
            EntityKind::Removed => "removed constraint",
            EntityKind::NamedFunction => "named function",
            EntityKind::Indicator => "indicator constraint",
            EntityKind::RemovedIndicator => "removed indicator constraint",
            EntityKind::OneHot => "one-hot constraint",
            EntityKind::RemovedOneHot => "removed one-hot constraint",
            EntityKind::Sos1 => "SOS1 constraint",
            EntityKind::RemovedSos1 => "removed SOS1 constraint",
            EntityKind::Objective => "objective",
        }
    }

    /// True for kinds whose entities carry a function (their stored terms
    /// are reported); variables and the one-hot and SOS1 sets have none.
    pub fn has_function(self) -> bool {
        !matches!(
            self,
            EntityKind::Variable
                | EntityKind::OneHot
                | EntityKind::RemovedOneHot
                | EntityKind::Sos1
                | EntityKind::RemovedSos1
        )
    }
}
