//! `ommx-3-layout`: what moving to OMMX 3.0 would make of the instance.
//!
//! OMMX 3.0 (3.0.0b7, a pre-release) holds an instance in another layout:
//! labels in per-instance tables instead of empty fields in every entity,
//! a collection per constraint kind, named functions counted. The finding
//! compares the instance's profile under OMMX 2.9.3's accounting with its
//! profile under 3.0's, counted in the same pass (`pass::Reading::compare`;
//! the migration view, `memprof diff FILE --accounting 2.9,3.0`): its
//! saving is the difference of the two totals, which is the migration
//! diff summed over the paths it lists (every top-level path whose bytes
//! differ; its paths are those of them the instance has, the others are in
//! its details). When 3.0 takes more, it says so and saves nothing. Its samples
//! are the first variables and constraints, with what each costs in both
//! (as `top` counts them under each accounting; the pass tells the 3.0
//! cost, `EntityObserver::ommx30_cost`).

use std::collections::BTreeMap;

use serde_json::json;

use super::{details, quote, Change, Finding, Measure, NotComputed, Sample};
use crate::model::{Constraint, DecisionVariable, EntityKind};
use crate::pass::Cost;
use crate::profile::Aggregate;
use crate::profiled::ProfiledInstance;
use crate::units::{exact, exact_share};

pub const RULE: &str = "ommx-3-layout";
/// The OMMX 3.0 release whose accounting memprof follows.
const VERSION: &str = "3.0.0b7";
/// Variables and constraints sampled.
const VARIABLES: usize = 3;
const CONSTRAINTS: usize = 2;

/// What OMMX 3.0 makes of one instance.
#[derive(Debug)]
pub enum Migration {
    /// No comparison: the instance is counted as 3.0 holds it already.
    None,
    /// The same instance under 3.0's accounting.
    Measured { instance: Box<ProfiledInstance> },
    /// 3.0 cannot read it: why.
    Refused(String),
}

/// One sampled entity and its cost under OMMX 2.9.3's accounting and, once
/// the pass has told it, under 3.0's.
#[derive(Debug, Clone)]
struct Entity {
    kind: EntityKind,
    id: u64,
    name: Option<String>,
    bytes: u64,
    ommx30_bytes: Option<u64>,
}

/// The first variables and constraints of an instance.
#[derive(Debug, Default, Clone)]
pub struct Sampled {
    variables: Vec<Entity>,
    constraints: Vec<Entity>,
}

impl Sampled {
    pub fn variable(&mut self, v: &DecisionVariable, cost: Cost) {
        if self.variables.len() < VARIABLES {
            self.variables.push(Entity {
                kind: EntityKind::Variable,
                id: v.id,
                name: v.name.as_deref().map(quote),
                bytes: cost.bytes,
                ommx30_bytes: None,
            });
        }
    }

    pub fn constraint(&mut self, c: &Constraint, cost: Cost) {
        if self.constraints.len() < CONSTRAINTS {
            self.constraints.push(Entity {
                kind: EntityKind::Constraint,
                id: c.id,
                name: c.name.as_deref().map(quote),
                bytes: cost.bytes,
                ommx30_bytes: None,
            });
        }
    }

    /// What the entity shown last costs under OMMX 3.0's accounting (the
    /// pass compares them as it reads).
    pub fn ommx30_cost(&mut self, kind: EntityKind, id: u64, bytes: u64) {
        let sampled = match kind {
            EntityKind::Variable => &mut self.variables,
            EntityKind::Constraint => &mut self.constraints,
            _ => return,
        };
        if let Some(e) = sampled.last_mut().filter(|e| e.id == id) {
            e.ommx30_bytes = Some(bytes);
        }
    }

    fn all(&self) -> impl Iterator<Item = &Entity> {
        self.variables.iter().chain(&self.constraints)
    }
}

/// Bytes under each top-level frame.
fn top_level(aggregate: &Aggregate) -> BTreeMap<String, u64> {
    let totals = aggregate.totals();
    aggregate
        .node(Aggregate::ROOT)
        .children
        .iter()
        .map(|&child| (aggregate.node(child).name.to_string(), totals[child].bytes))
        .collect()
}

