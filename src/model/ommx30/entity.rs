//! An OMMX 3.0 instance one entity at a time: a variable, a row of one of the
//! four constraint collections (active or removed), or a named function,
//! with every leaf of the 3.0 profile that belongs to it.
//!
//! In 3.0 an entity's bytes are spread over its container: a variable's row
//! in `DecisionVariableTable.entries`, its label fields in the label store,
//! its fixed value in the columns; a constraint's row, its removed reason,
//! its label and its provenance. [`Entity`] visits all of them, relative to
//! the container frame, so the profile is the instance-wide parts
//! ([`Instance::visit_parts`]: the containers' own stack parts and the
//! singular fields) plus each entity's leaves under its container. A family
//! frame (`--group-by name`) goes right under the container, as in v1, so a
//! family's frame holds every byte of its entities.

use std::collections::BTreeMap;

use crate::model::leaves::{option_len, pack};
use crate::model::leaves::{ConstraintLeaves, KeyedLeaves, NoParameters, VariableLeaves};
use crate::model::{EntityKind, Function};
use crate::profile::collections::{
    leaf, string, string_map, MapKind, BTREE_SET, ENUM, FNV_HASHMAP, SCALAR_8, VEC,
};
use crate::profile::family::family_frame_among;
use crate::profile::{Frame, LogicalMemoryProfile, LogicalMemoryVisitor, Noun, Path, Rule};

use super::{Collection, Func, Instance, Label, Reason, Row};

pub const VARIABLES: &str = "Instance.decision_variables";
pub const NAMED_FUNCTIONS: &str = "Instance.named_functions";
pub const VARIABLE_ENTRIES: &str = "DecisionVariableTable.entries";
pub const VARIABLE_LABELS: &str = "DecisionVariableTable.labels";
pub const FIXED_VALUES: [&str; 2] = [
    "DecisionVariableTable.columns",
    "CreatedDecisionVariableColumns.fixed_values",
];
pub const FUNCTION_ENTRIES: &str = "NamedFunctionTable.entries";
pub const FUNCTION_LABELS: &str = "NamedFunctionTable.labels";
pub const CONTEXT_LABELS: [&str; 2] = ["context", "ConstraintContextStore.labels"];
pub const CONTEXT_PROVENANCE: [&str; 2] = ["context", "ConstraintContextStore.provenance"];

/// One `Provenance` entry (an enum of three id newtypes).
pub const PROVENANCE: Rule = Rule::fixed(
    "a Provenance (which special constraint a row came from)",
    Noun::new("entry", "entries"),
    16,
);
/// Frames of one collection kind: the id newtype, the row type, the maps.
#[derive(Debug)]
pub struct Names {
    pub(super) id: &'static str,
    pub(super) active: &'static str,
    pub(super) removed: &'static str,
    /// `Row.equality`, `Row.stage`, and `Row.indicator_variable` or `Row.variables`.
    pub(super) fields: [&'static str; 3],
}

pub(super) const REGULAR: Names = Names {
    id: "ConstraintID.0",
    fields: [
        "Constraint.equality",
        "Constraint.stage",
        "Constraint.indicator_variable",
    ],
    active: "constraints",
    removed: "removed_constraints",
};
pub(super) const INDICATOR: Names = Names {
    id: "IndicatorConstraintID.0",
    fields: [
        "IndicatorConstraint.equality",
        "IndicatorConstraint.stage",
        "IndicatorConstraint.indicator_variable",
    ],
    active: "indicator_constraints",
    removed: "removed_indicator_constraints",
};
pub(super) const ONE_HOT: Names = Names {
    id: "OneHotConstraintID.0",
    fields: [
        "OneHotConstraint.equality",
        "OneHotConstraint.stage",
        "OneHotConstraint.variables",
    ],
    active: "one_hot_constraints",
    removed: "removed_one_hot_constraints",
};
pub(super) const SOS1: Names = Names {
    id: "Sos1ConstraintID.0",
    fields: [
        "Sos1Constraint.equality",
        "Sos1Constraint.stage",
        "Sos1Constraint.variables",
    ],
    active: "sos1_constraints",
    removed: "removed_sos1_constraints",
};

/// The fields of a `ModelingLabelStore`, one map each.
pub const LABEL_FIELDS: [&str; 4] = [
    "ModelingLabelStore.description",
    "ModelingLabelStore.name",
    "ModelingLabelStore.parameters",
    "ModelingLabelStore.subscripts",
];

/// Frames that sit right under an entity container beside the family
/// frames; a family named like one of them is escaped.
const SIBLINGS: [&str; 14] = [
    VARIABLE_ENTRIES,
    VARIABLE_LABELS,
    FIXED_VALUES[0],
    FUNCTION_ENTRIES,
    FUNCTION_LABELS,
    "context",
    "constraints",
    "removed_constraints",
    "indicator_constraints",
    "removed_indicator_constraints",
    "one_hot_constraints",
    "removed_one_hot_constraints",
    "sos1_constraints",
    "removed_sos1_constraints",
];

/// What kind of entity, with what it holds.
#[derive(Debug, Clone, Copy)]
pub enum Part<'a> {
    Variable {
        fixed: bool,
    },
    Row {
        names: &'static Names,
        row: &'a Row,
        /// Removed rows: their reason.
        reason: Option<&'a Reason>,
        /// Length of the row's provenance chain (0: none stored).
        provenance: usize,
    },
    NamedFunction(&'a Func),
}

/// One entity of an OMMX 3.0 instance and its place in the profile.
#[derive(Debug, Clone, Copy)]
pub struct Entity<'a> {
    pub kind: EntityKind,
    pub id: u64,
    pub label: Option<&'a Label>,
    /// The container frame its leaves sit under.
    pub container: &'static str,
    pub part: Part<'a>,
}

