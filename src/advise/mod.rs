//! `memprof advise`: recommendations with measured savings, computed in the
//! same streaming pass that profiles the instance.
//!
//! An [`Advisor`] is an [`EntityObserver`]: it sees every accepted entity
//! once, with its logical cost, and keeps only tallies, a few samples, one
//! hash entry per distinct string and per distinct constraint function, and
//! a small record per variable (whether a variable is unused is known only
//! once the objective, hints and dependencies at the end have been seen).
//! Every number is in OMMX 2.9.3's accounting (see `fixtures/README.md` and
//! `crate::profile::collections`), except the `wasted-file-bytes`
//! rule, which counts encoded bytes of the file. Instances counted with
//! OMMX 3.0's accounting get the rules that carry over, with 3.0's numbers,
//! and the others listed as not computed ([`v3`]).
//!
//! Rules live in three files: [`strings`] (metadata against payload,
//! duplicate strings), [`functions`] (identical functions, representation
//! cost, wasted file bytes) and [`entities`] (unused variables, removed
//! constraints, per-entity fixed overhead). [`combined_saving`] explains how
//! overlapping savings are counted once.

mod entities;
mod functions;
mod hash;
mod strings;
mod v3;

use serde::Serialize;

use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
pub use crate::pass::EntityKind;
use crate::pass::EntityObserver;
use crate::pass::{Cost, EntityView, NamedFunction, Singular};
use crate::profile::Aggregate;
use crate::report::{Accounting, ProfiledInstance, Report};

/// How much a recommendation matters: the share of the total (logical
/// bytes, or file bytes for file rules) its estimated saving would free.
/// Ranking by the saving rather than by the bytes concerned keeps the
/// severities in the same order as the table, which is sorted by saving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
}

impl crate::names::Named for Severity {
    const ALL: &'static [Self] = &[
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
    ];
    fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

impl Severity {
    /// Lower bounds, in percent of the total, of each severity above info.
    pub const THRESHOLDS: [(Severity, f64); 3] = [
        (Severity::High, 20.0),
        (Severity::Medium, 5.0),
        (Severity::Low, 1.0),
    ];

    /// The severity of saving `part` bytes of `whole`.
    pub fn from_share(part: u64, whole: u64) -> Self {
        let percent = share_percent(part, whole);
        Self::THRESHOLDS
            .iter()
            .find(|(_, at_least)| percent >= *at_least)
            .map_or(Severity::Info, |(s, _)| *s)
    }

    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

fn share_percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Which bytes a recommendation counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// OMMX 2.9.3's logical bytes; percentages are of the logical total.
    Logical,
    /// Encoded bytes of the instance in the file; percentages are of those.
    File,
}

/// Who owns a function or string an advise rule counts: an entity of a
/// kind, or the instance itself (the objective, the instance's metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    Entity(EntityKind),
    Instance,
}

impl Owner {
    pub fn label(self) -> &'static str {
        match self {
            Owner::Entity(kind) => kind.noun(),
            Owner::Instance => "instance",
        }
    }
}

/// One affected entity, as an example.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    pub entity: &'static str,
    pub id: Option<u64>,
    pub name: Option<String>,
    pub detail: String,
}

/// Samples kept per recommendation.
pub const SAMPLES: usize = 5;
/// Longest user text (names, strings) quoted in a sample, in characters.
const QUOTE_CHARS: usize = 48;

/// User text cut to [`QUOTE_CHARS`] characters (with an ellipsis when cut).
fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        head + "…"
    } else {
        head
    }
}

fn sample(kind: Owner, id: Option<u64>, name: Option<&str>, detail: String) -> Sample {
    Sample {
        entity: kind.label(),
        id,
        name: name.map(quote),
        detail,
    }
}

/// Keeps the first [`SAMPLES`] samples offered.
#[derive(Debug, Default)]
struct Samples(Vec<Sample>);

impl Samples {
    fn wants(&self) -> bool {
        self.0.len() < SAMPLES
    }
    fn offer(&mut self, make: impl FnOnce() -> Sample) {
        if self.wants() {
            self.0.push(make());
        }
    }
}

/// One recommendation, backed by numbers.
#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    /// Stable identifier of the rule that produced it.
    pub rule: &'static str,
    pub severity: Severity,
    pub measure: Measure,
    /// What was found, in one sentence.
    pub title: String,
    /// Bytes the recommendation is about.
    pub bytes_concerned: u64,
    /// Estimated bytes saved by following it.
    pub saving_bytes: u64,
    /// `saving_bytes` as a percentage of the total (logical or file bytes,
    /// by `measure`), two decimals.
    pub saving_percent: f64,
    /// Profile paths (folded frames) where the concerned bytes are.
    pub paths: Vec<String>,
    pub sample: Vec<Sample>,
    pub suggestion: String,
    /// Rule-specific figures.
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// What a rule reports before the totals are known.
struct Finding {
    rule: &'static str,
    measure: Measure,
    title: String,
    bytes_concerned: u64,
    saving_bytes: u64,
    /// Forces the severity (the metadata rule is info unless metadata dominates).
    severity: Option<Severity>,
    paths: Vec<String>,
    sample: Vec<Sample>,
    suggestion: String,
    details: serde_json::Map<String, serde_json::Value>,
}

