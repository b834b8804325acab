//! Rules on the text an instance carries: `metadata-overhead` (labels
//! against numeric payload) and `duplicate-strings` (the same text stored
//! in many places).
//!
//! Labels are what OMMX 2.9.3 stores in the name, subscripts, parameters
//! and description of variables and constraints, the removal reason and its
//! parameters of removed constraints, and the instance's description and
//! annotations, empty fields included (an absent name still costs 24
//! bytes). What leaving them out saves is the part beyond those empty
//! fields: the "content" (`crate::model::labels` says what each costs).
//! Everything else (ids, kinds, bounds, functions, hints, ...) is the
//! numeric payload.

use std::collections::BTreeMap;

use serde_json::json;

use super::{details, sample, Change, EntityKind, Finding, Measure, Owner, TopSamples};
use crate::model::labels::{self, LabelBytes};
use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::pass::{Cost, Singular};
use crate::units::{exact, percent};
mod pool;
pub use pool::StringPool;

pub const METADATA: &str = "metadata-overhead";
pub const DUPLICATES: &str = "duplicate-strings";

/// Which metadata fields held something, per entity kind (for the paths).
const NAME: u8 = 1;
const SUBSCRIPTS: u8 = 2;
const PARAMETERS: u8 = 4;
const DESCRIPTION: u8 = 8;
const REASON: u8 = 16;
const REASON_PARAMETERS: u8 = 32;
const ANNOTATIONS: u8 = 64;

fn fields_used(
    name: Option<&str>,
    subscripts: &[i64],
    parameters: &BTreeMap<String, String>,
    description: Option<&str>,
) -> u8 {
    let mut mask = 0;
    if name.is_some_and(|s| !s.is_empty()) {
        mask |= NAME;
    }
    if !subscripts.is_empty() {
        mask |= SUBSCRIPTS;
    }
    if !parameters.is_empty() {
        mask |= PARAMETERS;
    }
    if description.is_some_and(|s| !s.is_empty()) {
        mask |= DESCRIPTION;
    }
    mask
}

#[derive(Debug, Default, Clone, Copy)]
struct KindTally {
    entities: u64,
    bytes: u64,
    metadata: u64,
    content: u64,
    fields: u8,
}

impl KindTally {
    fn add(&mut self, bytes: u64, labels: LabelBytes, fields: u8) -> u64 {
        self.entities += 1;
        self.bytes += bytes;
        self.metadata += labels.bytes;
        self.content += labels.content();
        self.fields |= fields;
        labels.content()
    }
}

/// The metadata of each entity kind, and the entities with the most.
#[derive(Debug, Default, Clone)]
pub struct MetadataTally {
    variables: KindTally,
    constraints: KindTally,
    removed: KindTally,
    instance: KindTally,
    /// The entities with the most content.
    top: TopSamples,
    /// The labels of the previous variable and constraint.
    remembered: labels::Remembered,
}

impl MetadataTally {
    fn offer_entity(&mut self, kind: EntityKind, id: u64, name: Option<&str>, content: u64) {
        self.top.offer(content, || {
            sample(
                Owner::Entity(kind),
                Some(id),
                name,
                format!("{} of labels beyond the empty fields", exact(content)),
            )
        });
    }

    /// Returns the variable's label content.
    pub fn variable(&mut self, v: &DecisionVariable, cost: Cost) -> u64 {
        let (name, desc) = (v.name.as_deref(), v.description.as_deref());
        let fields = fields_used(name, &v.subscripts, &v.parameters, desc);
        let labels = self.remembered.variable(v);
        let content = self.variables.add(cost.bytes, labels, fields);
        self.offer_entity(EntityKind::Variable, v.id, name, content);
        content
    }

    pub fn constraint(&mut self, c: &Constraint, cost: Cost) -> u64 {
        let (name, desc) = (c.name.as_deref(), c.description.as_deref());
        let fields = fields_used(name, &c.subscripts, &c.parameters, desc);
        let labels = self.remembered.constraint(c);
        let content = self.constraints.add(cost.bytes, labels, fields);
        self.offer_entity(EntityKind::Constraint, c.id, name, content);
        content
    }

    pub fn removed(&mut self, r: &RemovedConstraint, cost: Cost) -> u64 {
        let c = &r.constraint;
        let (name, desc) = (c.name.as_deref(), c.description.as_deref());
        let mut fields = fields_used(name, &c.subscripts, &c.parameters, desc);
        if !r.removed_reason.is_empty() {
            fields |= REASON;
        }
        if !r.removed_reason_parameters.is_empty() {
            fields |= REASON_PARAMETERS;
        }
        let content = self.removed.add(cost.bytes, labels::removed(r), fields);
        self.offer_entity(EntityKind::Removed, c.id, name, content);
        content
    }