impl<'a> Entity<'a> {
    pub fn name(&self) -> Option<&'a str> {
        self.label.and_then(|l| l.name.as_deref())
    }

    pub fn subscripts(&self) -> &'a [i64] {
        self.label.map_or(&[], |l| l.subscripts.as_slice())
    }

    /// Its function: constraints (regular and indicator) and named functions.
    pub fn function(&self) -> Option<&'a Func> {
        match self.part {
            Part::Row {
                row: Row::Regular(f) | Row::Indicator(_, f),
                ..
            }
            | Part::NamedFunction(f) => Some(f),
            _ => None,
        }
    }

    /// Its family frame under `--group-by name`.
    pub fn family(&self) -> Frame {
        family_frame_among(self.name(), &SIBLINGS)
    }

    /// Visits its leaves under `path` (which holds the instance's root, if
    /// any), in its container and, when given, its family frame.
    pub fn visit_under<V: LogicalMemoryVisitor>(
        &self,
        path: &mut Path,
        family: Option<Frame>,
        visitor: &mut V,
    ) {
        let mut p = path.with(self.container);
        match family {
            Some(f) => self.visit_logical_memory(&mut p.with(f), visitor),
            None => self.visit_logical_memory(&mut p, visitor),
        }
    }
}

fn key_frame<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    map_key: &'static str,
    id: &'static str,
) {
    leaf(&path.with(map_key).with(id), visitor, &SCALAR_8);
}

/// The stack parts of a `ModelingLabelStore` at `path`.
pub(super) fn label_stacks<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V) {
    for field in LABEL_FIELDS {
        leaf(
            &path.with(field).with("FnvHashMap[stack]"),
            visitor,
            &FNV_HASHMAP,
        );
    }
}

/// One row's entries in a `ModelingLabelStore` at `path`: one per field set.
fn label<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    id: &'static str,
    l: LabelRef<'_>,
) {
    match l {
        LabelRef::Built(l) => label_fields(path, visitor, id, l.fields()),
        LabelRef::Wire(l) => label_fields(path, visitor, id, l.fields()),
    }
}

/// A label read on the wire without building it (`ommx.v2`'s
/// `ModelingLabel`), its parameters left out: a label with some is built.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WireLabel<'a> {
    pub name: Option<&'a str>,
    /// Number of subscripts.
    pub subscripts: usize,
    pub description: Option<&'a str>,
}

impl<'a> WireLabel<'a> {
    fn fields(&self) -> LabelFields<'a, NoParameters<'a>> {
        LabelFields {
            name: self.name,
            subscripts: self.subscripts,
            parameters: std::iter::empty(),
            description: self.description,
        }
    }

    /// What its leaves depend on, packed after `head`.
    fn key(&self, head: &[(u64, u32)]) -> Option<u128> {
        let fields = [
            (option_len(self.name), 32),
            (self.subscripts as u64, 32),
            (option_len(self.description), 32),
        ];
        // On the stack: a key is made for every label shown.
        let mut parts = [(0, 0); 5];
        let n = head.len() + fields.len();
        parts.get_mut(..head.len())?.copy_from_slice(head);
        parts.get_mut(head.len()..n)?.copy_from_slice(&fields);
        pack(&parts[..n])
    }
}

