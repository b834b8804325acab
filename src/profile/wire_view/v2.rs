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
    visit_message, with_frames, Families, Schema, Table, Walk, BOUND_V2, DESCRIPTION,
    FNV_STRING_ENTRY, HASH_ENTRY, LENGTH, TAG,
};
use crate::profile::{LogicalMemoryVisitor, Path};
use crate::wire::fields::{function, map_entry, parameters, v2};

const TERMS: &str = "PolynomialBase.terms";

// The function's sub-messages are v1's: 3.0 reads them alike.
use super::{LINEAR, POLYNOMIAL, QUADRATIC};

/// A function as 3.0 reads it: v1's arms and the expression (a program).
static FUNCTION: Schema = Schema {
    fields: &[
        (function::CONSTANT, &[], Constant),
        (function::LINEAR, &["Linear", TERMS], Message(&LINEAR)),
        (
            function::QUADRATIC,
            &["Quadratic", TERMS],
            Message(&QUADRATIC),
        ),
        (
            function::POLYNOMIAL,
            &["Polynomial", TERMS],
            Message(&POLYNOMIAL),
        ),
        (function::EXPRESSION, &["Expression"], Payload),
    ],
};

static LABEL: Schema = Schema {
    fields: &[
        (v2::label::NAME, &["ModelingLabelStore.name"], Payload),
        (
            v2::label::SUBSCRIPTS,
            &["ModelingLabelStore.subscripts"],
            Payload,
        ),
        (
            v2::label::PARAMETERS,
            &["ModelingLabelStore.parameters"],
            Message(&FNV_STRING_ENTRY),
        ),
        (
            v2::label::DESCRIPTION,
            &["ModelingLabelStore.description"],
            Payload,
        ),
    ],
};
static REASON: Schema = Schema {
    fields: &[
        (
            v2::removed_reason::REASON,
            &["RemovedReason.reason"],
            Payload,
        ),
        (
            v2::removed_reason::PARAMETERS,
            &["RemovedReason.parameters"],
            Message(&FNV_STRING_ENTRY),
        ),
    ],
};
static CONTEXT: Schema = Schema {
    fields: &[
        (
            v2::context::LABEL,
            &["ConstraintContextStore.labels"],
            Message(&LABEL),
        ),
        (
            v2::context::PROVENANCE,
            &["ConstraintContextStore.provenance"],
            Payload,
        ),
    ],
};

/// The rows of each collection.
static REGULAR_ROW: Schema = Schema {
    fields: &[
        (v2::regular::EQUALITY, &["Constraint.equality"], Payload),
        (
            v2::regular::FUNCTION,
            &["Constraint.stage", "CreatedData.function"],
            Message(&FUNCTION),
        ),
    ],
};
static INDICATOR_ROW: Schema = Schema {
    fields: &[
        (
            v2::indicator::INDICATOR_VARIABLE,
            &["IndicatorConstraint.indicator_variable", "VariableID.0"],
            Payload,
        ),
        (
            v2::indicator::EQUALITY,
            &["IndicatorConstraint.equality"],
            Payload,
        ),
        (
            v2::indicator::FUNCTION,
            &["IndicatorConstraint.stage", "CreatedData.function"],
            Message(&FUNCTION),
        ),
    ],
};
static ONE_HOT_ROW: Schema = Schema {
    fields: &[(
        v2::variables_only::VARIABLES,
        &["OneHotConstraint.variables", "VariableID.0"],
        Payload,
    )],
};
static SOS1_ROW: Schema = Schema {
    fields: &[(
        v2::variables_only::VARIABLES,
        &["Sos1Constraint.variables", "VariableID.0"],
        Payload,
    )],
};

