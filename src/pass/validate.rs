//! OMMX 2.9.3's cross-entity rules, applied in stream order on the
//! checking side: unique ids and references to defined variables
//! (`finish.rs` applies what needs the whole stream: the objective,
//! the hints, the dependencies).

use prost::Message;

use super::accounts::Families;
use super::compare::Ommx30Uses;
use super::convert;
use super::item::{Batch, Item};
use crate::ids::IdSet;
use crate::model::ommx30::{Converted, Func};
use crate::model::EntityKind;
use crate::model::{FileWaste, Function, ModelError};
use crate::ommx_v1 as pb;
use crate::pass::objective::Singulars;
use crate::pass::terms;
use crate::pass::terms::spooled::SpooledArm;
use crate::pass::InstanceError;
use crate::profile::family::GroupBy;
use crate::profiled::Accounting;
use crate::profiled::InstanceCounts;
use crate::profiled::Terms;
use crate::trace::{self, Phase};
use crate::wire::Wire;

/// Checks the batches of one instance in stream order: the state the
/// checks reached, the singular fields kept for the end (`finish.rs`) and
/// where the stream ended. Each batch whose entities all passed goes on to
/// `checked` (to be shown to the analyses, `observe.rs`), the last one too,
/// with what came with it (`H`: where it is freed, `pipeline.rs`).
pub(super) fn check_stream<H>(
    batches: impl Iterator<Item = (Batch, H)>,
    max_element: Option<u64>,
    group_by: GroupBy,
    accounting: Accounting,
    checked: impl FnMut(Batch, H),
) -> Result<(State, Singulars, u64), InstanceError> {
    let mut stream = Stream::new(group_by, max_element);
    if accounting == Accounting::Ommx30 {
        stream.state.ommx30 = Some(Box::default());
    }
    let end = stream.check_batches(batches, checked)?;
    let Stream { state, rest, .. } = stream;
    Ok((state, rest, end))
}

/// The checking side of the stream: OMMX's rules applied to each element
/// in stream order, the singular fields kept for the end.
struct Stream {
    state: State,
    families: Families,
    // The singular fields and maps, re-encoded in stream order: decoded at the
    // end as an Instance whose entity lists are empty, prost applying
    // protobuf's merge and last-entry-wins rules.
    rest: Singulars,
    max_element: Option<u64>,
}

impl Stream {
    fn new(group_by: GroupBy, max_element: Option<u64>) -> Self {
        Self {
            state: State::default(),
            families: Families::new(group_by),
            rest: Singulars::default(),
            max_element,
        }
    }

    /// Checks every batch up to the end of the stream (at the offset
    /// returned) or the first error.
    fn check_batches<H>(
        &mut self,
        mut batches: impl Iterator<Item = (Batch, H)>,
        mut checked: impl FnMut(Batch, H),
    ) -> Result<u64, InstanceError> {
        loop {
            let Some((mut batch, home)) = batches.next() else {
                unreachable!("the stream always ends with End or an error")
            };
            let _span = trace::span(Phase::Check);
            let mut end = None;
            for slot in &mut batch {
                let item = match slot {
                    Ok(item) => item,
                    Err(_) => {
                        let Err(e) = std::mem::replace(slot, Ok(Item::End(0))) else {
                            unreachable!("the slot held an error")
                        };
                        return Err(e);
                    }
                };
                end = self.check(item)?;
                if end.is_some() {
                    break;
                }
            }
            checked(batch, home);
            if let Some(end) = end {
                return Ok(end);
            }
        }
    }

