//! OMMX 2.9.3's schema as the wire view walks it: for each message, its
//! known fields with the frames their bytes go under.

use super::Schema;
use super::Shape::{self, Message, Payload};
use crate::wire::fields::{
    bound, constraint, description, function, hints, instance, linear, linear_term, map_entry,
    monomial, named_function, one_hot, parameters, polynomial, quadratic, removed_constraint, sos1,
    variable,
};

const TERMS: &[&str] = &["PolynomialBase.terms"];

pub(super) static LINEAR_TERM: Schema = Schema {
    fields: &[
        (linear_term::ID, &[], Payload),
        (linear_term::COEFFICIENT, &[], Payload),
    ],
};
/// Linear: every byte belongs to the function's stored terms.
pub(super) static LINEAR: Schema = Schema {
    fields: &[
        (linear::TERMS, &[], Message(&LINEAR_TERM)),
        (linear::CONSTANT, &[], Payload),
    ],
};
pub(super) static QUADRATIC: Schema = Schema {
    fields: &[
        (quadratic::ROWS, &[], Payload),
        (quadratic::COLUMNS, &[], Payload),
        (quadratic::VALUES, &[], Payload),
        (quadratic::LINEAR, &[], Message(&LINEAR)),
    ],
};
pub(super) static MONOMIAL: Schema = Schema {
    fields: &[
        (monomial::IDS, &[], Payload),
        (monomial::COEFFICIENT, &[], Payload),
    ],
};
pub(super) static POLYNOMIAL: Schema = Schema {
    fields: &[(polynomial::TERMS, &[], Message(&MONOMIAL))],
};
pub(super) static FUNCTION: Schema = Schema {
    fields: &[
        (function::CONSTANT, &[], Shape::Constant),
        (function::LINEAR, &["Linear", TERMS[0]], Message(&LINEAR)),
        (
            function::QUADRATIC,
            &["Quadratic", TERMS[0]],
            Message(&QUADRATIC),
        ),
        (
            function::POLYNOMIAL,
            &["Polynomial", TERMS[0]],
            Message(&POLYNOMIAL),
        ),
    ],
};

pub(super) static FNV_STRING_ENTRY: Schema = Schema {
    fields: &[
        (map_entry::KEY, &["FnvHashMap[key]"], Payload),
        (map_entry::VALUE, &[], Payload),
    ],
};
pub(super) static HASH_ENTRY: Schema = Schema {
    fields: &[
        (map_entry::KEY, &["HashMap[key]"], Payload),
        (map_entry::VALUE, &[], Payload),
    ],
};
pub(super) static FUNCTION_ENTRY: Schema = Schema {
    fields: &[
        (map_entry::KEY, &["FnvHashMap[key]"], Payload),
        (map_entry::VALUE, &[], Message(&FUNCTION)),
    ],
};

