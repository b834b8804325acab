//! `memprof advise`: recommendations with measured savings, computed in the
//! same streaming pass that profiles the instance.
//!
//! An [`Advisor`] is an [`EntityObserver`]: it sees every accepted entity
//! once, with its logical cost, and keeps only tallies, a few samples, one
//! hash entry per distinct string and per distinct constraint function, and
//! a small record per variable (whether a variable is unused is known only
//! once the objective, hints and dependencies at the end have been seen).
//! Every number is in OMMX 2.9.3's accounting, asked of `crate::model`,
//! except the `wasted-file-bytes` rule, which counts encoded bytes of the
//! file. Instances counted with OMMX 3.0's accounting get every rule on
//! 3.0's layout, with 3.0's numbers ([`ommx30`]).
//!
//! Each recommendation says which [`Change`] it is. A change the user can
//! make in OMMX is measured: `fixtures/advise/measured.py` applies it with
//! OMMX 2.9.3 and requires its saving to be what OMMX then reports. Moving
//! to OMMX 3.0 is measured by 3.0's accounting of the same instance
//! ([`migration`]). A layout OMMX does not offer (CSR, shared functions,
//! interned strings) can only be computed; those come last, as info.
//!
//! Rules live in four files: [`strings`] (metadata against payload,
//! duplicate strings), [`functions`] (identical functions, representation
//! cost, wasted file bytes), [`entities`] (unused variables, removed
//! constraints) and [`migration`] (OMMX 3.0). [`combined_saving`] explains
//! how overlapping savings are counted once.

mod entities;
mod functions;
mod hash;
mod migration;
mod ommx30;
mod recommendation;
mod strings;
mod variables;

use std::collections::HashMap;

use serde::Serialize;

use recommendation::{
    details, quote, sample, share_percent, Finding, Owner, Samples, TopSamples, SAMPLES,
};
pub use recommendation::{Change, Measure, NotComputed, Recommendation, Sample, Severity};

use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
pub use crate::pass::EntityKind;
use crate::pass::EntityObserver;
use crate::pass::{Cost, EntityView, NamedFunction, Part, Singular, Singular30};
use crate::profile::Aggregate;
use crate::profile::LogicalMemoryVisitor;
use crate::profiled::{Accounting, ProfiledInput, ProfiledInstance};
pub use migration::Migration;

/// The advice for one instance.
#[derive(Debug, Clone, Serialize)]
pub struct LayerAdvice {
    /// Whose accounting the numbers follow.
    #[serde(skip)]
    pub accounting: Accounting,
    /// Rules not computed for this instance, each with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_computed: Vec<NotComputed>,
    /// Position among the archive's instance layers; `None` for raw input.
    pub index: Option<usize>,
    pub title: Option<String>,
    /// Logical bytes under the instance's accounting.
    pub total_bytes: u64,
    /// Encoded bytes of the instance.
    pub file_bytes: u64,
    /// Logical bytes saved if every change the user can make in OMMX were
    /// made, overlaps counted once (see [`combined_saving`]); moving to
    /// OMMX 3.0 and other layouts are not in it.
    pub estimated_saving_bytes: u64,
    pub estimated_saving_percent: f64,
    /// Encoded bytes the `wasted-file-bytes` rule would save.
    pub file_saving_bytes: u64,
    /// Every recommendation: the changes the user can make in OMMX first,
    /// then moving to OMMX 3.0, then other layouts; each group by severity
    /// (the saving's share of the total it is measured against), then by
    /// saving.
    pub recommendations: Vec<Recommendation>,
}

/// The observer that gathers one instance's advice, in two parts that a
/// pass may show the stream to on threads of their own
/// ([`EntityObserver::parts`]): the function rules, which read every term,
/// and the others.
#[derive(Default, Clone)]
pub struct Advisor {
    tallies: Tallies,
    functions: FunctionRules,
}

/// What every rule but the function rules keeps.
#[derive(Default, Clone)]
struct Tallies {
    strings: strings::StringPool,
    metadata: strings::MetadataTally,
    entities: entities::EntityTally,
    /// The first entities, for the OMMX 3.0 finding's samples.
    sampled: migration::Sampled,
    /// The entities of an instance counted with OMMX 3.0's accounting.
    v3: ommx30::Ommx30Tally,
}

/// The function rules' tally of an instance counted with OMMX 2.9.3's
/// accounting (3.0's is in [`ommx30::Ommx30Tally`]).
#[derive(Default, Clone)]
struct FunctionRules {
    tally: functions::FunctionTally,
}