/// A constraint collection's four maps, keyed by `$id`, under the frames
/// 3.0's profile uses.
macro_rules! collection {
    ($name:ident, $table:expr, $row:path, $id:literal, $active:literal, $removed:literal) => {
        static $name: Schema = {
            const KEY: &[&str] = &["BTreeMap[key]", $id];
            static ACTIVE: Schema = Schema {
                fields: &[
                    (map_entry::KEY, KEY, Payload),
                    (map_entry::VALUE, &[], Message(&$row)),
                ],
            };
            static REMOVED: Schema = Schema {
                fields: &[
                    (map_entry::KEY, KEY, Payload),
                    (map_entry::VALUE, &["Tuple.0"], Message(&$row)),
                ],
            };
            static REASONS: Schema = Schema {
                fields: &[
                    (map_entry::KEY, KEY, Payload),
                    (map_entry::VALUE, &[], Message(&REASON)),
                ],
            };
            static CONTEXTS: Schema = Schema {
                fields: &[
                    (map_entry::KEY, &["FnvHashMap[key]", $id], Payload),
                    (map_entry::VALUE, &[], Message(&CONTEXT)),
                ],
            };
            Schema {
                fields: &[
                    (v2::collection::ACTIVE, &[$active], Entry(&ACTIVE, $table)),
                    (
                        v2::collection::REMOVED,
                        &[$removed],
                        Entry(&REMOVED, $table),
                    ),
                    (
                        v2::collection::REMOVED_REASONS,
                        &[$removed, "Tuple.1"],
                        Entry(&REASONS, $table),
                    ),
                    (
                        v2::collection::CONTEXTS,
                        &["context"],
                        Entry(&CONTEXTS, $table),
                    ),
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
        (v2::variable::KIND, &["DecisionVariable.kind"], Payload),
        (
            v2::variable::BOUND,
            &["DecisionVariable.bound"],
            Message(&BOUND_V2),
        ),
    ],
};
static VARIABLE_ENTRY: Schema = Schema {
    fields: &[
        (map_entry::KEY, &["BTreeMap[key]", "VariableID.0"], Payload),
        (map_entry::VALUE, &[], Message(&VARIABLE)),
    ],
};
static VARIABLE_LABEL: Schema = Schema {
    fields: &[
        (
            map_entry::KEY,
            &["FnvHashMap[key]", "VariableID.0"],
            Payload,
        ),
        (map_entry::VALUE, &[], Message(&LABEL)),
    ],
};
static FIXED_VALUE: Schema = Schema {
    fields: &[
        (map_entry::KEY, &["BTreeMap[key]", "VariableID.0"], Payload),
        (map_entry::VALUE, &[], Payload),
    ],
};
static VARIABLES: Schema = Schema {
    fields: &[
        (
            v2::variable_table::ENTRIES,
            &["DecisionVariableTable.entries"],
            Entry(&VARIABLE_ENTRY, Table::Variables),
        ),
        (
            v2::variable_table::LABELS,
            &["DecisionVariableTable.labels"],
            Entry(&VARIABLE_LABEL, Table::Variables),
        ),
        (
            v2::variable_table::FIXED_VALUES,
            &[
                "DecisionVariableTable.columns",
                "CreatedDecisionVariableColumns.fixed_values",
            ],
            Entry(&FIXED_VALUE, Table::Variables),
        ),
    ],
};

static NAMED_FUNCTION: Schema = Schema {
    fields: &[(
        v2::named_function::FUNCTION,
        &["NamedFunction.function"],
        Message(&FUNCTION),
    )],
};
static NAMED_ENTRY: Schema = Schema {
    fields: &[
        (
            map_entry::KEY,
            &["BTreeMap[key]", "NamedFunctionID.0"],
            Payload,
        ),
        (map_entry::VALUE, &[], Message(&NAMED_FUNCTION)),
    ],
};
static NAMED_LABEL: Schema = Schema {
    fields: &[
        (
            map_entry::KEY,
            &["FnvHashMap[key]", "NamedFunctionID.0"],
            Payload,
        ),
        (map_entry::VALUE, &[], Message(&LABEL)),
    ],
};
static NAMED_FUNCTIONS: Schema = Schema {
    fields: &[
        (
            v2::named_function_table::ENTRIES,
            &["NamedFunctionTable.entries"],
            Entry(&NAMED_ENTRY, Table::NamedFunctions),
        ),
        (
            v2::named_function_table::LABELS,
            &["NamedFunctionTable.labels"],
            Entry(&NAMED_LABEL, Table::NamedFunctions),
        ),
    ],
};

static ASSIGNMENT: Schema = Schema {
    fields: &[
        (
            map_entry::KEY,
            &["FnvHashMap[key]", "VariableID.0"],
            Payload,
        ),
        (map_entry::VALUE, &[], Message(&FUNCTION)),
    ],
};
static PARAMETERS: Schema = Schema {
    fields: &[(
        parameters::ENTRIES,
        &["Parameters.entries"],
        Message(&HASH_ENTRY),
    )],
};
static OUTPUT_OBJECTIVE: Schema = Schema {
    fields: &[
        (
            v2::output_objective::SENSE,
            &["OutputObjective.sense"],
            Payload,
        ),
        (
            v2::output_objective::FUNCTION,
            &["OutputObjective.function"],
            Message(&FUNCTION),
        ),
        (
            v2::output_objective::PRESERVES_OPTIMALITY,
            &["OutputObjective.preserves_optimality"],
            Payload,
        ),
    ],
};

/// `ommx.v2.Instance`'s fields.
static INSTANCE: Schema = Schema {
    fields: &[
        (
            v2::instance::REQUIRED_FEATURES,
            &["Instance.required_features"],
            Payload,
        ),
        (
            v2::instance::DESCRIPTION,
            &["Instance.description"],
            Message(&DESCRIPTION),
        ),
        (
            v2::instance::DECISION_VARIABLES,
            &["Instance.decision_variables"],
            Message(&VARIABLES),
        ),
        (
            v2::instance::OBJECTIVE,
            &["Instance.objective"],
            Message(&FUNCTION),
        ),
        (
            v2::instance::REGULAR_CONSTRAINTS,
            &["Instance.constraint_collection"],
            Message(&REGULAR),
        ),
        (v2::instance::SENSE, &["Instance.sense"], Payload),
        (
            v2::instance::PARAMETERS,
            &["Instance.parameters"],
            Message(&PARAMETERS),
        ),
        (
            v2::instance::INDICATOR_CONSTRAINTS,
            &["Instance.indicator_constraint_collection"],
            Message(&INDICATOR),
        ),
        (
            v2::instance::ONE_HOT_CONSTRAINTS,
            &["Instance.one_hot_constraint_collection"],
            Message(&ONE_HOT),
        ),
        (
            v2::instance::SOS1_CONSTRAINTS,
            &["Instance.sos1_constraint_collection"],
            Message(&SOS1),
        ),
        (
            v2::instance::DECISION_VARIABLE_DEPENDENCY,
            &[
                "Instance.decision_variable_dependency",
                "AcyclicAssignments.assignments",
            ],
            Message(&ASSIGNMENT),
        ),
        (
            v2::instance::NAMED_FUNCTIONS,
            &["Instance.named_functions"],
            Message(&NAMED_FUNCTIONS),
        ),
        (
            v2::instance::ANNOTATIONS,
            &["Instance.annotations"],
            Message(&HASH_ENTRY),
        ),
        (
            v2::instance::OUTPUT_OBJECTIVE,
            &["Instance.output_objective"],
            Message(&OUTPUT_OBJECTIVE),
        ),
    ],
};

/// Attributes every byte of an `ommx.v2.Instance` payload to a path below
/// `path`: fields the schema does not know to `Wire[unknown fields]`. With
/// `families` (`--group-by name`), each entity's entries go under its family
/// frame right under the container, as its logical bytes do.
pub fn visit_v2_instance<V: LogicalMemoryVisitor>(
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

/// The tag (`tag` bytes) and length prefix (`prefix` bytes) of the
/// top-level table field `number`, for a reader that walks its entries
/// apart ([`visit_v2_table_field`]).
pub fn visit_v2_table_head<V: LogicalMemoryVisitor>(
    number: u32,
    (tag, prefix): (usize, usize),
    path: &mut Path,
    visitor: &mut V,
) {
    let Some(&(_, frames, _)) = INSTANCE.field(number) else {
        return;
    };
    with_frames(path, frames, &mut |path| {
        visitor.visit_leaf(&path.with(TAG), tag);
        visitor.visit_leaf(&path.with(LENGTH), prefix);
    });
}

/// One field of the message of top-level table field `number` (`field`:
/// its key, length prefix and body; a map entry, or one the schema does
/// not know): what [`visit_v2_instance`] attributes to it as it walks the
/// table.
pub fn visit_v2_table_field<V: LogicalMemoryVisitor>(
    number: u32,
    field: &[u8],
    path: &mut Path,
    visitor: &mut V,
) {
    let Some(&(_, frames, Message(schema))) = INSTANCE.field(number) else {
        return;
    };
    let walk = Walk {
        families: None,
        base: path.frames().len(),
    };
    with_frames(path, frames, &mut |path| {
        visit_message(schema, field, path, visitor, 1, walk)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Aggregate;

    #[test]
    fn every_byte_of_every_v2_fixture_lands_in_one_leaf() {
        let mut checked = 0;
        for path in crate::fixtures::raw_v2() {
            let bytes = std::fs::read(&path).unwrap();
            let mut wire = Aggregate::new();
            visit_v2_instance(&bytes, None, &mut Path::new(), &mut wire);
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
        assert!(checked >= 60, "{checked}");
    }
}
