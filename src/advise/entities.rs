//! Rules on whole entities: `unused-variables` (defined, used by nothing),
//! `removed-constraints` (carried along) and `fixed-overhead` (what each
//! variable and constraint costs before metadata and functions, against
//! OMMX 3.0's layout).
//!
//! A variable counts as used when the objective, an active or removed
//! constraint, a named function, a constraint hint or a dependency (as the
//! assigned variable or on the right-hand side) mentions it. Removed
//! constraints and named functions count as users because dropping a
//! variable they mention would break them (OMMX rejects a named function on
//! an undefined variable).

use serde_json::json;

use super::{details, sample, EntityKind, Finding, Measure, Owner, Sample, Samples};
use crate::ids::IdSet;
use crate::model::{Constraint, DecisionVariable, Function, RemovedConstraint};
use crate::pass::{Cost, NamedFunction, Singular};
use crate::units::human;

pub const UNUSED: &str = "unused-variables";
pub const REMOVED: &str = "removed-constraints";
pub const FIXED: &str = "fixed-overhead";

/// OMMX 3.0's per-entity fixed part, labels moved to per-instance tables:
/// a variable keeps its id (8), kind (1) and bound (16); a constraint its
/// id (8) and equality (1), besides its function.
pub const V3_VARIABLE: u64 = 25;
pub const V3_CONSTRAINT: u64 = 9;

/// What is kept per variable until the end tells which are used.
#[derive(Debug)]
struct VarRecord {
    id: u64,
    bytes: u64,
    content: u64,
    name: Option<Box<str>>,
}

/// The unused variables, once known.
#[derive(Debug, Default)]
pub struct Unused {
    pub count: u64,
    pub bytes: u64,
    /// Their metadata content (already inside `bytes`).
    pub content: u64,
    /// Their fixed part (already inside `bytes`).
    pub fixed: u64,
    sample: Vec<Sample>,
}

#[derive(Default)]
pub struct EntityTally {
    vars: Vec<VarRecord>,
    used: IdSet,
    var_fixed: u64,
    constraints: u64,
    constraint_fixed: u64,
    fixed_samples: Samples,
    removed: u64,
    removed_bytes: u64,
    removed_samples: Samples,
}

impl EntityTally {
    fn uses(&mut self, f: &Function) {
        f.for_each_variable(|id| {
            self.used.insert(id);
        });
    }

    pub fn variable(&mut self, v: &DecisionVariable, cost: Cost, content: u64) {
        let fixed = cost.bytes - content;
        self.var_fixed += fixed;
        self.fixed_samples.offer(|| {
            sample(
                Owner::Entity(EntityKind::Variable),
                Some(v.id),
                v.name.as_deref(),
                format!("{fixed} B fixed, about {V3_VARIABLE} B in OMMX 3.0"),
            )
        });
        self.vars.push(VarRecord {
            id: v.id,
            bytes: cost.bytes,
            content,
            name: v.name.as_deref().map(Box::from),
        });
    }

    pub fn constraint(&mut self, c: &Constraint, cost: Cost, content: u64) {
        self.uses(&c.function);
        let fixed = cost.bytes - c.function.bytes() as u64 - content;
        self.constraints += 1;
        self.constraint_fixed += fixed;
        self.fixed_samples.offer(|| {
            sample(
                Owner::Entity(EntityKind::Constraint),
                Some(c.id),
                c.name.as_deref(),
                format!(
                    "{fixed} B fixed besides its function, about {V3_CONSTRAINT} B in OMMX 3.0"
                ),
            )
        });
    }

    pub fn removed(&mut self, r: &RemovedConstraint, cost: Cost, _content: u64) {
        self.uses(&r.constraint.function);
        self.removed += 1;
        self.removed_bytes += cost.bytes;
        self.removed_samples.offer(|| {
            sample(
                Owner::Entity(EntityKind::Removed),
                Some(r.constraint.id),
                r.constraint.name.as_deref(),
                format!(
                    "{} B, removed because {:?}",
                    cost.bytes,
                    super::quote(&r.removed_reason)
                ),
            )
        });
    }

    pub fn named(&mut self, n: &NamedFunction) {
        self.uses(&n.function);
    }

    pub fn finish(&mut self, singular: &Singular<'_>) {
        self.uses(singular.objective);
        for h in &singular.hints.one_hot {
            h.variables.iter().for_each(|&id| {
                self.used.insert(id);
            });
        }
        for h in &singular.hints.sos1 {
            h.variables.iter().for_each(|&id| {
                self.used.insert(id);
            });
        }
        for (&key, f) in &singular.dependency.assignments {
            self.used.insert(key);
            self.uses(f);
        }
    }

    pub fn removed_bytes(&self) -> u64 {
        self.removed_bytes
    }