/// A label as a piece holds it: built, or read on the wire.
#[derive(Debug, Clone, Copy)]
pub enum LabelRef<'a> {
    Built(&'a Label),
    Wire(WireLabel<'a>),
}

impl<'a> LabelRef<'a> {
    /// As read on the wire, whose leaves it has: `None` for a built label
    /// with parameters (which a wire label leaves out).
    fn as_wire(self) -> Option<WireLabel<'a>> {
        match self {
            LabelRef::Wire(l) => Some(l),
            LabelRef::Built(l) => l.parameters.is_empty().then_some(WireLabel {
                name: l.name.as_deref(),
                subscripts: l.subscripts.len(),
                description: l.description.as_deref(),
            }),
        }
    }
}

impl Label {
    /// Its fields, borrowed.
    pub fn fields(&self) -> LabelFields<'_, impl Iterator<Item = (&str, &str)> + '_> {
        LabelFields {
            name: self.name.as_deref(),
            subscripts: self.subscripts.len(),
            parameters: self
                .parameters
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
            description: self.description.as_deref(),
        }
    }
}

/// A label's fields, borrowed: from a [`Label`], or from a v1 entity read
/// on the wire.
pub struct LabelFields<'a, P> {
    pub name: Option<&'a str>,
    /// Number of subscripts.
    pub subscripts: usize,
    /// `(key, value)` pairs.
    pub parameters: P,
    pub description: Option<&'a str>,
}

/// [`label`]'s entries from borrowed fields.
fn label_fields<'a, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    id: &'static str,
    l: LabelFields<'a, impl Iterator<Item = (&'a str, &'a str)>>,
) {
    let [description, name, parameters, subscripts] = LABEL_FIELDS;
    let mut parameters_given = l.parameters.peekable();
    if let Some(d) = l.description {
        let mut p = path.with(description);
        key_frame(&mut p, visitor, "FnvHashMap[key]", id);
        string(&p, visitor, d);
    }
    if let Some(n) = l.name {
        let mut p = path.with(name);
        key_frame(&mut p, visitor, "FnvHashMap[key]", id);
        string(&p, visitor, n);
    }
    if parameters_given.peek().is_some() {
        let mut p = path.with(parameters);
        key_frame(&mut p, visitor, "FnvHashMap[key]", id);
        string_map(&mut p, visitor, MapKind::FnvHashMap, parameters_given);
    }
    if l.subscripts > 0 {
        let mut p = path.with(subscripts);
        key_frame(&mut p, visitor, "FnvHashMap[key]", id);
        leaf(&p.with("Vec[stack]"), visitor, &VEC);
        for _ in 0..l.subscripts {
            leaf(&p, visitor, &SCALAR_8);
        }
    }
}

/// A regular row's fields: its equality and its function.
fn regular_row<F: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    names: &Names,
    function: &F,
) {
    let [equality, stage, _] = names.fields;
    leaf(&path.with(equality), visitor, &ENUM);
    function.visit_logical_memory(&mut path.with(stage).with("CreatedData.function"), visitor);
}

fn row<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, names: &Names, row: &Row) {
    let [equality, stage, third] = names.fields;
    match row {
        Row::Regular(f) => regular_row(path, visitor, names, f),
        Row::Indicator(_, f) => {
            leaf(&path.with(equality), visitor, &ENUM);
            leaf(&path.with(third).with("VariableID.0"), visitor, &SCALAR_8);
            f.visit_logical_memory(&mut path.with(stage).with("CreatedData.function"), visitor);
        }
        Row::Set(variables) => {
            let mut p = path.with(third);
            leaf(&p.with("BTreeSet[stack]"), visitor, &BTREE_SET);
            for _ in variables {
                leaf(&p.with("VariableID.0"), visitor, &SCALAR_8);
            }
        }
    }
}

/// A variable's leaves relative to its container.
fn variable<'a, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    label: Option<LabelFields<'a, impl Iterator<Item = (&'a str, &'a str)>>>,
    fixed: bool,
) {
    let id = "VariableID.0";
    let mut e = path.with(VARIABLE_ENTRIES);
    key_frame(&mut e, visitor, "BTreeMap[key]", id);
    leaf(&e.with("DecisionVariable.kind"), visitor, &ENUM);
    let mut b = e.with("DecisionVariable.bound");
    leaf(&b.with("Bound.lower"), visitor, &SCALAR_8);
    leaf(&b.with("Bound.upper"), visitor, &SCALAR_8);
    drop(b);
    drop(e);
    if let Some(l) = label {
        label_fields(&mut path.with(VARIABLE_LABELS), visitor, id, l);
    }
    if fixed {
        let [columns, values] = FIXED_VALUES;
        let mut f = path.with(columns);
        let mut f = f.with(values);
        key_frame(&mut f, visitor, "BTreeMap[key]", id);
        leaf(&f, visitor, &SCALAR_8);
    }
}

