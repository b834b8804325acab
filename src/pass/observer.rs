//! The analyses riding on the pass: what they see of each accepted entity
//! and of the instance-wide parts.

use std::collections::BTreeMap;

use crate::ids::IdSet;
use crate::model::function::Shape;
use crate::model::{
    ommx30, AcyclicAssignments, Annotations, Constraint, ConstraintHints, DecisionVariable,
    Description, EntityKind, FileWaste, Function, Parameters, RemovedConstraint,
};
use crate::profile::LogicalMemoryVisitor;

/// What one accepted entity costs, for an [`EntityObserver`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Logical bytes under the instance's accounting, the entity's map keys
    /// included. OMMX 2.9.3: its map entry (named functions: 0, as 2.9.3
    /// does not count them). OMMX 3.0: every leaf of its container that
    /// belongs to it (row, label entries, removed reason, provenance, fixed
    /// value), so a kind's entities add up to its container less the
    /// container's own stack parts.
    pub bytes: u64,
    /// Bytes of the entity's encoding: for ommx.v1, the element in the file
    /// (tag, length prefix and body); for OMMX 3.0, its entries in the
    /// `ommx.v2` message's tables (of the file, or of the message v1 input
    /// converts to).
    pub wire_bytes: u64,
    /// What normalizing the entity's function dropped or merged from the
    /// file's terms (zero for variables).
    pub waste: FileWaste,
}

/// A named function as the stream carried it (2.9.3 checks it but does not
/// keep it, so it has no model type of its own).
#[derive(Debug, Clone)]
pub struct NamedFunction {
    pub id: u64,
    pub function: Function,
    pub name: Option<String>,
    pub subscripts: Vec<i64>,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

/// The instance-wide parts, once the stream has ended and they were checked.
/// Of the objective, what the analyses read: the pass counts it on the
/// wire where that tells as much, and builds it otherwise.
pub struct Singular<'a> {
    /// What the profile sees of the objective.
    pub objective: Shape,
    /// [`Function::degree`] of the objective.
    pub objective_degree: usize,
    /// The variables the objective uses, each once.
    pub objective_variables: &'a IdSet,
    /// What normalizing the objective dropped or merged from the file.
    pub objective_waste: FileWaste,
    pub hints: &'a ConstraintHints,
    pub dependency: &'a AcyclicAssignments,
    pub parameters: &'a Parameters,
    pub description: &'a Description,
    pub annotations: &'a Annotations,
}

/// What the analyses need of one entity, whatever its schema, borrowed
/// from it.
#[derive(Debug, Clone, Copy)]
pub struct EntityView<'a> {
    pub kind: EntityKind,
    pub id: u64,
    pub name: Option<&'a str>,
    pub subscripts: &'a [i64],
    /// Stored monomials of its function; `None` for entities without one
    /// (variables, one-hot and SOS1 constraints).
    pub terms: Option<u64>,
    /// For a variable of an OMMX 3.0 instance, whether anything outside its
    /// table refers to it (see `model::ommx30::Instance::used_variables`),
    /// when the pass knows it as it shows the variable; `None` otherwise (the
    /// v1 stream, and a 3.0 stream, show variables before their users: the
    /// pass tells at the end, [`EntityObserver::variables_used`], and
    /// analyses may work it out from the rows and functions they see and
    /// [`Singular30`]).
    pub used: Option<bool>,
    /// The entity itself, for an entity of an OMMX 3.0 instance: its label,
    /// its row or function, its removed reason (the analyses that need more
    /// than the fields above read them here).
    pub ommx30: Option<ommx30::Entity<'a>>,
}

