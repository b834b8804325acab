//! OMMX 2.9.3's constraint hints: one-hot and SOS1 sets of variables on
//! constraints, each an entity of its own for `top`.

use crate::ommx_v1 as pb;
use crate::profile::collections::{btree_set_u64, leaf, SCALAR_8, VEC};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Path};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneHot {
    pub constraint_id: u64,
    pub variables: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sos1 {
    pub binary_constraint_id: u64,
    pub big_m_constraint_ids: Vec<u64>,
    pub variables: Vec<u64>,
}

/// The hints that survive loading (those on removed constraints are dropped
/// by the caller, which knows the removed ids).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstraintHints {
    pub one_hot: Vec<OneHot>,
    pub sos1: Vec<Sos1>,
}

/// A one-hot hint's leaves, at its container's path.
impl LogicalMemoryProfile for OneHot {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let OneHot {
            constraint_id: _,
            variables,
        } = self;
        leaf(&path.with("OneHot.id"), visitor, &SCALAR_8);
        btree_set_u64(&mut path.with("OneHot.variables"), visitor, variables.len());
    }
}

/// An SOS1 hint's leaves, at its container's path.
impl LogicalMemoryProfile for Sos1 {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let Sos1 {
            binary_constraint_id: _,
            big_m_constraint_ids,
            variables,
        } = self;
        leaf(&path.with("Sos1.binary_constraint_id"), visitor, &SCALAR_8);
        btree_set_u64(
            &mut path.with("Sos1.big_m_constraint_ids"),
            visitor,
            big_m_constraint_ids.len(),
        );
        btree_set_u64(&mut path.with("Sos1.variables"), visitor, variables.len());
    }
}

impl OneHot {
    /// Bytes of its encoding as an element of the file's
    /// `ConstraintHints.one_hot_constraints`, tag and length included (the
    /// file may hold the same ids in another encoding).
    pub fn wire_bytes(&self) -> u64 {
        let hint = pb::OneHot {
            constraint_id: self.constraint_id,
            decision_variables: self.variables.clone(),
        };
        let field = crate::wire::fields::hints::ONE_HOT_CONSTRAINTS;
        prost::encoding::message::encoded_len(field, &hint) as u64
    }
}

impl Sos1 {
    /// Bytes of its encoding as an element of the file's
    /// `ConstraintHints.sos1_constraints`, as [`OneHot::wire_bytes`].
    pub fn wire_bytes(&self) -> u64 {
        let hint = pb::Sos1 {
            binary_constraint_id: self.binary_constraint_id,
            big_m_constraint_ids: self.big_m_constraint_ids.clone(),
            decision_variables: self.variables.clone(),
        };
        let field = crate::wire::fields::hints::SOS1_CONSTRAINTS;
        prost::encoding::message::encoded_len(field, &hint) as u64
    }
}

impl LogicalMemoryProfile for ConstraintHints {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let ConstraintHints { one_hot, sos1 } = self;
        {
            let mut p = path.with("ConstraintHints.one_hot_constraints");
            leaf(&p.with("Vec[stack]"), visitor, &VEC);
            for hint in one_hot {
                hint.visit_logical_memory(&mut p, visitor);
            }
        }
        let mut p = path.with("ConstraintHints.sos1_constraints");
        leaf(&p.with("Vec[stack]"), visitor, &VEC);
        for hint in sos1 {
            hint.visit_logical_memory(&mut p, visitor);
        }
    }
}