/// An active regular row's leaves (its function any that counts like
/// one) relative to its collection.
fn active_regular<'a, F: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    function: &F,
    label: Option<LabelFields<'a, impl Iterator<Item = (&'a str, &'a str)>>>,
) {
    let names = &REGULAR;
    let mut p = path.with(names.active);
    key_frame(&mut p, visitor, "BTreeMap[key]", names.id);
    regular_row(&mut p, visitor, names, function);
    drop(p);
    if let Some(l) = label {
        let [context, labels] = CONTEXT_LABELS;
        label_fields(&mut path.with(context).with(labels), visitor, names.id, l);
    }
}

/// A regular row's leaves relative to its collection, its function any
/// that counts like one (a shape counted on the wire): those of
/// [`Piece::Row`] for a row holding that function.
pub fn regular_row_leaves<F: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    names: &Names,
    function: &F,
    removed: bool,
) {
    match removed {
        false => {
            let mut p = path.with(names.active);
            key_frame(&mut p, visitor, "BTreeMap[key]", names.id);
            regular_row(&mut p, visitor, names, function);
        }
        true => {
            let mut p = path.with(names.removed);
            key_frame(&mut p, visitor, "BTreeMap[key]", names.id);
            regular_row(&mut p.with("Tuple.0"), visitor, names, function);
        }
    }
}

/// A label's fields as a v1 entity counted on the wire gives them (no
/// parameters: an entity with some is built), `None` when none is set, as
/// 3.0 stores no label then.
fn counted_label<'a>(
    name: Option<&'a str>,
    subscripts: usize,
    description: Option<&'a str>,
) -> Option<LabelFields<'a, NoParameters<'a>>> {
    (name.is_some() || subscripts > 0 || description.is_some()).then_some(LabelFields {
        name,
        subscripts,
        parameters: std::iter::empty(),
        description,
    })
}

/// A v1 decision variable counted on the wire, as OMMX 3.0 holds it after
/// `from_v1_bytes`: its leaves relative to [`VARIABLES`].
pub struct CountedVariable<'a, 'b>(pub &'b VariableLeaves<'a, NoParameters<'a>>);

impl LogicalMemoryProfile for CountedVariable<'_, '_> {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let v = self.0;
        let label = counted_label(v.name, v.subscripts, v.description);
        variable(path, visitor, label, v.substituted_value.is_some());
    }
}

impl KeyedLeaves for CountedVariable<'_, '_> {
    fn key(&self) -> Option<u128> {
        self.0.key()
    }
}

/// A v1 constraint counted on the wire, as OMMX 3.0 holds it after
/// `from_v1_bytes`: its leaves relative to the regular collection.
pub struct CountedConstraint<'a, 'b>(pub &'b ConstraintLeaves<'a, NoParameters<'a>>);

impl LogicalMemoryProfile for CountedConstraint<'_, '_> {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let c = self.0;
        let label = counted_label(c.name, c.subscripts, c.description);
        active_regular(path, visitor, &c.function, label);
    }
}

impl KeyedLeaves for CountedConstraint<'_, '_> {
    fn key(&self) -> Option<u128> {
        self.0.key()
    }
}