impl Finding {
    fn into_recommendation(self, total_bytes: u64, wire_bytes: u64) -> Recommendation {
        let whole = match self.measure {
            Measure::Logical => total_bytes,
            Measure::File => wire_bytes,
        };
        let percent = (share_percent(self.saving_bytes, whole) * 100.0).round() / 100.0;
        Recommendation {
            rule: self.rule,
            severity: self
                .severity
                .unwrap_or_else(|| Severity::from_share(self.saving_bytes, whole)),
            measure: self.measure,
            title: self.title,
            bytes_concerned: self.bytes_concerned,
            saving_bytes: self.saving_bytes,
            saving_percent: percent,
            paths: self.paths,
            sample: self.sample,
            suggestion: self.suggestion,
            details: self.details,
        }
    }
}

/// Builds a details map from `(key, value)` pairs, in order.
fn details<const N: usize>(
    pairs: [(&str, serde_json::Value); N],
) -> serde_json::Map<String, serde_json::Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A rule that does not apply to an instance's accounting, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NotComputed {
    pub rule: &'static str,
    pub reason: &'static str,
}

/// The advice for one instance.
#[derive(Debug, Clone, Serialize)]
pub struct LayerAdvice {
    /// Whose accounting the numbers follow.
    #[serde(skip)]
    pub accounting: Accounting,
    /// Rules not computed under that accounting (none under OMMX 2.9.3's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_computed: Vec<NotComputed>,
    /// Position among the archive's instance layers; `None` for raw input.
    pub index: Option<usize>,
    pub title: Option<String>,
    /// Logical bytes under the instance's accounting.
    pub total_bytes: u64,
    /// Encoded bytes of the instance.
    pub file_bytes: u64,
    /// Logical bytes saved if every recommendation were applied, overlaps
    /// counted once (see [`combined_saving`]).
    pub estimated_saving_bytes: u64,
    pub estimated_saving_percent: f64,
    /// Encoded bytes the `wasted-file-bytes` rule would save.
    pub file_saving_bytes: u64,
    /// Every recommendation, largest saving first.
    pub recommendations: Vec<Recommendation>,
}

/// The observer that gathers one instance's advice.
#[derive(Default)]
pub struct Advisor {
    strings: strings::StringPool,
    metadata: strings::MetadataTally,
    functions: functions::FunctionTally,
    entities: entities::EntityTally,
    /// The entities of an instance counted with OMMX 3.0's accounting.
    v3: v3::V3Tally,
}

impl EntityObserver for Advisor {
    fn variable(&mut self, v: &DecisionVariable, cost: Cost) {
        let content = self.metadata.variable(v, cost);
        self.strings.variable(v);
        self.entities.variable(v, cost, content);
    }

    fn constraint(&mut self, c: &Constraint, cost: Cost) {
        let content = self.metadata.constraint(c, cost);
        self.strings.constraint(
            c,
            Owner::Entity(EntityKind::Constraint),
            &strings::CONSTRAINT_ROLES,
        );
        self.functions
            .constraint(Owner::Entity(EntityKind::Constraint), c, cost.waste);
        self.entities.constraint(c, cost, content);
    }

    fn removed_constraint(&mut self, r: &RemovedConstraint, cost: Cost) {
        let content = self.metadata.removed(r, cost);
        self.strings.removed(r);
        self.functions.constraint(
            Owner::Entity(EntityKind::Removed),
            &r.constraint,
            cost.waste,
        );
        self.entities.removed(r, cost, content);
    }

    fn named_function(&mut self, n: &NamedFunction, cost: Cost) {
        self.functions.named(n, cost.waste);
        self.entities.named(n);
    }

    fn finish(&mut self, singular: &Singular<'_>) {
        self.metadata.instance(singular);
        self.strings.instance(singular);
        self.functions.objective(singular);
        self.entities.finish(singular);
    }

    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        self.v3.entity(e, cost);
    }
}

impl Advisor {
    /// The recommendations, once the instance is profiled.
    pub fn advice(self, instance: &ProfiledInstance) -> LayerAdvice {
        if instance.accounting == Accounting::Ommx30 {
            return self.advice_v3(instance);
        }
        let total = instance.aggregate.totals()[Aggregate::ROOT].bytes;
        let unused = self.entities.unused();
        let findings: Vec<Finding> = [
            self.metadata.finding(total),
            self.strings.finding(),
            self.functions.identical(),
            self.entities.unused_finding(&unused),
            self.entities.removed_finding(),
            self.functions.matrix(),
            self.functions.variants(),
            self.entities.fixed_finding(),
            self.functions.wasted(),
        ]
        .into_iter()
        .flatten()
        .collect();
        let fired = |rule: &str| findings.iter().any(|f| f.rule == rule);
        let plan = Plan {
            removed: fired(entities::REMOVED),
            unused: fired(entities::UNUSED),
            metadata: fired(strings::METADATA),
            identical: fired(functions::IDENTICAL),
            matrix: fired(functions::MATRIX),
            variants: fired(functions::VARIANTS),
            fixed: fired(entities::FIXED),
        };
        let combined = combined_saving(&self, &unused, plan);
        layer_advice(instance, Accounting::Ommx29, &[], findings, combined)
    }

