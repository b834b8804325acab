//! Decision variables, constraints and the smaller parts of an instance, with
//! OMMX 2.9.3's frame names and validation rules.

use std::collections::BTreeMap;

use crate::ommx_v1 as pb;
use crate::profile::collections::{
    leaf, option_string, scalar_map, string, string_map, vec_of_strings, MapKind, FNV_HASHMAP,
    SCALAR_8,
};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Noun, Path, Rule};

use super::fields::{ConstraintFields, Name, Subscripts, VariableFields};
use super::leaves::{ConstraintLeaves, KeyedLeaves, VariableLeaves};
use super::{FileWaste, Function, ModelError};

/// An absent `Option<Parameters>`.
pub const PARAMETERS_NONE: Rule = Rule::fixed(
    "an absent Option<Parameters>",
    Noun::new("absent value", "absent values"),
    48,
);
/// An absent `Option<Description>`.
pub const DESCRIPTION_NONE: Rule = Rule::fixed(
    "an absent Option<Description>",
    Noun::new("absent value", "absent values"),
    168,
);
/// OMMX's dependency graph of the assignments.
pub const DEPENDENCY_GRAPH: Rule = Rule {
    what: "the dependency graph: fixed part, then per node and per edge",
    leaves: Noun::new("graph", "graphs"),
    base: 144,
    per: [
        (8, Noun::new("node", "nodes")),
        (16, Noun::new("edge", "edges")),
    ],
};

/// Tolerance OMMX uses when it checks a substituted value against its bound.
const ATOL: f64 = 1e-6;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Binary,
    Integer,
    Continuous,
    SemiInteger,
    SemiContinuous,
}

impl Kind {
    pub(crate) fn from_wire(id: u64, kind: i32) -> Result<Self, ModelError> {
        use pb::decision_variable::Kind as W;
        Ok(match W::try_from(kind) {
            Ok(W::Binary) => Kind::Binary,
            Ok(W::Integer) => Kind::Integer,
            Ok(W::Continuous) => Kind::Continuous,
            Ok(W::SemiInteger) => Kind::SemiInteger,
            Ok(W::SemiContinuous) => Kind::SemiContinuous,
            Ok(W::Unspecified) | Err(_) => return Err(ModelError::UnknownKind { id, kind }),
        })
    }

    fn is_integral(self) -> bool {
        matches!(self, Kind::Binary | Kind::Integer | Kind::SemiInteger)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Binary => "binary",
            Kind::Integer => "integer",
            Kind::Continuous => "continuous",
            Kind::SemiInteger => "semi-integer",
            Kind::SemiContinuous => "semi-continuous",
        }
    }

    /// The bound OMMX 2.9.3 keeps for a variable of this kind declared with
    /// `[lower, upper]` (already a valid bound), or `None` when it refuses
    /// the pair: integer bounds are rounded inwards with a tolerance of
    /// [`ATOL`]; a semi-integer variable without an integer in its bound is
    /// fixed at 0; a binary one is clamped to [0, 0], [0, 1] or [1, 1].
    fn consistent_bound(self, lower: f64, upper: f64) -> Option<(f64, f64)> {
        match self {
            Kind::Continuous | Kind::SemiContinuous => Some((lower, upper)),
            Kind::Integer => integer_bound(lower, upper),
            Kind::SemiInteger => Some(integer_bound(lower, upper).unwrap_or((0.0, 0.0))),
            Kind::Binary => {
                if lower > 1.0 + ATOL || upper < -ATOL {
                    None
                } else if lower > ATOL {
                    Some((1.0, 1.0))
                } else if upper < 1.0 - ATOL {
                    Some((0.0, 0.0))
                } else {
                    Some((0.0, 1.0))
                }
            }
        }
    }
}

/// Whether OMMX 3.0.0b7 takes `[lower, upper]` as the bound of a variable
/// of `kind`. 3.0 rounds a finite end to the nearest integer when it is
/// within the tolerance of one (inclusive), else inward (ceil, floor), and
/// refuses an integer or binary bound with no integer left (a binary's
/// within [0, 1]); 2.9.3 ([`Kind::consistent_bound`]) moves the ends by the
/// tolerance first and reads any binary bound above it as [1, 1]. So
/// [1e-5, 1e-5], [0.5, 0.5] and [0.5, 0.999999] pass 2.9.3 as a binary and
/// not 3.0 (measured with the package, every pair of 24 values).
pub fn bound_holds_in_ommx30(kind: Kind, lower: f64, upper: f64) -> bool {
    let near = |x: f64| (x - x.round()).abs() <= ATOL;
    let end = |x: f64, inward: fn(f64) -> f64| match x.is_finite() {
        true if near(x) => x.round(),
        true => inward(x),
        false => x,
    };
    let (lower, upper) = (end(lower, f64::ceil), end(upper, f64::floor));
    match kind {
        Kind::Binary => lower.max(0.0) <= upper.min(1.0),
        Kind::Integer => lower <= upper,
        Kind::Continuous | Kind::SemiContinuous | Kind::SemiInteger => true,
    }
}