    /// Checks one element; the end offset once the stream has ended. The
    /// singular fields it keeps it takes out of `item`; the rest stays, to
    /// be shown to the analyses. Inlined into its one caller: a call per
    /// element cost lp_1m 2% more instructions.
    #[inline(always)]
    fn check(&mut self, item: &mut Item) -> Result<Option<u64>, InstanceError> {
        let state = &mut self.state;
        match item {
            Item::Variable(v, _) => {
                state.define(v.id)?;
                self.families.see(v.name.as_deref())?;
            }
            Item::Constraint(c, _) => {
                state.add_constraint(c.id, c.function.shape().terms())?;
                state.uses(User::Constraint(c.id), &c.function)?;
                self.families.see(c.name.as_deref())?;
            }
            // 3.0's refusal is noted by the comparison, as the entities are shown.
            Item::Ommx30Refusal(_) => {}
            &mut Item::CountedVariable { id, fixed } => {
                state.define(id)?;
                if let Some(uses) = state.ommx30.as_mut().filter(|_| fixed) {
                    uses.fix(id);
                }
            }
            &mut Item::CountedConstraint {
                id,
                ref mut ids,
                linear,
                terms,
            } => {
                state.add_constraint(id, terms)?;
                state.uses_ids(User::Constraint(id), ids, linear)?;
                if let Some(uses) = &mut state.ommx30 {
                    ids.iter().for_each(|&id| _ = uses.used.insert(id));
                }
            }
            Item::Converted(c, _) => self.converted(c)?,
            &mut Item::SpooledConstraint {
                id,
                offset,
                ref function,
                ids_below,
                terms,
            } => {
                state.add_constraint(id, terms)?;
                if let (Some(uses), Some(function)) = (&mut state.ommx30, function) {
                    let uses = std::cell::RefCell::new(&mut **uses);
                    let note = |id| {
                        uses.borrow_mut().used.insert(id);
                        true
                    };
                    // Unread, it leaves them to the check below, which builds it.
                    let _ = function.all_defined(&note);
                }
                // With variables 0..n defined, ids below n need no look-up.
                if let Some(function) = function
                    .as_deref()
                    .filter(|_| !state.dense_below(ids_below))
                {
                    state.uses_spooled(User::Constraint(id), function, offset)?;
                }
            }
            Item::Removed(r, _) => {
                state.add_removed(r.constraint.id, r.constraint.function.shape().terms())?;
                // 2.9.3 does not check the variables of removed constraints.
                self.families.see(r.constraint.name.as_deref())?;
            }
            Item::Named(n, _) => {
                state.add_named(n.id)?;
                state.uses(User::NamedFunction(n.id), &n.function)?;
            }
            Item::Rest(part) => {
                // Merged, they are decoded as one message: one element.
                if let Some(limit) = self
                    .max_element
                    .filter(|&limit| (self.rest.len() + part.encoded_len()) as u64 > limit)
                {
                    return Err(InstanceError::SingularTooLarge { limit });
                }
                if let Item::Rest(part) = std::mem::replace(item, Item::End(0)) {
                    self.rest.push(part)
                }
            }
            &mut Item::End(offset) => return Ok(Some(offset)),
        }
        Ok(None)
    }

    /// Checks an entity of v1 input as OMMX 3.0 converts it.
    fn converted(&mut self, c: &Converted) -> Result<(), InstanceError> {
        let state = &mut self.state;
        let entity = c.entity();
        let terms = || entity.function().map(convert::terms_of).unwrap_or_default();
        let ascending = || entity.function().is_some_and(Func::variables_ascend);
        match c.kind {
            EntityKind::Variable => {
                state.define(c.id)?;
                if let Some(uses) = state.ommx30.as_mut().filter(|_| c.fixed()) {
                    uses.fix(c.id);
                }
            }
            EntityKind::Constraint => {
                state.add_constraint(c.id, terms())?;
                let mut ids = convert::variables_of(c);
                state.uses_ids(User::Constraint(c.id), &mut ids, ascending())?;
                if let Some(uses) = &mut state.ommx30 {
                    ids.iter().for_each(|&id| _ = uses.used.insert(id));
                }
            }
            // 2.9.3 does not check the variables of removed constraints.
            EntityKind::Removed => {
                state.add_removed(c.id, terms())?;
                if let Some(uses) = &mut state.ommx30 {
                    convert::variables_of(c)
                        .into_iter()
                        .for_each(|id| _ = uses.referenced.insert(id));
                }
            }
            _ => {
                state.add_named(c.id)?;
                let mut ids = convert::variables_of(c);
                state.uses_ids(User::NamedFunction(c.id), &mut ids, ascending())?;
                if let Some(uses) = &mut state.ommx30 {
                    ids.iter().for_each(|&id| _ = uses.referenced.insert(id));
                }
            }
        }
        if c.kind != EntityKind::NamedFunction {
            self.families.see(entity.name())?;
        }
        Ok(())
    }
}

