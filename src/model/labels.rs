//! What labels cost in OMMX 2.9.3, for `advise`: an entity's name,
//! subscripts, parameters and description, a removed constraint's reason
//! and its parameters, the instance's description and annotations; and what
//! the same fields cost left empty (an absent name still takes its 24-byte
//! `Option<String>`). Both are sums of the leaves the profile itself visits,
//! so they cannot disagree with it.

use std::sync::LazyLock;

use crate::profile::collections::STRING;
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Path};

use super::entities::{Annotations, Constraint, DecisionVariable, Description, RemovedConstraint};
use super::function::Shape;
use super::leaves::{ConstraintLeaves, NoParameters, VariableLeaves};

/// What some labels cost, and what they would cost empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LabelBytes {
    pub bytes: u64,
    pub empty: u64,
}

impl LabelBytes {
    /// What leaving every label out (each field kept, empty) would save.
    pub fn content(&self) -> u64 {
        self.bytes - self.empty
    }
}

/// The frames that hold labels, under an entity's own frame.
const LABEL_FRAMES: [&str; 7] = [
    "DecisionVariable.metadata",
    "Constraint.name",
    "Constraint.subscripts",
    "Constraint.parameters",
    "Constraint.description",
    "RemovedConstraint.removed_reason",
    "RemovedConstraint.removed_reason_parameters",
];

/// Sums the leaves under a label frame.
#[derive(Default)]
struct LabelLeaves(u64);

impl LogicalMemoryVisitor for LabelLeaves {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        if path
            .frames()
            .iter()
            .any(|f| LABEL_FRAMES.contains(&f.as_ref()))
        {
            self.0 += bytes as u64;
        }
    }
}

/// Sums every leaf.
#[derive(Default)]
struct AllLeaves(u64);

impl LogicalMemoryVisitor for AllLeaves {
    fn visit_leaf(&mut self, _path: &Path, bytes: usize) {
        self.0 += bytes as u64;
    }
}

fn labels_of<T: LogicalMemoryProfile>(value: &T) -> u64 {
    let mut sum = LabelLeaves::default();
    value.visit_logical_memory(&mut Path::new(), &mut sum);
    sum.0
}

/// Logical bytes of `value`, every leaf summed.
pub fn logical_bytes<T: LogicalMemoryProfile>(value: &T) -> u64 {
    let mut sum = AllLeaves::default();
    value.visit_logical_memory(&mut Path::new(), &mut sum);
    sum.0
}

static EMPTY_VARIABLE: LazyLock<u64> = LazyLock::new(|| {
    labels_of(&VariableLeaves {
        substituted_value: None,
        name: None,
        subscripts: 0,
        parameters: NoParameters::default(),
        description: None,
    })
});

static EMPTY_CONSTRAINT: LazyLock<u64> = LazyLock::new(|| {
    labels_of(&ConstraintLeaves {
        function: super::Function::Zero.shape(),
        name: None,
        subscripts: 0,
        parameters: NoParameters::default(),
        description: None,
    })
});

/// A removed constraint's reason and reason parameters, both empty.
static EMPTY_REASON: LazyLock<u64> = LazyLock::new(|| {
    let removed = RemovedConstraint {
        constraint: empty_constraint(),
        removed_reason: String::new(),
        removed_reason_parameters: Default::default(),
    };
    labels_of(&removed) - *EMPTY_CONSTRAINT
});

fn empty_constraint() -> Constraint {
    Constraint {
        id: 0,
        equality: super::Equality::EqualToZero,
        function: super::Function::Zero,
        name: None,
        subscripts: Default::default(),
        parameters: Default::default(),
        description: None,
    }
}

pub fn variable(v: &DecisionVariable) -> LabelBytes {
    LabelBytes {
        bytes: labels_of(v),
        empty: *EMPTY_VARIABLE,
    }
}

pub fn constraint(c: &Constraint) -> LabelBytes {
    LabelBytes {
        bytes: labels_of(c),
        empty: *EMPTY_CONSTRAINT,
    }
}

pub fn removed(r: &RemovedConstraint) -> LabelBytes {
    LabelBytes {
        bytes: labels_of(r),
        empty: *EMPTY_CONSTRAINT + *EMPTY_REASON,
    }
}

/// [`variable`] and [`constraint`] of the entity of each kind seen last,
/// by its leaf key (which determines every leaf, the labels' included):
/// the entities of a kind mostly share it, and then share their labels'
/// bytes.
#[derive(Debug, Clone, Default)]
pub struct Remembered {
    variable: Option<(u128, LabelBytes)>,
    constraint: Option<(u128, LabelBytes)>,
}