impl EntityObserver for Advisor {
    fn variable(&mut self, v: &DecisionVariable, cost: Cost) {
        self.tallies.variable(v, cost);
    }
    fn constraint(&mut self, c: &Constraint, cost: Cost) {
        self.tallies.constraint(c, cost);
        self.functions.constraint(c, cost);
    }
    fn removed_constraint(&mut self, r: &RemovedConstraint, cost: Cost) {
        self.tallies.removed_constraint(r, cost);
        self.functions.removed_constraint(r, cost);
    }
    fn named_function(&mut self, n: &NamedFunction, cost: Cost) {
        self.tallies.named_function(n, cost);
        self.functions.named_function(n, cost);
    }
    fn finish(&mut self, singular: &Singular<'_>) {
        self.tallies.finish(singular);
        self.functions.finish(singular);
    }
    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        self.tallies.entity(e, cost);
    }
    fn objective(&mut self, objective: &EntityView<'_>, cost: Cost) {
        self.tallies.objective(objective, cost);
    }
    fn ommx30_singular(&mut self, singular: &Singular30<'_>) {
        self.tallies.ommx30_singular(singular);
    }
    fn leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        self.tallies.leaves()
    }
    fn entity_leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        self.tallies.entity_leaves()
    }
    fn variables_used(&mut self, used: &dyn Fn(u64) -> bool) {
        self.tallies.variables_used(used);
    }
    fn ommx30_cost(&mut self, kind: EntityKind, id: u64, bytes: u64) {
        self.tallies.ommx30_cost(kind, id, bytes);
    }
    fn has_parts(&self) -> bool {
        true
    }
    fn parts(&mut self) -> Part<'_> {
        vec![&mut self.tallies, &mut self.functions]
    }
}

impl EntityObserver for Tallies {
    fn variable(&mut self, v: &DecisionVariable, cost: Cost) {
        let content = self.metadata.variable(v, cost);
        self.strings.variable(v);
        self.entities.variable(v, cost, content);
        self.sampled.variable(v, cost);
    }

    fn constraint(&mut self, c: &Constraint, cost: Cost) {
        self.metadata.constraint(c, cost);
        self.strings.constraint(
            c,
            Owner::Entity(EntityKind::Constraint),
            &strings::CONSTRAINT_ROLES,
        );
        self.entities.constraint(c);
        self.sampled.constraint(c, cost);
    }

    fn removed_constraint(&mut self, r: &RemovedConstraint, cost: Cost) {
        self.metadata.removed(r, cost);
        self.strings.removed(r);
        self.entities.removed(r, cost);
    }

    fn named_function(&mut self, n: &NamedFunction, _cost: Cost) {
        self.entities.named(n);
    }

    fn finish(&mut self, singular: &Singular<'_>) {
        self.metadata.instance(singular);
        self.strings.instance(singular);
        self.entities.finish(singular);
    }

    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        self.v3.entity(e, cost);
    }

    /// Only OMMX 3.0's rules look at it here (2.9.3's see it in `finish`).
    fn objective(&mut self, _objective: &EntityView<'_>, cost: Cost) {
        self.v3.objective(cost);
    }

    fn ommx30_singular(&mut self, singular: &Singular30<'_>) {
        self.v3.singular(singular);
    }

    /// OMMX 3.0's instance-wide labels are read off its leaves.
    fn leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        Some(self.v3.leaves())
    }
    /// An entity's label bytes are read in `entity`.
    fn entity_leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        None
    }
    fn variables_used(&mut self, used: &dyn Fn(u64) -> bool) {
        self.v3.variables_used(used);
    }
    fn ommx30_cost(&mut self, kind: EntityKind, id: u64, bytes: u64) {
        self.sampled.ommx30_cost(kind, id, bytes);
    }
}

impl EntityObserver for FunctionRules {
    fn constraint(&mut self, c: &Constraint, cost: Cost) {
        let kind = Owner::Entity(EntityKind::Constraint);
        self.tally.constraint(kind, c, cost.waste);
    }
    fn removed_constraint(&mut self, r: &RemovedConstraint, cost: Cost) {
        let kind = Owner::Entity(EntityKind::Removed);
        self.tally.constraint(kind, &r.constraint, cost.waste);
    }
    fn named_function(&mut self, n: &NamedFunction, cost: Cost) {
        self.tally.named(n, cost.waste);
    }
    fn finish(&mut self, singular: &Singular<'_>) {
        self.tally.objective(singular);
    }
    fn takes_ommx30_costs(&self) -> bool {
        false
    }
}

