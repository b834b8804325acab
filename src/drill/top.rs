//! `memprof top`: the N largest single entities by logical bytes.
//!
//! A bounded min-heap of N entries: an entity is copied (name, subscripts)
//! only when it enters the heap. Ties are broken by wire bytes, then by
//! stream order (earlier first), so the result is deterministic.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::{EntityRef, EntityView, KindFilter};
use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::pass::{Cost, EntityObserver, NamedFunction};

/// One of the largest entities.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TopEntity {
    #[serde(flatten)]
    pub entity: EntityRef,
    /// Stored monomials of its function (`None` for variables).
    pub terms: Option<u64>,
    /// Logical bytes under the instance's accounting, its map keys included.
    pub bytes: u64,
    /// Bytes of its encoding in the file.
    pub wire_bytes: u64,
}

/// The rank of an entity: larger is better.
#[derive(Debug, PartialEq, Eq)]
struct Ranked {
    bytes: u64,
    wire_bytes: u64,
    seq: Reverse<u64>,
    entity: TopEntity,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.bytes, self.wire_bytes, self.seq).cmp(&(other.bytes, other.wire_bytes, other.seq))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The observer keeping the N largest entities of the admitted kinds.
#[derive(Debug)]
pub struct Top {
    n: usize,
    kinds: KindFilter,
    /// The kept entities, smallest on top.
    heap: BinaryHeap<Reverse<Ranked>>,
    seq: u64,
    layer: Option<usize>,
}

impl Top {
    pub fn new(n: usize, kinds: KindFilter) -> Self {
        Self {
            n,
            kinds,
            heap: BinaryHeap::with_capacity(n.min(1 << 16) + 1),
            seq: 0,
            layer: None,
        }
    }

    fn offer(&mut self, e: EntityView<'_>, cost: Cost) {
        self.seq += 1;
        if self.n == 0 || !self.kinds.admits(e.kind) {
            return;
        }
        let key = (cost.bytes, cost.wire_bytes, Reverse(self.seq));
        let full = self.heap.len() >= self.n;
        if full {
            let Some(Reverse(min)) = self.heap.peek() else {
                return;
            };
            if key <= (min.bytes, min.wire_bytes, min.seq) {
                return;
            }
            self.heap.pop();
        }
        self.heap.push(Reverse(Ranked {
            bytes: cost.bytes,
            wire_bytes: cost.wire_bytes,
            seq: Reverse(self.seq),
            entity: TopEntity {
                entity: EntityRef::new(self.layer, &e),
                terms: e.terms,
                bytes: cost.bytes,
                wire_bytes: cost.wire_bytes,
            },
        }));
    }

    /// The kept entities, largest first.
    pub fn into_sorted(self) -> Vec<TopEntity> {
        let mut ranked: Vec<Ranked> = self.heap.into_iter().map(|Reverse(r)| r).collect();
        ranked.sort_by(|a, b| b.cmp(a));
        ranked.into_iter().map(|r| r.entity).collect()
    }
}

impl EntityObserver for Top {
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
    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        self.offer(*e, cost);
    }
    fn abandon(&mut self) {
        self.heap.clear();
        self.seq = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drill::EntityKind;

    fn view(id: u64) -> EntityView<'static> {
        EntityView {
            kind: EntityKind::Constraint,
            id,
            name: None,
            subscripts: &[],
            terms: Some(id),
            used: None,
        }
    }

    #[test]
    fn keeps_the_n_largest_earliest_first_on_ties() {
        let mut top = Top::new(3, KindFilter::All);
        for (id, bytes) in [(1, 10), (2, 50), (3, 20), (4, 50), (5, 5), (6, 20)] {
            top.offer(
                view(id),
                Cost {
                    bytes,
                    wire_bytes: 1,
                    ..Cost::default()
                },
            );
        }
        let ids: Vec<u64> = top.into_sorted().iter().map(|e| e.entity.id).collect();
        assert_eq!(ids, [2, 4, 3]);
        let mut none = Top::new(0, KindFilter::All);
        none.offer(view(1), Cost::default());
        assert!(none.into_sorted().is_empty());
        let mut vars = Top::new(5, KindFilter::Only(EntityKind::Variable));
        vars.offer(view(1), Cost::default());
        assert!(vars.into_sorted().is_empty());
    }
}