/// The instance-wide functions and labels of an OMMX 3.0 instance, shown
/// once after its entities ([`EntityObserver::ommx30_singular`]).
#[derive(Debug, Clone, Copy)]
pub struct Singular30<'a> {
    /// `None` for an instance without one (3.0 holds `Zero`).
    pub objective: Option<&'a ommx30::Func>,
    pub output_objective: Option<&'a ommx30::Func>,
    /// `decision_variable_dependency`: assigned variable, its function.
    pub assignments: &'a BTreeMap<u64, ommx30::Func>,
    pub description: Option<&'a crate::ommx_v1::instance::Description>,
    pub annotations: &'a BTreeMap<String, String>,
    /// File bytes the top-level fields holding rows and named functions
    /// spend on length prefixes that shrink once their entries' waste goes
    /// (an `ommx.v2` payload's collections; 0 for v1 input, whose elements'
    /// prefixes are in each element's waste).
    pub framing_waste: u64,
}

impl<'a> EntityView<'a> {
    pub fn variable(v: &'a DecisionVariable) -> Self {
        Self {
            kind: EntityKind::Variable,
            id: v.id,
            name: v.name.as_deref(),
            subscripts: &v.subscripts,
            terms: None,
            used: None,
            ommx30: None,
        }
    }

    pub fn constraint(c: &'a Constraint) -> Self {
        Self {
            kind: EntityKind::Constraint,
            id: c.id,
            name: c.name.as_deref(),
            subscripts: &c.subscripts,
            terms: Some(c.function.stored_terms() as u64),
            used: None,
            ommx30: None,
        }
    }

    pub fn removed(r: &'a RemovedConstraint) -> Self {
        Self {
            kind: EntityKind::Removed,
            ..Self::constraint(&r.constraint)
        }
    }

    pub fn named_function(n: &'a NamedFunction) -> Self {
        Self {
            kind: EntityKind::NamedFunction,
            id: n.id,
            name: n.name.as_deref(),
            subscripts: &n.subscripts,
            terms: Some(n.function.stored_terms() as u64),
            used: None,
            ommx30: None,
        }
    }

    /// The objective: one per instance, without an id or a name.
    pub fn objective(terms: u64) -> Self {
        Self {
            kind: EntityKind::Objective,
            id: 0,
            name: None,
            subscripts: &[],
            terms: Some(terms),
            used: None,
            ommx30: None,
        }
    }

    /// An entity under OMMX 3.0's accounting; `used`: whether a variable is
    /// used elsewhere, when the pass knows (`None` while v1 input streams).
    pub fn ommx30(e: &ommx30::Entity<'a>, used: Option<bool>) -> Self {
        Self {
            kind: e.kind,
            id: e.id,
            name: e.name(),
            subscripts: e.subscripts(),
            terms: e.function().map(|f| f.stored_terms() as u64),
            used,
            ommx30: Some(*e),
        }
    }
}

/// Observers shown the same entities, one after another.
pub type Part<'a> = Vec<&'a mut dyn EntityObserver>;