    pub fn instance(&mut self, singular: &Singular<'_>) {
        let mut fields = 0;
        if singular.description.0.is_some() {
            fields |= DESCRIPTION;
        }
        if !singular.annotations.0.is_empty() {
            fields |= ANNOTATIONS;
        }
        let labels = labels::instance(singular.description, singular.annotations);
        // The instance's own bytes are set in `finding`, once the total is known.
        let content = self.instance.add(0, labels, fields);
        self.top.offer(content, || {
            sample(
                Owner::Instance,
                None,
                None,
                format!("{} of description and annotations", exact(content)),
            )
        });
    }

    fn total_content(&self) -> u64 {
        self.variables.content
            + self.constraints.content
            + self.removed.content
            + self.instance.content
    }

    /// The content left once removed constraints (if `removed_dropped`) and
    /// unused variables (whose content is `unused_content`) are gone.
    pub fn content_kept(&self, removed_dropped: bool, unused_content: u64) -> u64 {
        let removed = if removed_dropped {
            self.removed.content
        } else {
            0
        };
        self.total_content() - removed - unused_content
    }

    pub fn finding(&self, total: u64) -> Option<Finding> {
        let content = self.total_content();
        if content == 0 {
            return None;
        }
        let mut instance = self.instance;
        let entity_bytes = self.variables.bytes + self.constraints.bytes + self.removed.bytes;
        instance.bytes = total.saturating_sub(entity_bytes);
        let kinds = [
            ("variables", self.variables, KIND_PATHS[0]),
            ("constraints", self.constraints, KIND_PATHS[1]),
            ("removed_constraints", self.removed, KIND_PATHS[2]),
            ("instance", instance, KIND_PATHS[3]),
        ];
        let metadata: u64 = kinds.iter().map(|(_, k, _)| k.metadata).sum();
        let payload = total.saturating_sub(metadata);
        let ratio = |m: u64, p: u64| {
            if p == 0 {
                json!(null)
            } else {
                json!((m as f64 / p as f64 * 100.0).round() / 100.0)
            }
        };
        let mut per_kind = serde_json::Map::new();
        let mut dominated = Vec::new();
        let mut paths = Vec::new();
        for (label, k, kind_paths) in kinds {
            if k.entities == 0 {
                continue;
            }
            let kind_payload = k.bytes.saturating_sub(k.metadata);
            if k.metadata > kind_payload && k.content > 0 {
                dominated.push(match label {
                    "instance" => "the instance's own fields".to_string(),
                    _ => format!("the {}", label.replace('_', " ")),
                });
            }
            for (bit, path) in kind_paths {
                if k.fields & bit != 0 {
                    paths.push(path.to_string());
                }
            }
            per_kind.insert(
                label.to_string(),
                json!({
                    "entities": k.entities,
                    "metadata_bytes": k.metadata,
                    "payload_bytes": kind_payload,
                    "overhead_ratio": ratio(k.metadata, kind_payload),
                    "content_bytes": k.content,
                }),
            );
        }
        let dominates = metadata > payload;
        let title = format!(
            "Labels (names, subscripts, parameters, descriptions) take {} of the {}, {}; {} \
             of it is what they hold, the rest the empty fields every entity keeps{}",
            exact(metadata),
            exact(total),
            percent(metadata, total),
            exact(content),
            match (dominates, dominated.is_empty()) {
                (true, _) => ". They are more than half of the instance".to_string(),
                (false, false) => format!(
                    ". They are more than half of the bytes of {}",
                    dominated.join(" and of ")
                ),
                (false, true) => String::new(),
            }
        );
        Some(Finding {
            rule: METADATA,
            change: Change::Ommx,
            measure: Measure::Logical,
            title,
            bytes_concerned: metadata,
            saving_bytes: content,
            paths,
            sample: self.top.sorted(),
            suggestion: "Leave names, subscripts, parameters and descriptions (and removal \
                reasons, the instance's description and annotations) out of the instance \
                handed to the solver, keeping them in a side table keyed by id if they are \
                needed later; each entity then keeps only its empty label fields."
                .to_string(),
            details: details([
                ("metadata_bytes", json!(metadata)),
                ("payload_bytes", json!(payload)),
                ("overhead_ratio", ratio(metadata, payload)),
                ("dominates", json!(dominates)),
                ("content_bytes", json!(content)),
                ("per_kind", serde_json::Value::Object(per_kind)),
            ]),
        })
    }
}

