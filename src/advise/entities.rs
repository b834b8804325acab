//! Rules on whole entities: `unused-variables` (defined, used by nothing)
//! and `removed-constraints` (carried along). Both save what the entities
//! they leave out cost, as the pass measured it.
//!
//! A variable counts as used when the objective, an active or removed
//! constraint, a named function, a constraint hint or a dependency (as the
//! assigned variable or on the right-hand side) mentions it. Removed
//! constraints and named functions count as users because dropping a
//! variable they mention would break them (OMMX rejects a named function on
//! an undefined variable).

use serde_json::json;

use super::variables::Variables;
use super::{details, sample, Change, EntityKind, Finding, Measure, Owner, Sample, Samples};
use crate::ids::IdSet;
use crate::model::{Constraint, DecisionVariable, Function, RemovedConstraint};
use crate::pass::{Cost, NamedFunction, Singular};
use crate::units::{count, exact, thousands};

pub const UNUSED: &str = "unused-variables";
pub const REMOVED: &str = "removed-constraints";

/// The unused variables, once known.
#[derive(Debug, Default)]
pub struct Unused {
    pub count: u64,
    pub bytes: u64,
    /// Their label content (already inside `bytes`).
    pub content: u64,
    sample: Vec<Sample>,
}

#[derive(Default, Clone)]
pub struct EntityTally {
    /// Every variable, until the end tells which are used.
    vars: Variables,
    used: IdSet,
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
        self.vars.push(v.id, cost.bytes, content, v.name.as_deref());
    }

    pub fn constraint(&mut self, c: &Constraint) {
        self.uses(&c.function);
    }

    pub fn removed(&mut self, r: &RemovedConstraint, cost: Cost) {
        self.uses(&r.constraint.function);
        self.removed += 1;
        self.removed_bytes += cost.bytes;
        self.removed_samples.offer(|| {
            let reason = match r.removed_reason.as_str() {
                "" => "no reason given".to_string(),
                why => format!("removed because {:?}", super::quote(why)),
            };
            sample(
                Owner::Entity(EntityKind::Removed),
                Some(r.constraint.id),
                r.constraint.name.as_deref(),
                format!("{}, {reason}", exact(cost.bytes)),
            )
        });
    }

    pub fn named(&mut self, n: &NamedFunction) {
        self.uses(&n.function);
    }

    pub fn finish(&mut self, singular: &Singular<'_>) {
        self.used.absorb(singular.objective_variables.clone());
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
        self.vars.for_each(|v| {
            if self.used.contains(&v.id) {
                return;
            }
            unused.count += 1;
            unused.bytes += v.bytes;
            unused.content += v.content;
            if unused.sample.len() < super::SAMPLES {
                unused.sample.push(sample(
                    Owner::Entity(EntityKind::Variable),
                    Some(v.id),
                    v.name(),
                    exact(v.bytes),
                ));
            }
        });
        unused
    }

    pub fn unused_finding(&self, unused: &Unused) -> Option<Finding> {
        let users = "objective, constraint, named function, hint or dependency";
        let variables = self.vars.len();
        unused_finding(
            true,
            users,
            variables,
            unused.count,
            unused.bytes,
            &unused.sample,
        )
    }

    pub fn removed_finding(&self) -> Option<Finding> {
        let paths = vec!["Instance.removed_constraints".to_string()];
        removed_finding(
            true,
            self.removed,
            self.removed_bytes,
            paths,
            &self.removed_samples.0,
        )
    }
}

/// The unused-variables finding: `unused` of `variables` variables, holding
/// `bytes`, used by none of `users`; `hints`: the instance's OMMX has
/// constraint hints (2.9.3; 3.0 drops them).
pub(super) fn unused_finding(
    hints: bool,
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
        change: Change::Ommx,
        title: format!(
            "{} of {} {} used by no {users}; {} {}",
            thousands(unused),
            count(variables, "variable", "variables"),
            if unused == 1 { "is" } else { "are" },
            if unused == 1 { "it takes" } else { "they take" },
            exact(bytes)
        ),
        bytes_concerned: bytes,
        saving_bytes: bytes,
        paths: vec!["Instance.decision_variables".to_string()],
        sample: sample.to_vec(),
        suggestion: match hints {
            true => {
                "Leave the unused variables out of the instance (keep them elsewhere if \
                solutions must report them), and any constraint hint on a removed constraint \
                that names one: OMMX drops such hints when it loads the instance."
            }
            false => {
                "Leave the unused variables out of the instance (keep them elsewhere if \
                solutions must report them), with their labels and fixed values."
            }
        }
        .to_string(),
        details: details([("variables", json!(variables)), ("unused", json!(unused))]),
    })
}

/// The removed-constraints finding: `removed` of them, holding `bytes`
/// under `paths`; `hints` as for [`unused_finding`].
pub(super) fn removed_finding(
    hints: bool,
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
        change: Change::Ommx,
        title: format!(
            "{} {} carried along; {} {}",
            count(removed, "removed constraint", "removed constraints"),
            if removed == 1 { "is" } else { "are" },
            if removed == 1 {
                "it takes"
            } else {
                "they take"
            },
            exact(bytes)
        ),
        bytes_concerned: bytes,
        saving_bytes: bytes,
        paths,
        sample: sample.to_vec(),
        suggestion: match hints {
            true => {
                "Write the instance without its removed constraints when they are not \
                needed again (e.g. after a relaxation is final), or keep them in a separate \
                layer of the artifact; leave out with them any constraint hint on one (OMMX \
                drops those hints when it loads the instance)."
            }
            false => {
                "Write the instance without its removed rows when they are not needed \
                again (e.g. after a relaxation is final), or keep them in a separate layer of \
                the artifact."
            }
        }
        .to_string(),
        details: details([("removed_constraints", json!(removed))]),
    })
}
