//! The stream's observing side: the entities of each checked batch shown to
//! the analyses riding on the pass ([`EntityObserver`]) in stream order and,
//! in a pass that compares the accountings, counted under OMMX 3.0's
//! accounting too (`compare.rs`), their cost there shown as well
//! ([`EntityObserver::ommx30_cost`]). When the stream is decoded on several
//! threads this runs on a thread of its own (one per part of an observer
//! made of parts), behind the checks
//! (`pipeline.rs`); an error found by the checks ends the pass all the same,
//! and what an observer was shown of a refused instance is forgotten
//! ([`EntityObserver::abandon`]) or thrown away with it.

use super::compare::Comparing;
use super::item::{Batch, Item};
use super::observer::EntityView;
use super::EntityObserver;
use crate::model::EntityKind;
use crate::profile::family::GroupBy;
use crate::profile::Path;
use crate::trace::{self, Phase};

/// What the checked entities are shown to.
pub(super) struct Observing<'a, O: ?Sized> {
    /// 3.0's accounting of the same entities, when comparing.
    pub(super) compare: Option<&'a mut Comparing>,
    pub(super) observer: &'a mut O,
    /// For the family frames of an entity converted to 3.0's accounting.
    pub(super) group_by: GroupBy,
    /// Empty between entities: its frames' room is kept from one walk to
    /// the next.
    pub(super) path: Path,
}

impl<'a, O: EntityObserver + ?Sized> Observing<'a, O> {
    pub(super) fn new(
        compare: Option<&'a mut Comparing>,
        observer: &'a mut O,
        group_by: GroupBy,
    ) -> Self {
        Self {
            compare,
            observer,
            group_by,
            path: Path::new(),
        }
    }

    /// Shows the entities of a batch the checks accepted.
    pub(super) fn batch(&mut self, batch: &Batch) {
        let _span = trace::span(Phase::Check);
        for item in batch.iter().flatten() {
            self.item(item);
        }
    }

    fn item(&mut self, item: &Item) {
        let (observer, compare) = (&mut *self.observer, &mut self.compare);
        match item {
            Item::Variable(v, cost) => {
                observer.variable(v, *cost);
                if let Some(bytes) = compare.as_mut().and_then(|c| c.variable(v)) {
                    observer.ommx30_cost(EntityKind::Variable, v.id, bytes);
                }
            }
            Item::Constraint(c, cost) => {
                observer.constraint(c, *cost);
                if let Some(bytes) = compare.as_mut().and_then(|m| m.constraint(c)) {
                    observer.ommx30_cost(EntityKind::Constraint, c.id, bytes);
                }
            }
            Item::Removed(r, cost) => {
                observer.removed_constraint(r, *cost);
                if let Some(bytes) = compare.as_mut().and_then(|m| m.removed(r)) {
                    observer.ommx30_cost(EntityKind::Removed, r.constraint.id, bytes);
                }
            }
            Item::Named(n, cost) => {
                observer.named_function(n, *cost);
                if let Some(bytes) = compare.as_mut().and_then(|m| m.named(n)) {
                    observer.ommx30_cost(EntityKind::NamedFunction, n.id, bytes);
                }
            }
            Item::Ommx30Refusal(e) => {
                if let Some(compare) = compare {
                    compare.refuse(e);
                }
            }
            // An entity of v1 input as OMMX 3.0 holds it.
            Item::Converted(c, cost) => {
                let entity = c.entity();
                observer.entity(&EntityView::ommx30(&entity, None), *cost);
                if let Some(mut leaves) = observer.entity_leaves() {
                    let family = (self.group_by == GroupBy::Name).then(|| entity.family());
                    entity.visit_under(&mut self.path, family, &mut leaves);
                }
            }
            // Counted on the wire, or kept by the checks: nothing to show.
            Item::CountedVariable { .. }
            | Item::CountedConstraint { .. }
            | Item::SpooledConstraint { .. }
            | Item::Rest(_)
            | Item::End(_) => {}
        }
    }
}
