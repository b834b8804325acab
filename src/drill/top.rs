//! `memprof top`: the N largest single entities by logical bytes: every
//! variable, constraint, removed constraint, named function and hint (OMMX
//! 3.0's collections' rows under its accounting), and the objective.
//!
//! A bounded min-heap of N entries: an entity is copied (name, subscripts)
//! only when it enters the heap. Entities of equal bytes are ranked by id,
//! smaller first (the objective, which has none, ahead), then by kind, then
//! by layer, so the result depends on the instance alone.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::{EntityKind, EntityRef, EntityView, KindFilter};
use crate::model::{Constraint, ConstraintHints, DecisionVariable, RemovedConstraint};
use crate::pass::{Cost, EntityObserver, NamedFunction};
use crate::profile::bytes_of;

/// One of the largest entities.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TopEntity {
    #[serde(flatten)]
    pub entity: EntityRef,
    /// Stored monomials of its function (`None` for variables and hints).
    pub terms: Option<u64>,
    /// Logical bytes under the instance's accounting, its map keys included.
    pub bytes: u64,
    /// Bytes of its encoding in the file.
    pub wire_bytes: u64,
}

/// The order of the ranking, larger first: more bytes, then the smaller id
/// (none, the objective's, first), the kind, the layer.
pub(super) type RankKey = (u64, Reverse<(Option<u64>, EntityKind, Option<usize>)>);

/// Where an entity of `bytes` ranks (`stats` names its largest alike).
pub(super) fn rank(bytes: u64, layer: Option<usize>, e: &EntityView<'_>) -> RankKey {
    let id = (e.kind != EntityKind::Objective).then_some(e.id);
    (bytes, Reverse((id, e.kind, layer)))
}

fn rank_key(e: &TopEntity) -> RankKey {
    let EntityRef {
        layer, kind, id, ..
    } = e.entity;
    (e.bytes, Reverse((id, kind, layer)))
}

/// An entity in the heap, ordered by [`rank_key`]: larger is better.
#[derive(Debug, PartialEq, Eq)]
struct Ranked(TopEntity);

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        rank_key(&self.0).cmp(&rank_key(&other.0))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The observer keeping the N largest entities of the admitted kinds.
#[derive(Debug)]
pub struct Largest {
    n: usize,
    kinds: KindFilter,
    /// The kept entities, smallest on top.
    heap: BinaryHeap<Reverse<Ranked>>,
    layer: Option<usize>,
    /// The most bytes of an admitted entity left out (never kept, or pushed
    /// out), and how many left out have as many.
    left_out: Option<(u64, u64)>,
}

impl Largest {
    pub fn new(n: usize, kinds: KindFilter) -> Self {
        Self {
            n,
            kinds,
            heap: BinaryHeap::with_capacity(n.min(1 << 16) + 1),
            layer: None,
            left_out: None,
        }
    }

    fn offer(&mut self, e: EntityView<'_>, cost: Cost) {
        if self.n == 0 || !self.kinds.admits(e.kind) {
            return;
        }
        if !self.would_keep(&rank(cost.bytes, self.layer, &e)) {
            self.leave_out(cost.bytes);
            return;
        }
        if self.heap.len() >= self.n {
            if let Some(Reverse(out)) = self.heap.pop() {
                self.leave_out(out.0.bytes);
            }
        }
        self.heap.push(Reverse(Ranked(TopEntity {
            entity: EntityRef::new(self.layer, &e),
            terms: e.terms,
            bytes: cost.bytes,
            wire_bytes: cost.wire_bytes,
        })));
    }

    /// Counts an entity of `bytes` left out of the ranking.
    fn leave_out(&mut self, bytes: u64) {
        self.left_out = match self.left_out {
            Some((most, n)) if most == bytes => Some((most, n + 1)),
            Some((most, n)) if most > bytes => Some((most, n)),
            _ => Some((bytes, 1)),
        };
    }

    /// How many entities left out have the bytes of the last one kept: the
    /// ties the ranking's order (by id, then kind) decided at the cut.
    pub fn ties_left_out(&self) -> u64 {
        match (self.left_out, self.heap.peek()) {
            (Some((most, n)), Some(Reverse(last))) if most == last.0.bytes => n,
            _ => 0,
        }
    }

    /// Whether an entity ranked `key` would enter the heap.
    fn would_keep(&self, key: &RankKey) -> bool {
        self.n > 0
            && (self.heap.len() < self.n
                || self
                    .heap
                    .peek()
                    .is_some_and(|Reverse(min)| *key > rank_key(&min.0)))
    }

    /// A hint of OMMX 2.9.3's `ConstraintHints`, named by its constraint.
    fn hint(&mut self, kind: EntityKind, id: u64, bytes: impl Fn() -> u64, wire: impl Fn() -> u64) {
        if !self.kinds.admits(kind) {
            return;
        }
        let view = EntityView {
            kind,
            id,
            name: None,
            subscripts: &[],
            terms: None,
            used: None,
            ommx30: None,
        };
        let bytes = bytes();
        // Encoded (a copy of its ids) only when it would be kept.
        if !self.would_keep(&rank(bytes, self.layer, &view)) {
            if self.n > 0 {
                self.leave_out(bytes);
            }
            return;
        }
        let cost = Cost {
            bytes,
            wire_bytes: wire(),
            ..Cost::default()
        };
        self.offer(view, cost);
    }

