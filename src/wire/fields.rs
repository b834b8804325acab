//! OMMX's field numbers, as `proto/ommx/v1` and `proto/ommx/v2` give them:
//! the one table every reader and writer of a field by its number names it
//! from (the pass's wire readers, the framing, the wire view, the benchmark
//! generator). prost's generated types know the same numbers; a test below
//! holds this table to them.

/// Fields shared by every map entry (`map<K, V>` is `repeated Entry { K key
/// = 1; V value = 2; }` on the wire).
pub mod map_entry {
    pub const KEY: u32 = 1;
    pub const VALUE: u32 = 2;
}

/// `ommx.v1.Instance`.
pub mod instance {
    pub const DESCRIPTION: u32 = 1;
    pub const DECISION_VARIABLES: u32 = 2;
    pub const OBJECTIVE: u32 = 3;
    pub const CONSTRAINTS: u32 = 4;
    pub const SENSE: u32 = 5;
    pub const PARAMETERS: u32 = 6;
    pub const CONSTRAINT_HINTS: u32 = 7;
    pub const REMOVED_CONSTRAINTS: u32 = 8;
    pub const DECISION_VARIABLE_DEPENDENCY: u32 = 9;
    pub const NAMED_FUNCTIONS: u32 = 10;
    pub const ANNOTATIONS: u32 = 11;
    pub const FORMAT_VERSION: u32 = 100;

    /// The map fields, which prost (OMMX's decoder) reads as a length
    /// prefix and an entry whatever wire type their key says: its map
    /// decoding does not look at the wire type, so OMMX accepts such a
    /// field where another message field of the wrong wire type is refused.
    pub const MAPS: [u32; 2] = [DECISION_VARIABLE_DEPENDENCY, ANNOTATIONS];
}

/// `ommx.v1.Instance.Description` (3.0 uses it too).
pub mod description {
    pub const NAME: u32 = 1;
    pub const DESCRIPTION: u32 = 2;
    pub const AUTHORS: u32 = 3;
    pub const CREATED_BY: u32 = 4;
    pub const CREATED: u32 = 5;
    pub const LICENSE: u32 = 6;
    pub const DATASET: u32 = 7;
}

/// `ommx.v1.Parameters`.
pub mod parameters {
    pub const ENTRIES: u32 = 1;
}

/// `ommx.v1.DecisionVariable`.
pub mod variable {
    pub const ID: u32 = 1;
    pub const KIND: u32 = 2;
    pub const BOUND: u32 = 3;
    pub const NAME: u32 = 4;
    pub const SUBSCRIPTS: u32 = 5;
    pub const PARAMETERS: u32 = 6;
    pub const DESCRIPTION: u32 = 7;
    pub const SUBSTITUTED_VALUE: u32 = 8;
}

/// `ommx.v1.Bound`.
pub mod bound {
    pub const LOWER: u32 = 1;
    pub const UPPER: u32 = 2;
}

/// `ommx.v1.Constraint`.
pub mod constraint {
    pub const ID: u32 = 1;
    pub const EQUALITY: u32 = 2;
    pub const FUNCTION: u32 = 3;
    pub const PARAMETERS: u32 = 5;
    pub const NAME: u32 = 6;
    pub const DESCRIPTION: u32 = 7;
    pub const SUBSCRIPTS: u32 = 8;
}

/// `ommx.v1.RemovedConstraint`.
pub mod removed_constraint {
    pub const CONSTRAINT: u32 = 1;
    pub const REMOVED_REASON: u32 = 2;
    pub const REMOVED_REASON_PARAMETERS: u32 = 3;
}

/// `ommx.v1.NamedFunction`.
pub mod named_function {
    pub const ID: u32 = 1;
    pub const FUNCTION: u32 = 2;
    pub const SUBSCRIPTS: u32 = 3;
    pub const PARAMETERS: u32 = 4;
    pub const NAME: u32 = 5;
    pub const DESCRIPTION: u32 = 6;
}

