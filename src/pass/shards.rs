//! OMMX's cross-entity rules checked on several threads at once, for a
//! file framed in chunks (`ranges.rs`): each thread checks the
//! elements of its chunks against sets shared by all of them, and keeps
//! what needs the whole stream (ids used before their definition was seen,
//! the singular fields, how uses and definitions are laid out) for
//! [`settle`], which decides once every chunk is checked.
//!
//! The rules themselves are [`super::validate`]'s; what this side adds is
//! only the decision whether a sequential run would have accepted the
//! stream. When it may not have (a duplicate id, an element that failed, a
//! variable still undefined at the end, more variables possibly pending at
//! once than [`MAX_PENDING`]), [`settle`] says so and the caller reads the
//! instance again on one thread, which reports the error exactly as
//! before, in OMMX's order. Nothing is decided from the order in which the
//! threads happened to run.

use std::collections::HashSet;
use std::sync::Mutex;

use super::accounts::Families;
use super::compare::Ommx30Uses;
use super::convert;
use super::item::{Batch, Item};
use super::objective::{Part, Singulars};
use super::terms::spooled::SpooledArm;
use super::validate::{State, MAX_PENDING};
use crate::ids::{BuildIdHasher, IdSet, SharedIdSet};
use crate::model::ommx30::Converted;
use crate::model::EntityKind;
use crate::profile::family::GroupBy;
use crate::profiled::Accounting;
use crate::profiled::InstanceCounts;
use crate::profiled::Terms;

/// The ids every thread checks against.
#[derive(Default)]
pub(super) struct Shared {
    variables: SharedIdSet,
    /// Constraints and removed constraints: one id space.
    constraint_ids: SharedIdSet,
    constraints: SharedIdSet,
    removed: SharedIdSet,
    named_functions: Mutex<IdSet>,
    /// What OMMX 3.0's rules need, under its accounting.
    ommx30: Option<Ommx30Shared>,
}

/// [`Ommx30Uses`] filled from several threads.
#[derive(Default)]
struct Ommx30Shared {
    fixed: SharedIdSet,
    used: SharedIdSet,
    referenced: SharedIdSet,
}

impl Shared {
    /// The sets for a pass under `accounting`.
    pub(super) fn new(accounting: Accounting) -> Self {
        Self {
            ommx30: (accounting == Accounting::Ommx30).then(Ommx30Shared::default),
            ..Self::default()
        }
    }
}

/// Where a chunk's elements use variables and define them: the stream
/// offsets (element ends) of its first user and its last definition.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Layout {
    pub(super) first_use: Option<u64>,
    pub(super) last_definition: Option<u64>,
}

/// A chunk's layout and how many variable references its users hold.
struct ChunkUses {
    layout: Layout,
    uses: u64,
}

/// Why a stream checked in chunks must be read again on one thread.
#[derive(Debug)]
pub(super) struct Recheck;

/// What one thread found in the chunks it checked.
pub(super) struct Shard {
    counts: InstanceCounts,
    families: Families,
    /// One more than the largest variable id defined.
    variables_below: u64,
    /// Variables used when no thread had defined them yet (each once per
    /// thread): they must be defined by the end.
    deferred: HashSet<u64, BuildIdHasher>,
    /// Spooled constraints whose variables are looked up at the end (in
    /// the file), unless the variables turn out to be 0..n.
    spooled: Vec<(Box<SpooledArm>, u64)>,
    /// The singular fields of each chunk, by chunk.
    parts: Vec<(usize, Vec<Part>)>,
    uses: Vec<ChunkUses>,
    /// Where the stream ended, for the thread whose chunk reached it.
    end: Option<u64>,
    /// The fixed variables it defined (OMMX 3.0's accounting).
    fixed_ids: Vec<u64>,
}

impl Shard {
    pub(super) fn new(group_by: GroupBy) -> Self {
        Self {
            counts: InstanceCounts::default(),
            families: Families::new(group_by),
            variables_below: 0,
            deferred: HashSet::default(),
            spooled: Vec::new(),
            parts: Vec::new(),
            uses: Vec::new(),
            end: None,
            fixed_ids: Vec::new(),
        }
    }