impl Remembered {
    pub fn variable(&mut self, v: &DecisionVariable) -> LabelBytes {
        remembered(&mut self.variable, v.leaf_key(), || variable(v))
    }

    pub fn constraint(&mut self, c: &Constraint) -> LabelBytes {
        remembered(&mut self.constraint, c.leaf_key(), || constraint(c))
    }
}

fn remembered(
    last: &mut Option<(u128, LabelBytes)>,
    key: Option<u128>,
    labels: impl FnOnce() -> LabelBytes,
) -> LabelBytes {
    match (key, *last) {
        (Some(key), Some((seen, bytes))) if key == seen => bytes,
        (Some(key), _) => {
            let bytes = labels();
            *last = Some((key, bytes));
            bytes
        }
        (None, _) => labels(),
    }
}

/// The instance's description and annotations.
pub fn instance(description: &Description, annotations: &Annotations) -> LabelBytes {
    LabelBytes {
        bytes: logical_bytes(description) + logical_bytes(annotations),
        empty: logical_bytes(&Description(None)) + logical_bytes(&Annotations(Default::default())),
    }
}

/// What a `String` of `len` bytes costs (a name, a parameter's key).
pub fn string(len: usize) -> u64 {
    STRING.bytes([len, 0]) as u64
}

/// What a function of `shape` costs (for a variant it is not stored in).
pub fn function(shape: Shape) -> u64 {
    shape.bytes() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Equality, Function, Kind};
    use std::collections::BTreeMap;

    /// Remembered by key, the labels are those of each entity itself:
    /// the same key again, another key, none (parameters).
    #[test]
    fn remembered_labels_are_each_entitys_own() {
        let v = |name: &str, subscripts: Vec<i64>, parameters: &[(&str, &str)]| DecisionVariable {
            id: 1,
            kind: Kind::Binary,
            bound: (0.0, 1.0),
            substituted_value: None,
            name: Some(name.into()),
            subscripts: subscripts.into(),
            parameters: parameters
                .iter()
                .map(|&(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            description: None,
        };
        let mut remembered = Remembered::default();
        for v in [
            v("x", vec![1], &[]),
            v("y", vec![2], &[]),
            v("long", vec![1, 2], &[]),
            v("x", vec![1], &[("k", "value")]),
            v("x", vec![1], &[("k", "other value")]),
            v("z", vec![3], &[]),
        ] {
            assert_eq!(remembered.variable(&v), variable(&v));
        }
        let c = |name: Option<&str>, function| Constraint {
            name: name.map(Into::into),
            function,
            ..empty_constraint()
        };
        for c in [
            c(Some("c"), Function::Zero),
            c(Some("d"), Function::Zero),
            c(None, Function::Constant(1.0)),
            c(Some("longer"), Function::Zero),
        ] {
            assert_eq!(remembered.constraint(&c), constraint(&c));
        }
    }

    #[test]
    fn labels_and_their_empty_fields() {
        let parameters: BTreeMap<String, String> = [("k".to_string(), "value".to_string())].into();
        let v = DecisionVariable {
            id: 1,
            kind: Kind::Binary,
            bound: (0.0, 1.0),
            substituted_value: None,
            name: Some("x".into()),
            subscripts: [1, 2].into(),
            parameters: parameters.clone(),
            description: None,
        };
        // 25 name + 40 subscripts + (32 + 24 + 1 + 24 + 5) parameters + 24,
        // of which an empty name, subscripts, parameters, description keep
        // 24 + 24 + 32 + 24.
        assert_eq!(
            variable(&v),
            LabelBytes {
                bytes: 175,
                empty: 104
            }
        );
        let r = RemovedConstraint {
            constraint: Constraint {
                id: 2,
                equality: Equality::EqualToZero,
                function: Function::Zero,
                description: Some("why".into()),
                ..empty_constraint()
            },
            removed_reason: "relaxed".into(),
            removed_reason_parameters: parameters,
        };
        // "why" 3, "relaxed" 7, one parameter entry 48 + 1 + 5; empty: the
        // constraint's 104, the reason's 24 and its parameters' 32.
        assert_eq!(removed(&r).content(), 3 + 7 + 54);
        assert_eq!(removed(&r).empty, 104 + 24 + 32);
        let none = instance(&Description(None), &Annotations(Default::default()));
        assert_eq!(
            none,
            LabelBytes {
                bytes: 168 + 48,
                empty: 168 + 48
            }
        );
        assert_eq!(string(5), 29);
    }
}
