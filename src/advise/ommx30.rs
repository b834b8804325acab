//! `advise` on instances counted with OMMX 3.0's accounting (`ommx.v2`, or
//! v1 read with `--accounting 3.0`): every rule on 3.0's layout, from the
//! entities as the pass shows them, in stream order.
//!
//! - `removed-constraints` and `unused-variables` save what the entities
//!   they drop cost in 3.0 (each entity's bytes as `top` reports them: its
//!   row, label entries, removed reason, provenance and fixed value). A
//!   variable is used when a row of any collection (active or removed), a
//!   named function, the objective, the output objective or the dependency
//!   mentions it: from [`EntityView::used`] where the pass knows it as it
//!   shows the variable (v2 input), from `variables_used` once it knows
//!   (v1 input streams its variables first), and from the rows and
//!   functions seen and [`Singular30`] when the pass shows it.
//! - `metadata-overhead`: 3.0 stores a label field only when it is set, in
//!   per-instance label stores; leaving the labels out saves their entries,
//!   what removal reasons hold beyond an empty reason, the description's
//!   text (an empty description stays: an absent one costs more) and the
//!   annotations' entries. The stores' own empty tables stay.
//! - `representation-variant`, `identical-functions`, `representation-csr`
//!   and `wasted-file-bytes` on the compact functions of regular and
//!   indicator rows (active and removed), named functions (counted by 3.0)
//!   and the objective (once the pass shows its function: until then the
//!   variant rule says it did not judge it). Expression functions have no
//!   cheaper variant, no term layout and no scalar form: they are left out.
//!   One-hot and SOS1 rows hold a variable set, not a function.
//! - `duplicate-strings` on 3.0's label stores, removal reasons, the
//!   description and the annotations (these two once the pass shows them).
//!
//! `ommx-3-layout` has no meaning here: the instance is counted as 3.0
//! holds it already.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::entities::{removed_finding, unused_finding, REMOVED, UNUSED};
use super::functions::{FunctionTally, VARIANTS};
use super::strings::{StringPool, METADATA};
use super::variables::Variables;
use super::{details, migration, quote, Change, Finding, Measure, NotComputed, Owner};
use super::{Sample, Samples, TopSamples, SAMPLES};
use crate::ids::IdSet;
use crate::model::ommx30::{Entity, Func, Part, Row};
use crate::model::EntityKind;
use crate::pass::{Cost, EntityView, Singular30};
use crate::profile::{LogicalMemoryVisitor, Path};
use crate::units::{exact, percent};

/// The rules not computed for an OMMX 3.0 instance, and why.
pub fn not_computed() -> Vec<NotComputed> {
    vec![NotComputed {
        rule: migration::RULE,
        reason: "the instance is counted as OMMX 3.0 holds it already".to_string(),
    }]
}

/// What an empty `Description` takes (its three `Option<String>`s and the
/// authors' `Vec`); an absent one takes 168 B, so leaving the labels out
/// keeps an empty one.
const EMPTY_DESCRIPTION: u64 = 4 * 24;
/// What empty annotations take (a `HashMap`).
const EMPTY_ANNOTATIONS: u64 = 48;
/// What an empty removal reason keeps: its `String` and its parameters'
/// `FnvHashMap`.
const EMPTY_REASON_STRING: u64 = 24;

/// An entity's label bytes: all of them (`metadata`) and what leaving them
/// out saves (`content`).
#[derive(Debug, Default, Clone, Copy)]
struct LabelLeaves {
    metadata: u64,
    content: u64,
}

impl LogicalMemoryVisitor for LabelLeaves {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        let bytes = bytes as u64;
        let frames = path.frames();
        if frames.iter().any(|f| f.starts_with("ModelingLabelStore.")) {
            self.metadata += bytes;
            self.content += bytes;
        } else if let Some(i) = frames.iter().position(|f| f.starts_with("RemovedReason.")) {
            self.metadata += bytes;
            self.content += match (frames[i].as_ref(), frames.get(i + 1)) {
                ("RemovedReason.reason", _) => bytes - EMPTY_REASON_STRING,
                (_, Some(f)) if f == "FnvHashMap[stack]" => 0,
                _ => bytes,
            };
        }
    }
}

/// The instance-wide labels, read off the leaves (which the pass shows
/// after the entities): the description, the annotations, and the label
/// stores' and reasons' bytes.
#[derive(Debug, Default, Clone, Copy)]
struct InstanceLeaves {
    /// Every label byte: stores, reasons, description, annotations.
    metadata: u64,
    description: u64,
    description_present: bool,
    annotations: u64,
}

