//! The wire view of an `ommx.v2.Instance`: its encoded bytes per path of
//! OMMX 3.0's in-memory profile (a constraint's terms to
//! `Instance.constraint_collection;constraints;Constraint.stage;CreatedData.function;Linear;PolynomialBase.terms`,
//! a variable's name to `...;DecisionVariableTable.labels;ModelingLabelStore.name`),
//! with the same `Wire[...]` frames as v1's. What has no in-memory
//! counterpart keeps the message's shape: a table entry's key sits under
//! its map (`...;DecisionVariableTable.labels;FnvHashMap[key];VariableID.0`:
//! one key for all of a label's fields), a removed reason's key under
//! `Tuple.1`, and `Instance.required_features` has a path of its own.

use super::Shape::{Constant, Entry, Message, Payload};
use super::{
    visit_message, Families, Schema, Table, Walk, BOUND_V2, DESCRIPTION, FNV_STRING_ENTRY,
    HASH_ENTRY,
};
use crate::profile::{LogicalMemoryVisitor, Path};

const TERMS: &str = "PolynomialBase.terms";

// The function's sub-messages are v1's: 3.0 reads them alike.
use super::{LINEAR, POLYNOMIAL, QUADRATIC};

/// A function as 3.0 reads it: v1's arms and the expression (a program).
static FUNCTION: Schema = Schema {
    fields: &[
        (1, &[], Constant),
        (2, &["Linear", TERMS], Message(&LINEAR)),
        (3, &["Quadratic", TERMS], Message(&QUADRATIC)),
        (4, &["Polynomial", TERMS], Message(&POLYNOMIAL)),
        (5, &["Expression"], Payload),
    ],
};

static LABEL: Schema = Schema {
    fields: &[
        (1, &["ModelingLabelStore.name"], Payload),
        (2, &["ModelingLabelStore.subscripts"], Payload),
        (
            3,
            &["ModelingLabelStore.parameters"],
            Message(&FNV_STRING_ENTRY),
        ),
        (4, &["ModelingLabelStore.description"], Payload),
    ],
};
static REASON: Schema = Schema {
    fields: &[
        (1, &["RemovedReason.reason"], Payload),
        (2, &["RemovedReason.parameters"], Message(&FNV_STRING_ENTRY)),
    ],
};
static CONTEXT: Schema = Schema {
    fields: &[
        (1, &["ConstraintContextStore.labels"], Message(&LABEL)),
        (2, &["ConstraintContextStore.provenance"], Payload),
    ],
};

/// The rows of each collection.
static REGULAR_ROW: Schema = Schema {
    fields: &[
        (1, &["Constraint.equality"], Payload),
        (
            2,
            &["Constraint.stage", "CreatedData.function"],
            Message(&FUNCTION),
        ),
    ],
};
static INDICATOR_ROW: Schema = Schema {
    fields: &[
        (
            1,
            &["IndicatorConstraint.indicator_variable", "VariableID.0"],
            Payload,
        ),
        (2, &["IndicatorConstraint.equality"], Payload),
        (
            3,
            &["IndicatorConstraint.stage", "CreatedData.function"],
            Message(&FUNCTION),
        ),
    ],
};
static ONE_HOT_ROW: Schema = Schema {
    fields: &[(1, &["OneHotConstraint.variables", "VariableID.0"], Payload)],
};
static SOS1_ROW: Schema = Schema {
    fields: &[(1, &["Sos1Constraint.variables", "VariableID.0"], Payload)],
};

/// A constraint collection's four maps, keyed by `$id`, under the frames
/// 3.0's profile uses.
macro_rules! collection {
    ($name:ident, $table:expr, $row:path, $id:literal, $active:literal, $removed:literal) => {
        static $name: Schema = {
            const KEY: &[&str] = &["BTreeMap[key]", $id];
            static ACTIVE: Schema = Schema {
                fields: &[(1, KEY, Payload), (2, &[], Message(&$row))],
            };
            static REMOVED: Schema = Schema {
                fields: &[(1, KEY, Payload), (2, &["Tuple.0"], Message(&$row))],
            };
            static REASONS: Schema = Schema {
                fields: &[(1, KEY, Payload), (2, &[], Message(&REASON))],
            };
            static CONTEXTS: Schema = Schema {
                fields: &[
                    (1, &["FnvHashMap[key]", $id], Payload),
                    (2, &[], Message(&CONTEXT)),
                ],
            };
            Schema {
                fields: &[
                    (1, &[$active], Entry(&ACTIVE, $table)),
                    (2, &[$removed], Entry(&REMOVED, $table)),
                    (3, &[$removed, "Tuple.1"], Entry(&REASONS, $table)),
                    (4, &["context"], Entry(&CONTEXTS, $table)),
                ],
            }
        };
    };
}

collection!(
    REGULAR,
    Table::Regular,
    REGULAR_ROW,
    "ConstraintID.0",
    "constraints",
    "removed_constraints"
);
collection!(
    INDICATOR,
    Table::Indicator,
    INDICATOR_ROW,
    "IndicatorConstraintID.0",
    "indicator_constraints",
    "removed_indicator_constraints"
);
collection!(
    ONE_HOT,
    Table::OneHot,
    ONE_HOT_ROW,
    "OneHotConstraintID.0",
    "one_hot_constraints",
    "removed_one_hot_constraints"
);
collection!(
    SOS1,
    Table::Sos1,
    SOS1_ROW,
    "Sos1ConstraintID.0",
    "sos1_constraints",
    "removed_sos1_constraints"
);