/// The integers of `[lower, upper]` as a bound, `None` when there are none:
/// finite ends move to `ceil(lower - ATOL)` and `floor(upper + ATOL)`.
fn integer_bound(lower: f64, upper: f64) -> Option<(f64, f64)> {
    let lower = if lower.is_finite() {
        // `+ 0.0` turns the -0.0 that ceil gives for small negatives into 0.0.
        (lower - ATOL).ceil() + 0.0
    } else {
        lower
    };
    let upper = if upper.is_finite() {
        (upper + ATOL).floor()
    } else {
        upper
    };
    (upper >= lower).then_some((lower, upper))
}

/// A decision variable as OMMX holds it. Metadata strings are kept because
/// later analyses (names, families) need them.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionVariable {
    pub id: u64,
    pub kind: Kind,
    pub bound: (f64, f64),
    pub substituted_value: Option<f64>,
    pub name: Option<Name>,
    pub subscripts: Subscripts,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

impl DecisionVariable {
    pub fn from_wire(v: pb::DecisionVariable) -> Result<Self, ModelError> {
        Self::from_fields(v.into())
    }

    /// The variable of `v`'s fields, once OMMX 2.9.3's checks pass.
    pub fn from_fields(v: VariableFields) -> Result<Self, ModelError> {
        let VariableFields {
            id,
            kind,
            bound,
            substituted_value,
            name,
            subscripts,
            parameters,
            description,
        } = v;
        let (kind, bound) = Self::check(id, kind, bound, substituted_value)?;
        Ok(Self {
            id,
            kind,
            bound,
            substituted_value,
            name,
            subscripts,
            parameters,
            description,
        })
    }

    /// OMMX 2.9.3's checks of a variable's kind, bound and substituted
    /// value, with the kind and the bound it keeps.
    pub fn check(
        id: u64,
        kind: i32,
        bound: Option<(f64, f64)>,
        substituted_value: Option<f64>,
    ) -> Result<(Kind, (f64, f64)), ModelError> {
        let kind = Kind::from_wire(id, kind)?;
        // An absent bound reads as the wire default [0, 0].
        let (lower, upper) = bound.unwrap_or((0.0, 0.0));
        // Bound::new in 2.9.3: no NaN, no +inf lower or -inf upper, lower <= upper.
        if lower.is_nan()
            || upper.is_nan()
            || lower == f64::INFINITY
            || upper == f64::NEG_INFINITY
            || lower > upper
        {
            return Err(ModelError::InvalidBound { id, lower, upper });
        }
        let (lower, upper) =
            kind.consistent_bound(lower, upper)
                .ok_or(ModelError::BoundInconsistentToKind {
                    id,
                    kind: kind.name(),
                    lower,
                    upper,
                })?;
        if let Some(value) = substituted_value {
            // Checked against the bound as adjusted to the kind, with OMMX's
            // absolute tolerance. A NaN fails the bound test; an infinite
            // value in an infinite bound passes both (inf - inf is NaN,
            // which is not >= ATOL).
            let in_bound = lower - ATOL <= value && value <= upper + ATOL;
            let gap = (value.round() - value).abs();
            let integral = !kind.is_integral() || gap < ATOL || gap.is_nan();
            if !in_bound || !integral {
                return Err(ModelError::InvalidSubstitutedValue {
                    id,
                    value,
                    lower,
                    upper,
                });
            }
        }
        Ok((kind, (lower, upper)))
    }
}

impl DecisionVariable {
    /// A key that determines every leaf it has (`profile::replay::Tally`),
    /// as a variable counted on the wire has; `None` with parameters.
    pub fn leaf_key(&self) -> Option<u128> {
        if !self.parameters.is_empty() {
            return None;
        }
        VariableLeaves {
            substituted_value: self.substituted_value,
            name: self.name.as_deref(),
            subscripts: self.subscripts.len(),
            parameters: std::iter::empty(),
            description: self.description.as_deref(),
        }
        .key()
    }
}

