//! The instance as OMMX 3.0 (3.0.0b7) holds it in memory, built from an
//! `ommx.v2.Instance` message or converted from `ommx.v1` as 3.0's
//! `from_v1_bytes` does, and counted with 3.0's `logical_memory_profile()`
//! rules ([`profile`]; the layout is written up in fixtures/v2/README.md).
//!
//! Unlike v1, a v2 layer is decoded as one message: its tables are maps keyed
//! by id, with labels and removal reasons in side maps, so a row is only
//! complete once the whole message is read. Compact functions are normalized
//! by the same rules as 2.9.3 ([`crate::model::Function`]); expression
//! functions are 3.0's own ([`Func`]).
//!
//! Validation follows what the differential test against 3.0.0b7 found it
//! refuses (fixtures/v2/differential.py): unknown features, kinds, equalities
//! and senses; missing bounds and functions; references to undefined
//! variables or rows; fixed or dependent variables still used by the active
//! problem; cyclic substitutions; malformed expression programs.

mod entity;
mod expression;
mod file_waste;
mod from_v1;
mod layer;
mod profile;

use std::collections::{BTreeMap, BTreeSet};

use crate::ommx_v1 as pb1;
use crate::ommx_v2 as pb;

use super::{ModelError, Name, Subscripts};

pub use entity::Names;
pub use entity::{entry_wire_len, fixed_value_wire_len, value_wire_len};
pub use entity::{regular_row_leaves, COLLECTIONS};
pub use entity::{CountedConstraint, CountedVariable, Entity, LabelFields, Part, Piece, WireSizes};
pub use entity::{LabelRef, WireLabel};
pub use entity::{NAMED_FUNCTIONS, VARIABLES};
pub use expression::{Func, Instruction};
pub use file_waste::{entry_waste, framing, objective_waste, scalar, PayloadWaste};
pub use from_v1::REGULAR_COLLECTION;
pub use from_v1::{
    check_bound, check_finite, check_finite_compact, function, ConversionError, Converted,
    EntityRefusal,
};
pub use layer::fold_layer_annotations;
pub use profile::OBJECTIVE;
mod build;
pub use build::{assignments, check_header, check_variable, decode, dependency, from_wire};
pub use build::{indicator_row, named_function, read_function, regular_row, set_row, Has};

/// Why a v2 instance cannot be profiled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum V2Error {
    #[error("malformed ommx.v2.Instance protobuf: {0}")]
    Decode(String),
    #[error(
        "required feature {0} is unknown or unspecified: OMMX 3.0.0b7 cannot read this payload"
    )]
    UnknownFeature(i32),
    #[error("{what} is an invalid expression function: {why}")]
    Expression { what: String, why: String },
    #[error("{what}: {source}")]
    Function { what: String, source: ModelError },
    #[error("{what} has no function")]
    MissingFunction { what: String },
    #[error("{what} is a function with no arm set (written by a newer OMMX SDK?)")]
    EmptyFunction { what: String },
    #[error("decision variable {id}: {source}")]
    Variable { id: u64, source: ModelError },
    #[error("decision variable {id} has unknown or unspecified kind {kind}")]
    UnknownKind { id: u64, kind: i32 },
    #[error("{what} has unknown or unspecified equality {equality}")]
    UnknownEquality { what: String, equality: i32 },
    #[error("decision variable {0} has no bound (ommx.v2 requires one)")]
    MissingBound(u64),
    #[error("sense {0} is unknown or unspecified")]
    UnknownSense(i32),
    #[error("{owner} uses decision variable {id}, which is not defined")]
    UndefinedVariable { owner: String, id: u64 },
    #[error("{what} {id} is both active and removed")]
    ActiveAndRemoved { what: &'static str, id: u64 },
    #[error("{what} refers to {kind} {id}, which is not defined")]
    UndefinedRow {
        what: &'static str,
        kind: &'static str,
        id: u64,
    },
    #[error("decision_variable_dependency is cyclic (variable {0} depends on itself through it)")]
    CyclicDependency(u64),
    #[error("the instance has no decision_variables table (ommx.v2 requires one, even empty)")]
    MissingVariableTable,
    #[error("removed {kind} {id} has no removed reason")]
    NoRemovedReason { kind: &'static str, id: u64 },
    #[error("{owner} lists no decision variable (it needs at least one)")]
    NoVariables { owner: String },
    #[error("{owner} lists decision variable {id} more than once")]
    RepeatedVariable { owner: String, id: u64 },
    #[error("{owner} uses decision variable {id}, which is not binary")]
    NotBinary { owner: String, id: u64 },
    #[error("decision variable {0} is both fixed and dependent")]
    FixedAndDependent(u64),
    #[error("fixed variable {0} is used in the objective or a constraint")]
    FixedUsed(u64),
    #[error("dependent variable {0} is used in the objective or a constraint")]
    DependentUsed(u64),
}

/// A modeling label as 3.0 stores it: each field lands in its own store, and
/// only when set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Label {
    pub name: Option<Name>,
    pub subscripts: Subscripts,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

impl From<pb::ModelingLabel> for Label {
    fn from(l: pb::ModelingLabel) -> Self {
        let pb::ModelingLabel {
            name,
            subscripts,
            parameters,
            description,
        } = l;
        Self {
            name: name.map(Name::from),
            subscripts: Subscripts::from_vec(subscripts),
            parameters,
            description,
        }
    }
}

/// A removed row's reason.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reason {
    pub reason: String,
    pub parameters: BTreeMap<String, String>,
}

