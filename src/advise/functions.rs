//! Rules on functions: `identical-functions` (constraints whose functions
//! are equal, or equal up to a scalar factor), `representation-csr` (bytes
//! per stored term against a compressed-sparse-row layout),
//! `representation-variant` (functions kept in a costlier variant than their
//! degree needs) and `wasted-file-bytes` (terms in the file that OMMX drops
//! or merges on load).
//!
//! Functions are compared by fingerprint (see [`super::hash`]): the sum of
//! one fingerprint per stored monomial, so a linear function stored as
//! Linear or as Polynomial compares equal. "Up to a scalar factor" divides
//! every coefficient by the pivot's (the coefficient of the smallest
//! monomial: lowest degree, then smallest ids) and rounds the quotient to 32
//! significant bits, so `2x + 4y` and `x + 2y` match; exact equality uses the
//! coefficients' bits. Only one entry per distinct function is kept.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use super::hash::{finish128, term128};
use super::{details, sample, EntityKind, Finding, Measure, Owner, Samples};
use crate::ids::BuildIdHasher;
use crate::model::{function, Constraint, FileWaste, Function};
use crate::pass::{NamedFunction, Singular};
use crate::units::human;
mod shape;
use shape::{shape, Shape};

pub const IDENTICAL: &str = "identical-functions";
pub const MATRIX: &str = "representation-csr";
pub const VARIANTS: &str = "representation-variant";
pub const WASTED: &str = "wasted-file-bytes";

/// What each further user of a shared function keeps: a reference (8 bytes)
/// and its scale factor (8 bytes).
pub const SHARE_HANDLE: u64 = 16;
/// The CSR baseline: 8 bytes per row (its offset), and per stored term 8
/// bytes per variable id plus 8 for the coefficient.
pub const CSR_ROW: u64 = 8;
pub const CSR_ID: u64 = 8;
pub const CSR_COEFFICIENT: u64 = 8;
/// OMMX 2.9.3's function layout: the terms container, then per term.
const TERMS_STACK: u64 = function::TERMS_STACK as u64;
const LINEAR_TERM: u64 = function::LINEAR_TERM as u64;
const QUADRATIC_TERM: u64 = function::QUADRATIC_TERM as u64;
const POLYNOMIAL_TERM: u64 = function::POLYNOMIAL_TERM as u64;

/// Constraints sharing one function up to a scalar factor.
#[derive(Debug)]
struct Group {
    members: u64,
    sum: u64,
    min: u64,
    /// The same over active constraints only.
    active: u64,
    active_sum: u64,
    active_min: u64,
    csr: u64,
    minimal: u64,
    first_kind: Owner,
    first_id: u64,
    first_pivot: f64,
    first_exact: u128,
}

#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    functions: u64,
    terms: u64,
    bytes: u64,
    other: u64,
}

/// Function paths by entity kind, for a recommendation's `paths`.
fn function_path(kind: Owner) -> &'static str {
    match kind {
        Owner::Entity(EntityKind::Constraint) => "Instance.constraints;Constraint.function",
        Owner::Entity(EntityKind::Removed) => {
            "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.function"
        }
        Owner::Instance | Owner::Entity(EntityKind::Objective) => "Instance.objective",
        Owner::Entity(EntityKind::NamedFunction) => {
            "Instance.named_functions (not counted by OMMX 2.9.3)"
        }
        Owner::Entity(EntityKind::Variable) => "Instance.decision_variables",
        // OMMX 3.0's kinds (these rules see ommx.v1 entities only).
        Owner::Entity(EntityKind::Indicator) => {
            "Instance.indicator_constraint_collection;indicator_constraints;IndicatorConstraint.stage;CreatedData.function"
        }
        Owner::Entity(EntityKind::RemovedIndicator) => {
            "Instance.indicator_constraint_collection;removed_indicator_constraints;Tuple.0;IndicatorConstraint.stage;CreatedData.function"
        }
        Owner::Entity(EntityKind::OneHot | EntityKind::RemovedOneHot) => {
            "Instance.one_hot_constraint_collection"
        }
        Owner::Entity(EntityKind::Sos1 | EntityKind::RemovedSos1) => {
            "Instance.sos1_constraint_collection"
        }
    }
}

const KINDS: [Owner; 4] = [
    Owner::Instance,
    Owner::Entity(EntityKind::Constraint),
    Owner::Entity(EntityKind::Removed),
    Owner::Entity(EntityKind::NamedFunction),
];

fn kind_bit(kind: Owner) -> u8 {
    1 << KINDS.iter().position(|k| *k == kind).unwrap_or(0)
}

fn paths(mask: u8) -> Vec<String> {
    KINDS
        .iter()
        .filter(|k| mask & kind_bit(**k) != 0)
        .map(|k| function_path(*k).to_string())
        .collect()
}