static VARIABLE: Schema = Schema {
    fields: &[
        (1, &["DecisionVariable.kind"], Payload),
        (2, &["DecisionVariable.bound"], Message(&BOUND_V2)),
    ],
};
static VARIABLE_ENTRY: Schema = Schema {
    fields: &[
        (1, &["BTreeMap[key]", "VariableID.0"], Payload),
        (2, &[], Message(&VARIABLE)),
    ],
};
static VARIABLE_LABEL: Schema = Schema {
    fields: &[
        (1, &["FnvHashMap[key]", "VariableID.0"], Payload),
        (2, &[], Message(&LABEL)),
    ],
};
static FIXED_VALUE: Schema = Schema {
    fields: &[
        (1, &["BTreeMap[key]", "VariableID.0"], Payload),
        (2, &[], Payload),
    ],
};
static VARIABLES: Schema = Schema {
    fields: &[
        (
            1,
            &["DecisionVariableTable.entries"],
            Entry(&VARIABLE_ENTRY, Table::Variables),
        ),
        (
            2,
            &["DecisionVariableTable.labels"],
            Entry(&VARIABLE_LABEL, Table::Variables),
        ),
        (
            3,
            &[
                "DecisionVariableTable.columns",
                "CreatedDecisionVariableColumns.fixed_values",
            ],
            Entry(&FIXED_VALUE, Table::Variables),
        ),
    ],
};

static NAMED_FUNCTION: Schema = Schema {
    fields: &[(1, &["NamedFunction.function"], Message(&FUNCTION))],
};
static NAMED_ENTRY: Schema = Schema {
    fields: &[
        (1, &["BTreeMap[key]", "NamedFunctionID.0"], Payload),
        (2, &[], Message(&NAMED_FUNCTION)),
    ],
};
static NAMED_LABEL: Schema = Schema {
    fields: &[
        (1, &["FnvHashMap[key]", "NamedFunctionID.0"], Payload),
        (2, &[], Message(&LABEL)),
    ],
};
static NAMED_FUNCTIONS: Schema = Schema {
    fields: &[
        (
            1,
            &["NamedFunctionTable.entries"],
            Entry(&NAMED_ENTRY, Table::NamedFunctions),
        ),
        (
            2,
            &["NamedFunctionTable.labels"],
            Entry(&NAMED_LABEL, Table::NamedFunctions),
        ),
    ],
};

static ASSIGNMENT: Schema = Schema {
    fields: &[
        (1, &["FnvHashMap[key]", "VariableID.0"], Payload),
        (2, &[], Message(&FUNCTION)),
    ],
};
static PARAMETERS: Schema = Schema {
    fields: &[(1, &["Parameters.entries"], Message(&HASH_ENTRY))],
};
static OUTPUT_OBJECTIVE: Schema = Schema {
    fields: &[
        (1, &["OutputObjective.sense"], Payload),
        (2, &["OutputObjective.function"], Message(&FUNCTION)),
        (3, &["OutputObjective.preserves_optimality"], Payload),
    ],
};

/// `ommx.v2.Instance`'s fields.
static INSTANCE: Schema = Schema {
    fields: &[
        (1, &["Instance.required_features"], Payload),
        (2, &["Instance.description"], Message(&DESCRIPTION)),
        (3, &["Instance.decision_variables"], Message(&VARIABLES)),
        (4, &["Instance.objective"], Message(&FUNCTION)),
        (5, &["Instance.constraint_collection"], Message(&REGULAR)),
        (6, &["Instance.sense"], Payload),
        (7, &["Instance.parameters"], Message(&PARAMETERS)),
        (
            8,
            &["Instance.indicator_constraint_collection"],
            Message(&INDICATOR),
        ),
        (
            9,
            &["Instance.one_hot_constraint_collection"],
            Message(&ONE_HOT),
        ),
        (10, &["Instance.sos1_constraint_collection"], Message(&SOS1)),
        (
            11,
            &[
                "Instance.decision_variable_dependency",
                "AcyclicAssignments.assignments",
            ],
            Message(&ASSIGNMENT),
        ),
        (12, &["Instance.named_functions"], Message(&NAMED_FUNCTIONS)),
        (13, &["Instance.annotations"], Message(&HASH_ENTRY)),
        (
            14,
            &["Instance.output_objective"],
            Message(&OUTPUT_OBJECTIVE),
        ),
    ],
};

/// Attributes every byte of an `ommx.v2.Instance` payload to a path below
/// `path`: fields the schema does not know to `Wire[unknown fields]`. With
/// `families` (`--group-by name`), each entity's entries go under its family
/// frame right under the container, as its logical bytes do.
pub fn visit_instance<V: LogicalMemoryVisitor>(
    payload: &[u8],
    families: Option<Families<'_>>,
    path: &mut Path,
    visitor: &mut V,
) {
    let walk = Walk {
        families,
        base: path.frames().len(),
    };
    visit_message(&INSTANCE, payload, path, visitor, 0, walk);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Aggregate;

    #[test]
    fn every_byte_of_every_v2_fixture_lands_in_one_leaf() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/v2");
        let mut checked = 0;
        for dir in ["oracle", "from_v1"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_none_or(|e| e != "pb") {
                    continue;
                }
                let bytes = std::fs::read(&path).unwrap();
                let mut wire = Aggregate::new();
                visit_instance(&bytes, None, &mut Path::new(), &mut wire);
                let lines = wire.folded_lines();
                let total: u64 = lines.iter().map(|l| l.1).sum();
                assert_eq!(total, bytes.len() as u64, "{}", path.display());
                // Our schema knows every field 3.0 writes.
                assert!(
                    lines.iter().all(|l| !l.0.contains("unknown")),
                    "{}",
                    path.display()
                );
                checked += 1;
            }
        }
        assert!(checked >= 60, "{checked}");
    }
}