/// Builds a function from its pieces (checked already), as the wire
/// reader reads them or, should prost read them otherwise, as prost does
/// (its error naming `field` at `offset`); a large quadratic part read on
/// up to `threads` threads.
pub(super) fn build_function(
    pieces: &[&[u8]],
    field: &'static str,
    offset: u64,
    threads: usize,
) -> Result<(Function, FileWaste), InstanceError> {
    function_built(terms::normalize(pieces, threads), pieces, field, offset)
}

/// [`build_function`] from what [`terms::normalize`] gave for `pieces`.
pub(super) fn function_built(
    normalized: Wire<Result<(Function, FileWaste), ModelError>>,
    pieces: &[&[u8]],
    field: &'static str,
    offset: u64,
) -> Result<(Function, FileWaste), InstanceError> {
    match normalized {
        Ok(read) => Ok(read?),
        Err(terms::Unsupported) => {
            let wire = pb::Function::decode(pieces.concat().as_slice()).map_err(|source| {
                InstanceError::Decode {
                    field,
                    offset,
                    source,
                }
            })?;
            Ok(from_prost(&wire)?)
        }
    }
}

/// A function built from prost's decoding, as OMMX builds it, and what
/// normalizing it dropped or merged.
pub(super) fn from_prost(wire: &pb::Function) -> Result<(Function, FileWaste), ModelError> {
    let function = Function::from_wire(wire)?;
    let waste = FileWaste::of(wire, &function);
    Ok((function, waste))
}

/// Distinct variable ids that may wait for their definition: a hostile
/// stream of references to undefined variables costs memory per distinct
/// id, up to this.
pub const MAX_PENDING: usize = 1 << 18;

impl State {
    /// Whether variable `id` is defined.
    pub(super) fn defines(&self, id: u64) -> bool {
        self.variables.contains(&id)
    }

    /// Whether `id` is a constraint's, or a removed constraint's.
    pub(super) fn has_constraint(&self, id: u64) -> (bool, bool) {
        (self.constraints.contains(&id), self.removed.contains(&id))
    }

    /// The state after a stream whose entities were checked elsewhere (on
    /// several threads): the ids defined, the counts, no variable pending.
    pub(super) fn checked(
        variables: IdSet,
        constraints: IdSet,
        removed: IdSet,
        named_functions: IdSet,
        counts: InstanceCounts,
    ) -> Self {
        Self {
            variables,
            constraints,
            removed,
            named_functions,
            pending: Vec::new(),
            pending_ids: IdSet::default(),
            // Read only while the stream is checked.
            variables_below: 0,
            counts,
            ommx30: None,
        }
    }

    /// Defines variable `id`, once.
    #[inline]
    fn define(&mut self, id: u64) -> Result<(), ModelError> {
        if !self.variables.insert(id) {
            return Err(ModelError::DuplicateVariable(id));
        }
        self.counts.summary.variables += 1;
        self.variables_below = self.variables_below.max(id.saturating_add(1));
        Ok(())
    }

    pub(super) fn uses(&mut self, user: User, function: &Function) -> Result<(), InstanceError> {
        let mut defined = true;
        function.for_each_variable(|id| defined &= self.variables.contains(&id));
        if defined {
            return Ok(());
        }
        let mut fresh = false;
        // Only an id's first use counts (`used`), in OMMX's order.
        function.for_each_variable_first(|id| fresh |= self.used(user, id));
        self.pending_within(fresh)
    }

    /// [`State::uses`] for a function counted on the wire: `ids` are the
    /// variables of its stored terms, in its normalized order or, for a
    /// linear function (`ascending`), in any order, as its normalized order
    /// is ascending. Order matters only when some are not defined yet.
    pub(super) fn uses_ids(
        &mut self,
        user: User,
        ids: &mut [u64],
        ascending: bool,
    ) -> Result<(), InstanceError> {
        if ids.iter().all(|id| self.variables.contains(id)) {
            return Ok(());
        }
        if ascending {
            ids.sort_unstable();
        }
        let mut fresh = false;
        for &id in ids.iter() {
            fresh |= self.used(user, id);
        }
        self.pending_within(fresh)
    }

