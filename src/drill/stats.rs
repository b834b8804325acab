//! `memprof stats`: distributions of entity sizes per kind and per family.
//!
//! For every kind (variables, constraints, removed constraints, named
//! functions; OMMX 3.0's indicator, one-hot and SOS1 constraints, active and
//! removed) and every family (entities sharing a name) it reports the
//! count, the total, min / p50 / p90 / p99 / max of the logical bytes and of
//! the stored terms, and the entity holding the maximum bytes.
//!
//! Percentiles are nearest-rank: the p-th percentile of n values is the
//! smallest value v such that at least ⌈p·n/100⌉ values are ≤ v. They come
//! from a [`Histogram`] whose memory does not grow with the number of
//! entities:
//! - while a distribution has at most [`EXACT_DISTINCT`] distinct values it
//!   keeps them all with their counts, and its percentiles are exact (entity
//!   sizes take few distinct values: every 50-term constraint of a family
//!   costs the same);
//! - past that it switches to log buckets that keep the top 8 significant
//!   bits of each value (values below 256 stay exact). A percentile is then
//!   reported as its bucket's lower bound clamped to [min, max], at most
//!   1/128 (0.78%) below the true nearest-rank value and never above it.
//!   Each distribution says whether it is `exact`.
//!
//! min, max, count and total are always exact. Memory per distribution: at
//! most 64 values, or 128 buckets per power of two that its values span
//! (sizes within a family rarely span more than a few), independent of the
//! number of entities.

use std::collections::{BTreeMap, HashMap};

use super::top::{rank, RankKey};
use super::{EntityKind, EntityRef, EntityView, KindFilter};
use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::pass::{Cost, EntityObserver, NamedFunction};

/// Distinct values kept exactly before switching to log buckets.
pub const EXACT_DISTINCT: usize = 64;
/// Significant bits kept by a log bucket.
const BUCKET_BITS: u32 = 8;

/// A bounded-memory histogram of `u64` values (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Value (or bucket lower bound) → count.
    counts: BTreeMap<u64, u64>,
    /// The key the last value went to, and how many values after it went
    /// to that key too, not yet added to `counts`: sizes mostly repeat one
    /// after another, and a repeat then costs no look-up.
    run: (u64, u64),
    exact: bool,
    n: u64,
    min: u64,
    max: u64,
    sum: u128,
}

/// The lower bound of `v`'s log bucket: `v` with all but its top
/// [`BUCKET_BITS`] significant bits cleared.
fn bucket(v: u64) -> u64 {
    let bits = 64 - v.leading_zeros();
    if bits <= BUCKET_BITS {
        return v;
    }
    let shift = bits - BUCKET_BITS;
    (v >> shift) << shift
}

impl Histogram {
    pub fn new() -> Self {
        Self {
            exact: true,
            min: u64::MAX,
            ..Self::default()
        }
    }

    pub fn add(&mut self, v: u64) {
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += u128::from(v);
        let key = if self.exact { v } else { bucket(v) };
        if self.n > 1 && key == self.run.0 {
            self.run.1 += 1;
            return;
        }
        if self.run.1 > 0 {
            *self.counts.get_mut(&self.run.0).expect("counted") += self.run.1;
        }
        self.run = (key, 0);
        *self.counts.entry(key).or_insert(0) += 1;
        if self.exact && self.counts.len() > EXACT_DISTINCT {
            let mut buckets = BTreeMap::new();
            for (v, c) in std::mem::take(&mut self.counts) {
                *buckets.entry(bucket(v)).or_insert(0) += c;
            }
            self.counts = buckets;
            self.exact = false;
            self.run = (bucket(key), 0);
        }
    }

    /// The nearest-rank `p`-th percentile (0 < p ≤ 100); `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((p / 100.0 * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (&v, &c) in &self.counts {
            seen += c + if v == self.run.0 { self.run.1 } else { 0 };
            if seen >= rank {
                return Some(v.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    pub fn summary(&self) -> Option<Distribution> {
        Some(Distribution {
            min: (self.n > 0).then_some(self.min)?,
            p50: self.percentile(50.0)?,
            p90: self.percentile(90.0)?,
            p99: self.percentile(99.0)?,
            max: self.max,
            total: u64::try_from(self.sum).unwrap_or(u64::MAX),
            exact: self.exact,
        })
    }
}

/// The figures of one distribution.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Distribution {
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub total: u64,
    /// False when the percentiles come from log buckets (≤ 0.78% low).
    pub exact: bool,
}

/// What is kept per kind and per family.
#[derive(Debug, Clone)]
struct Accumulator {
    bytes: Histogram,
    terms: Option<Histogram>,
    /// Its rank and the entity: ties break as in `memprof top`.
    largest: Option<(RankKey, EntityRef)>,
}

impl Accumulator {
    fn new(kind: EntityKind) -> Self {
        Self {
            bytes: Histogram::new(),
            terms: kind.has_function().then(Histogram::new),
            largest: None,
        }
    }