/// The leaves of one map entry of an entity's container (relative to the
/// container): what an `ommx.v2` message holds in one entry of one of its
/// tables. An entity's leaves are its pieces' ([`Entity`]); a v2 payload
/// read a table entry at a time visits each piece as its entry goes by.
#[derive(Debug, Clone, Copy)]
pub enum Piece<'a> {
    /// A variable's row in `DecisionVariableTable.entries`.
    VariableRow,
    /// Its label's entries in the label store.
    VariableLabel(LabelRef<'a>),
    /// Its fixed value.
    FixedValue,
    /// A row of a collection, active or removed (its key and row).
    Row {
        names: &'static Names,
        row: &'a Row,
        removed: bool,
    },
    /// A removed row's reason.
    Reason {
        names: &'static Names,
        reason: &'a Reason,
    },
    /// A row's context: its label, and the length of its provenance chain
    /// (0: none stored).
    Context {
        names: &'static Names,
        label: Option<LabelRef<'a>>,
        provenance: usize,
    },
    /// A named function's entry.
    NamedFunction(&'a Func),
    /// Its label's entries.
    NamedLabel(LabelRef<'a>),
}

impl Piece<'_> {
    /// A key that determines every leaf of the piece within its container
    /// (see `profile::replay::Tally`), for pieces that hold nothing built:
    /// a variable's row, a fixed value, a label read on the wire, a context
    /// of one; `None` for the others, or a length too large to pack.
    pub fn key(&self) -> Option<u128> {
        match *self {
            Piece::VariableRow => Some(1),
            Piece::FixedValue => Some(2),
            Piece::VariableLabel(l) => l.as_wire()?.key(&[(3, 4)]),
            Piece::NamedLabel(l) => l.as_wire()?.key(&[(4, 4)]),
            Piece::Context {
                label: None,
                provenance,
                ..
            } => pack(&[(5, 4), (provenance as u64, 32)]),
            Piece::Context {
                label: Some(l),
                provenance,
                ..
            } => l.as_wire()?.key(&[(6, 4), (provenance as u64, 24)]),
            // A regular row's leaves: its key, its equality and its
            // function's, which its shape gives (a polynomial's depend on
            // each monomial's degree too).
            Piece::Row {
                names,
                row: Row::Regular(Func::Compact(f)),
                removed,
            } if names.id == REGULAR.id && !matches!(f, Function::Polynomial { .. }) => {
                let shape = f.shape();
                pack(&[
                    (7, 4),
                    (u64::from(removed), 1),
                    (shape.variant as u64, 3),
                    (shape.stored_terms as u64, 32),
                ])
            }
            _ => None,
        }
    }
}

impl LogicalMemoryProfile for Piece<'_> {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        match *self {
            Piece::VariableRow => variable(
                path,
                visitor,
                None::<LabelFields<'_, NoParameters<'_>>>,
                false,
            ),
            Piece::VariableLabel(l) => {
                label(&mut path.with(VARIABLE_LABELS), visitor, "VariableID.0", l);
            }
            Piece::FixedValue => {
                let [columns, values] = FIXED_VALUES;
                let mut f = path.with(columns);
                let mut f = f.with(values);
                key_frame(&mut f, visitor, "BTreeMap[key]", "VariableID.0");
                leaf(&f, visitor, &SCALAR_8);
            }
            Piece::Row {
                names,
                row: Row::Regular(f),
                removed,
            } => regular_row_leaves(path, visitor, names, f, removed),
            Piece::Row {
                names,
                row: r,
                removed: false,
            } => {
                let mut p = path.with(names.active);
                key_frame(&mut p, visitor, "BTreeMap[key]", names.id);
                row(&mut p, visitor, names, r);
            }
            Piece::Row {
                names,
                row: r,
                removed: true,
            } => {
                let mut p = path.with(names.removed);
                key_frame(&mut p, visitor, "BTreeMap[key]", names.id);
                row(&mut p.with("Tuple.0"), visitor, names, r);
            }
            Piece::Reason { names, reason } => {
                let mut p = path.with(names.removed);
                let mut t = p.with("Tuple.1");
                string(&t.with("RemovedReason.reason"), visitor, &reason.reason);
                string_map(
                    &mut t.with("RemovedReason.parameters"),
                    visitor,
                    MapKind::FnvHashMap,
                    reason
                        .parameters
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str())),
                );
            }
            Piece::Context {
                names,
                label: l,
                provenance,
            } => {
                if let Some(l) = l {
                    let [context, labels] = CONTEXT_LABELS;
                    label(&mut path.with(context).with(labels), visitor, names.id, l);
                }
                if provenance > 0 {
                    let [context, store] = CONTEXT_PROVENANCE;
                    let mut c = path.with(context);
                    let mut p = c.with(store);
                    key_frame(&mut p, visitor, "FnvHashMap[key]", names.id);
                    leaf(&p.with("Vec[stack]"), visitor, &VEC);
                    for _ in 0..provenance {
                        leaf(&p, visitor, &PROVENANCE);
                    }
                }
            }
            Piece::NamedFunction(function) => {
                let mut e = path.with(FUNCTION_ENTRIES);
                key_frame(&mut e, visitor, "BTreeMap[key]", "NamedFunctionID.0");
                function.visit_logical_memory(&mut e.with("NamedFunction.function"), visitor);
            }
            Piece::NamedLabel(l) => {
                label(
                    &mut path.with(FUNCTION_LABELS),
                    visitor,
                    "NamedFunctionID.0",
                    l,
                );
            }
        }
    }
}