impl LogicalMemoryVisitor for InstanceLeaves {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        let bytes = bytes as u64;
        let frames = path.frames();
        match frames.first().map(|f| f.as_ref()) {
            Some("Instance.description") => {
                self.metadata += bytes;
                self.description += bytes;
                if frames.get(1).is_some_and(|f| f != "Option[stack]") {
                    self.description_present = true;
                }
            }
            Some("Instance.annotations") => {
                self.metadata += bytes;
                self.annotations += bytes;
            }
            _ => {
                let label = |f: &crate::profile::Frame| {
                    f.starts_with("ModelingLabelStore.") || f.starts_with("RemovedReason.")
                };
                if frames.iter().any(label) {
                    self.metadata += bytes;
                }
            }
        }
    }
}

impl InstanceLeaves {
    /// What leaving the description's text and the annotations out saves.
    fn content(&self) -> u64 {
        let description = match self.description_present {
            true => self.description.saturating_sub(EMPTY_DESCRIPTION),
            false => 0,
        };
        description + self.annotations.saturating_sub(EMPTY_ANNOTATIONS)
    }
}

/// Where an entity's labels (0) and removal reason (1) are, as roles of
/// [`super::strings::ROLE_PATHS_30`].
fn roles(kind: EntityKind) -> (u8, u8) {
    match kind {
        EntityKind::Variable => (0, 0),
        EntityKind::Constraint | EntityKind::Removed => (1, 6),
        EntityKind::Indicator | EntityKind::RemovedIndicator => (2, 7),
        EntityKind::OneHot | EntityKind::RemovedOneHot => (3, 8),
        EntityKind::Sos1 | EntityKind::RemovedSos1 => (4, 9),
        EntityKind::NamedFunction | EntityKind::Objective => (5, 5),
    }
}

/// Where a removed row's bytes are.
fn removed_paths(kind: EntityKind) -> Option<[&'static str; 2]> {
    Some(match kind {
        EntityKind::Removed => [
            "Instance.constraint_collection;removed_constraints",
            "Instance.constraint_collection;context",
        ],
        EntityKind::RemovedIndicator => [
            "Instance.indicator_constraint_collection;removed_indicator_constraints",
            "Instance.indicator_constraint_collection;context",
        ],
        EntityKind::RemovedOneHot => [
            "Instance.one_hot_constraint_collection;removed_one_hot_constraints",
            "Instance.one_hot_constraint_collection;context",
        ],
        EntityKind::RemovedSos1 => [
            "Instance.sos1_constraint_collection;removed_sos1_constraints",
            "Instance.sos1_constraint_collection;context",
        ],
        _ => return None,
    })
}

fn sample(entity: &'static str, e: &EntityView<'_>, detail: String) -> Sample {
    Sample {
        entity,
        id: Some(e.id),
        name: e.name.map(quote),
        detail,
    }
}

/// What every rule needs, gathered from the entities as the pass shows
/// them.
#[derive(Debug, Clone)]
pub struct Ommx30Tally {
    vars: Variables,
    used: IdSet,
    removed: u64,
    removed_bytes: u64,
    /// Label bytes of the removed rows (left out with them).
    removed_content: u64,
    removed_samples: Samples,
    /// Containers holding removed rows, for the finding's paths.
    removed_paths: BTreeSet<&'static str>,
    /// Label content of every entity, by kind noun.
    content: BTreeMap<&'static str, u64>,
    /// Empty between entities: the room of their label walks' frames.
    path: Path,
    /// Roles of [`super::strings::ROLE_PATHS_30`] holding content.
    label_roles: u32,
    /// The entities with the most label content.
    top: TopSamples,
    instance: InstanceLeaves,
    strings: StringPool,
    functions: FunctionTally,
}

impl Default for Ommx30Tally {
    fn default() -> Self {
        Self {
            vars: Variables::default(),
            used: IdSet::default(),
            removed: 0,
            removed_bytes: 0,
            removed_content: 0,
            removed_samples: Samples::default(),
            removed_paths: BTreeSet::new(),
            content: BTreeMap::new(),
            path: Path::new(),
            label_roles: 0,
            top: TopSamples::default(),
            instance: InstanceLeaves::default(),
            strings: StringPool::new_v3(),
            functions: FunctionTally::new_v3(),
        }
    }
}