pub(super) static BOUND: Schema = Schema {
    fields: &[(bound::LOWER, &[], Payload), (bound::UPPER, &[], Payload)],
};
/// OMMX 3.0 names a bound's fields.
pub(super) static BOUND_V2: Schema = Schema {
    fields: &[
        (bound::LOWER, &["Bound.lower"], Payload),
        (bound::UPPER, &["Bound.upper"], Payload),
    ],
};
const META: &str = "DecisionVariable.metadata";
pub static DECISION_VARIABLE: Schema = Schema {
    fields: &[
        (variable::ID, &["DecisionVariable.id"], Payload),
        (variable::KIND, &["DecisionVariable.kind"], Payload),
        (
            variable::BOUND,
            &["DecisionVariable.bound"],
            Message(&BOUND),
        ),
        (
            variable::NAME,
            &[META, "DecisionVariableMetadata.name"],
            Payload,
        ),
        (
            variable::SUBSCRIPTS,
            &[META, "DecisionVariableMetadata.subscripts"],
            Payload,
        ),
        (
            variable::PARAMETERS,
            &[META, "DecisionVariableMetadata.parameters"],
            Message(&FNV_STRING_ENTRY),
        ),
        (
            variable::DESCRIPTION,
            &[META, "DecisionVariableMetadata.description"],
            Payload,
        ),
        (
            variable::SUBSTITUTED_VALUE,
            &["DecisionVariable.substituted_value"],
            Payload,
        ),
    ],
};
pub static CONSTRAINT: Schema = Schema {
    fields: &[
        (constraint::ID, &["Constraint.id"], Payload),
        (constraint::EQUALITY, &["Constraint.equality"], Payload),
        (
            constraint::FUNCTION,
            &["Constraint.function"],
            Message(&FUNCTION),
        ),
        (
            constraint::PARAMETERS,
            &["Constraint.parameters"],
            Message(&FNV_STRING_ENTRY),
        ),
        (constraint::NAME, &["Constraint.name"], Payload),
        (
            constraint::DESCRIPTION,
            &["Constraint.description"],
            Payload,
        ),
        (constraint::SUBSCRIPTS, &["Constraint.subscripts"], Payload),
    ],
};
pub static REMOVED_CONSTRAINT: Schema = Schema {
    fields: &[
        (
            removed_constraint::CONSTRAINT,
            &["RemovedConstraint.constraint"],
            Message(&CONSTRAINT),
        ),
        (
            removed_constraint::REMOVED_REASON,
            &["RemovedConstraint.removed_reason"],
            Payload,
        ),
        (
            removed_constraint::REMOVED_REASON_PARAMETERS,
            &["RemovedConstraint.removed_reason_parameters"],
            Message(&FNV_STRING_ENTRY),
        ),
    ],
};
pub static NAMED_FUNCTION: Schema = Schema {
    fields: &[
        (named_function::ID, &["NamedFunction.id"], Payload),
        (
            named_function::FUNCTION,
            &["NamedFunction.function"],
            Message(&FUNCTION),
        ),
        (
            named_function::SUBSCRIPTS,
            &["NamedFunction.subscripts"],
            Payload,
        ),
        (
            named_function::PARAMETERS,
            &["NamedFunction.parameters"],
            Message(&FNV_STRING_ENTRY),
        ),
        (named_function::NAME, &["NamedFunction.name"], Payload),
        (
            named_function::DESCRIPTION,
            &["NamedFunction.description"],
            Payload,
        ),
    ],
};
pub(super) static DESCRIPTION: Schema = Schema {
    fields: &[
        (description::NAME, &["Description.name"], Payload),
        (
            description::DESCRIPTION,
            &["Description.description"],
            Payload,
        ),
        (description::AUTHORS, &["Description.authors"], Payload),
        (
            description::CREATED_BY,
            &["Description.created_by"],
            Payload,
        ),
        (description::CREATED, &["Description.created"], Payload),
        (description::LICENSE, &["Description.license"], Payload),
        (description::DATASET, &["Description.dataset"], Payload),
    ],
};
pub(super) static PARAMETERS: Schema = Schema {
    fields: &[(
        parameters::ENTRIES,
        &["Parameters.entries"],
        Message(&HASH_ENTRY),
    )],
};
pub(super) static ONE_HOT: Schema = Schema {
    fields: &[
        (one_hot::CONSTRAINT_ID, &["OneHot.id"], Payload),
        (one_hot::DECISION_VARIABLES, &["OneHot.variables"], Payload),
    ],
};
pub(super) static SOS1: Schema = Schema {
    fields: &[
        (
            sos1::BINARY_CONSTRAINT_ID,
            &["Sos1.binary_constraint_id"],
            Payload,
        ),
        (
            sos1::BIG_M_CONSTRAINT_IDS,
            &["Sos1.big_m_constraint_ids"],
            Payload,
        ),
        (sos1::DECISION_VARIABLES, &["Sos1.variables"], Payload),
    ],
};
pub(super) static HINTS: Schema = Schema {
    fields: &[
        (
            hints::ONE_HOT_CONSTRAINTS,
            &["ConstraintHints.one_hot_constraints"],
            Message(&ONE_HOT),
        ),
        (
            hints::SOS1_CONSTRAINTS,
            &["ConstraintHints.sos1_constraints"],
            Message(&SOS1),
        ),
    ],
};

/// The top level: `Instance`'s fields.
pub(super) static INSTANCE: Schema = Schema {
    fields: &[
        (
            instance::DESCRIPTION,
            &["Instance.description"],
            Message(&DESCRIPTION),
        ),
        (
            instance::DECISION_VARIABLES,
            &["Instance.decision_variables"],
            Message(&DECISION_VARIABLE),
        ),
        (
            instance::OBJECTIVE,
            &["Instance.objective"],
            Message(&FUNCTION),
        ),
        (
            instance::CONSTRAINTS,
            &["Instance.constraints"],
            Message(&CONSTRAINT),
        ),
        (instance::SENSE, &["Instance.sense"], Payload),
        (
            instance::PARAMETERS,
            &["Instance.parameters"],
            Message(&PARAMETERS),
        ),
        (
            instance::CONSTRAINT_HINTS,
            &["Instance.constraint_hints"],
            Message(&HINTS),
        ),
        (
            instance::REMOVED_CONSTRAINTS,
            &["Instance.removed_constraints"],
            Message(&REMOVED_CONSTRAINT),
        ),
        (
            instance::DECISION_VARIABLE_DEPENDENCY,
            &[
                "Instance.decision_variable_dependency",
                "AcyclicAssignments.assignments",
            ],
            Message(&FUNCTION_ENTRY),
        ),
        (
            instance::NAMED_FUNCTIONS,
            &["Instance.named_functions"],
            Message(&NAMED_FUNCTION),
        ),
        (
            instance::ANNOTATIONS,
            &["Instance.annotations"],
            Message(&HASH_ENTRY),
        ),
        (
            instance::FORMAT_VERSION,
            &["Instance.format_version"],
            Payload,
        ),
    ],
};