/// One row of a constraint collection.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Regular(Func),
    /// The indicator variable and the function.
    Indicator(u64, Func),
    /// One-hot or SOS1: the distinct variables.
    Set(BTreeSet<u64>),
}

impl Row {
    /// Every variable the row refers to (repeats included).
    pub fn for_each_variable(&self, mut f: impl FnMut(u64)) {
        match self {
            Row::Regular(func) => func.for_each_variable(f),
            Row::Indicator(v, func) => {
                f(*v);
                func.for_each_variable(f);
            }
            Row::Set(vars) => vars.iter().for_each(|&v| f(v)),
        }
    }
}

/// A constraint collection: active rows, removed rows with their reasons,
/// and the context (labels, provenance) of any row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collection {
    pub active: BTreeMap<u64, Row>,
    pub removed: BTreeMap<u64, (Row, Reason)>,
    pub labels: BTreeMap<u64, Label>,
    /// Rows' provenance chain lengths (only rows with any).
    pub provenance: BTreeMap<u64, usize>,
}

/// `Instance.decision_variable_dependency`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dependency {
    pub assignments: BTreeMap<u64, Func>,
    pub nodes: usize,
    pub edges: usize,
}

/// `Instance.output_objective` when set.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputObjective {
    pub function: Func,
}

/// An OMMX 3.0 instance, reduced to what its logical memory depends on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Instance {
    pub variables: BTreeSet<u64>,
    pub variable_labels: BTreeMap<u64, Label>,
    /// The variables with a fixed value.
    pub fixed_values: BTreeSet<u64>,
    pub objective: Option<Func>,
    pub regular: Collection,
    pub indicator: Collection,
    pub one_hot: Collection,
    pub sos1: Collection,
    pub dependency: Dependency,
    pub named_functions: BTreeMap<u64, Func>,
    pub named_labels: BTreeMap<u64, Label>,
    pub description: Option<pb1::instance::Description>,
    pub parameters: Option<BTreeMap<u64, f64>>,
    pub annotations: BTreeMap<String, String>,
    pub output_objective: Option<OutputObjective>,
    /// What each entity takes in the `ommx.v2` message it was built from.
    pub wire: WireSizes,
    /// What the message spends on terms 3.0 drops or merges.
    pub waste: PayloadWaste,
}

impl Instance {
    pub fn variable_count(&self) -> usize {
        self.variables.len()
    }

    pub(super) fn collections(&self) -> [&Collection; 4] {
        [&self.regular, &self.indicator, &self.one_hot, &self.sos1]
    }

    /// Active rows of all four constraint collections.
    pub fn constraint_count(&self) -> usize {
        self.collections().iter().map(|c| c.active.len()).sum()
    }

    /// Removed rows of all four constraint collections.
    pub fn removed_count(&self) -> usize {
        self.collections().iter().map(|c| c.removed.len()).sum()
    }

    /// The variables anything but their own table refers to: the objective
    /// and output objective, every row of every collection (active or
    /// removed), named functions and the dependency (assigned variables and
    /// right-hand sides), as the v1 `unused-variables` rule counts users.
    pub fn used_variables(&self) -> BTreeSet<u64> {
        let mut used = BTreeSet::new();
        let mut add = |v| {
            used.insert(v);
        };
        let functions = self
            .objective
            .iter()
            .chain(self.output_objective.iter().map(|o| &o.function))
            .chain(self.named_functions.values())
            .chain(self.dependency.assignments.values());
        for f in functions {
            f.for_each_variable(&mut add);
        }
        for c in self.collections() {
            let rows = c.active.values().chain(c.removed.values().map(|(r, _)| r));
            for r in rows {
                r.for_each_variable(&mut add);
            }
        }
        used.extend(self.dependency.assignments.keys().copied());
        used
    }

