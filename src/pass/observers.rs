//! Several analyses riding one pass: [`Observers`] shows every entity to
//! each of them in turn, so a page that holds the top entities, the
//! distributions and the advice reads its input once.

use super::observer::{
    Cost, EntityObserver, EntityView, NamedFunction, Part, Singular, Singular30,
};
use crate::model::{Constraint, ConstraintHints, DecisionVariable, EntityKind, RemovedConstraint};
use crate::profile::LogicalMemoryVisitor;

/// The one visitor of the leaves among those `wanting` them (see
/// [`Observers`]' `leaves`).
fn only_one<'a>(
    mut wanting: impl Iterator<Item = &'a mut dyn LogicalMemoryVisitor>,
) -> Option<&'a mut dyn LogicalMemoryVisitor> {
    let first = wanting.next();
    assert!(
        wanting.next().is_none(),
        "only one observer of a pass may visit the leaves"
    );
    first
}

/// Every observer sees every call, in the order given.
pub struct Observers<'a>(pub Vec<&'a mut dyn EntityObserver>);

impl EntityObserver for Observers<'_> {
    fn begin(&mut self, layer: Option<usize>) {
        self.0.iter_mut().for_each(|o| o.begin(layer));
    }
    fn variable(&mut self, variable: &DecisionVariable, cost: Cost) {
        self.0.iter_mut().for_each(|o| o.variable(variable, cost));
    }
    fn constraint(&mut self, constraint: &Constraint, cost: Cost) {
        self.0
            .iter_mut()
            .for_each(|o| o.constraint(constraint, cost));
    }
    fn removed_constraint(&mut self, removed: &RemovedConstraint, cost: Cost) {
        self.0
            .iter_mut()
            .for_each(|o| o.removed_constraint(removed, cost));
    }
    fn named_function(&mut self, named: &NamedFunction, cost: Cost) {
        self.0
            .iter_mut()
            .for_each(|o| o.named_function(named, cost));
    }
    fn objective(&mut self, objective: &EntityView<'_>, cost: Cost) {
        self.0.iter_mut().for_each(|o| o.objective(objective, cost));
    }
    fn hints(&mut self, hints: &ConstraintHints) {
        self.0.iter_mut().for_each(|o| o.hints(hints));
    }
    fn finish(&mut self, singular: &Singular<'_>) {
        self.0.iter_mut().for_each(|o| o.finish(singular));
    }
    fn entity(&mut self, entity: &EntityView<'_>, cost: Cost) {
        self.0.iter_mut().for_each(|o| o.entity(entity, cost));
    }
    fn ommx30_cost(&mut self, kind: EntityKind, id: u64, bytes: u64) {
        self.0
            .iter_mut()
            .for_each(|o| o.ommx30_cost(kind, id, bytes));
    }
    fn ommx30_singular(&mut self, singular: &Singular30<'_>) {
        self.0.iter_mut().for_each(|o| o.ommx30_singular(singular));
    }
    fn variables_used(&mut self, used: &dyn Fn(u64) -> bool) {
        self.0.iter_mut().for_each(|o| o.variables_used(used));
    }
    fn takes_ommx30_costs(&self) -> bool {
        self.0.iter().any(|o| o.takes_ommx30_costs())
    }
    /// Several observers are parts, and so are the parts of each.
    fn has_parts(&self) -> bool {
        self.0.len() > 1 || self.0.iter().any(|o| o.has_parts())
    }
    fn parts(&mut self) -> Part<'_> {
        let mut parts = Vec::new();
        for o in &mut self.0 {
            if o.has_parts() {
                parts.extend(o.parts());
            } else {
                parts.push(&mut **o as &mut dyn EntityObserver);
            }
        }
        parts
    }
    /// The pass shows the leaves to one visitor: several observers that
    /// each want them cannot share a pass, which the first call refuses.
    fn leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        only_one(self.0.iter_mut().filter_map(|o| o.leaves()))
    }
    fn entity_leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        only_one(self.0.iter_mut().filter_map(|o| o.entity_leaves()))
    }
    fn abandon(&mut self) {
        self.0.iter_mut().for_each(|o| o.abandon());
    }
    fn counts_only(&self) -> bool {
        self.0.iter().all(|o| o.counts_only())
    }
    fn sees_entities(&self) -> bool {
        self.0.iter().any(|o| o.sees_entities())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts what it is shown; `entities` says whether it looks at them.
    #[derive(Default)]
    struct Tally {
        entities: bool,
        begun: usize,
        seen: Vec<u64>,
        used: Vec<u64>,
    }

    impl EntityObserver for Tally {
        fn begin(&mut self, _layer: Option<usize>) {
            self.begun += 1;
        }
        fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
            self.seen.push(e.id * 1000 + cost.bytes);
        }
        fn variables_used(&mut self, used: &dyn Fn(u64) -> bool) {
            self.used = (0..4).filter(|&id| used(id)).collect();
        }
        fn counts_only(&self) -> bool {
            !self.entities
        }
        fn sees_entities(&self) -> bool {
            self.entities
        }
    }

    fn view(id: u64) -> EntityView<'static> {
        EntityView {
            kind: EntityKind::Constraint,
            id,
            name: Some("c"),
            subscripts: &[],
            terms: Some(1),
            used: None,
            ommx30: None,
        }
    }

    #[test]
    fn each_observer_sees_every_entity() {
        let mut a = Tally {
            entities: true,
            ..Tally::default()
        };
        let mut b = Tally::default();
        let mut all = Observers(vec![&mut a, &mut b]);
        assert!(!all.counts_only());
        assert!(all.sees_entities());
        all.begin(None);
        for (id, bytes) in [(1, 10), (2, 30)] {
            let cost = Cost {
                bytes,
                ..Cost::default()
            };
            all.entity(&view(id), cost);
        }
        all.variables_used(&|id| id % 2 == 1);
        for tally in [&a, &b] {
            assert_eq!((tally.begun, tally.seen.as_slice()), (1, &[1010, 2030][..]));
            assert_eq!(tally.used, [1, 3]);
        }
    }

    /// Made of two tallies, shown apart.
    #[derive(Default)]
    struct Halves(Tally, Tally);

    impl EntityObserver for Halves {
        fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
            self.0.entity(e, cost);
            self.1.entity(e, cost);
        }
        fn has_parts(&self) -> bool {
            true
        }
        fn parts(&mut self) -> Part<'_> {
            vec![&mut self.0, &mut self.1]
        }
    }

    #[test]
    fn the_parts_are_each_observer_or_its_own_parts() {
        let (mut a, mut halves) = (Tally::default(), Halves::default());
        assert!(!Observers(vec![&mut a]).has_parts());
        assert!(Observers(vec![&mut halves]).has_parts());
        let mut both = Observers(vec![&mut a, &mut halves]);
        assert!(both.has_parts());
        let cost = Cost::default();
        for (i, part) in both.parts().into_iter().enumerate() {
            part.entity(&view(i as u64), cost);
        }
        let seen = [&a.seen, &halves.0.seen, &halves.1.seen];
        assert_eq!(seen, [&vec![0], &vec![1000], &vec![2000]]);
    }

    #[test]
    fn nothing_to_see_lets_the_pass_count_on_the_wire() {
        let (mut a, mut b) = (Tally::default(), ());
        let none = Observers(vec![&mut a, &mut b]);
        assert!(none.counts_only());
        assert!(!none.sees_entities());
    }
}
