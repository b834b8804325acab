//! `memprof explain`: how one path's bytes were computed.
//!
//! The explainer rides the pass like the other analyses and re-visits each
//! accepted entity (and, at the end, the singular fields) with the same
//! traversal the profile uses (for OMMX 3.0's accounting, the pass shows it
//! every leaf of `model::ommx30`'s traversal), keeping for every leaf below the asked path
//! its [`Rule`] and counts instead of only its bytes. Leaves are grouped by
//! (leaf path, rule): the explanation of `Instance.constraints;
//! Constraint.function` is one line per variant and rule, e.g.
//! `20,000 functions of 51 terms each: 20,000 × (32 B + 51 × 24 B) =
//! 25,120,000 B`. Memory is bounded
//! by the number of distinct leaf paths below the asked path.

use std::collections::BTreeMap;

use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::pass::{visit_entity_entry, visit_instance_parts, Cost, EntityObserver, Singular};
use crate::profile::family::{family_frame, GroupBy};
use crate::profile::{Frame, LogicalMemoryProfile, LogicalMemoryVisitor, Noun, Path, Rule};
use crate::profiled::Profile;

/// The leaves below an asked path that share a leaf path and a rule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Group {
    /// The leaf path (`;`-joined frames).
    pub path: String,
    /// What the rule counts, in words.
    pub rule: &'static str,
    /// What one leaf is (plural).
    pub leaf: &'static str,
    /// The same in both numbers, for sentences.
    #[serde(skip)]
    pub leaf_noun: Noun,
    pub leaves: u64,
    /// Bytes of every leaf, before its per-unit part.
    pub base: u64,
    pub units: Vec<Units>,
    /// `leaves × base + Σ total × bytes_per_unit`.
    pub bytes: u64,
}

/// One per-unit part of a rule, summed over a group's leaves.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Units {
    /// What is counted (plural).
    pub unit: &'static str,
    /// The same in both numbers, for sentences.
    #[serde(skip)]
    pub noun: Noun,
    pub bytes_per_unit: u64,
    /// Units over all the group's leaves.
    pub total: u64,
    /// Fewest and most units of one leaf.
    pub min: u64,
    pub max: u64,
}

/// How an asked path's bytes add up.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Explanation {
    pub path: String,
    /// The sum of the groups.
    pub bytes: u64,
    pub groups: Vec<Group>,
}

#[derive(Debug)]
struct Target {
    path: String,
    frames: Vec<String>,
    groups: BTreeMap<(String, &'static str), Group>,
}

/// The observer collecting explanations of one or more paths.
#[derive(Debug)]
pub struct Explainer {
    group_by: GroupBy,
    targets: Vec<Target>,
    /// Bytes of leaves emitted without a rule below an asked path; none by
    /// construction (every leaf of the profile has a rule).
    pub unexplained_bytes: u64,
}

impl Explainer {
    /// Explains each of `paths` (`;`-separated frames, as in folded output)
    /// of a profile made with `group_by`.
    pub fn new(paths: &[String], group_by: GroupBy) -> Self {
        Self {
            group_by,
            targets: paths
                .iter()
                .map(|p| Target {
                    path: p.clone(),
                    // `total`, the root, is every path.
                    frames: if p == "total" {
                        Vec::new()
                    } else {
                        p.split(';').map(str::to_string).collect()
                    },
                    groups: BTreeMap::new(),
                })
                .collect(),
            unexplained_bytes: 0,
        }
    }