/// `ommx.v1.ConstraintHints`.
pub mod hints {
    pub const ONE_HOT_CONSTRAINTS: u32 = 2;
    pub const SOS1_CONSTRAINTS: u32 = 3;
}

/// `ommx.v1.OneHot`.
pub mod one_hot {
    pub const CONSTRAINT_ID: u32 = 1;
    pub const DECISION_VARIABLES: u32 = 2;
}

/// `ommx.v1.SOS1`.
pub mod sos1 {
    pub const BINARY_CONSTRAINT_ID: u32 = 1;
    pub const BIG_M_CONSTRAINT_IDS: u32 = 2;
    pub const DECISION_VARIABLES: u32 = 3;
}

/// `ommx.v1.Function`: its `oneof` arms.
pub mod function {
    pub const CONSTANT: u32 = 1;
    pub const LINEAR: u32 = 2;
    pub const QUADRATIC: u32 = 3;
    pub const POLYNOMIAL: u32 = 4;
    pub const EXPRESSION: u32 = 5;
}

/// `ommx.v1.Linear`.
pub mod linear {
    pub const TERMS: u32 = 1;
    pub const CONSTANT: u32 = 2;
}

/// `ommx.v1.LinearTerm`.
pub mod linear_term {
    pub const ID: u32 = 1;
    pub const COEFFICIENT: u32 = 2;
}

/// `ommx.v1.Quadratic`.
pub mod quadratic {
    pub const ROWS: u32 = 1;
    pub const COLUMNS: u32 = 2;
    pub const VALUES: u32 = 3;
    pub const LINEAR: u32 = 4;
}

/// `ommx.v1.Polynomial`.
pub mod polynomial {
    pub const TERMS: u32 = 1;
}

/// `ommx.v1.Monomial`.
pub mod monomial {
    pub const IDS: u32 = 1;
    pub const COEFFICIENT: u32 = 2;
}

/// OMMX 3.0's `ommx.v2` messages.
pub mod v2 {
    /// `ommx.v2.Instance`.
    pub mod instance {
        pub const REQUIRED_FEATURES: u32 = 1;
        pub const DESCRIPTION: u32 = 2;
        pub const DECISION_VARIABLES: u32 = 3;
        pub const OBJECTIVE: u32 = 4;
        pub const REGULAR_CONSTRAINTS: u32 = 5;
        pub const SENSE: u32 = 6;
        pub const PARAMETERS: u32 = 7;
        pub const INDICATOR_CONSTRAINTS: u32 = 8;
        pub const ONE_HOT_CONSTRAINTS: u32 = 9;
        pub const SOS1_CONSTRAINTS: u32 = 10;
        pub const DECISION_VARIABLE_DEPENDENCY: u32 = 11;
        pub const NAMED_FUNCTIONS: u32 = 12;
        pub const ANNOTATIONS: u32 = 13;
        pub const OUTPUT_OBJECTIVE: u32 = 14;

        /// The map fields, read whatever wire type their key says (as
        /// [`super::super::instance::MAPS`]).
        pub const MAPS: [u32; 2] = [DECISION_VARIABLE_DEPENDENCY, ANNOTATIONS];
    }

    /// `ommx.v2.ModelingLabel`.
    pub mod label {
        pub const NAME: u32 = 1;
        pub const SUBSCRIPTS: u32 = 2;
        pub const PARAMETERS: u32 = 3;
        pub const DESCRIPTION: u32 = 4;
    }

    /// `ommx.v2.Provenance`: its `oneof` of constraint ids.
    pub mod provenance {
        pub const INDICATOR_CONSTRAINT_ID: u32 = 1;
        pub const ONE_HOT_CONSTRAINT_ID: u32 = 2;
        pub const SOS1_CONSTRAINT_ID: u32 = 3;
    }

    /// `ommx.v2.ConstraintContext`.
    pub mod context {
        pub const LABEL: u32 = 1;
        pub const PROVENANCE: u32 = 2;
    }