impl LogicalMemoryProfile for DecisionVariable {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let DecisionVariable {
            id: _,
            kind: _,
            bound: _,
            substituted_value,
            name,
            subscripts,
            parameters,
            description,
        } = self;
        VariableLeaves {
            substituted_value: *substituted_value,
            name: name.as_deref(),
            subscripts: subscripts.len(),
            parameters: parameters.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            description: description.as_deref(),
        }
        .visit_logical_memory(path, visitor);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Equality {
    EqualToZero,
    LessThanOrEqualToZero,
}

impl Equality {
    /// The equality of constraint `id`, refused when unknown or unspecified.
    pub fn from_wire(id: u64, equality: i32) -> Result<Self, ModelError> {
        match pb::Equality::try_from(equality) {
            Ok(pb::Equality::EqualToZero) => Ok(Equality::EqualToZero),
            Ok(pb::Equality::LessThanOrEqualToZero) => Ok(Equality::LessThanOrEqualToZero),
            _ => Err(ModelError::UnknownEquality { id, equality }),
        }
    }
}

/// A constraint as OMMX holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub id: u64,
    pub equality: Equality,
    pub function: Function,
    pub name: Option<Name>,
    pub subscripts: Subscripts,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

impl Constraint {
    pub fn from_wire(c: pb::Constraint) -> Result<Self, ModelError> {
        Self::from_wire_measured(c).map(|(c, _)| c)
    }

    /// [`Constraint::from_wire`], also reporting what normalizing the
    /// function removed from the file's terms.
    pub fn from_wire_measured(mut c: pb::Constraint) -> Result<(Self, FileWaste), ModelError> {
        let function = c.function.take().map(|function| {
            let normalized = Function::from_wire(&function)?;
            let waste = FileWaste::of(&function, &normalized);
            Ok((normalized, waste))
        });
        Self::from_wire_normalized(c.into(), function)
    }

    /// [`Constraint::from_wire_measured`] with the function read elsewhere
    /// (`decode::terms` reads it from the wire): `function` is its
    /// normalization, `None` when the constraint had none. The errors are
    /// reported in the same order.
    pub fn from_wire_normalized(
        c: ConstraintFields,
        function: Option<Result<(Function, FileWaste), ModelError>>,
    ) -> Result<(Self, FileWaste), ModelError> {
        // Waste reaches the instance through the constraint's length prefix.
        let rest = match &function {
            Some(Ok((_, waste))) if waste.bytes > 0 => super::waste::constraint_rest(&c),
            _ => 0,
        };
        let ConstraintFields {
            id,
            equality,
            name,
            subscripts,
            parameters,
            description,
        } = c;
        let equality = Equality::from_wire(id, equality)?;
        let function = function.ok_or_else(|| ModelError::MissingFunction {
            what: format!("constraint {id}"),
        })?;
        let (normalized, waste) = function?;
        let waste = waste.within(rest);
        let constraint = Self {
            id,
            equality,
            function: normalized,
            name,
            subscripts,
            parameters,
            description,
        };
        Ok((constraint, waste))
    }
}

impl Constraint {
    /// A key that determines every leaf it has (`profile::replay::Tally`),
    /// as a constraint counted on the wire has; `None` with parameters.
    pub fn leaf_key(&self) -> Option<u128> {
        if !self.parameters.is_empty() {
            return None;
        }
        ConstraintLeaves {
            function: self.function.shape(),
            name: self.name.as_deref(),
            subscripts: self.subscripts.len(),
            parameters: std::iter::empty(),
            description: self.description.as_deref(),
        }
        .key()
    }
}

impl LogicalMemoryProfile for Constraint {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let Constraint {
            id: _,
            equality: _,
            function,
            name,
            subscripts,
            parameters,
            description,
        } = self;
        ConstraintLeaves {
            function: function.shape(),
            name: name.as_deref(),
            subscripts: subscripts.len(),
            parameters: parameters.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            description: description.as_deref(),
        }
        .visit_logical_memory(path, visitor);
    }
}

/// A constraint taken out of the problem, kept with the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct RemovedConstraint {
    pub constraint: Constraint,
    pub removed_reason: String,
    pub removed_reason_parameters: BTreeMap<String, String>,
}