/// The finding, or why there is none: `Ok(None)` when the instance is
/// counted as 3.0 holds it already.
pub fn finding(
    instance: &ProfiledInstance,
    sampled: &Sampled,
    migration: Migration,
) -> Result<Option<Finding>, NotComputed> {
    let not_computed = |reason: String| NotComputed { rule: RULE, reason };
    let v3 = match migration {
        Migration::None => return Ok(None),
        Migration::Refused(why) => {
            return Err(not_computed(format!(
                "{why} (moving to OMMX 3.0 would need the instance changed first; \
                 {VERSION} is a pre-release)"
            )))
        }
        Migration::Measured { instance } => instance,
    };
    let old = top_level(&instance.aggregate);
    let new = top_level(&v3.aggregate);
    let (old_total, new_total): (u64, u64) = (old.values().sum(), new.values().sum());
    let mut changed: Vec<(&str, u64, u64)> = old
        .keys()
        .chain(new.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|path| {
            let at = |side: &BTreeMap<String, u64>| side.get(path).copied().unwrap_or(0);
            (path.as_str(), at(&old), at(&new))
        })
        .filter(|(_, a, b)| a != b)
        .collect();
    changed.sort_by(|a, b| {
        let delta = |(_, a, b): &(&str, u64, u64)| a.abs_diff(*b);
        delta(b).cmp(&delta(a)).then_with(|| a.0.cmp(b.0))
    });
    let saving = old_total.saturating_sub(new_total);
    let title = match new_total.cmp(&old_total) {
        std::cmp::Ordering::Less => format!(
            "OMMX 3.0 would hold this instance in {} instead of {}: {} less",
            exact(new_total),
            exact(old_total),
            exact_share(saving, old_total)
        ),
        std::cmp::Ordering::Greater => format!(
            "OMMX 3.0 would hold this instance in {}, {} more than OMMX 2.9.3's {}: moving \
             to it saves nothing here",
            exact(new_total),
            exact(new_total - old_total),
            exact(old_total)
        ),
        std::cmp::Ordering::Equal => format!(
            "OMMX 3.0 would hold this instance in the same {} as OMMX 2.9.3",
            exact(old_total)
        ),
    };
    let suggestion = if saving > 0 {
        format!(
            "OMMX 3.0 keeps labels in per-instance tables rather than an empty field in \
             every entity. It is a pre-release ({VERSION}): weigh this saving against moving \
             to it before it is final. `memprof diff` with `--accounting 2.9,3.0` on this \
             file shows the difference path by path."
        )
    } else {
        format!(
            "Stay with OMMX 2.9.3 as far as memory goes: 3.0's per-instance tables (a \
             collection per constraint kind, label stores) cost more here than the empty \
             fields they replace. OMMX 3.0 is a pre-release ({VERSION}); `memprof diff` with \
             `--accounting 2.9,3.0` on this file shows the difference path by path."
        )
    };
    let sample = sampled
        .all()
        .filter_map(|e| {
            let v3 = e.ommx30_bytes?;
            Some(Sample {
                entity: e.kind.noun(),
                id: Some(e.id),
                name: e.name.clone(),
                detail: format!(
                    "{} in OMMX 2.9.3, {} in OMMX 3.0",
                    exact(e.bytes),
                    exact(v3)
                ),
            })
        })
        .collect();
    let per_path: Vec<serde_json::Value> = changed
        .iter()
        .map(|(path, a, b)| json!({"path": path, "ommx29_bytes": a, "ommx30_bytes": b}))
        .collect();
    Ok(Some(Finding {
        rule: RULE,
        change: Change::Ommx30,
        measure: Measure::Logical,
        title,
        bytes_concerned: changed.iter().map(|(_, a, _)| a).sum(),
        saving_bytes: saving,
        // The paths of this instance: those 3.0 alone has (its
        // collections) are in `per_path`, not here.
        paths: changed
            .iter()
            .filter(|(_, old, _)| *old > 0)
            .map(|(p, _, _)| p.to_string())
            .collect(),
        sample,
        suggestion,
        details: details([
            ("ommx29_bytes", json!(old_total)),
            ("ommx30_bytes", json!(new_total)),
            ("ommx30_version", json!(VERSION)),
            ("pre_release", json!(true)),
            ("per_path", json!(per_path)),
        ]),
    }))
}