    fn add(&mut self, layer: Option<usize>, e: &EntityView<'_>, cost: Cost) {
        let bytes = cost.bytes;
        self.bytes.add(bytes);
        if let (Some(h), Some(t)) = (&mut self.terms, e.terms) {
            h.add(t);
        }
        // As `memprof top` ranks: ties go to the smaller id.
        let key = rank(bytes, layer, e);
        if self
            .largest
            .as_ref()
            .is_none_or(|(largest, _)| key > *largest)
        {
            self.largest = Some((key, EntityRef::new(layer, e)));
        }
    }

    fn report(&self, kind: EntityKind, family: Option<Option<String>>) -> Option<StatsLine> {
        let ((largest_bytes, _), largest) = self.largest.clone()?;
        Some(StatsLine {
            kind,
            family,
            count: self.bytes.n,
            bytes: self.bytes.summary()?,
            terms: self.terms.as_ref().and_then(Histogram::summary),
            largest,
            largest_bytes,
        })
    }
}

/// One line of the report: a kind, or a family of a kind.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StatsLine {
    pub kind: EntityKind,
    /// The family's name (`null` for unnamed entities); absent on kind lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<Option<String>>,
    pub count: u64,
    pub bytes: Distribution,
    /// Stored terms; `null` for variables.
    pub terms: Option<Distribution>,
    /// The entity with the most bytes (the first, on ties).
    pub largest: EntityRef,
    pub largest_bytes: u64,
}

/// The per-kind and per-family accumulators of one kind.
#[derive(Debug)]
struct KindStats {
    all: Accumulator,
    /// Each family's name and accumulator, in the order first seen, and
    /// where each name is in that list.
    named: Vec<(String, Accumulator)>,
    index: HashMap<String, usize>,
    /// The family of the last named entity: entities of a family mostly
    /// come one after another, and one comparison of names finds it again.
    last: usize,
    unnamed: Option<Accumulator>,
}

impl KindStats {
    /// The accumulator of the family named `name`, made when first seen.
    fn family(&mut self, name: &str, kind: EntityKind) -> &mut Accumulator {
        let at = match self.named.get(self.last) {
            Some((last, _)) if last == name => self.last,
            _ => match self.index.get(name) {
                Some(&at) => at,
                None => {
                    self.index.insert(name.to_string(), self.named.len());
                    self.named.push((name.to_string(), Accumulator::new(kind)));
                    self.named.len() - 1
                }
            },
        };
        self.last = at;
        &mut self.named[at].1
    }
}

/// The observer collecting the distributions.
#[derive(Debug)]
pub struct StatsCollector {
    kinds: KindFilter,
    per_kind: BTreeMap<EntityKind, KindStats>,
    layer: Option<usize>,
}

impl StatsCollector {
    pub fn new(kinds: KindFilter) -> Self {
        Self {
            kinds,
            per_kind: BTreeMap::new(),
            layer: None,
        }
    }

    fn add(&mut self, e: EntityView<'_>, cost: Cost) {
        if !self.kinds.admits(e.kind) {
            return;
        }
        let k = self.per_kind.entry(e.kind).or_insert_with(|| KindStats {
            all: Accumulator::new(e.kind),
            named: Vec::new(),
            index: HashMap::new(),
            last: 0,
            unnamed: None,
        });
        k.all.add(self.layer, &e, cost);
        let family = match e.name {
            None => k.unnamed.get_or_insert_with(|| Accumulator::new(e.kind)),
            Some(name) => k.family(name, e.kind),
        };
        family.add(self.layer, &e, cost);
    }

    /// Kind lines in kind order, and family lines by kind, then total bytes
    /// (largest first), then name.
    pub fn report(&self) -> (Vec<StatsLine>, Vec<StatsLine>) {
        let mut kinds = Vec::new();
        let mut families = Vec::new();
        for (&kind, k) in &self.per_kind {
            kinds.extend(k.all.report(kind, None));
            let mut lines: Vec<StatsLine> = k
                .named
                .iter()
                .filter_map(|(name, acc)| acc.report(kind, Some(Some(name.clone()))))
                .chain(
                    k.unnamed
                        .iter()
                        .filter_map(|acc| acc.report(kind, Some(None))),
                )
                .collect();
            lines.sort_by(|a, b| {
                b.bytes
                    .total
                    .cmp(&a.bytes.total)
                    .then_with(|| a.family.cmp(&b.family))
            });
            families.extend(lines);
        }
        (kinds, families)
    }
}

