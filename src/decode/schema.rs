//! Which OMMX schema a layer is read with, and whose accounting counts it:
//! the seam through which `ommx.v2` (OMMX 3.0) plugs into the pass.
//!
//! An archive layer names its schema by media type. A raw payload does not:
//! it is read as `ommx.v1` first (as before 3.0 existed) and, when that fails
//! to decode or validate, as `ommx.v2`; `--schema` forces one. Each schema
//! has its default accounting (v1: OMMX 2.9.3, v2: OMMX 3.0), and v1 input can
//! also be counted as OMMX 3.0 would hold it after `from_v1_bytes` (the
//! migration view).

use super::instance::{Cost, EntityObserver, NamedFunction, Singular};
use crate::model::{Constraint, DecisionVariable, RemovedConstraint};
use crate::report::{Accounting, Schema};

/// How to read instance payloads: which schema a raw payload is (archives
/// say it per layer) and which accounting v1 input gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// `None`: detect (v1 first, then v2).
    pub raw_schema: Option<Schema>,
    /// `None`: each schema's own (v1: 2.9.3, v2: 3.0). `Some(Ommx30)` counts
    /// v1 input as 3.0 holds it; v2 input has 3.0's accounting only.
    pub accounting: Option<Accounting>,
}

impl Reading {
    /// `observer`, reading instances this way. The reading rides on the
    /// pass's observer because a [`super::Pass`] is built field by field by
    /// its callers: every entity is passed through unchanged.
    pub fn with(self, observer: &mut dyn EntityObserver) -> Reads<'_> {
        Reads {
            reading: self,
            observer,
        }
    }
}

/// An observer carrying a [`Reading`] (see [`Reading::with`]).
pub struct Reads<'a> {
    reading: Reading,
    observer: &'a mut dyn EntityObserver,
}

impl EntityObserver for Reads<'_> {
    fn begin(&mut self, layer: Option<usize>) {
        self.observer.begin(layer);
    }
    fn variable(&mut self, variable: &DecisionVariable, cost: Cost) {
        self.observer.variable(variable, cost);
    }
    fn constraint(&mut self, constraint: &Constraint, cost: Cost) {
        self.observer.constraint(constraint, cost);
    }
    fn removed_constraint(&mut self, removed: &RemovedConstraint, cost: Cost) {
        self.observer.removed_constraint(removed, cost);
    }
    fn named_function(&mut self, named: &NamedFunction, cost: Cost) {
        self.observer.named_function(named, cost);
    }
    fn finish(&mut self, singular: &Singular<'_>) {
        self.observer.finish(singular);
    }
    fn v1_analysis(&self) -> Option<&'static str> {
        self.observer.v1_analysis()
    }
    fn reading(&self) -> Reading {
        self.reading
    }
}
