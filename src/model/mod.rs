//! The in-memory instance as OMMX 2.9.3 holds it, one entity at a time.
//!
//! Each type here is built from its wire message by OMMX's normalization and
//! validation rules and implements [`crate::profile::LogicalMemoryProfile`] with OMMX's frame
//! names, so that a traversal reproduces `Instance.logical_memory_profile()`.
//! Cross-entity rules (undefined variables, duplicate ids, hints, the
//! dependency graph) live in the pass (`pass/validate.rs`), which sees the
//! whole stream.

pub mod alloc;
pub mod elsewhere;
pub mod entities;
pub mod fields;
pub mod function;
pub mod hints;
pub mod kind;
pub mod labels;
pub mod leaves;
pub mod ommx30;
pub mod table_order;
pub mod waste;

pub use entities::{
    AcyclicAssignments, Annotations, Constraint, DecisionVariable, Description, Equality, Kind,
    Parameters, RemovedConstraint,
};
pub use fields::{ConstraintFields, Name, Subscripts, VariableFields};
pub use function::Function;
pub use hints::{ConstraintHints, OneHot, Sos1};
pub use kind::EntityKind;
pub use waste::FileWaste;

/// Why OMMX 2.9.3 would refuse an instance. Each message says what was wrong
/// in the user's terms.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("a function has no constant, linear, quadratic or polynomial part (an empty function, which OMMX 2.9.3 takes for a newer SDK's and refuses)")]
    EmptyFunction,
    #[error("a function is an expression (the `expression` arm, written by a newer OMMX SDK), which OMMX 2.9.3 cannot read")]
    ExpressionFunction,
    #[error("{what} is {value}, which OMMX rejects (coefficients must be finite)")]
    NonFinite { what: String, value: f64 },
    #[error("quadratic function has {rows} rows, {columns} columns and {values} values; the three lists must have the same length")]
    QuadraticLengths {
        rows: usize,
        columns: usize,
        values: usize,
    },
    #[error("decision variable {id} has unknown or unspecified kind {kind}")]
    UnknownKind { id: u64, kind: i32 },
    #[error("constraint {id} has unknown or unspecified equality {equality}")]
    UnknownEquality { id: u64, equality: i32 },
    #[error("{what} has no function")]
    MissingFunction { what: String },
    #[error("removed constraint entry has no constraint")]
    MissingRemovedConstraint,
    #[error("decision variable {id} has an invalid bound [{lower}, {upper}]")]
    InvalidBound { id: u64, lower: f64, upper: f64 },
    #[error("decision variable {id} is {kind} with bound [{lower}, {upper}], which holds no value of that kind")]
    BoundInconsistentToKind {
        id: u64,
        kind: &'static str,
        lower: f64,
        upper: f64,
    },
    #[error("decision variable {id} has substituted value {value}, inconsistent with its kind and bound [{lower}, {upper}]")]
    InvalidSubstitutedValue {
        id: u64,
        value: f64,
        lower: f64,
        upper: f64,
    },
    #[error("the objective is missing")]
    MissingObjective,
    #[error("format_version is {0}, newer than ommx.v1 (0) that this profile follows")]
    FormatVersion(u32),
    #[error("decision variable id {0} is defined more than once")]
    DuplicateVariable(u64),
    #[error("constraint id {0} is defined more than once")]
    DuplicateConstraint(u64),
    #[error("named function id {0} is defined more than once")]
    DuplicateNamedFunction(u64),
    #[error("decision_variable_dependency assigns variable {0}, which is not defined")]
    UndefinedDependencyKey(u64),
    #[error("{owner} uses decision variable {id}, which is not defined")]
    UndefinedVariable { owner: String, id: u64 },
    #[error("{hint} refers to constraint {id}, which is not defined")]
    UnknownHintConstraint { hint: String, id: u64 },
    #[error("{hint} lists decision variable {id} more than once")]
    DuplicateHintVariable { hint: String, id: u64 },
    #[error("{hint} lists constraint {id} more than once")]
    DuplicateHintConstraint { hint: String, id: u64 },
    #[error("decision_variable_dependency is cyclic (variable {0} depends on itself through it)")]
    CyclicDependency(u64),
    #[error("annotation key {0:?} uses the reserved prefix org.ommx.v1.")]
    ReservedAnnotation(String),
}