impl Ommx30Tally {
    pub fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        let Some(entity) = &e.ommx30 else {
            return;
        };
        let labels = self.labels(e, entity);
        match entity.part {
            Part::Variable { .. } => {
                if e.used == Some(true) {
                    self.used.insert(e.id);
                }
                self.vars.push(e.id, cost.bytes, labels.content, e.name);
            }
            Part::Row { row, reason, .. } => {
                row.for_each_variable(|v| {
                    self.used.insert(v);
                });
                if let Some(paths) = removed_paths(e.kind) {
                    self.removed += 1;
                    self.removed_bytes += cost.bytes;
                    self.removed_content += labels.content;
                    self.removed_paths.extend(paths);
                    self.removed_samples.offer(|| {
                        let why = reason.map_or(String::new(), |r| match r.reason.as_str() {
                            "" => ", no reason given".to_string(),
                            why => format!(", removed because {:?}", quote(why)),
                        });
                        sample(e.kind.noun(), e, format!("{}{why}", exact(cost.bytes)))
                    });
                }
                if let Row::Regular(Func::Compact(f)) | Row::Indicator(_, Func::Compact(f)) = row {
                    let active = removed_paths(e.kind).is_none();
                    let kind = Owner::Entity(e.kind);
                    self.functions
                        .row(kind, e.id, e.name, f, cost.waste, active);
                }
            }
            Part::NamedFunction(f) => {
                f.for_each_variable(|v| {
                    self.used.insert(v);
                });
                if let Func::Compact(f) = f {
                    self.functions.named_v3(e.id, e.name, f, cost.waste);
                }
            }
        }
    }

    /// The entity's label bytes, its strings into the pool, its sample.
    fn labels(&mut self, e: &EntityView<'_>, entity: &Entity<'_>) -> LabelLeaves {
        let mut leaves = LabelLeaves::default();
        entity.visit_labels(&mut self.path, &mut leaves);
        let (label_role, reason_role) = roles(e.kind);
        let owner = Owner::Entity(e.kind);
        if let Some(l) = entity.label {
            self.strings.label_v3(l, label_role, owner, e.id);
        }
        if let Part::Row {
            reason: Some(r), ..
        } = entity.part
        {
            self.strings.reason_v3(r, reason_role, owner, e.id);
            if !r.reason.is_empty() || !r.parameters.is_empty() {
                self.label_roles |= 1 << reason_role;
            }
        }
        if entity.label.is_some() {
            self.label_roles |= 1 << label_role;
        }
        // The instance's label bytes count the entity's too: the pass shows
        // this tally no entity's leaves (`entity_leaves`), only the rest.
        self.instance.metadata += leaves.metadata;
        *self.content.entry(e.kind.noun()).or_default() += leaves.content;
        self.offer_top(e, leaves.content);
        leaves
    }

    fn offer_top(&mut self, e: &EntityView<'_>, content: u64) {
        self.top.offer(content, || {
            let detail = format!("{} of labels", exact(content));
            sample(e.kind.noun(), e, detail)
        });
    }

    /// The objective as the pass shows it before its function: its waste.
    pub fn objective(&mut self, cost: Cost) {
        let name = Some("objective");
        self.functions
            .waste_v3(Owner::Instance, None, name, cost.waste);
    }

    /// The instance-wide functions and labels.
    pub fn singular(&mut self, s: &Singular30<'_>) {
        let mut users = |f: &Func| {
            f.for_each_variable(|v| {
                self.used.insert(v);
            })
        };
        s.objective.into_iter().for_each(&mut users);
        s.output_objective.into_iter().for_each(&mut users);
        s.assignments.values().for_each(&mut users);
        for &v in s.assignments.keys() {
            self.used.insert(v);
        }
        if let Some(Func::Compact(f)) = s.objective {
            self.functions.objective_v3(f);
        }
        self.functions.framing_waste(s.framing_waste);
        self.strings.instance_v3(s.description, s.annotations);
    }

    /// Which of the variables shown are used, once the pass knows (v1
    /// input streams its variables before their users).
    pub fn variables_used(&mut self, used: &dyn Fn(u64) -> bool) {
        let (vars, set) = (&self.vars, &mut self.used);
        vars.for_each_id(|id| {
            if used(id) {
                set.insert(id);
            }
        });
    }

    /// The visitor of the instance's leaves (the pass may show them an
    /// entity at a time, then the instance-wide parts: they add up).
    pub fn leaves(&mut self) -> &mut dyn LogicalMemoryVisitor {
        &mut self.instance
    }

    /// The unused variables: count, bytes, label content, samples.
    fn unused(&self) -> (u64, u64, u64, Vec<Sample>) {
        let (mut count, mut bytes, mut content, mut samples) = (0, 0, 0, Vec::new());
        self.vars.for_each(|v| {
            if self.used.contains(&v.id) {
                return;
            }
            count += 1;
            bytes += v.bytes;
            content += v.content;
            if samples.len() < SAMPLES {
                samples.push(Sample {
                    entity: "variable",
                    id: Some(v.id),
                    name: v.name().map(quote),
                    detail: exact(v.bytes),
                });
            }
        });
        (count, bytes, content, samples)
    }

    fn content(&self) -> u64 {
        self.content.values().sum::<u64>() + self.instance.content()
    }

    /// Every finding, and the combined saving of the changes the user can
    /// make in OMMX (made in [`super::combined_saving`]'s order).
    pub fn findings(&mut self, total: u64) -> (Vec<Finding>, u64) {
        let (unused, unused_bytes, unused_content, unused_samples) = self.unused();
        let users = "objective, constraint, named function or dependency";
        let paths = self.removed_paths.iter().map(|p| p.to_string()).collect();
        let findings: Vec<Finding> = [
            unused_finding(
                false,
                users,
                self.vars.len(),
                unused,
                unused_bytes,
                &unused_samples,
            ),
            removed_finding(
                false,
                self.removed,
                self.removed_bytes,
                paths,
                &self.removed_samples.0,
            ),
            self.metadata(total),
            self.strings.finding(),
            self.functions.identical(),
            self.functions.matrix(),
            self.functions.variants(),
            self.functions.wasted(),
        ]
        .into_iter()
        .flatten()
        .collect();
        let fired = |rule: &str| findings.iter().any(|f| f.rule == rule);
        let mut combined = 0;
        let mut content = self.content();
        if fired(REMOVED) {
            combined += self.removed_bytes;
            content -= self.removed_content;
        }
        if fired(UNUSED) {
            combined += unused_bytes;
            content -= unused_content;
        }
        if fired(METADATA) {
            combined += content;
        }
        if fired(VARIANTS) {
            combined += self.functions.variants_kept();
        }
        (findings, combined)
    }

    fn metadata(&self, total: u64) -> Option<Finding> {
        let content = self.content();
        if content == 0 {
            return None;
        }
        let metadata = self.instance.metadata;
        let mut paths: Vec<String> = (0..super::strings::ROLE_PATHS_30.len())
            .filter(|r| self.label_roles & (1 << r) != 0)
            .map(|r| super::strings::ROLE_PATHS_30[r].to_string())
            .collect();
        if self.instance.description_present && self.instance.description > EMPTY_DESCRIPTION {
            paths.push("Instance.description".into());
        }
        if self.instance.annotations > EMPTY_ANNOTATIONS {
            paths.push("Instance.annotations".into());
        }
        let mut sample = self.top.sorted();
        let instance = self.instance.content();
        if instance > 0 && sample.len() < SAMPLES {
            sample.insert(
                0,
                Sample {
                    entity: "instance",
                    id: None,
                    name: None,
                    detail: format!("{} of description and annotations", exact(instance)),
                },
            );
        }
        let per_kind = self
            .content
            .iter()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| (k.to_string(), json!(c)))
            .collect();
        Some(Finding {
            rule: METADATA,
            change: Change::Ommx,
            measure: Measure::Logical,
            title: format!(
                "Labels (names, subscripts, parameters, descriptions, removal reasons, the \
                 instance's description and annotations) take {} of the {}, {}; {} of it is \
                 what they hold, the rest the empty stores OMMX 3.0 keeps in every instance",
                exact(metadata),
                exact(total),
                percent(metadata, total),
                exact(content)
            ),
            bytes_concerned: metadata,
            saving_bytes: content,
            paths,
            sample,
            suggestion: "Leave names, subscripts, parameters and descriptions, removal \
                reasons' text, the instance's description text and its annotations out of the \
                instance handed to the solver, keeping them in a side table keyed by id if \
                they are needed later. OMMX 3.0 then keeps only its empty label stores, an \
                empty reason per removed row and an empty description (an absent one takes \
                more)."
                .to_string(),
            details: details([
                ("metadata_bytes", json!(metadata)),
                ("content_bytes", json!(content)),
                ("instance_content_bytes", json!(instance)),
                ("per_kind", serde_json::Value::Object(per_kind)),
            ]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::functions::WASTED;
    use super::*;
    use crate::model::ommx30::{decode, Instance};
    use crate::profile::bytes_of;

    /// The instance's entities shown to a tally as a pass shows them: with
    /// `used` as the pass knows it, or in stream order without it (then the
    /// instance-wide functions after them).
    fn shown(inst: &Instance, stream: bool) -> Ommx30Tally {
        let mut tally = Ommx30Tally::default();
        let used = inst.used_variables();
        for e in inst.entities() {
            let known = (e.kind == EntityKind::Variable).then(|| used.contains(&e.id));
            let view = EntityView::ommx30(&e, if stream { None } else { known });
            let cost = Cost {
                bytes: bytes_of(&e),
                ..Cost::default()
            };
            tally.entity(&view, cost);
        }
        if stream {
            tally.singular(&Singular30 {
                objective: inst.objective.as_ref(),
                output_objective: inst.output_objective.as_ref().map(|o| &o.function),
                assignments: &inst.dependency.assignments,
                description: inst.description.as_ref(),
                annotations: &inst.annotations,
                framing_waste: inst.waste.framing,
            });
        }
        tally
    }

    /// Shown in stream order, without knowing which variables are used as
    /// they go by, the advisor finds the same unused variables as from the
    /// whole instance, on every v2 fixture.
    #[test]
    fn usage_is_worked_out_from_the_stream() {
        let mut unused = 0;
        for path in crate::fixtures::raw_v2() {
            let inst = decode(&std::fs::read(&path).unwrap()).unwrap();
            let known = shown(&inst, false).unused();
            let streamed = shown(&inst, true).unused();
            assert_eq!(known.0, streamed.0, "{}", path.display());
            assert_eq!(known.1, streamed.1, "{}", path.display());
            assert_eq!(known.2, streamed.2, "{}", path.display());
            unused += known.0;
        }
        assert!(unused > 10, "{unused}");
    }

    /// Shown, the objective's function is judged by the variant rule.
    #[test]
    fn the_objective_is_judged_once_shown() {
        use crate::model::Function;
        use crate::ommx_v1 as pb;
        let quadratic = pb::Function {
            function: Some(pb::FunctionArm::Quadratic(pb::Quadratic {
                linear: Some(pb::Linear {
                    terms: vec![pb::LinearTerm {
                        id: 1,
                        coefficient: 2.0,
                    }],
                    constant: 0.0,
                }),
                ..Default::default()
            })),
        };
        let objective = Func::Compact(Function::from_wire(&quadratic).unwrap());
        let mut tally = Ommx30Tally::default();
        let none = BTreeMap::new();
        tally.singular(&Singular30 {
            objective: Some(&objective),
            output_objective: None,
            assignments: &BTreeMap::new(),
            description: None,
            annotations: &none,
            framing_waste: 0,
        });
        let (findings, combined) = tally.findings(2000);
        let variants = findings.iter().find(|f| f.rule == VARIANTS).unwrap();
        // One term: 32 + 32 as Quadratic, 32 + 24 as Linear.
        assert_eq!(variants.saving_bytes, 8);
        assert_eq!(variants.details["objective_judged"], true);
        assert_eq!(combined, 8);
    }

    /// What the pass measures a function's file spends on dropped terms is
    /// the wasted-file-bytes rule's, with 3.0's paths.
    #[test]
    fn file_waste_comes_from_the_cost() {
        use crate::model::FileWaste;
        let inst = decode(
            &std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/fixtures/v2/oracle/indicator.pb"
            ))
            .unwrap(),
        )
        .unwrap();
        let mut tally = Ommx30Tally::default();
        let used = inst.used_variables();
        let waste = FileWaste {
            zero_terms: 1,
            merged_terms: 1,
            bytes: 11,
            written: 40,
        };
        let mut rows = 0;
        for e in inst.entities() {
            let cost = Cost {
                waste,
                ..Cost::default()
            };
            rows += u64::from(e.function().is_some());
            let known = (e.kind == EntityKind::Variable).then(|| used.contains(&e.id));
            tally.entity(&EntityView::ommx30(&e, known), cost);
        }
        let (findings, _) = tally.findings(1000);
        let wasted = findings.iter().find(|f| f.rule == WASTED).unwrap();
        assert_eq!(wasted.saving_bytes, 11 * rows);
        assert!(wasted.paths.iter().all(|p| p.starts_with("Instance.")));
        assert!(wasted
            .paths
            .iter()
            .any(|p| p.contains("indicator_constraint_collection")));
    }
}