/// What one recommendation has seen so far: its sums, the kinds of entity
/// they come from, and sample entities.
#[derive(Debug, Default)]
struct Tally {
    sums: Sums,
    kinds: u8,
    samples: Samples,
}

impl Tally {
    /// Counts one function of an entity of `kind`.
    fn count(&mut self, kind: Owner, terms: u64, bytes: u64, other: u64) {
        self.sums.functions += 1;
        self.sums.terms += terms;
        self.sums.bytes += bytes;
        self.sums.other += other;
        self.kinds |= kind_bit(kind);
    }
}

#[derive(Debug, Default)]
pub struct FunctionTally {
    groups: HashMap<u128, Group, BuildIdHasher>,
    exact_seen: HashSet<u128, BuildIdHasher>,
    exact_repeats: u64,
    identical_samples: Samples,
    /// Constraint functions (active and removed): bytes, `other` = CSR bytes.
    matrix: Tally,
    /// Functions in a costlier variant: bytes, `other` = minimal bytes.
    variants: Tally,
    /// Functions with wasted file bytes: `terms` = zero terms, `other` =
    /// merged terms, `bytes` = encoded bytes.
    wasted: Tally,
    /// For the combined estimate: active constraint functions in all, those
    /// without variables (bytes, `other` = CSR), and the objective
    /// (bytes, `other` = minimal).
    active_bytes: u64,
    active_plain: Sums,
    objective: Sums,
}

impl FunctionTally {
    fn waste(&mut self, kind: Owner, id: Option<u64>, name: Option<&str>, w: FileWaste) {
        if w.bytes == 0 && w.zero_terms == 0 && w.merged_terms == 0 {
            return;
        }
        self.wasted
            .count(kind, w.zero_terms, w.bytes, w.merged_terms);
        self.wasted.samples.offer(|| {
            sample(
                kind,
                id,
                name,
                format!(
                    "{} zero and {} merged terms, {} encoded bytes",
                    w.zero_terms, w.merged_terms, w.bytes
                ),
            )
        });
    }

    fn variant(
        &mut self,
        kind: Owner,
        id: Option<u64>,
        name: Option<&str>,
        f: &Function,
        s: &Shape,
    ) {
        if s.minimal >= s.bytes {
            return;
        }
        self.variants.count(kind, s.terms, s.bytes, s.minimal);
        self.variants.samples.offer(|| {
            sample(
                kind,
                id,
                name,
                format!(
                    "{} of degree {} with {} terms: {} B, {} B as {}",
                    f.variant_name(),
                    s.degree,
                    s.terms,
                    s.bytes,
                    s.minimal,
                    s.minimal_variant
                ),
            )
        });
    }

    /// An active or removed constraint's function.
    pub fn constraint(&mut self, kind: Owner, c: &Constraint, waste: FileWaste) {
        let f = &c.function;
        let name = c.name.as_deref();
        let s = shape(f, true);
        let active = kind == Owner::Entity(EntityKind::Constraint);
        self.waste(kind, Some(c.id), name, waste);
        self.variant(kind, Some(c.id), name, f, &s);
        self.matrix.count(kind, s.terms, s.bytes, s.csr);
        if s.degree > 0 {
            self.matrix.samples.offer(|| {
                sample(
                    kind,
                    Some(c.id),
                    name,
                    format!(
                        "{} with {} terms: {} B, {} B in CSR",
                        f.variant_name(),
                        s.terms,
                        s.bytes,
                        s.csr
                    ),
                )
            });
        }
        if active {
            self.active_bytes += s.bytes;
        }
        if s.degree == 0 {
            // Constants are not worth sharing; they only change layout.
            if active {
                self.active_plain.bytes += s.bytes;
                self.active_plain.other += s.csr;
            }
            return;
        }
        let exact_repeat = !self.exact_seen.insert(s.exact);
        self.exact_repeats += u64::from(exact_repeat);
        let group = self.groups.entry(s.scaled).or_insert(Group {
            members: 0,
            sum: 0,
            min: u64::MAX,
            active: 0,
            active_sum: 0,
            active_min: u64::MAX,
            csr: s.csr,
            minimal: s.minimal,
            first_kind: kind,
            first_id: c.id,
            first_pivot: s.pivot,
            first_exact: s.exact,
        });
        if group.members > 0 {
            let detail = if s.exact == group.first_exact {
                format!(
                    "the same function as {} {}",
                    group.first_kind.label(),
                    group.first_id
                )
            } else {
                format!(
                    "{} × the function of {} {}",
                    s.pivot / group.first_pivot,
                    group.first_kind.label(),
                    group.first_id
                )
            };
            self.identical_samples
                .offer(|| sample(kind, Some(c.id), name, detail));
        }
        group.members += 1;
        group.sum += s.bytes;
        group.min = group.min.min(s.bytes);
        group.minimal = group.minimal.min(s.minimal);
        if active {
            group.active += 1;
            group.active_sum += s.bytes;
            group.active_min = group.active_min.min(s.bytes);
        }
    }