    /// The explanations, checked against `profile`, the profile of the same
    /// pass: one instance only, and every asked path exists and adds up to
    /// what the profile reports. `file` names the input in messages.
    pub fn checked_explanations(
        self,
        profile: &Profile<'_>,
        file: &str,
    ) -> anyhow::Result<Vec<Explanation>> {
        let instances = profile.profiled.instances.len();
        if instances > 1 {
            anyhow::bail!(
                "{file}: explain works on one instance at a time and this archive has {instances}; pick one with --layer"
            );
        }
        if self.unexplained_bytes > 0 {
            anyhow::bail!(
                "{} bytes below the asked paths have no rule (a bug in memprof)",
                self.unexplained_bytes
            );
        }
        let group_by = self.group_by;
        let explanations = self.explanations();
        for x in &explanations {
            let node = if x.path == "total" {
                Some(crate::profile::Aggregate::ROOT)
            } else {
                profile.find(&x.path)
            };
            let Some(node) = node else {
                anyhow::bail!(
                    "{file}: the profile has no path {:?} (memprof inspect {file} --format folded{} lists them)",
                    x.path,
                    if group_by == GroupBy::Name { " --group-by name" } else { "" }
                );
            };
            let reported = profile.totals[node].bytes;
            if reported != x.bytes {
                anyhow::bail!(
                    "{file}: the explanation of {} adds up to {} B but the profile reports {reported} B (a bug in memprof)",
                    x.path,
                    x.bytes
                );
            }
        }
        Ok(explanations)
    }

    pub fn explanations(self) -> Vec<Explanation> {
        self.targets
            .into_iter()
            .map(|t| {
                let groups: Vec<Group> = t.groups.into_values().collect();
                Explanation {
                    path: t.path,
                    bytes: groups.iter().map(|g| g.bytes).sum(),
                    groups,
                }
            })
            .collect()
    }

    /// True when some asked path lies under the container `frame`.
    fn wants(&self, frame: &str) -> bool {
        self.targets
            .iter()
            .any(|t| t.frames.first().is_none_or(|first| first == frame))
    }

    fn entity<T: LogicalMemoryProfile>(
        &mut self,
        frame: &'static str,
        name: Option<&str>,
        value: &T,
    ) {
        if !self.wants(frame) {
            return;
        }
        let family = match self.group_by {
            GroupBy::None => None,
            GroupBy::Name => Some(family_frame(name)),
        };
        visit_entity_entry(frame, family, value, &mut Path::new(), self);
    }
}

fn under(target: &[String], path: &[Frame]) -> bool {
    target.len() <= path.len() && target.iter().zip(path).all(|(t, p)| t == p)
}

impl LogicalMemoryVisitor for Explainer {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        if bytes > 0 && self.targets.iter().any(|t| under(&t.frames, path.frames())) {
            self.unexplained_bytes += bytes as u64;
        }
    }

    fn visit_rule(&mut self, path: &Path, rule: &'static Rule, counts: [usize; 2]) {
        // The profile drops zero-byte leaves; so does the explanation.
        let bytes = rule.bytes(counts) as u64;
        if bytes == 0 {
            return;
        }
        for target in &mut self.targets {
            if !under(&target.frames, path.frames()) {
                continue;
            }
            let group = target
                .groups
                .entry((path.to_string(), rule.what))
                .or_insert_with(|| Group {
                    path: path.to_string(),
                    rule: rule.what,
                    leaf: rule.leaves.many,
                    leaf_noun: rule.leaves,
                    leaves: 0,
                    base: rule.base as u64,
                    units: rule
                        .per
                        .iter()
                        .filter(|(per, _)| *per > 0)
                        .map(|&(per, noun)| Units {
                            unit: noun.many,
                            noun,
                            bytes_per_unit: per as u64,
                            total: 0,
                            min: u64::MAX,
                            max: 0,
                        })
                        .collect(),
                    bytes: 0,
                });
            group.leaves += 1;
            group.bytes += bytes;
            for (units, &count) in group.units.iter_mut().zip(&counts) {
                let count = count as u64;
                units.total += count;
                units.min = units.min.min(count);
                units.max = units.max.max(count);
            }
        }
    }
}