    /// The advice for an instance counted with OMMX 3.0's accounting: the
    /// rules that carry over, with 3.0's numbers ([`v3`]).
    fn advice_v3(self, instance: &ProfiledInstance) -> LayerAdvice {
        let combined = self.v3.combined();
        layer_advice(
            instance,
            Accounting::Ommx30,
            &v3::NOT_COMPUTED,
            self.v3.findings(),
            combined,
        )
    }
}

/// One layer's advice: its findings as recommendations, largest saving
/// first, with the combined estimate and the file bytes they would free.
fn layer_advice(
    instance: &ProfiledInstance,
    accounting: Accounting,
    not_computed: &[NotComputed],
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
    recommendations.sort_by(|a, b| {
        b.saving_bytes
            .cmp(&a.saving_bytes)
            .then_with(|| a.rule.cmp(b.rule))
    });
    LayerAdvice {
        accounting,
        not_computed: not_computed.to_vec(),
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

/// Which logical-byte rules fired, i.e. which changes the combined
/// estimate applies.
#[derive(Debug, Clone, Copy, Default)]
struct Plan {
    removed: bool,
    unused: bool,
    metadata: bool,
    identical: bool,
    matrix: bool,
    variants: bool,
    fixed: bool,
}

/// The saving if every recommendation that fired were applied, each byte
/// counted once. The changes are applied in this order, each to what the
/// previous ones left:
///
/// 1. removed constraints are dropped, whole (so nothing else is counted
///    for them: not their strings, functions or overhead);
/// 2. unused variables are dropped, whole;
/// 3. the remaining entities' metadata is moved out, saving what it holds
///    beyond the empty fields (this also removes every duplicate string, so
///    `duplicate-strings` adds nothing on top of it);
/// 4. the remaining constraint functions: identical ones are shared (the
///    representative keeps its storage, each other member a 16-byte
///    reference and factor), then what is still stored takes the CSR layout
///    (or, without it, its cheapest variant); the objective takes its
///    cheapest variant;
/// 5. the remaining variables and constraints take OMMX 3.0's fixed layout.
///
/// Steps 3-5 touch disjoint bytes (metadata content, functions, fixed
/// fields), so their savings add. `wasted-file-bytes` counts file bytes
/// and is reported apart.
fn combined_saving(advisor: &Advisor, unused: &entities::Unused, plan: Plan) -> u64 {
    let e = &advisor.entities;
    let mut saving = 0;
    // Without removed constraints the step is a no-op: the rule did not fire
    // because there were none.
    if plan.removed {
        saving += e.removed_bytes();
    }
    if plan.unused {
        saving += unused.bytes;
    }
    if plan.metadata {
        saving += advisor.metadata.content_kept(plan.removed, unused.content);
    }
    saving += advisor.functions.combined(plan);
    if plan.fixed {
        saving += e.fixed_saving_kept(unused);
    }
    saving
}

/// One [`Advisor`] per instance profiled.
#[derive(Default)]
pub struct Advisors {
    layers: Vec<Advisor>,
}

/// Each instance gets a fresh [`Advisor`]; entities go to the current one.
impl EntityObserver for Advisors {
    fn begin(&mut self, _layer: Option<usize>) {
        self.layers.push(Advisor::default());
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
    /// Raw input read again as another schema: its advisor starts over.
    fn abandon(&mut self) {
        self.layers.pop();
    }
}

impl Advisors {
    fn current(&mut self) -> &mut Advisor {
        self.layers
            .last_mut()
            .expect("begin() comes before every instance's entities")
    }

    /// The advice for each instance of `report`, in the report's order (the
    /// order the instances were profiled and observers handed out).
    pub fn advise(self, report: &Report) -> Vec<LayerAdvice> {
        assert_eq!(
            self.layers.len(),
            report.instances.len(),
            "one advisor per profiled instance"
        );
        self.layers
            .into_iter()
            .zip(&report.instances)
            .map(|(advisor, instance)| advisor.advice(instance))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_thresholds() {
        assert_eq!(Severity::from_share(20, 100), Severity::High);
        assert_eq!(Severity::from_share(19, 100), Severity::Medium);
        assert_eq!(Severity::from_share(5, 100), Severity::Medium);
        assert_eq!(Severity::from_share(1, 100), Severity::Low);
        assert_eq!(Severity::from_share(9, 1000), Severity::Info);
        assert_eq!(Severity::from_share(1, 0), Severity::Info);
        assert!(Severity::High > Severity::Low);
    }

    #[test]
    fn quotes_are_cut() {
        assert_eq!(quote("abc"), "abc");
        let long = "é".repeat(60);
        assert_eq!(quote(&long).chars().count(), QUOTE_CHARS + 1);
    }
}