    /// Checks a batch of chunk `chunk`'s elements; how many variable
    /// references they hold. Kept out of its caller: inlined into the
    /// chunk loop, it made `inspect -f folded` of the 198 MB LP take 1.07
    /// of the time (21 pairs).
    #[inline(never)]
    pub(super) fn check(
        &mut self,
        chunk: usize,
        batch: Batch,
        shared: &Shared,
    ) -> Result<u64, Recheck> {
        let mut uses = 0;
        let mut parts = Vec::new();
        for item in batch {
            match item.map_err(|_| Recheck)? {
                Item::Variable(v, _) => {
                    self.define(v.id, shared)?;
                    self.families.see(v.name.as_deref()).map_err(|_| Recheck)?;
                }
                Item::CountedVariable { id, fixed } => {
                    self.define(id, shared)?;
                    if fixed {
                        self.fix(id, shared);
                    }
                }
                Item::Constraint(c, _) => {
                    self.add_constraint(c.id, c.function.shape().terms(), shared)?;
                    c.function.for_each_variable(|id| {
                        uses += 1;
                        self.used(id, shared);
                    });
                    self.families.see(c.name.as_deref()).map_err(|_| Recheck)?;
                }
                Item::CountedConstraint { id, ids, terms, .. } => {
                    self.add_constraint(id, terms, shared)?;
                    uses += ids.len() as u64;
                    for id in ids {
                        self.used(id, shared);
                        if let Some(o) = &shared.ommx30 {
                            o.used.insert(id);
                        }
                    }
                }
                Item::SpooledConstraint {
                    id,
                    function,
                    ids_below,
                    terms,
                    ..
                } => {
                    self.add_constraint(id, terms, shared)?;
                    // Every stored id is below `ids_below`: a bound on how
                    // many distinct variables it may leave pending.
                    uses += ids_below;
                    if let (Some(o), Some(function)) = (&shared.ommx30, &function) {
                        // Unread, the stream is read again on one thread.
                        let note = |id| {
                            o.used.insert(id);
                            true
                        };
                        function.all_defined(&note).map_err(|_| Recheck)?;
                    }
                    if let Some(function) = function {
                        self.spooled.push((function, ids_below));
                    }
                }
                Item::Removed(r, _) => {
                    let id = r.constraint.id;
                    if !shared.constraint_ids.insert(id) {
                        return Err(Recheck);
                    }
                    shared.removed.insert(id);
                    self.counts.summary.removed_constraints += 1;
                    self.counts
                        .add_removed_terms(r.constraint.function.shape().terms());
                    self.families
                        .see(r.constraint.name.as_deref())
                        .map_err(|_| Recheck)?;
                }
                Item::Named(n, _) => {
                    let fresh = shared
                        .named_functions
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(n.id);
                    if !fresh {
                        return Err(Recheck);
                    }
                    self.counts.summary.named_functions += 1;
                    n.function.for_each_variable(|id| {
                        uses += 1;
                        self.used(id, shared);
                    });
                }
                Item::Converted(c, _) => uses += self.converted(&c, shared)?,
                Item::Ommx30Refusal(_) => unreachable!("a comparing pass reads in order"),
                Item::Rest(part) => parts.push(part),
                Item::End(offset) => self.end = Some(offset),
            }
        }
        if self.deferred.len() > MAX_PENDING {
            return Err(Recheck);
        }
        if !parts.is_empty() {
            self.parts.push((chunk, parts));
        }
        Ok(uses)
    }

    /// Notes a checked chunk's layout and the variable references its
    /// elements hold.
    pub(super) fn chunk_done(&mut self, layout: Layout, uses: u64) {
        self.uses.push(ChunkUses { layout, uses });
    }

    /// An entity as OMMX 3.0 converts it: checked as its v1 element is;
    /// how many variable references it holds.
    fn converted(&mut self, c: &Converted, shared: &Shared) -> Result<u64, Recheck> {
        let Some(o) = &shared.ommx30 else {
            unreachable!("converted only under OMMX 3.0's accounting")
        };
        let entity = c.entity();
        let ids = convert::variables_of(c);
        let terms = || entity.function().map(convert::terms_of).unwrap_or_default();
        let mut uses = 0;
        match c.kind {
            EntityKind::Variable => {
                self.define(c.id, shared)?;
                if c.fixed() {
                    self.fix(c.id, shared);
                }
            }
            EntityKind::Constraint => {
                self.add_constraint(c.id, terms(), shared)?;
                for &id in &ids {
                    uses += 1;
                    self.used(id, shared);
                    o.used.insert(id);
                }
            }
            EntityKind::Removed => {
                if !shared.constraint_ids.insert(c.id) {
                    return Err(Recheck);
                }
                shared.removed.insert(c.id);
                self.counts.summary.removed_constraints += 1;
                self.counts.add_removed_terms(terms());
                ids.iter().for_each(|&id| _ = o.referenced.insert(id));
            }
            _ => {
                let fresh = shared
                    .named_functions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(c.id);
                if !fresh {
                    return Err(Recheck);
                }
                self.counts.summary.named_functions += 1;
                for &id in &ids {
                    uses += 1;
                    self.used(id, shared);
                    o.referenced.insert(id);
                }
            }
        }
        if c.kind != EntityKind::NamedFunction {
            self.families.see(entity.name()).map_err(|_| Recheck)?;
        }
        Ok(uses)
    }