impl<'a> Entity<'a> {
    /// What it holds, as the pieces of its container's tables: its leaves
    /// are theirs, relative to its container.
    pub fn pieces(&self) -> [Option<Piece<'a>>; 3] {
        let label = self.label;
        match self.part {
            Part::Variable { fixed } => [
                Some(Piece::VariableRow),
                label.map(|l| Piece::VariableLabel(LabelRef::Built(l))),
                fixed.then_some(Piece::FixedValue),
            ],
            Part::NamedFunction(f) => [
                Some(Piece::NamedFunction(f)),
                label.map(|l| Piece::NamedLabel(LabelRef::Built(l))),
                None,
            ],
            Part::Row {
                names,
                row,
                reason,
                provenance,
            } => [
                Some(Piece::Row {
                    names,
                    row,
                    removed: reason.is_some(),
                }),
                reason.map(|reason| Piece::Reason { names, reason }),
                (label.is_some() || provenance > 0).then_some(Piece::Context {
                    names,
                    label: label.map(LabelRef::Built),
                    provenance,
                }),
            ],
        }
    }

    /// Visits the leaves of its label, its removal reason and its context
    /// (the pieces that hold every `ModelingLabelStore.*` and
    /// `RemovedReason.*` leaf it has), relative to its container; not its
    /// row, function or value.
    pub fn visit_labels<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        for piece in self.pieces().into_iter().flatten() {
            if let Piece::VariableLabel(_)
            | Piece::NamedLabel(_)
            | Piece::Reason { .. }
            | Piece::Context { .. } = piece
            {
                piece.visit_logical_memory(path, visitor);
            }
        }
    }
}

impl LogicalMemoryProfile for Entity<'_> {
    /// Its leaves relative to its container: its pieces'.
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        for piece in self.pieces().into_iter().flatten() {
            piece.visit_logical_memory(path, visitor);
        }
    }
}

/// The container frame and kinds (active, removed) of each collection.
pub const COLLECTIONS: [(&str, &Names, EntityKind, EntityKind); 4] = [
    (
        "Instance.constraint_collection",
        &REGULAR,
        EntityKind::Constraint,
        EntityKind::Removed,
    ),
    (
        "Instance.indicator_constraint_collection",
        &INDICATOR,
        EntityKind::Indicator,
        EntityKind::RemovedIndicator,
    ),
    (
        "Instance.one_hot_constraint_collection",
        &ONE_HOT,
        EntityKind::OneHot,
        EntityKind::RemovedOneHot,
    ),
    (
        "Instance.sos1_constraint_collection",
        &SOS1,
        EntityKind::Sos1,
        EntityKind::RemovedSos1,
    ),
];

fn rows<'a>(
    (container, names, active_kind, removed_kind): (
        &'static str,
        &'static Names,
        EntityKind,
        EntityKind,
    ),
    c: &'a Collection,
) -> impl Iterator<Item = Entity<'a>> + 'a {
    let entity = move |kind, id: u64, row: &'a Row, reason| Entity {
        kind,
        id,
        label: c.labels.get(&id),
        container,
        part: Part::Row {
            names,
            row,
            reason,
            provenance: c.provenance.get(&id).copied().unwrap_or(0),
        },
    };
    let active = c
        .active
        .iter()
        .map(move |(&id, r)| entity(active_kind, id, r, None));
    let removed = c
        .removed
        .iter()
        .map(move |(&id, (r, reason))| entity(removed_kind, id, r, Some(reason)));
    active.chain(removed)
}

impl Instance {
    fn collection(&self, kind: EntityKind) -> &Collection {
        match kind {
            EntityKind::Indicator => &self.indicator,
            EntityKind::OneHot => &self.one_hot,
            EntityKind::Sos1 => &self.sos1,
            _ => &self.regular,
        }
    }

    /// Every entity, in profile order: variables, the rows of each
    /// collection (active, then removed), named functions.
    pub fn entities(&self) -> impl Iterator<Item = Entity<'_>> {
        let variables = self.variables.iter().map(move |&id| Entity {
            kind: EntityKind::Variable,
            id,
            label: self.variable_labels.get(&id),
            container: VARIABLES,
            part: Part::Variable {
                fixed: self.fixed_values.contains(&id),
            },
        });
        let rows = COLLECTIONS
            .into_iter()
            .flat_map(move |c| rows(c, self.collection(c.2)));
        let functions = self.named_functions.iter().map(move |(&id, f)| Entity {
            kind: EntityKind::NamedFunction,
            id,
            label: self.named_labels.get(&id),
            container: NAMED_FUNCTIONS,
            part: Part::NamedFunction(f),
        });
        variables.chain(rows).chain(functions)
    }
}

/// Bytes each entity takes in the `ommx.v2` message: its entries in its
/// table's maps (row, label or context, removed reason, fixed value), keyed
/// by kind and id. Every byte of the tables belongs to one entity. The
/// objective, `(Objective, 0)`, is its field, tag and length included.
pub type WireSizes = BTreeMap<(EntityKind, u64), u64>;

mod wire {
    use prost::encoding::{encoded_len_varint, key_len};
    use prost::Message;

