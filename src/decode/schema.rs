//! Which OMMX schema a layer is read with, and whose accounting counts it:
//! the seam through which `ommx.v2` (OMMX 3.0) plugs into the pass.
//!
//! An archive layer names its schema by media type. A raw payload does not:
//! it is read as `ommx.v1` first (as before 3.0 existed) and, when that fails
//! to decode or validate, as `ommx.v2`; `--schema` forces one. Each schema
//! has its default accounting (v1: OMMX 2.9.3, v2: OMMX 3.0), and v1 input can
//! also be counted as OMMX 3.0 would hold it after `from_v1_bytes` (the
//! migration view).

use serde::Serialize;

use super::instance::{Cost, EntityObserver, NamedFunction, Singular};
use crate::model::{Constraint, DecisionVariable, RemovedConstraint};

/// The schema of one instance payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Schema {
    #[serde(rename = "ommx.v1")]
    V1,
    #[serde(rename = "ommx.v2")]
    V2,
}

pub const V1_MEDIA_TYPE: &str = "application/org.ommx.v1.instance";
pub const V2_MEDIA_TYPE: &str = "application/org.ommx.v2.instance";

impl Schema {
    /// The schema of an instance layer's media type; `None` for other layers.
    pub fn of_media_type(media_type: &str) -> Option<Self> {
        match media_type {
            V1_MEDIA_TYPE => Some(Schema::V1),
            V2_MEDIA_TYPE => Some(Schema::V2),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Schema::V1 => "ommx.v1",
            Schema::V2 => "ommx.v2",
        }
    }

    /// The accounting a payload of this schema gets unless asked otherwise.
    pub fn default_accounting(self) -> Accounting {
        match self {
            Schema::V1 => Accounting::Ommx29,
            Schema::V2 => Accounting::Ommx30,
        }
    }
}

/// Whose `logical_memory_profile()` a profile reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Accounting {
    /// `ommx` 2.9.3, reading `ommx.v1`.
    #[serde(rename = "2.9")]
    Ommx29,
    /// `ommx` 3.0.0b7, reading `ommx.v2` (or `ommx.v1` through `from_v1_bytes`).
    #[serde(rename = "3.0")]
    Ommx30,
}

impl Accounting {
    /// The package version whose numbers these are.
    pub fn version(self) -> &'static str {
        match self {
            Accounting::Ommx29 => "2.9.3",
            Accounting::Ommx30 => "3.0.0b7",
        }
    }

    /// The JSON `accounting` field of a profile counted this way.
    pub fn describe(self) -> &'static str {
        match self {
            Accounting::Ommx29 => "ommx 2.9.3 logical_memory_profile",
            Accounting::Ommx30 => "ommx 3.0.0b7 logical_memory_profile",
        }
    }
}

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
    fn counts_only(&self) -> bool {
        self.observer.counts_only()
    }
}
