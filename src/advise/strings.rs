//! Rules on the text an instance carries: `metadata-overhead` (metadata
//! against numeric payload) and `duplicate-strings` (the same text stored
//! in many places).
//!
//! Metadata is what OMMX 2.9.3 stores in the name, subscripts, parameters
//! and description of variables and constraints, the removal reason and its
//! parameters of removed constraints, and the instance's description and
//! annotations, empty fields included (an absent name still costs 24 bytes).
//! What could be saved is the part beyond those empty fields: the
//! "content". Everything else (ids, kinds, bounds, functions, hints, ...) is
//! the numeric payload.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;

use super::hash::bytes128;
use super::{details, sample, EntityKind, Finding, Measure, Owner, Sample, Severity, SAMPLES};
use crate::ids::BuildIdHasher;
use crate::model::entities::DESCRIPTION_NONE;
use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::pass::{Cost, Singular};
use crate::profile::collections::{
    FNV_HASHMAP_STACK, HASHMAP_STACK, OPTION_STRING_NONE, STRING_STACK, VEC_STACK,
};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Path};
use crate::units::human;
mod pool;
pub use pool::StringPool;

pub const METADATA: &str = "metadata-overhead";
pub const DUPLICATES: &str = "duplicate-strings";

/// Metadata of a variable or constraint with every field empty: name and
/// description `None`, no subscripts, no parameters (OMMX's layout, as the
/// accounting counts it).
pub const EMPTY_ENTITY_METADATA: u64 =
    (2 * OPTION_STRING_NONE.base + VEC_STACK + FNV_HASHMAP_STACK) as u64;
/// A removed constraint adds an empty reason and reason parameters.
pub const EMPTY_REMOVED_METADATA: u64 =
    EMPTY_ENTITY_METADATA + (STRING_STACK + FNV_HASHMAP_STACK) as u64;
/// `Instance.description` when absent, and `Instance.annotations` when empty.
const EMPTY_DESCRIPTION: u64 = DESCRIPTION_NONE.base as u64;
const EMPTY_ANNOTATIONS: u64 = HASHMAP_STACK as u64;

fn option_string(s: Option<&str>) -> u64 {
    (STRING_STACK + s.map_or(0, str::len)) as u64
}

/// A `String -> String` FnvHashMap, as OMMX counts it.
fn fnv_string_map(map: &BTreeMap<String, String>) -> u64 {
    let entries: usize = map
        .iter()
        .map(|(k, v)| 2 * STRING_STACK + k.len() + v.len())
        .sum();
    (FNV_HASHMAP_STACK + entries) as u64
}

/// Metadata bytes of an entity's name, subscripts, parameters, description.
fn entity_metadata(
    name: Option<&str>,
    subscripts: &[i64],
    parameters: &BTreeMap<String, String>,
    description: Option<&str>,
) -> u64 {
    option_string(name)
        + (VEC_STACK + 8 * subscripts.len()) as u64
        + fnv_string_map(parameters)
        + option_string(description)
}

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
    fn add(&mut self, bytes: u64, metadata: u64, empty: u64, fields: u8) -> u64 {
        let content = metadata - empty;
        self.entities += 1;
        self.bytes += bytes;
        self.metadata += metadata;
        self.content += content;
        self.fields |= fields;
        content
    }
}

/// Sums leaves.
struct SumLeaves(u64);

impl LogicalMemoryVisitor for SumLeaves {
    fn visit_leaf(&mut self, _path: &Path, bytes: usize) {
        self.0 += bytes as u64;
    }
}

fn logical_bytes<T: LogicalMemoryProfile>(value: &T) -> u64 {
    let mut sum = SumLeaves(0);
    value.visit_logical_memory(&mut Path::new(), &mut sum);
    sum.0
}

/// The metadata of each entity kind, and the entities with the most.
#[derive(Debug, Default)]
pub struct MetadataTally {
    variables: KindTally,
    constraints: KindTally,
    removed: KindTally,
    instance: KindTally,
    /// The entities with the most content: (content, arrival, sample).
    top: Vec<(u64, u64, Sample)>,
    arrivals: u64,
}

