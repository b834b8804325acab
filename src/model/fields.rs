//! An entity's fields as the file carries them, before OMMX 2.9.3's checks
//! (`VariableFields`, `ConstraintFields`): from prost's message, or read on
//! the wire by the pass (`pass::terms::held`), which fills them in place;
//! and the model's types of the fields every entity's label has, held
//! inline when short.

use std::collections::BTreeMap;

use crate::ommx_v1 as pb;

/// An entity's name as the model keeps it: inline up to 24 bytes. Most
/// names are a letter or a word (`x`, `demand`), so reading one allocates
/// nothing.
pub type Name = compact_str::CompactString;

/// An entity's subscripts as the model keeps them: inline up to two.
pub type Subscripts = smallvec::SmallVec<[i64; 2]>;

/// A decision variable's fields as the file carries them, before OMMX
/// 2.9.3's checks: from prost's message, or read on the wire by the pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VariableFields {
    pub id: u64,
    pub kind: i32,
    pub bound: Option<(f64, f64)>,
    pub substituted_value: Option<f64>,
    pub name: Option<Name>,
    pub subscripts: Subscripts,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

impl From<pb::DecisionVariable> for VariableFields {
    fn from(v: pb::DecisionVariable) -> Self {
        let pb::DecisionVariable {
            id,
            kind,
            bound,
            name,
            subscripts,
            parameters,
            description,
            substituted_value,
        } = v;
        Self {
            id,
            kind,
            bound: bound.map(|b| (b.lower, b.upper)),
            substituted_value,
            name: name.map(Name::from),
            subscripts: Subscripts::from_vec(subscripts),
            parameters,
            description,
        }
    }
}

/// A constraint's fields other than its function as the file carries
/// them, before OMMX 2.9.3's checks: from prost's message, or read on the
/// wire by the pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConstraintFields {
    pub id: u64,
    pub equality: i32,
    pub name: Option<Name>,
    pub subscripts: Subscripts,
    pub parameters: BTreeMap<String, String>,
    pub description: Option<String>,
}

impl From<pb::Constraint> for ConstraintFields {
    /// The fields but the function, which is read on its own.
    fn from(c: pb::Constraint) -> Self {
        let pb::Constraint {
            id,
            equality,
            function: _,
            parameters,
            name,
            description,
            subscripts,
        } = c;
        Self {
            id,
            equality,
            name: name.map(Name::from),
            subscripts: Subscripts::from_vec(subscripts),
            parameters,
            description,
        }
    }
}
