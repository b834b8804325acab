//! What the pass gathers of an instance beyond what it shows: the facts the
//! real-memory estimate (`real_memory`, an analysis `api` runs after the
//! pass) reads that OMMX's logical profile does not carry. A product of the
//! pass beside the profile and the summary ([`super::ProfiledInstance`]),
//! never serialized: a profile read back from JSON has none, and keeps the
//! estimate it was saved with.

use super::{InstanceSummary, Terms};

/// What the pass gathered of one instance for the real-memory estimate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gathered {
    /// What the functions' loads take that OMMX 2.9.3's profile does not
    /// count, by owner.
    pub unprofiled: ByOwner,
    /// A quadratic objective's growths as `to_bytes` reads its table back,
    /// when the pass was asked for them (its `table_order` option).
    pub objective_growths: Option<Vec<Growth>>,
}

/// Which vectors grow next as OMMX 2.9.3's `to_bytes` reads a quadratic
/// function's table in its order (`model::table_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// The pairs' three (columns, rows, values), together.
    Pairs,
    /// The linear part's terms.
    Linear,
}

/// What a function's load holds and makes beyond its stored terms, which
/// OMMX 2.9.3's profile does not count: it counts a quadratic function's
/// linear terms with its pairs and a polynomial's monomials without their
/// ids.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unprofiled {
    /// Of the stored terms, a quadratic function's linear part's (its
    /// constant included).
    pub quadratic_linear: u64,
    /// A polynomial's ids, over its stored monomials.
    pub monomial_ids: u64,
    /// Its monomials of more than OMMX keeps inline
    /// (`model::function::INLINE_IDS`), and their ids.
    pub long_monomials: u64,
    pub long_monomial_ids: u64,
}

impl Unprofiled {
    pub fn absorb(&mut self, other: Unprofiled) {
        self.quadratic_linear += other.quadratic_linear;
        self.monomial_ids += other.monomial_ids;
        self.long_monomials += other.long_monomials;
        self.long_monomial_ids += other.long_monomial_ids;
    }
}

/// [`Unprofiled`] counts by the owner of the functions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByOwner {
    pub objective: Unprofiled,
    pub constraints: Unprofiled,
    pub removed: Unprofiled,
}

impl ByOwner {
    pub fn absorb(&mut self, other: ByOwner) {
        self.objective.absorb(other.objective);
        self.constraints.absorb(other.constraints);
        self.removed.absorb(other.removed);
    }
}

/// What the pass counts of one instance as it reads it: the summary it
/// shows, and what it gathers for the estimate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstanceCounts {
    pub summary: InstanceSummary,
    pub gathered: Gathered,
}

impl InstanceCounts {
    /// Adds the terms of the objective's function.
    pub fn add_objective_terms(&mut self, t: Terms) {
        self.summary.terms += t.stored;
        self.gathered.unprofiled.objective.absorb(t.unprofiled);
    }

    /// Adds the terms of a constraint's function.
    pub fn add_constraint_terms(&mut self, t: Terms) {
        self.summary.terms += t.stored;
        self.gathered.unprofiled.constraints.absorb(t.unprofiled);
    }

    /// Adds the terms of a removed constraint's function.
    pub fn add_removed_terms(&mut self, t: Terms) {
        self.summary.terms += t.stored;
        self.gathered.unprofiled.removed.absorb(t.unprofiled);
    }

    /// Adds what another thread counted of the same instance's entities
    /// (the objective's growths and the stream's end are the end's alone).
    pub fn absorb(&mut self, other: InstanceCounts) {
        let s = other.summary;
        self.summary.variables += s.variables;
        self.summary.constraints += s.constraints;
        self.summary.removed_constraints += s.removed_constraints;
        self.summary.named_functions += s.named_functions;
        self.summary.terms += s.terms;
        self.gathered.unprofiled.absorb(other.gathered.unprofiled);
    }
}
