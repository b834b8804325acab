//! What the leaves of a decision variable and of a constraint depend on,
//! borrowed: the model's own values, or their fields as the wire carries
//! them, when a pass that only counts reads them without building either
//! (`decode::terms::entities`). Both go through the same code here, so the
//! two cannot disagree about a leaf.

use crate::profile::collections::{
    leaf, option_f64, option_string, string_map, vec_of_8_byte, MapKind, ENUM, SCALAR_8,
};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Noun, Path, Rule};

use super::function::Shape;

/// A `Bound`: two f64, always there.
pub const BOUND: Rule = Rule::fixed("a Bound (two f64)", Noun::new("bound", "bounds"), 16);

/// A decision variable's leaves: everything else it holds is fixed-size.
pub struct VariableLeaves<'a, P> {
    pub substituted_value: Option<f64>,
    pub name: Option<&'a str>,
    /// Number of subscripts.
    pub subscripts: usize,
    /// `(key, value)` pairs.
    pub parameters: P,
    pub description: Option<&'a str>,
}

impl<'a, P: IntoIterator<Item = (&'a str, &'a str)> + Clone> LogicalMemoryProfile
    for VariableLeaves<'a, P>
{
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let VariableLeaves {
            substituted_value,
            name,
            subscripts,
            parameters,
            description,
        } = self;
        let (substituted_value, name, subscripts) = (*substituted_value, *name, *subscripts);
        let (parameters, description) = (parameters.clone(), *description);
        leaf(&path.with("DecisionVariable.id"), visitor, &SCALAR_8);
        leaf(&path.with("DecisionVariable.kind"), visitor, &ENUM);
        leaf(&path.with("DecisionVariable.bound"), visitor, &BOUND);
        option_f64(
            &mut path.with("DecisionVariable.substituted_value"),
            visitor,
            substituted_value,
        );
        let mut meta = path.with("DecisionVariable.metadata");
        option_string(
            &mut meta.with("DecisionVariableMetadata.name"),
            visitor,
            name,
        );
        vec_of_8_byte(
            &mut meta.with("DecisionVariableMetadata.subscripts"),
            visitor,
            subscripts,
        );
        string_map(
            &mut meta.with("DecisionVariableMetadata.parameters"),
            visitor,
            MapKind::FnvHashMap,
            parameters,
        );
        option_string(
            &mut meta.with("DecisionVariableMetadata.description"),
            visitor,
            description,
        );
    }
}

/// No parameters: the leaves of an entity counted on the wire.
pub type NoParameters<'a> = std::iter::Empty<(&'a str, &'a str)>;

/// Packs `parts` (value, bits) into one key, `None` if a value does not
/// fit its bits.
pub(crate) fn pack(parts: &[(u64, u32)]) -> Option<u128> {
    let mut key = 0u128;
    let mut shift = 0;
    for &(value, bits) in parts {
        if value >> bits != 0 {
            return None;
        }
        key |= u128::from(value) << shift;
        shift += bits;
    }
    debug_assert!(shift <= 128);
    Some(key)
}

/// An optional string's part of a key: 0 when absent, else its length + 1.
pub(crate) fn option_len(s: Option<&str>) -> u64 {
    s.map_or(0, |s| s.len() as u64 + 1)
}

/// Leaves whose every path and byte count a small key determines (see
/// `profile::replay::Tally`).
pub trait KeyedLeaves: LogicalMemoryProfile {
    /// The key; `None` when a length is too large to pack.
    fn key(&self) -> Option<u128>;
}

impl<'a> KeyedLeaves for VariableLeaves<'a, NoParameters<'a>> {
    /// The presence of its substituted value and the lengths of what it
    /// holds.
    fn key(&self) -> Option<u128> {
        let VariableLeaves {
            substituted_value,
            name,
            subscripts,
            parameters: _,
            description,
        } = self;
        pack(&[
            (u64::from(substituted_value.is_some()), 1),
            (option_len(*name), 32),
            (*subscripts as u64, 32),
            (option_len(*description), 32),
        ])
    }
}

/// A constraint's leaves: its function counts by its shape alone.
pub struct ConstraintLeaves<'a, P> {
    pub function: Shape,
    pub name: Option<&'a str>,
    /// Number of subscripts.
    pub subscripts: usize,
    /// `(key, value)` pairs.
    pub parameters: P,
    pub description: Option<&'a str>,
}

impl<'a, P: IntoIterator<Item = (&'a str, &'a str)> + Clone> LogicalMemoryProfile
    for ConstraintLeaves<'a, P>
{
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let ConstraintLeaves {
            function,
            name,
            subscripts,
            parameters,
            description,
        } = self;
        let (name, subscripts) = (*name, *subscripts);
        let (parameters, description) = (parameters.clone(), *description);
        leaf(&path.with("Constraint.id"), visitor, &SCALAR_8);
        leaf(&path.with("Constraint.equality"), visitor, &ENUM);
        function.visit_logical_memory(&mut path.with("Constraint.function"), visitor);
        option_string(&mut path.with("Constraint.name"), visitor, name);
        vec_of_8_byte(&mut path.with("Constraint.subscripts"), visitor, subscripts);
        string_map(
            &mut path.with("Constraint.parameters"),
            visitor,
            MapKind::FnvHashMap,
            parameters,
        );
        option_string(
            &mut path.with("Constraint.description"),
            visitor,
            description,
        );
    }
}

impl<'a> KeyedLeaves for ConstraintLeaves<'a, NoParameters<'a>> {
    /// Its function's shape and the lengths of what it holds.
    fn key(&self) -> Option<u128> {
        let ConstraintLeaves {
            function,
            name,
            subscripts,
            parameters: _,
            description,
        } = self;
        pack(&[
            (function.variant as u64, 3),
            (function.stored_terms as u64, 32),
            (option_len(*name), 31),
            (*subscripts as u64, 31),
            (option_len(*description), 31),
        ])
    }
}
