//! `advise` on instances counted with OMMX 3.0's accounting (`ommx.v2`, or
//! v1 read with `--accounting 3.0`).
//!
//! Two rules carry over with 3.0's own numbers: `removed-constraints` and
//! `unused-variables` save what the entities they drop cost in 3.0 (each
//! entity's bytes as `top` reports them: its rows, label entries, removed
//! reason, provenance and fixed value), which the pass measures. The others
//! are built on OMMX 2.9.3's layout or on ommx.v1's encoding; they are listed
//! as not computed, each with its reason, rather than shown with 2.9.3's
//! numbers.

use std::collections::BTreeSet;

use super::entities::{removed_finding, unused_finding};
use super::functions::{IDENTICAL, MATRIX, VARIANTS, WASTED};
use super::strings::{DUPLICATES, METADATA};
use super::{migration, quote, Finding, NotComputed, Sample, Samples};
use crate::model::EntityKind;
use crate::pass::{Cost, EntityView};

/// The rules not computed for an OMMX 3.0 instance, and why.
pub fn not_computed() -> Vec<NotComputed> {
    let functions = "built on ommx.v1's constraints and OMMX 2.9.3's paths; not yet computed \
                     for OMMX 3.0's constraint collections";
    [
        (
            METADATA,
            "OMMX 3.0 stores a label field only when it is set, in per-instance tables: \
             there are no empty metadata fields to move out",
        ),
        (
            migration::RULE,
            "the instance is counted as OMMX 3.0 holds it already",
        ),
        (
            DUPLICATES,
            "its savings follow OMMX 2.9.3's per-entity strings; not yet computed for \
             OMMX 3.0's label stores",
        ),
        (IDENTICAL, functions),
        (MATRIX, functions),
        (VARIANTS, functions),
        (
            WASTED,
            "measures what normalizing ommx.v1 functions drops from the file; not \
             computed for OMMX 3.0",
        ),
    ]
    .into_iter()
    .map(|(rule, reason)| NotComputed {
        rule,
        reason: reason.to_string(),
    })
    .collect()
}

/// What the two rules need, gathered from the entities as the pass shows
/// them.
#[derive(Debug, Default, Clone)]
pub struct Ommx30Tally {
    variables: u64,
    unused: u64,
    unused_bytes: u64,
    unused_samples: Samples,
    removed: u64,
    removed_bytes: u64,
    removed_samples: Samples,
    /// Containers holding removed rows, for the finding's paths.
    removed_paths: BTreeSet<&'static str>,
    /// Variables shown before the pass knew whether they are used (v1
    /// input streams), in stream order, until it tells.
    undecided: Vec<Undecided>,
}

/// A variable whose use is not known yet: what the rule would count and
/// sample of it.
#[derive(Debug, Clone)]
struct Undecided {
    id: u64,
    bytes: u64,
    name: Option<String>,
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

impl Ommx30Tally {
    pub fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        if e.kind == EntityKind::Variable {
            self.variables += 1;
            match e.used {
                Some(false) => self.unused_variable(e, cost.bytes),
                Some(true) => {}
                None => self.undecided.push(Undecided {
                    id: e.id,
                    bytes: cost.bytes,
                    name: e.name.map(quote),
                }),
            }
        } else if let Some(paths) = removed_paths(e.kind) {
            self.removed += 1;
            self.removed_bytes += cost.bytes;
            self.removed_paths.extend(paths);
            self.removed_samples
                .offer(|| sample(e.kind.noun(), e, crate::units::exact(cost.bytes)));
        }
    }

    fn unused_variable(&mut self, e: &EntityView<'_>, bytes: u64) {
        self.unused += 1;
        self.unused_bytes += bytes;
        self.unused_samples
            .offer(|| sample("variable", e, crate::units::exact(bytes)));
    }

    /// Which of the variables shown undecided are used, once the pass
    /// knows.
    pub fn variables_used(&mut self, used: &dyn Fn(u64) -> bool) {
        for v in std::mem::take(&mut self.undecided) {
            if used(v.id) {
                continue;
            }
            self.unused += 1;
            self.unused_bytes += v.bytes;
            self.unused_samples.offer(|| Sample {
                entity: "variable",
                id: Some(v.id),
                name: v.name,
                detail: crate::units::exact(v.bytes),
            });
        }
    }

    /// The saving of both rules: they drop disjoint entities.
    pub fn combined(&self) -> u64 {
        self.unused_bytes + self.removed_bytes
    }

    pub fn findings(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        let users = "objective, constraint, named function or dependency";
        findings.extend(unused_finding(
            users,
            self.variables,
            self.unused,
            self.unused_bytes,
            &self.unused_samples.0,
        ));
        let paths = self.removed_paths.iter().map(|p| p.to_string()).collect();
        findings.extend(removed_finding(
            self.removed,
            self.removed_bytes,
            paths,
            &self.removed_samples.0,
        ));
        findings
    }
}
