//! The analyses riding on the pass: what they see of each accepted entity
//! and of the instance-wide parts.

use std::collections::BTreeMap;

use crate::model::{
    AcyclicAssignments, Annotations, Constraint, ConstraintHints, DecisionVariable, Description,
    FileWaste, Function, Parameters, RemovedConstraint,
};

/// The kinds of top-level entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntityKind {
    Variable,
    Constraint,
    Removed,
    NamedFunction,
}

impl EntityKind {
    pub const ALL: [EntityKind; 4] = [
        EntityKind::Variable,
        EntityKind::Constraint,
        EntityKind::Removed,
        EntityKind::NamedFunction,
    ];

    /// The name used on the command line and in outputs.
    pub fn label(self) -> &'static str {
        match self {
            EntityKind::Variable => "variable",
            EntityKind::Constraint => "constraint",
            EntityKind::Removed => "removed",
            EntityKind::NamedFunction => "named-function",
        }
    }

    /// The kind in prose: `removed constraint`, `named function`.
    pub fn noun(self) -> &'static str {
        match self {
            EntityKind::Variable => "variable",
            EntityKind::Constraint => "constraint",
            EntityKind::Removed => "removed constraint",
            EntityKind::NamedFunction => "named function",
        }
    }
}

/// What one accepted entity costs, for an [`EntityObserver`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Logical bytes under OMMX 2.9.3's accounting, the entity's map key
    /// included (named functions: 0, as 2.9.3 does not count them).
    pub bytes: u64,
    /// Bytes of the encoded element in the file: tag, length prefix and body.
    pub wire_bytes: u64,
    /// What normalizing the entity's function dropped or merged from the
    /// file's terms (zero for variables).
    pub waste: FileWaste,
}

/// A named function as the stream carried it (2.9.3 checks it but does not
/// keep it, so it has no model type of its own).
#[derive(Debug, Clone)]
pub struct NamedFunction {
    pub id: u64,
    pub function: Function,
    pub name: Option<String>,
    pub subscripts: Vec<i64>,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

/// The instance-wide parts, once the stream has ended and they were checked.
pub struct Singular<'a> {
    pub objective: &'a Function,
    /// Logical bytes of the objective.
    pub objective_bytes: u64,
    /// What normalizing the objective dropped or merged from the file.
    pub objective_waste: FileWaste,
    pub hints: &'a ConstraintHints,
    pub dependency: &'a AcyclicAssignments,
    pub parameters: &'a Parameters,
    pub description: &'a Description,
    pub annotations: &'a Annotations,
}

/// An analysis riding on the streaming pass: it sees every entity once,
/// in stream order, after OMMX's checks accepted it, with what it costs.
/// Nothing is kept for it; what it keeps is its own business.
pub trait EntityObserver {
    /// Called before each instance: `layer` is its position among the
    /// archive's instance layers (`None` for raw input).
    fn begin(&mut self, _layer: Option<usize>) {}
    fn variable(&mut self, _variable: &DecisionVariable, _cost: Cost) {}
    fn constraint(&mut self, _constraint: &Constraint, _cost: Cost) {}
    fn removed_constraint(&mut self, _removed: &RemovedConstraint, _cost: Cost) {}
    fn named_function(&mut self, _named: &NamedFunction, _cost: Cost) {}
    /// Called once, after every entity, when the whole instance is accepted.
    fn finish(&mut self, _singular: &Singular<'_>) {}
    /// The analysis' name when it needs ommx.v1 entities (OMMX 2.9.3's
    /// layout); instances counted with OMMX 3.0's accounting are refused.
    fn v1_analysis(&self) -> Option<&'static str> {
        None
    }
    /// True when the observer looks at no objective: the pass may then count
    /// the objective's terms on the wire without building it, and does not
    /// call [`EntityObserver::finish`].
    fn counts_only(&self) -> bool {
        false
    }
}

/// The observer of a plain profile: sees nothing.
impl EntityObserver for () {
    fn counts_only(&self) -> bool {
        true
    }
}
