//! The four constraint collections of an `ommx.v2` payload read a window
//! of entries at a time ([`Table`]): each row checked as 3.0 checks it
//! (a regular row's function counted on the wire), each entry's leaves
//! visited as its [`Piece`], and what crosses entries (a row active and
//! removed, a reason or context without its row, a key twice) checked
//! with id sets once the collection is read.

use crate::ids::{IdSet, SharedIdSet};
use crate::model::function::Shape;
use crate::model::ommx30::{self, Has, Label, LabelRef, Names, Piece, Reason, Row};
use crate::ommx_v2 as pb;
use crate::pass::terms;
use crate::pass::terms::entities::RepeatCheck;
use crate::profile::replay::Tally;
use crate::profile::{Aggregate, Frame, Path};
use crate::profiled::InstanceSummary;
use crate::wire::fields::v2::{collection, instance, regular};
use crate::wire::{Fields, Value};

use super::entry::{entry, entry_key, plain, single_value, visit_piece, wire_context};
use super::table::Table;

/// How one constraint collection's rows are read.
pub(super) struct Rows<'a> {
    pub(super) number: u32,
    pub(super) container: &'static str,
    pub(super) names: &'static Names,
    pub(super) vars: &'a IdSet,
    pub(super) binary: &'a IdSet,
    /// The free variables: defined, neither fixed nor dependent.
    pub(super) free: &'a IdSet,
    /// Threads a large collection is read on.
    pub(super) threads: usize,
    /// Where the variables the rows use are noted, when asked.
    pub(super) used: Option<&'a SharedIdSet>,
}

/// A regular row counted on the wire.
enum Counted {
    Shape(Shape),
    /// 3.0 refuses it (the whole reading says why).
    Refused,
}

/// What one window of a collection's entries holds: its leaves, and the
/// ids the checks across entries need.
struct Window {
    aggregate: Aggregate,
    path: Path,
    /// Counted regular rows, by shape.
    shapes: Tally,
    /// The other pieces, by key where one determines their leaves.
    pieces: Tally,
    terms: u64,
    active: u64,
    removed: Vec<u64>,
    reasons: Vec<u64>,
    /// Contexts of rows not known active when read.
    contexts: Vec<u64>,
    seen: RepeatCheck,
    ids: Vec<u64>,
}

/// The ids seen across the windows of one collection.
#[derive(Default)]
struct Seen {
    active: SharedIdSet,
    contexts: SharedIdSet,
}