    /// Stored terms of the objective and of every constraint row's function
    /// (active and removed), as v1's summary counts them.
    pub fn stored_terms(&self) -> usize {
        let rows = self
            .collections()
            .into_iter()
            .flat_map(|c| c.active.values().chain(c.removed.values().map(|(r, _)| r)))
            .map(|r| match r {
                Row::Regular(f) | Row::Indicator(_, f) => f.stored_terms(),
                Row::Set(_) => 0,
            });
        rows.chain(self.objective.iter().map(Func::stored_terms))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Aggregate, LogicalMemoryProfile, Path};

    use crate::model::EntityKind;

    /// The encoded length of each non-empty entity table of `m`, and of the
    /// objective's field.
    fn table_lengths(m: &pb::Instance) -> BTreeMap<EntityKind, u64> {
        use prost::Message;
        let lengths = [
            (
                EntityKind::Variable,
                m.decision_variables.as_ref().map(Message::encoded_len),
            ),
            (
                EntityKind::Constraint,
                m.regular_constraints.as_ref().map(Message::encoded_len),
            ),
            (
                EntityKind::Indicator,
                m.indicator_constraints.as_ref().map(Message::encoded_len),
            ),
            (
                EntityKind::OneHot,
                m.one_hot_constraints.as_ref().map(Message::encoded_len),
            ),
            (
                EntityKind::Sos1,
                m.sos1_constraints.as_ref().map(Message::encoded_len),
            ),
            (
                EntityKind::NamedFunction,
                m.named_functions.as_ref().map(Message::encoded_len),
            ),
        ];
        let objective = m.objective.as_ref().map(|o| {
            let field = crate::wire::fields::v2::instance::OBJECTIVE;
            prost::encoding::message::encoded_len(field, o)
        });
        lengths
            .into_iter()
            .chain([(EntityKind::Objective, objective)])
            .filter_map(|(k, n)| n.filter(|&n| n > 0).map(|n| (k, n as u64)))
            .collect()
    }

    fn folded(inst: &Instance) -> String {
        let mut aggregate = Aggregate::new();
        inst.visit_logical_memory(&mut Path::new(), &mut aggregate);
        let lines: Vec<String> = aggregate
            .folded_lines()
            .into_iter()
            .map(|(path, bytes)| format!("{path} {bytes}"))
            .collect();
        lines.join("\n")
    }

    /// Every raw v2 fixture profiles byte for byte as ommx 3.0.0b7 does, and
    /// our schema reads every field 3.0 wrote.
    #[test]
    fn v2_fixtures_match_ommx_3() {
        use prost::Message;
        let mut checked = 0;
        for path in crate::fixtures::raw_v2() {
            let bytes = std::fs::read(&path).unwrap();
            let message = pb::Instance::decode(bytes.as_slice()).unwrap();
            // Nothing was skipped as unknown: re-encoded, the message is as
            // long as the payload (3.0 writes some maps in hash order, so
            // the bytes themselves may differ).
            assert_eq!(message.encoded_len(), bytes.len(), "{}", path.display());
            let tables = table_lengths(&message);
            let inst = from_wire(message).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // Every byte of an entity table belongs to one of its entities.
            let mut per_kind = BTreeMap::new();
            for (&(kind, _), &n) in &inst.wire {
                *per_kind.entry(kind).or_insert(0u64) += n;
            }
            let mut collections = BTreeMap::new();
            for (kind, n) in per_kind {
                let table = match kind {
                    EntityKind::Removed => EntityKind::Constraint,
                    EntityKind::RemovedIndicator => EntityKind::Indicator,
                    EntityKind::RemovedOneHot => EntityKind::OneHot,
                    EntityKind::RemovedSos1 => EntityKind::Sos1,
                    k => k,
                };
                *collections.entry(table).or_insert(0u64) += n;
            }
            assert_eq!(collections, tables, "{}", path.display());
            let expected = std::fs::read_to_string(path.with_extension("folded")).unwrap();
            assert_eq!(folded(&inst), expected, "{}", path.display());
            checked += 1;
        }
        assert!(checked >= 60, "only {checked} fixtures");
    }
}