    /// The kept entities, largest first.
    pub fn into_sorted(self) -> Vec<TopEntity> {
        let mut ranked: Vec<Ranked> = self.heap.into_iter().map(|Reverse(r)| r).collect();
        ranked.sort_by(|a, b| b.cmp(a));
        ranked.into_iter().map(|r| r.0).collect()
    }
}

impl EntityObserver for Largest {
    fn begin(&mut self, layer: Option<usize>) {
        self.layer = layer;
    }
    fn variable(&mut self, v: &DecisionVariable, cost: Cost) {
        self.offer(EntityView::variable(v), cost);
    }
    fn constraint(&mut self, c: &Constraint, cost: Cost) {
        self.offer(EntityView::constraint(c), cost);
    }
    fn removed_constraint(&mut self, r: &RemovedConstraint, cost: Cost) {
        self.offer(EntityView::removed(r), cost);
    }
    fn named_function(&mut self, n: &NamedFunction, cost: Cost) {
        self.offer(EntityView::named_function(n), cost);
    }
    fn objective(&mut self, objective: &EntityView<'_>, cost: Cost) {
        self.offer(*objective, cost);
    }
    /// OMMX 2.9.3's hints (3.0's are rows shown to [`Largest::entity`]).
    fn hints(&mut self, hints: &ConstraintHints) {
        for h in &hints.one_hot {
            let id = h.constraint_id;
            self.hint(EntityKind::OneHot, id, || bytes_of(h), || h.wire_bytes());
        }
        for h in &hints.sos1 {
            let id = h.binary_constraint_id;
            self.hint(EntityKind::Sos1, id, || bytes_of(h), || h.wire_bytes());
        }
    }
    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        self.offer(*e, cost);
    }
    fn takes_ommx30_costs(&self) -> bool {
        false
    }
    /// The objective's cost is all it ranks: its function need not be built.
    fn counts_only(&self) -> bool {
        true
    }
    fn abandon(&mut self) {
        self.heap.clear();
        self.left_out = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(kind: EntityKind, id: u64) -> EntityView<'static> {
        EntityView {
            kind,
            id,
            name: None,
            subscripts: &[],
            terms: Some(id),
            used: None,
            ommx30: None,
        }
    }

    fn cost(bytes: u64, wire_bytes: u64) -> Cost {
        Cost {
            bytes,
            wire_bytes,
            ..Cost::default()
        }
    }

    #[test]
    fn keeps_the_n_largest_smaller_id_first_on_ties() {
        let mut top = Largest::new(3, KindFilter::All);
        // Equal bytes: neither the wire bytes nor the stream order decide.
        let offered = [
            (6, 20, 1),
            (1, 10, 9),
            (4, 50, 1),
            (2, 50, 1),
            (5, 5, 9),
            (3, 20, 9),
        ];
        for (id, bytes, wire) in offered {
            top.offer(view(EntityKind::Constraint, id), cost(bytes, wire));
        }
        // 3 (20 B) kept, 6 (20 B) left out: one tie at the cut.
        assert_eq!(top.ties_left_out(), 1);
        let ids: Vec<_> = top.into_sorted().iter().map(|e| e.entity.id).collect();
        assert_eq!(ids, [Some(2), Some(4), Some(3)]);
        let mut apart = Largest::new(2, KindFilter::All);
        for (id, bytes) in [(1, 50), (2, 20), (3, 20), (4, 30)] {
            apart.offer(view(EntityKind::Constraint, id), cost(bytes, 1));
        }
        assert_eq!(apart.ties_left_out(), 0, "20 B ties below the cut at 30 B");
        let mut none = Largest::new(0, KindFilter::All);
        none.offer(view(EntityKind::Constraint, 1), Cost::default());
        assert!(none.into_sorted().is_empty());
        let mut vars = Largest::new(5, KindFilter::Only(EntityKind::Variable));
        vars.offer(view(EntityKind::Constraint, 1), Cost::default());
        assert!(vars.into_sorted().is_empty());
    }

    #[test]
    fn the_objective_has_no_id_and_leads_its_ties() {
        let mut top = Largest::new(3, KindFilter::All);
        top.offer(view(EntityKind::Variable, 0), cost(80, 1));
        top.objective(&EntityView::objective(2), cost(80, 1));
        top.offer(view(EntityKind::Constraint, 0), cost(80, 1));
        let ranked: Vec<_> = top
            .into_sorted()
            .into_iter()
            .map(|e| (e.entity.kind, e.entity.id, e.terms))
            .collect();
        assert_eq!(
            ranked,
            [
                (EntityKind::Objective, None, Some(2)),
                (EntityKind::Variable, Some(0), Some(0)),
                (EntityKind::Constraint, Some(0), Some(0)),
            ]
        );
    }
}