impl RemovedConstraint {
    pub fn from_wire(r: pb::RemovedConstraint) -> Result<Self, ModelError> {
        Self::from_wire_measured(r).map(|(r, _)| r)
    }

    /// [`RemovedConstraint::from_wire`], also reporting what normalizing the
    /// function removed from the file's terms.
    pub fn from_wire_measured(r: pb::RemovedConstraint) -> Result<(Self, FileWaste), ModelError> {
        let rest = super::waste::removed_rest(&r);
        let pb::RemovedConstraint {
            constraint,
            removed_reason,
            removed_reason_parameters,
        } = r;
        let constraint = constraint.ok_or(ModelError::MissingRemovedConstraint)?;
        let (constraint, waste) = Constraint::from_wire_measured(constraint)?;
        let waste = waste.within(rest);
        let removed = Self {
            constraint,
            removed_reason,
            removed_reason_parameters,
        };
        Ok((removed, waste))
    }
}

impl LogicalMemoryProfile for RemovedConstraint {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let RemovedConstraint {
            constraint,
            removed_reason,
            removed_reason_parameters,
        } = self;
        constraint.visit_logical_memory(&mut path.with("RemovedConstraint.constraint"), visitor);
        string(
            &path.with("RemovedConstraint.removed_reason"),
            visitor,
            removed_reason,
        );
        string_map(
            &mut path.with("RemovedConstraint.removed_reason_parameters"),
            visitor,
            MapKind::FnvHashMap,
            removed_reason_parameters
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
    }
}

/// `decision_variable_dependency`: assignments `x[key] = f(...)` and the
/// dependency graph OMMX builds from them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AcyclicAssignments {
    pub assignments: BTreeMap<u64, Function>,
    pub nodes: usize,
    pub edges: usize,
}

impl LogicalMemoryProfile for AcyclicAssignments {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let AcyclicAssignments {
            assignments,
            nodes,
            edges,
        } = self;
        {
            let mut p = path.with("AcyclicAssignments.assignments");
            leaf(&p.with("FnvHashMap[stack]"), visitor, &FNV_HASHMAP);
            for function in assignments.values() {
                leaf(&p.with("FnvHashMap[key]"), visitor, &SCALAR_8);
                function.visit_logical_memory(&mut p, visitor);
            }
        }
        // The graph: fixed part, then 8 bytes a node and 16 an edge.
        visitor.visit_rule(
            &path.with("AcyclicAssignments.dependency"),
            &DEPENDENCY_GRAPH,
            [*nodes, *edges],
        );
    }
}

/// `Instance.parameters`: absent, or a map of parameter id to value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parameters(pub Option<BTreeMap<u64, f64>>);

impl LogicalMemoryProfile for Parameters {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        match &self.0 {
            None => leaf(&path.with("Option[stack]"), visitor, &PARAMETERS_NONE),
            Some(entries) => scalar_map(
                &mut path.with("Parameters.entries"),
                visitor,
                MapKind::HashMap,
                entries.len(),
            ),
        }
    }
}

/// `Instance.description`: absent, or its optional strings and authors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Description(pub Option<pb::instance::Description>);

impl LogicalMemoryProfile for Description {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let Some(d) = &self.0 else {
            return leaf(&path.with("Option[stack]"), visitor, &DESCRIPTION_NONE);
        };
        let pb::instance::Description {
            name,
            description,
            authors,
            created_by,
            created,
            license,
            dataset,
        } = d;
        let fields = [
            ("Description.name", name),
            ("Description.description", description),
            ("Description.created_by", created_by),
            ("Description.created", created),
            ("Description.license", license),
            ("Description.dataset", dataset),
        ];
        for (frame, value) in fields {
            option_string(&mut path.with(frame), visitor, value.as_deref());
        }
        vec_of_strings(
            &mut path.with("Description.authors"),
            visitor,
            authors.iter().map(String::as_str),
        );
    }
}

/// `Instance.annotations`: user key/value pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations(pub BTreeMap<String, String>);

impl Annotations {
    pub fn from_wire(map: BTreeMap<String, String>) -> Result<Self, ModelError> {
        if let Some(key) = map.keys().find(|k| k.starts_with("org.ommx.v1.")) {
            return Err(ModelError::ReservedAnnotation(key.clone()));
        }
        Ok(Self(map))
    }
}

impl LogicalMemoryProfile for Annotations {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        string_map(
            path,
            visitor,
            MapKind::HashMap,
            self.0.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
    }
}