impl MetadataTally {
    fn offer_top(&mut self, content: u64, make: impl FnOnce() -> Sample) {
        self.arrivals += 1;
        if content == 0 {
            return;
        }
        if self.top.len() < SAMPLES {
            self.top.push((content, self.arrivals, make()));
            return;
        }
        // The weakest kept: least content, latest arrival.
        let (weakest, _) = self
            .top
            .iter()
            .enumerate()
            .min_by(|(_, a), (_, b)| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
            .expect("full");
        if content > self.top[weakest].0 {
            self.top[weakest] = (content, self.arrivals, make());
        }
    }

    /// Returns the variable's metadata content.
    pub fn variable(&mut self, v: &DecisionVariable, cost: Cost) -> u64 {
        let (name, desc) = (v.name.as_deref(), v.description.as_deref());
        let metadata = entity_metadata(name, &v.subscripts, &v.parameters, desc);
        let fields = fields_used(name, &v.subscripts, &v.parameters, desc);
        let content = self
            .variables
            .add(cost.bytes, metadata, EMPTY_ENTITY_METADATA, fields);
        self.offer_top(content, || {
            sample(
                Owner::Entity(EntityKind::Variable),
                Some(v.id),
                name,
                format!("{content} B of metadata content"),
            )
        });
        content
    }

    pub fn constraint(&mut self, c: &Constraint, cost: Cost) -> u64 {
        let (name, desc) = (c.name.as_deref(), c.description.as_deref());
        let metadata = entity_metadata(name, &c.subscripts, &c.parameters, desc);
        let fields = fields_used(name, &c.subscripts, &c.parameters, desc);
        let content = self
            .constraints
            .add(cost.bytes, metadata, EMPTY_ENTITY_METADATA, fields);
        self.offer_top(content, || {
            sample(
                Owner::Entity(EntityKind::Constraint),
                Some(c.id),
                name,
                format!("{content} B of metadata content"),
            )
        });
        content
    }

    pub fn removed(&mut self, r: &RemovedConstraint, cost: Cost) -> u64 {
        let c = &r.constraint;
        let (name, desc) = (c.name.as_deref(), c.description.as_deref());
        let metadata = entity_metadata(name, &c.subscripts, &c.parameters, desc)
            + option_string(Some(&r.removed_reason))
            + fnv_string_map(&r.removed_reason_parameters);
        let mut fields = fields_used(name, &c.subscripts, &c.parameters, desc);
        if !r.removed_reason.is_empty() {
            fields |= REASON;
        }
        if !r.removed_reason_parameters.is_empty() {
            fields |= REASON_PARAMETERS;
        }
        let content = self
            .removed
            .add(cost.bytes, metadata, EMPTY_REMOVED_METADATA, fields);
        self.offer_top(content, || {
            sample(
                Owner::Entity(EntityKind::Removed),
                Some(c.id),
                name,
                format!("{content} B of metadata content"),
            )
        });
        content
    }

    pub fn instance(&mut self, singular: &Singular<'_>) {
        let description = logical_bytes(singular.description);
        let annotations = logical_bytes(singular.annotations);
        let mut fields = 0;
        if singular.description.0.is_some() {
            fields |= DESCRIPTION;
        }
        if !singular.annotations.0.is_empty() {
            fields |= ANNOTATIONS;
        }
        // The instance's own bytes are set in `finding`, once the total is known.
        let content = self.instance.add(
            0,
            description + annotations,
            EMPTY_DESCRIPTION + EMPTY_ANNOTATIONS,
            fields,
        );
        self.offer_top(content, || {
            sample(
                Owner::Instance,
                None,
                None,
                format!("{content} B of description and annotations"),
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
                dominated.push(label.replace('_', " "));
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
        let ratio_text = if payload == 0 {
            "no numeric payload".to_string()
        } else {
            format!(
                "{:.2} B per byte of numeric payload",
                metadata as f64 / payload as f64
            )
        };
        let title = format!(
            "Metadata takes {} of {} ({ratio_text}){}",
            human(metadata),
            human(total),
            match (dominates, dominated.is_empty()) {
                (true, _) => "; it dominates the instance".to_string(),
                (false, false) => format!("; it dominates the {}", dominated.join(", ")),
                (false, true) => String::new(),
            }
        );
        let mut top = self.top.clone();
        top.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Some(Finding {
            rule: METADATA,
            measure: Measure::Logical,
            title,
            bytes_concerned: metadata,
            saving_bytes: content,
            // Flagged by share only when metadata outweighs the payload.
            severity: (!dominates).then_some(Severity::Info),
            paths,
            sample: top.into_iter().map(|(_, _, s)| s).collect(),
            suggestion: "Keep names, subscripts, parameters and descriptions in a side table \
                keyed by id (or drop them from the instance handed to the solver); each \
                entity then keeps only its empty metadata fields."
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

/// Where a string is stored; an index into [`ROLE_PATHS`].
type Role = u8;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    /// Sums the leaves under metadata frames, as the profile would show them.
    struct MetadataLeaves(u64);

    impl LogicalMemoryVisitor for MetadataLeaves {
        fn visit_leaf(&mut self, path: &Path, bytes: usize) {
            let metadata = path.frames().iter().any(|f| {
                f.starts_with("DecisionVariable.metadata")
                    || [
                        "Constraint.name",
                        "Constraint.subscripts",
                        "Constraint.parameters",
                        "Constraint.description",
                        "RemovedConstraint.removed_reason",
                        "RemovedConstraint.removed_reason_parameters",
                    ]
                    .contains(&f.as_ref())
            });
            if metadata {
                self.0 += bytes as u64;
            }
        }
    }

    fn visited<T: LogicalMemoryProfile>(value: &T) -> u64 {
        let mut v = MetadataLeaves(0);
        value.visit_logical_memory(&mut Path::new(), &mut v);
        v.0
    }

    #[test]
    fn metadata_formula_agrees_with_the_profile_leaves() {
        let parameters: BTreeMap<String, String> = [("k".to_string(), "value".to_string())].into();
        let v = DecisionVariable {
            id: 1,
            kind: Kind::Binary,
            bound: (0.0, 1.0),
            substituted_value: None,
            name: Some("x".into()),
            subscripts: vec![1, 2],
            parameters: parameters.clone(),
            description: None,
        };
        let m = entity_metadata(
            v.name.as_deref(),
            &v.subscripts,
            &v.parameters,
            v.description.as_deref(),
        );
        assert_eq!(m, visited(&v));
        // 25 name + 40 subscripts + (32 + 24 + 1 + 24 + 5) parameters + 24.
        assert_eq!(m, 25 + 40 + 86 + 24);
        let r = RemovedConstraint {
            constraint: Constraint {
                id: 2,
                equality: crate::model::Equality::EqualToZero,
                function: crate::model::Function::Zero,
                name: None,
                subscripts: vec![],
                parameters: BTreeMap::new(),
                description: Some("why".into()),
            },
            removed_reason: "relaxed".into(),
            removed_reason_parameters: parameters,
        };
        let mut tally = MetadataTally::default();
        let content = tally.removed(&r, Cost::default());
        assert_eq!(content + EMPTY_REMOVED_METADATA, visited(&r));
        // "why" 3, "relaxed" 7, one parameter entry 48 + 1 + 5.
        assert_eq!(content, 3 + 7 + 54);
    }
}