impl Advisor {
    /// The recommendations, once the instance is profiled; `migration` is
    /// what OMMX 3.0 makes of the same instance.
    pub fn advice(mut self, instance: &ProfiledInstance, migration: Migration) -> LayerAdvice {
        if instance.accounting == Accounting::Ommx30 {
            return self.advice_v3(instance);
        }
        let total = instance.aggregate.totals()[Aggregate::ROOT].bytes;
        let unused = self.tallies.entities.unused();
        let mut not_computed = Vec::new();
        let ommx30 = match migration::finding(instance, &self.tallies.sampled, migration) {
            Ok(finding) => finding,
            Err(reason) => {
                not_computed.push(reason);
                None
            }
        };
        let findings: Vec<Finding> = [
            self.tallies.metadata.finding(total),
            self.tallies.strings.finding(),
            self.functions.tally.identical(),
            self.tallies.entities.unused_finding(&unused),
            self.tallies.entities.removed_finding(),
            self.functions.tally.matrix(),
            self.functions.tally.variants(),
            ommx30,
            self.functions.tally.wasted(),
        ]
        .into_iter()
        .flatten()
        .collect();
        let fired = |rule: &str| findings.iter().any(|f| f.rule == rule);
        let plan = Plan {
            removed: fired(entities::REMOVED),
            unused: fired(entities::UNUSED),
            metadata: fired(strings::METADATA),
            variants: fired(functions::VARIANTS),
        };
        let combined = combined_saving(&self, &unused, plan);
        layer_advice(
            instance,
            Accounting::Ommx29,
            not_computed,
            findings,
            combined,
        )
    }

    /// The advice for an instance counted with OMMX 3.0's accounting: every
    /// rule on 3.0's layout ([`ommx30`]).
    fn advice_v3(mut self, instance: &ProfiledInstance) -> LayerAdvice {
        let total = instance.aggregate.totals()[Aggregate::ROOT].bytes;
        let (findings, combined) = self.tallies.v3.findings(total);
        layer_advice(
            instance,
            Accounting::Ommx30,
            ommx30::not_computed(),
            findings,
            combined,
        )
    }
}

/// One layer's advice: its findings as recommendations, in order (the
/// changes the user can make first, each group by severity and saving), with the
/// combined saving and the file bytes they would free.
fn layer_advice(
    instance: &ProfiledInstance,
    accounting: Accounting,
    not_computed: Vec<NotComputed>,
    findings: Vec<Finding>,
    combined: u64,
) -> LayerAdvice {
    let total = instance.aggregate.totals()[Aggregate::ROOT].bytes;
    let wire = instance.summary.wire_bytes;
    let file_saving = findings
        .iter()
        .filter(|f| f.measure == Measure::File)
        .map(|f| f.saving_bytes)
        .sum();
    let mut recommendations: Vec<Recommendation> = findings
        .into_iter()
        .map(|f| f.into_recommendation(total, wire))
        .collect();
    // Severity before bytes: a file saving and a memory saving compare by
    // their shares, and within one measure the severity follows the saving.
    recommendations.sort_by(|a, b| {
        a.change
            .cmp(&b.change)
            .then_with(|| b.severity.cmp(&a.severity))
            .then_with(|| b.saving_bytes.cmp(&a.saving_bytes))
            .then_with(|| a.rule.cmp(b.rule))
    });
    LayerAdvice {
        accounting,
        not_computed,
        index: instance.instance_index,
        title: instance.title.clone(),
        total_bytes: total,
        file_bytes: wire,
        estimated_saving_bytes: combined,
        estimated_saving_percent: (share_percent(combined, total) * 100.0).round() / 100.0,
        file_saving_bytes: file_saving,
        recommendations,
    }
}

/// Which of the changes the user can make in OMMX fired, i.e. which the
/// combined saving applies.
#[derive(Debug, Clone, Copy, Default)]
struct Plan {
    removed: bool,
    unused: bool,
    metadata: bool,
    variants: bool,
}