    /// `ommx.v2.RemovedReason`.
    pub mod removed_reason {
        pub const REASON: u32 = 1;
        pub const PARAMETERS: u32 = 2;
    }

    /// `ommx.v2.RegularConstraint`.
    pub mod regular {
        pub const EQUALITY: u32 = 1;
        pub const FUNCTION: u32 = 2;
    }

    /// `ommx.v2.IndicatorConstraint`.
    pub mod indicator {
        pub const INDICATOR_VARIABLE: u32 = 1;
        pub const EQUALITY: u32 = 2;
        pub const FUNCTION: u32 = 3;
    }

    /// `ommx.v2.OneHotConstraint` and `ommx.v2.Sos1Constraint`.
    pub mod variables_only {
        pub const VARIABLES: u32 = 1;
    }

    /// Every constraint collection (`RegularConstraintCollection`, ...).
    pub mod collection {
        pub const ACTIVE: u32 = 1;
        pub const REMOVED: u32 = 2;
        pub const REMOVED_REASONS: u32 = 3;
        pub const CONTEXTS: u32 = 4;
    }

    /// `ommx.v2.DecisionVariable`.
    pub mod variable {
        pub const KIND: u32 = 1;
        pub const BOUND: u32 = 2;
    }

    /// `ommx.v2.DecisionVariableTable`.
    pub mod variable_table {
        pub const ENTRIES: u32 = 1;
        pub const LABELS: u32 = 2;
        pub const FIXED_VALUES: u32 = 3;
    }

    /// `ommx.v2.NamedFunction`.
    pub mod named_function {
        pub const FUNCTION: u32 = 1;
    }

    /// `ommx.v2.NamedFunctionTable`.
    pub mod named_function_table {
        pub const ENTRIES: u32 = 1;
        pub const LABELS: u32 = 2;
    }

    /// `ommx.v2.OutputObjective`.
    pub mod output_objective {
        pub const SENSE: u32 = 1;
        pub const FUNCTION: u32 = 2;
        pub const PRESERVES_OPTIMALITY: u32 = 3;
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::ommx_v1 as pb;

    /// The field a message holding only `field`'s value encodes to starts
    /// with the key of `number`: the table and prost's schema agree.
    fn starts_with_field(bytes: Vec<u8>, number: u32) {
        let mut pos = 0;
        let raw = crate::wire::varint(&bytes, &mut pos).expect("a key");
        assert_eq!(raw >> 3, u64::from(number), "{bytes:02x?}");
    }