/// Profile paths of each kind's metadata fields, by field bit.
const KIND_PATHS: [&[(u8, &str)]; 4] = [
    &[
        (NAME, "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.name"),
        (SUBSCRIPTS, "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.subscripts"),
        (PARAMETERS, "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.parameters"),
        (DESCRIPTION, "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.description"),
    ],
    &[
        (NAME, "Instance.constraints;Constraint.name"),
        (SUBSCRIPTS, "Instance.constraints;Constraint.subscripts"),
        (PARAMETERS, "Instance.constraints;Constraint.parameters"),
        (DESCRIPTION, "Instance.constraints;Constraint.description"),
    ],
    &[
        (NAME, "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.name"),
        (SUBSCRIPTS, "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.subscripts"),
        (PARAMETERS, "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.parameters"),
        (DESCRIPTION, "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.description"),
        (REASON, "Instance.removed_constraints;RemovedConstraint.removed_reason"),
        (REASON_PARAMETERS, "Instance.removed_constraints;RemovedConstraint.removed_reason_parameters"),
    ],
    &[
        (DESCRIPTION, "Instance.description"),
        (ANNOTATIONS, "Instance.annotations"),
    ],
];

/// Where a string is stored; an index into [`ROLE_PATHS`] (or, for an
/// OMMX 3.0 instance, [`ROLE_PATHS_30`]).
pub type Role = u8;

/// The roles of an entity's name, description and parameter keys/values.
pub struct RoleSet {
    name: Role,
    description: Role,
    key: Role,
    value: Role,
}

const VARIABLE_ROLES: RoleSet = RoleSet {
    name: 0,
    description: 1,
    key: 2,
    value: 3,
};
pub const CONSTRAINT_ROLES: RoleSet = RoleSet {
    name: 4,
    description: 5,
    key: 6,
    value: 7,
};
const REMOVED_ROLES: RoleSet = RoleSet {
    name: 8,
    description: 9,
    key: 10,
    value: 11,
};
const ROLE_REASON: Role = 12;
const ROLE_REASON_KEY: Role = 13;
const ROLE_REASON_VALUE: Role = 14;
const ROLE_DESCRIPTION: Role = 15;
const ROLE_AUTHOR: Role = 16;
const ROLE_ANNOTATION_KEY: Role = 17;
const ROLE_ANNOTATION_VALUE: Role = 18;

const ROLE_PATHS: [&str; 19] = [
    "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.name",
    "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.description",
    "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.parameters;FnvHashMap[key]",
    "Instance.decision_variables;DecisionVariable.metadata;DecisionVariableMetadata.parameters",
    "Instance.constraints;Constraint.name",
    "Instance.constraints;Constraint.description",
    "Instance.constraints;Constraint.parameters;FnvHashMap[key]",
    "Instance.constraints;Constraint.parameters",
    "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.name",
    "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.description",
    "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.parameters;FnvHashMap[key]",
    "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.parameters",
    "Instance.removed_constraints;RemovedConstraint.removed_reason",
    "Instance.removed_constraints;RemovedConstraint.removed_reason_parameters;FnvHashMap[key]",
    "Instance.removed_constraints;RemovedConstraint.removed_reason_parameters",
    "Instance.description",
    "Instance.description;Description.authors",
    "Instance.annotations;HashMap[key]",
    "Instance.annotations",
];

/// Where OMMX 3.0 stores a string: a label store's, a removed reason's, the
/// description's or the annotations'. Each collection's labels and reasons
/// are one role each, in [`crate::model::ommx30::Entity`]'s container order.
pub const ROLE_PATHS_30: [&str; 12] = [
    "Instance.decision_variables;DecisionVariableTable.labels",
    "Instance.constraint_collection;context;ConstraintContextStore.labels",
    "Instance.indicator_constraint_collection;context;ConstraintContextStore.labels",
    "Instance.one_hot_constraint_collection;context;ConstraintContextStore.labels",
    "Instance.sos1_constraint_collection;context;ConstraintContextStore.labels",
    "Instance.named_functions;NamedFunctionTable.labels",
    "Instance.constraint_collection;removed_constraints;Tuple.1",
    "Instance.indicator_constraint_collection;removed_indicator_constraints;Tuple.1",
    "Instance.one_hot_constraint_collection;removed_one_hot_constraints;Tuple.1",
    "Instance.sos1_constraint_collection;removed_sos1_constraints;Tuple.1",
    "Instance.description",
    "Instance.annotations",
];
const ROLE_DESCRIPTION_30: Role = 10;
const ROLE_ANNOTATIONS_30: Role = 11;