impl EntityObserver for Explainer {
    fn variable(&mut self, v: &DecisionVariable, _cost: Cost) {
        self.entity("Instance.decision_variables", v.name.as_deref(), v);
    }
    fn constraint(&mut self, c: &Constraint, _cost: Cost) {
        self.entity("Instance.constraints", c.name.as_deref(), c);
    }
    fn removed_constraint(&mut self, r: &RemovedConstraint, _cost: Cost) {
        let name = r.constraint.name.as_deref();
        self.entity("Instance.removed_constraints", name, r);
    }
    fn finish(&mut self, singular: &Singular<'_>) {
        visit_instance_parts(singular, self);
    }
    /// OMMX 3.0's leaves come with their rules from the pass.
    fn leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        Some(self)
    }
    fn abandon(&mut self) {
        for t in &mut self.targets {
            t.groups.clear();
        }
        self.unexplained_bytes = 0;
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    crate::units::thousands(n)
}

impl Units {
    /// What one leaf holds: `51 terms`, `1 to 6 UTF-8 bytes (260 in all)`.
    fn per_leaf(&self) -> String {
        let n = thousands;
        if self.min == self.max {
            format!("{} {}", n(self.min), self.noun.of(self.min))
        } else {
            format!(
                "{} to {} {} ({} in all)",
                n(self.min),
                n(self.max),
                self.noun.many,
                n(self.total)
            )
        }
    }
}

impl Group {
    /// The arithmetic in words, every factor named: `210 values × 8 B =
    /// 1,680 B`; `2 functions of 51 terms each: 2 × (32 B + 51 × 24 B) =
    /// 2,512 B` when every leaf has the same counts, else `2 functions of 2
    /// to 4 terms (6 in all): 2 × 32 B + 6 × 24 B = 208 B`.
    pub fn arithmetic(&self) -> String {
        let n = thousands;
        let head = format!("{} {}", n(self.leaves), self.leaf_noun.of(self.leaves));
        let total = n(self.bytes);
        if self.units.is_empty() {
            return format!("{head} × {} B = {total} B", n(self.base));
        }
        let held: Vec<String> = self.units.iter().map(Units::per_leaf).collect();
        let held = held.join(" and ");
        if self.units.iter().all(|u| u.min == u.max) {
            let each = if self.leaves == 1 { "" } else { " each" };
            let parts: Vec<String> = self
                .units
                .iter()
                .map(|u| format!(" + {} × {} B", n(u.min), n(u.bytes_per_unit)))
                .collect();
            return format!(
                "{head} of {held}{each}: {} × ({} B{}) = {total} B",
                n(self.leaves),
                n(self.base),
                parts.concat()
            );
        }
        let parts: Vec<String> = self
            .units
            .iter()
            .map(|u| format!(" + {} × {} B", n(u.total), n(u.bytes_per_unit)))
            .collect();
        format!(
            "{head} of {held}: {} × {} B{} = {total} B",
            n(self.leaves),
            n(self.base),
            parts.concat()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::function::LINEAR_RULE;

    #[test]
    fn arithmetic_restates_the_rule() {
        let mut e = Explainer::new(&["A".to_string()], GroupBy::None);
        let mut path = Path::new();
        let p = path.with("A");
        for terms in [51, 51] {
            e.visit_rule(&p, &LINEAR_RULE, [terms, 0]);
        }
        let x = e.explanations().remove(0);
        assert_eq!(x.bytes, 2 * (32 + 24 * 51));
        assert_eq!(
            x.groups[0].arithmetic(),
            "2 functions of 51 terms each: 2 × (32 B + 51 × 24 B) = 2,512 B"
        );
        let mut e = Explainer::new(&["A".to_string()], GroupBy::None);
        e.visit_rule(&p, &LINEAR_RULE, [2, 0]);
        e.visit_rule(&p, &LINEAR_RULE, [4, 0]);
        let x = e.explanations().remove(0);
        assert_eq!(
            x.groups[0].arithmetic(),
            "2 functions of 2 to 4 terms (6 in all): 2 × 32 B + 6 × 24 B = 208 B"
        );
        assert_eq!(thousands(25_120_000), "25,120,000");
        assert_eq!(thousands(999), "999");
    }
}
