//! What reading a framed element gives (`decode.rs`, `counted.rs`): an
//! entity built or counted, a singular field kept for the end, the end of
//! the stream; what the checking steps (`validate.rs`, `shards.rs`) take, a
//! batch at a time.

use super::objective::Part;
use super::observer::{Cost, NamedFunction};
use super::terms::spooled::SpooledArm;
use super::InstanceError;
use crate::model::ommx30::{ConversionError, Converted};
use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::profiled::Terms;

/// The items of one framed batch, in stream order; reading stops at the
/// first error, which ends the batch.
pub(super) type Batch = Vec<Result<Item, InstanceError>>;

/// One decoded top-level element, in stream order.
pub(super) enum Item {
    // Variables and constraints, the most frequent, held in the batch
    // itself: a box each cost an allocation, and freeing a batch meant
    // visiting every box again (on a 200k-row LP, 10% of `report`'s time).
    Variable(DecisionVariable, Cost),
    Constraint(Constraint, Cost),
    // Boxed: rare, and large.
    Removed(Box<RemovedConstraint>, Cost),
    Named(Box<NamedFunction>, Cost),
    /// A variable counted on the wire: its id, and whether it has a
    /// substituted value (a fixed one, to OMMX 3.0).
    CountedVariable {
        id: u64,
        fixed: bool,
    },
    /// An entity of v1 input as OMMX 3.0 converts it (its accounting).
    Converted(Box<Converted>, Cost),
    /// A constraint counted on the wire: its id, the variables of its
    /// stored terms, each once (in any order for a `linear` function, else
    /// in the order its normalized terms first use them), and the number of
    /// its stored terms.
    CountedConstraint {
        id: u64,
        ids: Vec<u64>,
        linear: bool,
        terms: Terms,
    },
    /// A constraint counted from the file it was spooled to: its id, where
    /// it ends in the stream, its function (whose variables are still to
    /// be checked; every stored term's is below `ids_below`), and the number
    /// of its stored terms.
    SpooledConstraint {
        id: u64,
        offset: u64,
        function: Option<Box<SpooledArm>>,
        ids_below: u64,
        terms: Terms,
    },
    /// In a pass that compares the accountings: OMMX 3.0 refuses the
    /// entity that follows, which 2.9.3 may accept (`compare.rs`).
    Ommx30Refusal(Box<ConversionError>),
    /// A singular field or map entry.
    Rest(Part),
    /// The end of the stream, at this offset.
    End(u64),
}