    pub fn named(&mut self, n: &NamedFunction, waste: FileWaste) {
        self.waste(
            Owner::Entity(EntityKind::NamedFunction),
            Some(n.id),
            n.name.as_deref(),
            waste,
        );
    }

    pub fn objective(&mut self, singular: &Singular<'_>) {
        let f = singular.objective;
        let s = shape(f, false);
        let name = Some("objective");
        self.waste(Owner::Instance, None, name, singular.objective_waste);
        self.variant(Owner::Instance, None, name, f, &s);
        self.objective = Sums {
            functions: 1,
            terms: s.terms,
            bytes: s.bytes,
            other: s.minimal,
        };
    }

    /// Sharing each set of identical functions: the cheapest member keeps
    /// its storage, every other member keeps a [`SHARE_HANDLE`].
    pub fn identical(&self) -> Option<Finding> {
        let (mut sets, mut repeats, mut concerned, mut saving, mut kinds) = (0, 0, 0, 0, 0u8);
        for g in self.groups.values().filter(|g| g.members > 1) {
            sets += 1;
            repeats += g.members - 1;
            concerned += g.sum;
            saving += (g.sum - g.min).saturating_sub(SHARE_HANDLE * (g.members - 1));
            if g.active > 0 {
                kinds |= kind_bit(Owner::Entity(EntityKind::Constraint));
            }
            if g.members > g.active {
                kinds |= kind_bit(Owner::Entity(EntityKind::Removed));
            }
        }
        if sets == 0 {
            return None;
        }
        let scaled = repeats - self.exact_repeats;
        Some(Finding {
            rule: IDENTICAL,
            measure: Measure::Logical,
            title: format!(
                "{repeats} constraints repeat the function of another ({} exactly, {scaled} up \
                 to a scalar factor) in {sets} sets of identical functions",
                self.exact_repeats
            ),
            bytes_concerned: concerned,
            saving_bytes: saving,
            severity: None,
            paths: paths(kinds),
            sample: self.identical_samples.0.clone(),
            suggestion: "Store each distinct function once and let the constraints that repeat \
                it refer to it with a scale factor (16 bytes each); repeats up to a factor are \
                often redundant constraints worth removing outright."
                .to_string(),
            details: details([
                ("sets", json!(sets)),
                ("repeating_constraints", json!(repeats)),
                ("exact_repeats", json!(self.exact_repeats)),
                ("scaled_repeats", json!(scaled)),
                ("share_handle_bytes", json!(SHARE_HANDLE)),
            ]),
        })
    }

    /// Constraint functions against the CSR baseline.
    pub fn matrix(&self) -> Option<Finding> {
        let m = self.matrix.sums;
        if m.terms == 0 || m.bytes <= m.other {
            return None;
        }
        let per_term = |bytes: u64| (bytes as f64 / m.terms as f64 * 10.0).round() / 10.0;
        Some(Finding {
            rule: MATRIX,
            measure: Measure::Logical,
            title: format!(
                "Constraint functions take {:.1} B per stored term ({} terms in {} functions); \
                 a CSR layout takes {:.1}",
                per_term(m.bytes),
                m.terms,
                m.functions,
                per_term(m.other)
            ),
            bytes_concerned: m.bytes,
            saving_bytes: m.bytes - m.other,
            severity: None,
            paths: paths(self.matrix.kinds),
            sample: self.matrix.samples.0.clone(),
            suggestion: format!(
                "Hold the constraint functions as one sparse matrix in CSR form ({CSR_ROW} B \
                 per row, {CSR_ID} B per variable id and {CSR_COEFFICIENT} B per coefficient) \
                 instead of one term map per constraint, e.g. when handing them to a solver \
                 or keeping many instances in memory."
            ),
            details: details([
                ("functions", json!(m.functions)),
                ("stored_terms", json!(m.terms)),
                ("bytes_per_term", json!(per_term(m.bytes))),
                ("csr_bytes", json!(m.other)),
                ("csr_bytes_per_term", json!(per_term(m.other))),
            ]),
        })
    }