impl Rows<'_> {
    /// Reads the collection in `table` into `aggregate` and `summary`:
    /// `None` where the whole reading must say what it is.
    pub(super) fn read(
        &self,
        table: Table<'_>,
        aggregate: &mut Aggregate,
        summary: &mut InstanceSummary,
    ) -> Option<()> {
        let seen = Seen::default();
        let new = || Window {
            aggregate: Aggregate::new(),
            path: Path::from_frames(vec![Frame::Borrowed(self.container)]),
            shapes: Tally::default(),
            pieces: Tally::default(),
            terms: 0,
            active: 0,
            removed: Vec::new(),
            reasons: Vec::new(),
            contexts: Vec::new(),
            seen: RepeatCheck::default(),
            ids: Vec::new(),
        };
        let (mut removed, mut reasons, mut contexts) = (Vec::new(), Vec::new(), Vec::new());
        let merge = |mut w: Window| {
            w.shapes.settle(&mut w.aggregate);
            w.pieces.settle(&mut w.aggregate);
            aggregate.merge_under(&[], &w.aggregate);
            summary.terms += w.terms;
            summary.constraints += w.active;
            removed.extend(w.removed);
            reasons.extend(w.reasons);
            contexts.extend(w.contexts);
        };
        let each = |w: &mut Window, number, bytes: &[u8]| self.entry(w, &seen, number, bytes);
        table.read(self.threads, new, each, merge)?;
        summary.removed_constraints += removed.len() as u64;
        let active = seen.active.into_set();
        // Removed rows: none active too, none twice, each with its reason
        // and every reason a removed row's; every context a row's.
        super::distinct(&mut removed)?;
        super::distinct(&mut reasons)?;
        (removed == reasons).then_some(())?;
        removed.iter().all(|&id| !active.has(id)).then_some(())?;
        let known = |id: &u64| active.has(*id) || removed.binary_search(id).is_ok();
        contexts.iter().all(known).then_some(())
    }

    /// One entry of the collection, of field `number`, into `w`.
    fn entry(&self, w: &mut Window, seen: &Seen, number: u32, bytes: &[u8]) -> Option<()> {
        let names = self.names;
        let removing = match number {
            collection::ACTIVE => false,
            collection::REMOVED => true,
            collection::REMOVED_REASONS => {
                let (id, r) = entry::<pb::RemovedReason>(bytes)?;
                let reason = Reason {
                    reason: r.reason,
                    parameters: r.parameters,
                };
                let piece = Piece::Reason {
                    names,
                    reason: &reason,
                };
                visit(w, piece);
                w.reasons.push(id);
                return Some(());
            }
            collection::CONTEXTS => {
                let id = match plain(bytes).and_then(|(id, body)| Some((id, wire_context(body)?))) {
                    Some((id, label)) => {
                        let piece = Piece::Context {
                            names,
                            label: label.map(LabelRef::Wire),
                            provenance: 0,
                        };
                        visit(w, piece);
                        id
                    }
                    None => {
                        let (id, c) = entry::<pb::ConstraintContext>(bytes)?;
                        let label = c.label.map(Label::from);
                        let piece = Piece::Context {
                            names,
                            label: label.as_ref().map(LabelRef::Built),
                            provenance: c.provenance.len(),
                        };
                        visit(w, piece);
                        id
                    }
                };
                seen.contexts.insert(id).then_some(())?;
                if !seen.active.contains(id) {
                    w.contexts.push(id);
                }
                return Some(());
            }
            _ => return Some(()),
        };
        let (id, value) = match plain(bytes) {
            Some((id, value)) => (id, Some(value)),
            None => (entry_key(bytes)?, single_value(bytes)),
        };
        let counted = value.and_then(|value| self.counted_regular(value, !removing, w));
        match counted {
            Some(Counted::Shape(shape)) => {
                let key = shape_key(&shape, removing);
                let Window {
                    aggregate,
                    path,
                    shapes,
                    ..
                } = w;
                shapes.count(key, aggregate, |visitor| {
                    ommx30::regular_row_leaves(path, &mut { visitor }, names, &shape, removing)
                });
                w.terms += shape.stored_terms as u64;
            }
            Some(Counted::Refused) => return None,
            None => {
                let row = self.row(id, bytes, !removing)?;
                let piece = Piece::Row {
                    names,
                    row: &row,
                    removed: removing,
                };
                visit(w, piece);
                w.terms += match &row {
                    Row::Regular(f) | Row::Indicator(_, f) => f.stored_terms() as u64,
                    Row::Set(_) => 0,
                };
            }
        }
        match removing {
            false => {
                seen.active.insert(id).then_some(())?;
                w.active += 1;
            }
            true => w.removed.push(id),
        }
        Some(())
    }

    /// A regular row's function (the entry's value, `value`) counted on the
    /// wire, as the v1 pass counts a constraint's
    /// ([`terms::entities::count_function`]), its equality and its
    /// variables checked; `None` where the wire reader leaves it to prost
    /// (an expression, a field given twice), which then builds it.
    fn counted_regular(&self, value: &[u8], active: bool, w: &mut Window) -> Option<Counted> {
        if self.number != instance::REGULAR_CONSTRAINTS {
            return None;
        }
        let mut equality = 0;
        let mut pieces = Vec::new();
        let mut fields = Fields::new(value);
        while let Some(field) = fields.next_field().ok()? {
            match field {
                // An enum field reads as prost reads an int32.
                (regular::EQUALITY, Value::Varint(v, _)) => equality = v as i32,
                (regular::FUNCTION, Value::Len(body)) => pieces.push(body),
                (regular::EQUALITY | regular::FUNCTION, _) => return None,
                _ => {}
            }
        }
        if !(1..=2).contains(&equality) || pieces.is_empty() {
            return Some(Counted::Refused);
        }
        let ids = &mut w.ids;
        ids.clear();
        let shape = match terms::entities::count_function(&pieces, &mut w.seen, ids).ok()? {
            Ok(shape) => shape,
            Err(_) => return Some(Counted::Refused),
        };
        let set = if active { self.free } else { self.vars };
        if !ids.iter().all(|&id| set.has(id)) {
            return Some(Counted::Refused);
        }
        if let Some(used) = self.used {
            ids.iter().for_each(|&id| _ = used.insert(id));
        }
        Some(Counted::Shape(shape))
    }

    /// A row of the collection, checked as 3.0 checks it (references
    /// against the variables, active or removed alike).
    fn row(&self, id: u64, bytes: &[u8], active: bool) -> Option<Row> {
        let vars: Option<&dyn Has> = Some(self.vars);
        let row = match self.number {
            instance::REGULAR_CONSTRAINTS => {
                let (_, c) = entry::<pb::RegularConstraint>(bytes)?;
                ommx30::regular_row(id, &c, vars).ok()?
            }
            instance::INDICATOR_CONSTRAINTS => {
                let (_, c) = entry::<pb::IndicatorConstraint>(bytes)?;
                ommx30::indicator_row(id, &c, vars, self.binary).ok()?
            }
            instance::ONE_HOT_CONSTRAINTS => {
                let (_, c) = entry::<pb::OneHotConstraint>(bytes)?;
                let binary: &dyn Has = self.binary;
                ommx30::set_row("one-hot constraint", Some(binary))(id, c.variables, vars).ok()?
            }
            _ => {
                let (_, c) = entry::<pb::Sos1Constraint>(bytes)?;
                ommx30::set_row("SOS1 constraint", None)(id, c.variables, vars).ok()?
            }
        };
        if let Some(used) = self.used {
            row.for_each_variable(|id| _ = used.insert(id));
        }
        // The active problem uses no fixed or dependent variable: no row's
        // function, indicator or set of variables.
        if active {
            let mut ok = true;
            row.for_each_variable(|id| ok &= self.free.has(id));
            ok.then_some(())?;
        }
        Some(row)
    }
}

/// Visits `piece` into the window, counted by its key where one
/// determines its leaves.
fn visit(w: &mut Window, piece: Piece<'_>) {
    visit_piece(&mut w.aggregate, &mut w.path, &mut w.pieces, piece);
}

/// The key of a counted regular row's leaves: its function's shape and
/// whether it is removed (`None`: too large to pack, visited alone).
fn shape_key(shape: &Shape, removed: bool) -> Option<u128> {
    let terms = u128::try_from(shape.stored_terms)
        .ok()
        .filter(|&t| t < 1 << 64)?;
    Some((terms << 8) | ((shape.variant as u128) << 1) | u128::from(removed))
}