    /// Notes a fixed variable (OMMX 3.0's accounting).
    fn fix(&mut self, id: u64, shared: &Shared) {
        if let Some(o) = &shared.ommx30 {
            o.fixed.insert(id);
            self.fixed_ids.push(id);
        }
    }

    fn define(&mut self, id: u64, shared: &Shared) -> Result<(), Recheck> {
        if !shared.variables.insert(id) {
            return Err(Recheck);
        }
        self.counts.summary.variables += 1;
        self.variables_below = self.variables_below.max(id.saturating_add(1));
        Ok(())
    }

    fn add_constraint(&mut self, id: u64, terms: Terms, shared: &Shared) -> Result<(), Recheck> {
        if !shared.constraint_ids.insert(id) {
            return Err(Recheck);
        }
        shared.constraints.insert(id);
        self.counts.summary.constraints += 1;
        self.counts.add_constraint_terms(terms);
        Ok(())
    }

    /// Notes a use of variable `id`: looked up again at the end unless some
    /// thread has defined it already.
    #[inline]
    fn used(&mut self, id: u64, shared: &Shared) {
        if !shared.variables.contains(id) {
            self.deferred.insert(id);
        }
    }
}

/// The state a sequential check of the stream would have reached, with the
/// singular fields in stream order and where the stream ended; or
/// [`Recheck`] when a sequential check might have stopped on an error.
pub(super) fn settle(
    shards: Vec<Shard>,
    shared: Shared,
    group_by: GroupBy,
) -> Result<(State, Singulars, u64), Recheck> {
    let mut counts = InstanceCounts::default();
    let mut families = Families::new(group_by);
    let mut variables_below = 0;
    let mut end = None;
    let mut parts = Vec::new();
    let mut uses = Vec::new();
    let mut deferred = Vec::new();
    let mut spooled = Vec::new();
    let mut fixed_ids = Vec::new();
    for shard in shards {
        let Shard {
            counts: c,
            families: f,
            variables_below: below,
            deferred: d,
            spooled: sp,
            parts: p,
            uses: u,
            end: e,
            fixed_ids: f_ids,
        } = shard;
        fixed_ids.extend(f_ids);
        counts.absorb(c);
        families.absorb(f).map_err(|_| Recheck)?;
        variables_below = variables_below.max(below);
        end = end.or(e);
        parts.extend(p);
        uses.extend(u);
        deferred.extend(d);
        spooled.extend(sp);
    }
    let end = end.ok_or(Recheck)?;
    if !at_most_max_pending(&uses) {
        return Err(Recheck);
    }
    let Shared {
        variables,
        constraint_ids: _,
        constraints,
        removed,
        named_functions,
        ommx30,
    } = shared;
    let variables = variables.into_set();
    if !deferred.iter().all(|id| variables.contains(id)) {
        return Err(Recheck);
    }
    // As the sequential check: with variables 0..n defined, a spooled
    // constraint whose ids are below n needs no look-up.
    let dense = variables_below == counts.summary.variables;
    for (function, ids_below) in spooled {
        let known = dense && ids_below <= variables_below;
        if !known
            && !matches!(
                function.all_defined(&|id| variables.contains(&id)),
                Ok(true)
            )
        {
            return Err(Recheck);
        }
    }
    parts.sort_by_key(|(chunk, _)| *chunk);
    let mut rest = Singulars::default();
    for part in parts.into_iter().flat_map(|(_, parts)| parts) {
        rest.push(part);
    }
    let named_functions = named_functions
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    let mut state = State::checked(
        variables,
        constraints.into_set(),
        removed.into_set(),
        named_functions,
        counts,
    );
    state.ommx30 = ommx30.map(|o| {
        Box::new(Ommx30Uses {
            fixed: o.fixed.into_set(),
            fixed_ids,
            used: o.used.into_set(),
            referenced: o.referenced.into_set(),
        })
    });
    Ok((state, rest, end))
}

/// Whether a sequential check could never have held more than
/// [`MAX_PENDING`] variables used before their definition: those are used
/// by elements before the last definition, so the references held by the
/// chunks whose first user comes before it bound them.
fn at_most_max_pending(chunks: &[ChunkUses]) -> bool {
    let Some(last_definition) = chunks.iter().filter_map(|c| c.layout.last_definition).max() else {
        return true;
    };
    let early: u64 = chunks
        .iter()
        .filter(|c| c.layout.first_use.is_some_and(|u| u < last_definition))
        .map(|c| c.uses)
        .sum();
    early <= MAX_PENDING as u64
}