    #[test]
    fn the_table_agrees_with_the_schema_prost_compiled() {
        let instance = |f: fn(&mut pb::Instance)| {
            let mut i = pb::Instance::default();
            f(&mut i);
            i.encode_to_vec()
        };
        starts_with_field(
            instance(|i| i.decision_variables.push(Default::default())),
            instance::DECISION_VARIABLES,
        );
        starts_with_field(
            instance(|i| i.objective = Some(Default::default())),
            instance::OBJECTIVE,
        );
        starts_with_field(
            instance(|i| i.constraints.push(Default::default())),
            instance::CONSTRAINTS,
        );
        starts_with_field(instance(|i| i.sense = 1), instance::SENSE);
        starts_with_field(
            instance(|i| i.removed_constraints.push(Default::default())),
            instance::REMOVED_CONSTRAINTS,
        );
        starts_with_field(
            instance(|i| i.named_functions.push(Default::default())),
            instance::NAMED_FUNCTIONS,
        );
        starts_with_field(instance(|i| i.format_version = 1), instance::FORMAT_VERSION);
        let variable = |f: fn(&mut pb::DecisionVariable)| {
            let mut v = pb::DecisionVariable::default();
            f(&mut v);
            v.encode_to_vec()
        };
        starts_with_field(variable(|v| v.id = 1), variable::ID);
        starts_with_field(variable(|v| v.kind = 1), variable::KIND);
        starts_with_field(
            variable(|v| v.bound = Some(Default::default())),
            variable::BOUND,
        );
        starts_with_field(variable(|v| v.name = Some("x".into())), variable::NAME);
        starts_with_field(variable(|v| v.subscripts = vec![1]), variable::SUBSCRIPTS);
        starts_with_field(
            variable(|v| v.description = Some("d".into())),
            variable::DESCRIPTION,
        );
        starts_with_field(
            variable(|v| v.substituted_value = Some(1.0)),
            variable::SUBSTITUTED_VALUE,
        );
        let constraint = |f: fn(&mut pb::Constraint)| {
            let mut c = pb::Constraint::default();
            f(&mut c);
            c.encode_to_vec()
        };
        starts_with_field(constraint(|c| c.id = 1), constraint::ID);
        starts_with_field(constraint(|c| c.equality = 1), constraint::EQUALITY);
        starts_with_field(
            constraint(|c| c.function = Some(Default::default())),
            constraint::FUNCTION,
        );
        starts_with_field(constraint(|c| c.name = Some("c".into())), constraint::NAME);
        starts_with_field(
            constraint(|c| c.description = Some("d".into())),
            constraint::DESCRIPTION,
        );
        starts_with_field(
            constraint(|c| c.subscripts = vec![1]),
            constraint::SUBSCRIPTS,
        );
        use pb::function::Function as Arm;
        let arm = |a: Arm| pb::Function { function: Some(a) }.encode_to_vec();
        starts_with_field(arm(Arm::Constant(1.0)), function::CONSTANT);
        starts_with_field(arm(Arm::Linear(Default::default())), function::LINEAR);
        starts_with_field(arm(Arm::Quadratic(Default::default())), function::QUADRATIC);
        starts_with_field(
            arm(Arm::Polynomial(Default::default())),
            function::POLYNOMIAL,
        );
        starts_with_field(
            pb::Linear {
                terms: vec![pb::LinearTerm {
                    id: 1,
                    coefficient: 1.0,
                }],
                constant: 0.0,
            }
            .encode_to_vec(),
            linear::TERMS,
        );
        starts_with_field(
            pb::Linear {
                terms: vec![],
                constant: 1.0,
            }
            .encode_to_vec(),
            linear::CONSTANT,
        );
        starts_with_field(
            pb::LinearTerm {
                id: 1,
                coefficient: 0.0,
            }
            .encode_to_vec(),
            linear_term::ID,
        );
        starts_with_field(
            pb::LinearTerm {
                id: 0,
                coefficient: 1.0,
            }
            .encode_to_vec(),
            linear_term::COEFFICIENT,
        );
        let quadratic = |f: fn(&mut pb::Quadratic)| {
            let mut q = pb::Quadratic::default();
            f(&mut q);
            q.encode_to_vec()
        };
        starts_with_field(quadratic(|q| q.rows = vec![1]), quadratic::ROWS);
        starts_with_field(quadratic(|q| q.columns = vec![1]), quadratic::COLUMNS);
        starts_with_field(quadratic(|q| q.values = vec![1.0]), quadratic::VALUES);
        starts_with_field(
            quadratic(|q| q.linear = Some(Default::default())),
            quadratic::LINEAR,
        );
        starts_with_field(
            pb::Monomial {
                ids: vec![1],
                coefficient: 0.0,
            }
            .encode_to_vec(),
            monomial::IDS,
        );
        starts_with_field(
            pb::Monomial {
                ids: vec![],
                coefficient: 1.0,
            }
            .encode_to_vec(),
            monomial::COEFFICIENT,
        );
        starts_with_field(
            pb::Bound {
                lower: 1.0,
                upper: 0.0,
            }
            .encode_to_vec(),
            bound::LOWER,
        );
        starts_with_field(
            pb::Bound {
                lower: 0.0,
                upper: 1.0,
            }
            .encode_to_vec(),
            bound::UPPER,
        );
    }
}