    use super::{EntityKind, WireSizes, COLLECTIONS};
    use crate::ommx_v2 as pb;

    /// A map entry of `field` with key `key` and a value field taking `value`
    /// bytes: as prost writes it, default keys and values are left out.
    pub fn entry(field: u32, key: u64, value: usize) -> u64 {
        let key = if key == 0 {
            0
        } else {
            key_len(1) + encoded_len_varint(key)
        };
        let body = key + value;
        (key_len(field) + encoded_len_varint(body as u64) + body) as u64
    }

    /// The value field of a message value `m` (none for a default one).
    pub fn message<M: Message + Default + PartialEq>(m: &M) -> usize {
        if *m == M::default() {
            0
        } else {
            prost::encoding::message::encoded_len(2, m)
        }
    }

    fn add(sizes: &mut WireSizes, kind: EntityKind, id: u64, bytes: u64) {
        *sizes.entry((kind, id)).or_insert(0) += bytes;
    }

    /// One collection's maps, attributed to its rows.
    struct Rows<'a, R> {
        active: &'a std::collections::BTreeMap<u64, R>,
        removed: &'a std::collections::BTreeMap<u64, R>,
        reasons: &'a std::collections::BTreeMap<u64, pb::RemovedReason>,
        contexts: &'a std::collections::BTreeMap<u64, pb::ConstraintContext>,
    }

    impl<R: Message + Default + PartialEq> Rows<'_, R> {
        fn sizes(&self, (active, removed): (EntityKind, EntityKind), sizes: &mut WireSizes) {
            for (&id, r) in self.active {
                add(sizes, active, id, entry(1, id, message(r)));
            }
            for (&id, r) in self.removed {
                add(sizes, removed, id, entry(2, id, message(r)));
            }
            for (&id, r) in self.reasons {
                add(sizes, removed, id, entry(3, id, message(r)));
            }
            for (&id, c) in self.contexts {
                let kind = if self.active.contains_key(&id) {
                    active
                } else {
                    removed
                };
                add(sizes, kind, id, entry(4, id, message(c)));
            }
        }
    }

    /// The value field of a fixed value `v` (none for zero).
    pub fn fixed_value(v: f64) -> usize {
        if v == 0.0 {
            0
        } else {
            key_len(2) + 8
        }
    }

    /// What each entity takes in `m` (see [`WireSizes`]).
    pub fn sizes(m: &pb::Instance) -> WireSizes {
        let mut sizes = WireSizes::new();
        if let Some(t) = &m.decision_variables {
            let kind = EntityKind::Variable;
            for (&id, v) in &t.entries {
                add(&mut sizes, kind, id, entry(1, id, message(v)));
            }
            for (&id, l) in &t.labels {
                add(&mut sizes, kind, id, entry(2, id, message(l)));
            }
            for (&id, &v) in &t.fixed_values {
                add(&mut sizes, kind, id, entry(3, id, fixed_value(v)));
            }
        }
        let kinds = |i: usize| (COLLECTIONS[i].2, COLLECTIONS[i].3);
        if let Some(c) = &m.regular_constraints {
            let rows = Rows {
                active: &c.active,
                removed: &c.removed,
                reasons: &c.removed_reasons,
                contexts: &c.contexts,
            };
            rows.sizes(kinds(0), &mut sizes);
        }
        if let Some(c) = &m.indicator_constraints {
            let rows = Rows {
                active: &c.active,
                removed: &c.removed,
                reasons: &c.removed_reasons,
                contexts: &c.contexts,
            };
            rows.sizes(kinds(1), &mut sizes);
        }
        if let Some(c) = &m.one_hot_constraints {
            let rows = Rows {
                active: &c.active,
                removed: &c.removed,
                reasons: &c.removed_reasons,
                contexts: &c.contexts,
            };
            rows.sizes(kinds(2), &mut sizes);
        }
        if let Some(c) = &m.sos1_constraints {
            let rows = Rows {
                active: &c.active,
                removed: &c.removed,
                reasons: &c.removed_reasons,
                contexts: &c.contexts,
            };
            rows.sizes(kinds(3), &mut sizes);
        }
        if let Some(o) = &m.objective {
            let field = crate::wire::fields::v2::instance::OBJECTIVE;
            let bytes = prost::encoding::message::encoded_len(field, o);
            add(&mut sizes, EntityKind::Objective, 0, bytes as u64);
        }
        if let Some(t) = &m.named_functions {
            let kind = EntityKind::NamedFunction;
            for (&id, f) in &t.entries {
                add(&mut sizes, kind, id, entry(1, id, message(f)));
            }
            for (&id, l) in &t.labels {
                add(&mut sizes, kind, id, entry(2, id, message(l)));
            }
        }
        sizes
    }
}