/// The saving if every change the user can make in OMMX that fired were
/// made, each byte counted once. The changes are made in this order, each
/// to what the previous ones left:
///
/// 1. removed constraints are left out, whole (so nothing else is counted
///    for them: not their labels or functions);
/// 2. unused variables are left out, whole;
/// 3. the remaining labels are left out, saving what they hold beyond the
///    empty fields;
/// 4. the objective and the remaining constraints' functions take their
///    cheapest variant.
///
/// Steps 3 and 4 touch disjoint bytes (labels, functions), so their savings
/// add; the total is what OMMX 2.9.3 reports once all four are made
/// (`fixtures/advise/measured.py`). `wasted-file-bytes` counts file bytes
/// and is reported apart; moving to OMMX 3.0 and layouts OMMX does not
/// offer are not changes to the instance and are not in it.
fn combined_saving(advisor: &Advisor, unused: &entities::Unused, plan: Plan) -> u64 {
    let mut saving = 0;
    if plan.removed {
        saving += advisor.tallies.entities.removed_bytes();
    }
    if plan.unused {
        saving += unused.bytes;
    }
    if plan.metadata {
        saving += advisor
            .tallies
            .metadata
            .content_kept(plan.removed, unused.content);
    }
    if plan.variants {
        saving += advisor.functions.tally.variants_kept();
    }
    saving
}

/// One [`Advisor`] per instance the pass read, with the position it was
/// read at.
#[derive(Default)]
pub struct Advisors {
    layers: Vec<(Option<usize>, Advisor)>,
}

/// Each instance gets a fresh [`Advisor`]; entities go to the current one.
impl EntityObserver for Advisors {
    fn begin(&mut self, layer: Option<usize>) {
        self.layers.push((layer, Advisor::default()));
    }
    fn variable(&mut self, variable: &DecisionVariable, cost: Cost) {
        self.current().variable(variable, cost);
    }
    fn constraint(&mut self, constraint: &Constraint, cost: Cost) {
        self.current().constraint(constraint, cost);
    }
    fn removed_constraint(&mut self, removed: &RemovedConstraint, cost: Cost) {
        self.current().removed_constraint(removed, cost);
    }
    fn named_function(&mut self, named: &NamedFunction, cost: Cost) {
        self.current().named_function(named, cost);
    }
    fn finish(&mut self, singular: &Singular<'_>) {
        self.current().finish(singular);
    }
    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        self.current().entity(e, cost);
    }
    fn objective(&mut self, objective: &EntityView<'_>, cost: Cost) {
        self.current().objective(objective, cost);
    }
    fn ommx30_singular(&mut self, singular: &Singular30<'_>) {
        self.current().ommx30_singular(singular);
    }
    fn leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        self.current().leaves()
    }
    fn entity_leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        self.current().entity_leaves()
    }
    fn variables_used(&mut self, used: &dyn Fn(u64) -> bool) {
        self.current().variables_used(used);
    }
    fn ommx30_cost(&mut self, kind: EntityKind, id: u64, bytes: u64) {
        self.current().ommx30_cost(kind, id, bytes);
    }
    /// Raw input read again as another schema: its advisor starts over.
    fn abandon(&mut self) {
        self.layers.pop();
    }
    fn has_parts(&self) -> bool {
        self.layers.last().is_some_and(|(_, a)| a.has_parts())
    }
    fn parts(&mut self) -> Part<'_> {
        self.current().parts()
    }
}

impl Advisors {
    fn current(&mut self) -> &mut Advisor {
        &mut self
            .layers
            .last_mut()
            .expect("begin() comes before every instance's entities")
            .1
    }

    /// The advice for each instance of `report`, in the report's order,
    /// with what OMMX 3.0 makes of each (`migrations`, by instance). An
    /// archive layer whose blob an earlier layer lists too was read once,
    /// under that layer's position: it gets that reading's advisor.
    pub fn advise(self, profiled: &ProfiledInput, migrations: Vec<Migration>) -> Vec<LayerAdvice> {
        assert_eq!(migrations.len(), profiled.instances.len());
        let mut uses: HashMap<Option<usize>, usize> = HashMap::new();
        for instance in &profiled.instances {
            *uses.entry(instance.observed_as).or_default() += 1;
        }
        let mut advisors: HashMap<Option<usize>, Advisor> = self.layers.into_iter().collect();
        assert_eq!(advisors.len(), uses.len(), "one advisor per reading");
        profiled
            .instances
            .iter()
            .zip(migrations)
            .map(|(instance, migration)| {
                let key = instance.observed_as;
                let left = uses.get_mut(&key).expect("counted");
                *left -= 1;
                let advisor = match *left {
                    0 => advisors.remove(&key),
                    _ => advisors.get(&key).cloned(),
                };
                advisor
                    .expect("an advisor for every reading")
                    .advice(instance, migration)
            })
            .collect()
    }
}