    pub fn unused(&self) -> Unused {
        let mut unused = Unused::default();
        for v in self.vars.iter().filter(|v| !self.used.contains(&v.id)) {
            unused.count += 1;
            unused.bytes += v.bytes;
            unused.content += v.content;
            unused.fixed += v.bytes - v.content;
            if unused.sample.len() < super::SAMPLES {
                unused.sample.push(sample(
                    Owner::Entity(EntityKind::Variable),
                    Some(v.id),
                    v.name.as_deref(),
                    format!("{} B", v.bytes),
                ));
            }
        }
        unused
    }

    pub fn unused_finding(&self, unused: &Unused) -> Option<Finding> {
        let users = "objective, constraint, hint or dependency";
        let variables = self.vars.len() as u64;
        unused_finding(users, variables, unused.count, unused.bytes, &unused.sample)
    }

    pub fn removed_finding(&self) -> Option<Finding> {
        let paths = vec!["Instance.removed_constraints".to_string()];
        removed_finding(
            self.removed,
            self.removed_bytes,
            paths,
            &self.removed_samples.0,
        )
    }

    fn fixed_saving(&self, vars: u64, var_fixed: u64) -> u64 {
        var_fixed.saturating_sub(V3_VARIABLE * vars)
            + self
                .constraint_fixed
                .saturating_sub(V3_CONSTRAINT * self.constraints)
    }

    pub fn fixed_finding(&self) -> Option<Finding> {
        let vars = self.vars.len() as u64;
        let saving = self.fixed_saving(vars, self.var_fixed);
        if saving == 0 {
            return None;
        }
        let each = |sum: u64, n: u64| sum.checked_div(n).unwrap_or(0);
        Some(Finding {
            rule: FIXED,
            measure: Measure::Logical,
            title: format!(
                "{vars} variables cost {} B each and {} constraints {} B each before metadata \
                 and functions; OMMX 3.0's layout needs about {V3_VARIABLE} and {V3_CONSTRAINT}",
                each(self.var_fixed, vars),
                self.constraints,
                each(self.constraint_fixed, self.constraints)
            ),
            bytes_concerned: self.var_fixed + self.constraint_fixed,
            saving_bytes: saving,
            severity: None,
            paths: vec![
                "Instance.decision_variables".to_string(),
                "Instance.constraints".to_string(),
            ],
            sample: self.fixed_samples.0.clone(),
            suggestion: format!(
                "Move to OMMX 3.0, which keeps labels in per-instance tables instead of empty \
                 fields in every entity: about {V3_VARIABLE} B per unlabelled variable instead \
                 of 153, and {V3_CONSTRAINT} B per constraint besides its function instead of 121."
            ),
            details: details([
                ("variables", json!(vars)),
                ("variable_fixed_bytes", json!(self.var_fixed)),
                ("constraints", json!(self.constraints)),
                ("constraint_fixed_bytes", json!(self.constraint_fixed)),
                ("v3_variable_bytes", json!(V3_VARIABLE)),
                ("v3_constraint_bytes", json!(V3_CONSTRAINT)),
            ]),
        })
    }

    /// Step 5 of [`super::combined_saving`]: the fixed saving over the
    /// variables left once the unused ones are dropped.
    pub fn fixed_saving_kept(&self, unused: &Unused) -> u64 {
        let vars = self.vars.len() as u64 - unused.count;
        self.fixed_saving(vars, self.var_fixed - unused.fixed)
    }
}

/// The unused-variables finding: `unused` of `variables` variables, holding
/// `bytes`, used by none of `users`.
pub(super) fn unused_finding(
    users: &str,
    variables: u64,
    unused: u64,
    bytes: u64,
    sample: &[Sample],
) -> Option<Finding> {
    if unused == 0 {
        return None;
    }
    Some(Finding {
        rule: UNUSED,
        measure: Measure::Logical,
        title: format!(
            "{unused} of {variables} variables are used by no {users} ({})",
            human(bytes)
        ),
        bytes_concerned: bytes,
        saving_bytes: bytes,
        severity: None,
        paths: vec!["Instance.decision_variables".to_string()],
        sample: sample.to_vec(),
        suggestion: "Leave unused variables out of the instance (keep them elsewhere if \
            solutions must report them)."
            .to_string(),
        details: details([("variables", json!(variables)), ("unused", json!(unused))]),
    })
}

/// The removed-constraints finding: `removed` of them, holding `bytes`
/// under `paths`.
pub(super) fn removed_finding(
    removed: u64,
    bytes: u64,
    paths: Vec<String>,
    sample: &[Sample],
) -> Option<Finding> {
    if removed == 0 {
        return None;
    }
    Some(Finding {
        rule: REMOVED,
        measure: Measure::Logical,
        title: format!(
            "{removed} removed constraints are carried along ({})",
            human(bytes)
        ),
        bytes_concerned: bytes,
        saving_bytes: bytes,
        severity: None,
        paths,
        sample: sample.to_vec(),
        suggestion: "Write the instance without its removed constraints when they are not \
            needed again (e.g. after a relaxation is final), or keep them in a separate \
            layer of the artifact."
            .to_string(),
        details: details([("removed_constraints", json!(removed))]),
    })
}