pub use wire::message as value_wire_len;
pub use wire::sizes as wire_sizes;
/// One map entry's share of [`WireSizes`], for a reader that sees the
/// entries one at a time: `entry_wire_len(field, id, value)` with the value
/// field's length from `value_wire_len` (a message) or `fixed_value_wire_len`.
pub use wire::{entry as entry_wire_len, fixed_value as fixed_value_wire_len};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64;
    use std::collections::HashMap;

    /// Every leaf of a piece: its path and bytes, in visiting order.
    #[derive(Default)]
    struct Leaves(Vec<(String, usize)>);

    impl LogicalMemoryVisitor for Leaves {
        fn visit_leaf(&mut self, path: &Path, bytes: usize) {
            self.0.push((path.to_string(), bytes));
        }
    }

    fn leaves(piece: &Piece<'_>) -> Vec<(String, usize)> {
        let mut l = Leaves::default();
        piece.visit_logical_memory(&mut Path::new(), &mut l);
        l.0
    }

    fn random_label(rng: &mut SplitMix64) -> Label {
        let text = |rng: &mut SplitMix64| rng.chance(2).then(|| "x".repeat(rng.below(30) as usize));
        Label {
            name: text(rng).map(Into::into),
            subscripts: (0..rng.below(4) as i64).collect(),
            parameters: match rng.chance(4) {
                true => [("k".to_string(), "v".repeat(rng.below(3) as usize))].into(),
                false => BTreeMap::new(),
            },
            description: text(rng),
        }
    }

    fn random_function(rng: &mut SplitMix64) -> Function {
        let n = rng.below(4);
        let constant = [0.0, 2.5][rng.below(2) as usize];
        match rng.below(5) {
            0 => Function::Zero,
            1 => Function::Constant(constant),
            2 => Function::Linear {
                terms: (0..n).map(|i| (i, 1.0)).collect(),
                constant,
            },
            3 => Function::Quadratic {
                quadratic: (0..n).map(|i| ((i, i + 1), 1.0)).collect(),
                linear: (0..rng.below(3)).map(|i| (i, 1.0)).collect(),
                constant,
            },
            _ => Function::Polynomial {
                terms: (0..n)
                    .map(|i| (vec![i; rng.below(4) as usize], 1.0))
                    .collect(),
            },
        }
    }

    /// A piece's key, where it has one, determines every leaf within its
    /// container: two pieces of one key and collection have the same
    /// leaves, built labels and labels read on the wire alike.
    #[test]
    fn pieces_of_one_key_have_the_same_leaves() {
        let mut rng = SplitMix64(43);
        let labels: Vec<Label> = (0..300).map(|_| random_label(&mut rng)).collect();
        let rows: Vec<Row> = (0..300)
            .map(|_| Row::Regular(Func::Compact(random_function(&mut rng))))
            .collect();
        let mut pieces = Vec::new();
        for (l, row) in labels.iter().zip(&rows) {
            let wire = WireLabel {
                name: l.name.as_deref(),
                subscripts: l.subscripts.len(),
                description: l.description.as_deref(),
            };
            let names = [&REGULAR, &INDICATOR][rng.below(2) as usize];
            let provenance = rng.below(3) as usize;
            for label in [LabelRef::Built(l), LabelRef::Wire(wire)] {
                pieces.push(Piece::VariableLabel(label));
                pieces.push(Piece::NamedLabel(label));
                pieces.push(Piece::Context {
                    names,
                    label: Some(label),
                    provenance,
                });
            }
            let removed = rng.chance(2);
            pieces.push(Piece::Row {
                names,
                row,
                removed,
            });
        }
        let mut seen: HashMap<(&str, u128), Vec<(String, usize)>> = HashMap::new();
        let mut keyed = [0; 2];
        for piece in &pieces {
            let Some(key) = piece.key() else { continue };
            let collection = match piece {
                Piece::Context { names, .. } | Piece::Row { names, .. } => names.id,
                _ => "",
            };
            let leaves = leaves(piece);
            keyed[usize::from(matches!(piece, Piece::Row { .. }))] += 1;
            let first = seen
                .entry((collection, key))
                .or_insert_with(|| leaves.clone());
            assert_eq!(*first, leaves, "{piece:?}");
        }
        // Labels with parameters and polynomial rows have no key; most
        // others share theirs.
        assert!(keyed[0] > 1000 && keyed[1] > 100, "{keyed:?}");
        assert!(seen.len() < keyed[0] + keyed[1], "{}", seen.len());
    }
}