impl EntityObserver for StatsCollector {
    fn begin(&mut self, layer: Option<usize>) {
        self.layer = layer;
    }
    fn variable(&mut self, v: &DecisionVariable, cost: Cost) {
        self.add(EntityView::variable(v), cost);
    }
    fn constraint(&mut self, c: &Constraint, cost: Cost) {
        self.add(EntityView::constraint(c), cost);
    }
    fn removed_constraint(&mut self, r: &RemovedConstraint, cost: Cost) {
        self.add(EntityView::removed(r), cost);
    }
    fn named_function(&mut self, n: &NamedFunction, cost: Cost) {
        self.add(EntityView::named_function(n), cost);
    }
    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        self.add(*e, cost);
    }
    fn takes_ommx30_costs(&self) -> bool {
        false
    }
    /// The distributions take no objective: its function need not be built.
    fn counts_only(&self) -> bool {
        true
    }
    fn abandon(&mut self) {
        self.per_kind.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    /// Values in runs of one size, as entity sizes come, give the
    /// distribution the same values in any order give, exact (nearest-rank)
    /// while few are distinct.
    #[test]
    fn runs_of_one_value_count_as_any_order_does() {
        let mut rng = crate::ids::SplitMix64(0x2545_f491_4f6c_dd1d);
        let mut next = move |n: u64| rng.below(n);
        for round in 0..60 {
            let distinct = [1, 5, 64, 65, 300][round % 5];
            let mut values = Vec::new();
            while values.len() < 2_000 {
                let v = 100 + next(distinct) * 37;
                values.extend(std::iter::repeat_n(v, 1 + next(50) as usize));
            }
            let mut shuffled = values.clone();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, next(i as u64 + 1) as usize);
            }
            let (mut runs, mut any) = (Histogram::new(), Histogram::new());
            values.iter().for_each(|&v| runs.add(v));
            shuffled.iter().for_each(|&v| any.add(v));
            let summary = runs.summary().unwrap();
            assert_eq!(Some(&summary), any.summary().as_ref(), "round {round}");
            if summary.exact {
                values.sort_unstable();
                for (p, got) in [
                    (50.0, summary.p50),
                    (90.0, summary.p90),
                    (99.0, summary.p99),
                ] {
                    assert_eq!(got, nearest_rank(&values, p), "round {round} p{p}");
                }
            }
        }
    }

    #[test]
    fn exact_while_few_distinct_values() {
        let mut h = Histogram::new();
        let values: Vec<u64> = (1..=100).map(|i| 1000 + (i % 10) * 24).collect();
        values.iter().for_each(|&v| h.add(v));
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let d = h.summary().unwrap();
        assert!(d.exact);
        for (p, got) in [(50.0, d.p50), (90.0, d.p90), (99.0, d.p99)] {
            assert_eq!(got, nearest_rank(&sorted, p), "p{p}");
        }
        assert_eq!((d.min, d.max), (1000, 1216));
        assert_eq!(d.total, values.iter().sum::<u64>());
        assert_eq!(Histogram::new().summary(), None);
    }

    #[test]
    fn log_buckets_stay_within_the_stated_error() {
        let mut h = Histogram::new();
        // 10,000 distinct values over four orders of magnitude.
        let values: Vec<u64> = (0..10_000u64).map(|i| 100 + i * i / 7 + i).collect();
        values.iter().for_each(|&v| h.add(v));
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let d = h.summary().unwrap();
        assert!(!d.exact);
        let octaves = 64 - (sorted[sorted.len() - 1] / sorted[0]).leading_zeros() as usize + 1;
        assert!(
            h.counts.len() <= 128 * octaves,
            "{} buckets",
            h.counts.len()
        );
        for (p, got) in [(50.0, d.p50), (90.0, d.p90), (99.0, d.p99)] {
            let truth = nearest_rank(&sorted, p);
            assert!(got <= truth, "p{p}: {got} > {truth}");
            assert!(
                (truth - got) as f64 <= truth as f64 / 128.0,
                "p{p}: {got} vs {truth}"
            );
        }
        assert_eq!((d.min, d.max), (sorted[0], *sorted.last().unwrap()));
        assert_eq!(bucket(255), 255);
        assert_eq!(bucket(257), 256);
        assert_eq!(bucket(1023), 1020);
    }
}