    /// [`State::uses`] for a function counted from the file it was spooled
    /// to: its variables looked up there, and only when some is not defined
    /// yet, the function read back and built, for OMMX's order.
    fn uses_spooled(
        &mut self,
        user: User,
        function: &SpooledArm,
        offset: u64,
    ) -> Result<(), InstanceError> {
        let variables = &self.variables;
        if let Ok(true) = function.all_defined(&|id| variables.contains(&id)) {
            return Ok(());
        }
        let bytes = function.load().map_err(InstanceError::Spool)?;
        let (built, _) = build_function(&[&bytes], "constraints", offset, 1)?;
        self.uses(user, &built)
    }

    /// Notes that `user` uses variable `id`; true if it is newly pending.
    #[inline]
    fn used(&mut self, user: User, id: u64) -> bool {
        if !self.variables.contains(&id) && self.pending_ids.insert(id) {
            self.pending.push((user, id));
            return true;
        }
        false
    }

    /// Checks the pending list's length once some are `fresh`.
    fn pending_within(&mut self, fresh: bool) -> Result<(), InstanceError> {
        if fresh && self.pending.len() > MAX_PENDING {
            // Those defined since no longer wait.
            let variables = &self.variables;
            self.pending.retain(|(_, id)| !variables.contains(id));
            if self.pending.len() > MAX_PENDING {
                return Err(InstanceError::TooManyPending { cap: MAX_PENDING });
            }
        }
        Ok(())
    }

    fn new_constraint(&mut self, id: u64) -> Result<(), ModelError> {
        if self.constraints.contains(&id) || self.removed.contains(&id) {
            return Err(ModelError::DuplicateConstraint(id));
        }
        Ok(())
    }

    /// Adds constraint `id`, of `terms` stored terms, once.
    fn add_constraint(&mut self, id: u64, terms: Terms) -> Result<(), ModelError> {
        self.new_constraint(id)?;
        self.constraints.insert(id);
        self.counts.summary.constraints += 1;
        self.counts.add_constraint_terms(terms);
        Ok(())
    }

    /// Adds removed constraint `id`, of `terms` stored terms, once.
    fn add_removed(&mut self, id: u64, terms: Terms) -> Result<(), ModelError> {
        self.new_constraint(id)?;
        self.removed.insert(id);
        self.counts.summary.removed_constraints += 1;
        self.counts.add_removed_terms(terms);
        Ok(())
    }

    /// Adds named function `id`, once.
    fn add_named(&mut self, id: u64) -> Result<(), ModelError> {
        if !self.named_functions.insert(id) {
            return Err(ModelError::DuplicateNamedFunction(id));
        }
        self.counts.summary.named_functions += 1;
        Ok(())
    }

    /// Whether the variables defined so far are 0..n, all ids below
    /// `ids_below` among them.
    fn dense_below(&self, ids_below: u64) -> bool {
        let below = self.variables_below;
        below == self.counts.summary.variables && ids_below <= below
    }

    /// The first variable used and never defined, in OMMX's order, as the
    /// error it is.
    pub(super) fn check_pending(&self) -> Result<(), ModelError> {
        match self
            .pending
            .iter()
            .find(|(_, id)| !self.variables.contains(id))
        {
            Some((user, id)) => Err(ModelError::UndefinedVariable {
                owner: user.to_string(),
                id: *id,
            }),
            None => Ok(()),
        }
    }
}

/// Who used a variable, for the error message when it turns out undefined.
#[derive(Debug, Clone, Copy)]
pub(super) enum User {
    Objective,
    Constraint(u64),
    NamedFunction(u64),
}

impl std::fmt::Display for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            User::Objective => write!(f, "the objective"),
            User::Constraint(id) => write!(f, "constraint {id}"),
            User::NamedFunction(id) => write!(f, "named function {id}"),
        }
    }
}

#[derive(Default)]
pub(super) struct State {
    variables: IdSet,
    constraints: IdSet,
    removed: IdSet,
    named_functions: IdSet,
    /// Variables used before (or without) their definition: each distinct
    /// id once, with its first user, in order of first use.
    pending: Vec<(User, u64)>,
    pending_ids: IdSet,
    /// One more than the largest variable id defined (0: none).
    variables_below: u64,
    pub(super) counts: InstanceCounts,
    /// For OMMX 3.0's accounting of v1 input only.
    pub(super) ommx30: Option<Box<Ommx30Uses>>,
}