/// An analysis riding on the streaming pass: it sees every entity once,
/// in stream order, after OMMX's checks accepted it, with what it costs.
/// Nothing is kept for it; what it keeps is its own business.
pub trait EntityObserver: Send {
    /// Called before each instance: `layer` is its position among the
    /// archive's instance layers (`None` for raw input).
    fn begin(&mut self, _layer: Option<usize>) {}
    fn variable(&mut self, _variable: &DecisionVariable, _cost: Cost) {}
    fn constraint(&mut self, _constraint: &Constraint, _cost: Cost) {}
    fn removed_constraint(&mut self, _removed: &RemovedConstraint, _cost: Cost) {}
    fn named_function(&mut self, _named: &NamedFunction, _cost: Cost) {}
    /// The instance's objective, once it is accepted, before
    /// [`EntityObserver::finish`], under either accounting. Its cost's
    /// `wire_bytes` are those of its field in the file (its fields, when the
    /// stream repeats it); its `waste` is zero when the pass counted it for
    /// an observer that [counts only](EntityObserver::counts_only), which
    /// is not told what normalizing removed.
    fn objective(&mut self, _objective: &EntityView<'_>, _cost: Cost) {}
    /// OMMX 2.9.3's constraint hints of an instance counted with its
    /// accounting, once the whole instance is accepted, before
    /// [`EntityObserver::finish`]; shown to an observer that [counts
    /// only](EntityObserver::counts_only) too.
    fn hints(&mut self, _hints: &ConstraintHints) {}
    /// Called once, after every entity, when the whole instance is accepted
    /// (not for an observer that [counts only](EntityObserver::counts_only)).
    fn finish(&mut self, _singular: &Singular<'_>) {}
    /// An entity of an instance counted with OMMX 3.0's accounting (the v1
    /// methods above are not called for those): for v1 input, in stream
    /// order as each is accepted (a variable's `used` not yet known); for
    /// v2 input, once the instance is accepted, in profile order (variables,
    /// each collection's rows, named functions).
    fn entity(&mut self, _entity: &EntityView<'_>, _cost: Cost) {}
    /// Once the stream of v1 input counted with OMMX 3.0's accounting has
    /// ended and the instance is accepted (before
    /// [`EntityObserver::objective`]): whether a variable is used by
    /// anything but its own table (the objective, a row, a named function,
    /// the dependency), for the variables [`EntityObserver::entity`] showed
    /// with `used: None`. Not called for an observer that [counts
    /// only](EntityObserver::counts_only).
    fn variables_used(&mut self, _used: &dyn Fn(u64) -> bool) {}
    /// In a pass that compares the accountings (`Reading::compare`): what
    /// the v1 entity shown last (`variable`, `constraint`, ...) costs under
    /// OMMX 3.0's accounting, as [`Cost::bytes`] counts it there. Not called
    /// once 3.0 has refused the instance.
    fn ommx30_cost(&mut self, _kind: EntityKind, _id: u64, _bytes: u64) {}
    /// False for an observer that does nothing with
    /// [`EntityObserver::ommx30_cost`], which the pass may then show the
    /// stream to away from the comparison ([`EntityObserver::parts`]).
    fn takes_ommx30_costs(&self) -> bool {
        true
    }
    /// True for an observer made of parts that see the stream's entities
    /// independently of one another ([`EntityObserver::parts`]).
    fn has_parts(&self) -> bool {
        false
    }
    /// The parts of an observer that [has them](EntityObserver::has_parts):
    /// the pass may show the stream's entities (the calls up to
    /// [`EntityObserver::ommx30_cost`], and [`EntityObserver::entity`]) to
    /// each on a thread of its own, each in stream order; everything else
    /// it calls on the whole observer.
    fn parts(&mut self) -> Part<'_> {
        Vec::new()
    }
    /// OMMX 3.0's instance-wide functions and labels, after its entities and
    /// its objective, once the instance is accepted.
    fn ommx30_singular(&mut self, _singular: &Singular30<'_>) {}
    /// For an analysis that needs the leaves themselves (with their rules)
    /// of instances counted with OMMX 3.0's accounting: the visitor they are
    /// shown to, with the profile's paths (family frames included), after
    /// the entities.
    fn leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        None
    }
    /// The visitor each OMMX 3.0 entity's own leaves are shown to: by
    /// default [`EntityObserver::leaves`]'s. An analysis that reads what it
    /// needs of an entity in [`EntityObserver::entity`] gives `None`, and
    /// sees only the instance-wide leaves.
    fn entity_leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        self.leaves()
    }
    /// The instance begun last was refused and is read again as another
    /// schema (raw input, which holds one instance): forget what it showed.
    fn abandon(&mut self) {}
    /// True when the observer looks at no more of the objective than its
    /// cost ([`EntityObserver::objective`]): the pass then counts the
    /// objective's terms on the wire wherever the count is exact, without
    /// gathering its variables or what normalizing removed (which may take
    /// building it), and does not call [`EntityObserver::finish`].
    fn counts_only(&self) -> bool {
        false
    }
    /// False when the observer looks at no entity of an `ommx.v1` instance
    /// (`variable`, `constraint`, ... and, under OMMX 3.0's accounting,
    /// `entity` do nothing): the pass may then count variables and
    /// constraints on the wire without building them, and does not call
    /// those methods.
    fn sees_entities(&self) -> bool {
        true
    }
}

/// The observer of a plain profile: sees nothing.
impl EntityObserver for () {
    fn counts_only(&self) -> bool {
        true
    }
    fn sees_entities(&self) -> bool {
        false
    }
}