    pub fn variants(&self) -> Option<Finding> {
        let v = self.variants.sums;
        if v.functions == 0 {
            return None;
        }
        Some(Finding {
            rule: VARIANTS,
            measure: Measure::Logical,
            title: format!(
                "{} functions ({} terms) are stored in a costlier variant than their degree \
                 needs",
                v.functions, v.terms
            ),
            bytes_concerned: v.bytes,
            saving_bytes: v.bytes - v.other,
            severity: None,
            paths: paths(self.variants.kinds),
            sample: self.variants.samples.0.clone(),
            suggestion: format!(
                "Write functions of degree ≤ 1 as Linear ({LINEAR_TERM} B a term) and of degree \
                 2 as Quadratic ({QUADRATIC_TERM} B a term) rather than Polynomial ({POLYNOMIAL_TERM} B a \
                 term); OMMX keeps the variant the file uses."
            ),
            details: details([
                ("functions", json!(v.functions)),
                ("stored_terms", json!(v.terms)),
                ("minimal_bytes", json!(v.other)),
            ]),
        })
    }

    pub fn wasted(&self) -> Option<Finding> {
        let w = self.wasted.sums;
        if w.functions == 0 {
            return None;
        }
        Some(Finding {
            rule: WASTED,
            measure: Measure::File,
            title: format!(
                "{} functions in the file carry {} zero-coefficient and {} duplicate terms \
                 that OMMX drops or merges on load ({})",
                w.functions,
                w.terms,
                w.other,
                human(w.bytes)
            ),
            bytes_concerned: w.bytes,
            saving_bytes: w.bytes,
            severity: None,
            paths: paths(self.wasted.kinds),
            sample: self.wasted.samples.0.clone(),
            suggestion: "Drop zero coefficients and sum duplicate terms before writing: the \
                loaded instance is the same and the file smaller. (Bytes counted: each \
                function's encoding and its length prefix; enclosing length prefixes may \
                shrink by a further byte.)"
                .to_string(),
            details: details([
                ("functions", json!(w.functions)),
                ("zero_terms", json!(w.terms)),
                ("merged_terms", json!(w.other)),
            ]),
        })
    }

    /// Step 4 of [`super::combined_saving`]: the active constraint
    /// functions and the objective after sharing and re-layout.
    pub fn combined(&self, plan: super::Plan) -> u64 {
        if !(plan.identical || plan.matrix || plan.variants) {
            return 0;
        }
        let before = self.active_bytes + self.objective.bytes;
        let mut after = 0;
        for g in self.groups.values().filter(|g| g.active > 0) {
            let k = g.active;
            let (one, all) = if plan.matrix {
                (g.csr, k * g.csr)
            } else if plan.variants {
                (g.minimal, k * g.minimal)
            } else {
                (g.active_min, g.active_sum)
            };
            after += if plan.identical {
                one + SHARE_HANDLE * (k - 1)
            } else {
                all
            };
        }
        after += if plan.matrix {
            self.active_plain.other
        } else {
            self.active_plain.bytes
        };
        after += if plan.variants {
            self.objective.other
        } else {
            self.objective.bytes
        };
        before.saturating_sub(after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(terms: &[(u64, f64)], constant: f64) -> Function {
        Function::Linear {
            terms: terms.to_vec(),
            constant,
        }
    }

    #[test]
    fn scaled_and_exact_fingerprints() {
        let a = shape(&linear(&[(1, 2.0), (2, 4.0)], 0.0), true);
        let b = shape(&linear(&[(1, 1.0), (2, 2.0)], 0.0), true);
        let c = shape(&linear(&[(1, 1.0), (2, 3.0)], 0.0), true);
        assert_eq!(a.scaled, b.scaled);
        assert_ne!(a.exact, b.exact);
        assert_ne!(a.scaled, c.scaled);
        // 0.1 * 3 is not exactly 0.3, but it is up to rounding.
        let d = shape(&linear(&[(1, 0.1), (2, 0.1 * 3.0)], 0.0), true);
        let e = shape(&linear(&[(1, 1.0), (2, 3.0)], 0.0), true);
        assert_eq!(d.scaled, e.scaled);
        // The same terms as a Polynomial: equal as functions, costlier to store.
        let p = Function::Polynomial {
            terms: vec![(vec![1], 1.0), (vec![2], 2.0)],
        };
        let p = shape(&p, true);
        assert_eq!(p.exact, b.exact);
        assert_eq!((p.bytes, p.minimal, b.bytes), (32 + 96, 32 + 48, 32 + 48));
    }

    #[test]
    fn csr_baseline() {
        // 8 per row, 16 per linear term, 24 per quadratic term, 8 a constant.
        let q = Function::Quadratic {
            quadratic: vec![((1, 2), 1.0)],
            linear: vec![(1, 1.0)],
            constant: 3.0,
        };
        assert_eq!(shape(&q, false).csr, 8 + 24 + 16 + 8);
        assert_eq!(shape(&Function::Zero, false).csr, 8);
    }
}
