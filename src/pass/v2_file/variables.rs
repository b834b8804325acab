//! The decision variable table of an `ommx.v2` payload read a window of
//! entries at a time ([`Table`]): each variable's row checked as 3.0 checks
//! it, its label read on the wire where it has no parameters, the leaves
//! of each piece visited (counted by key: every row has the same), and
//! what crosses entries (a key twice, a label or fixed value of no
//! variable) checked with id sets once the table is read.

use std::collections::BTreeMap;

use crate::ids::{IdSet, SharedIdSet};
use crate::model::ommx30::{self, Has, Label, LabelRef, Piece, VARIABLES};
use crate::ommx_v2 as pb;
use crate::profile::replay::Tally;
use crate::profile::{Aggregate, Frame, LogicalMemoryProfile, Path};
use crate::profiled::InstanceSummary;
use crate::wire::fields::v2::variable_table;

use super::entry::{entry, number_entry, plain, small_message, visit_piece, wire_label};
use super::table::Table;

/// What the rest of the payload's reading needs of the variables.
pub(super) struct Variables {
    pub(super) vars: IdSet,
    pub(super) binary: IdSet,
    pub(super) fixed: BTreeMap<u64, f64>,
    /// The largest id (`None`: no variable).
    pub(super) max_id: Option<u64>,
}

/// One window of the table: its leaves, and what the checks across
/// entries need.
struct Window {
    aggregate: Aggregate,
    path: Path,
    pieces: Tally,
    variables: u64,
    max_id: Option<u64>,
    fixed: Vec<(u64, f64)>,
    /// Labels of variables not known when read.
    labels: Vec<u64>,
}

/// The ids seen across the windows.
#[derive(Default)]
struct Seen {
    vars: SharedIdSet,
    binary: SharedIdSet,
    labels: SharedIdSet,
}

/// Reads the variable table into `aggregate` and `summary`; `None` where
/// the whole reading must say what it is.
pub(super) fn variables(
    table: Table<'_>,
    threads: usize,
    aggregate: &mut Aggregate,
    summary: &mut InstanceSummary,
) -> Option<Variables> {
    let seen = Seen::default();
    let new = || Window {
        aggregate: Aggregate::new(),
        path: Path::from_frames(vec![Frame::Borrowed(VARIABLES)]),
        pieces: Tally::default(),
        variables: 0,
        max_id: None,
        fixed: Vec::new(),
        labels: Vec::new(),
    };
    let (mut fixed, mut labels, mut max_id) = (BTreeMap::new(), Vec::new(), None);
    let mut twice = false;
    let merge = |mut w: Window| {
        w.pieces.settle(&mut w.aggregate);
        aggregate.merge_under(&[], &w.aggregate);
        summary.variables += w.variables;
        max_id = max_id.max(w.max_id);
        for (id, value) in w.fixed {
            twice |= fixed.insert(id, value).is_some();
        }
        labels.extend(w.labels);
    };
    let each = |w: &mut Window, number, bytes: &[u8]| entry_of_table(w, &seen, number, bytes);
    table.read(threads, new, each, merge)?;
    // A variable's fixed value given twice: left to the whole reading.
    (!twice).then_some(())?;
    let vars = seen.vars.into_set();
    labels.iter().all(|&id| vars.has(id)).then_some(())?;
    fixed.keys().all(|&id| vars.has(id)).then_some(())?;
    if !fixed.is_empty() {
        // The rows were checked without their fixed values: those of
        // fixed variables again, with them.
        table.read(
            threads,
            || (),
            |(), number, bytes| {
                if number == variable_table::ENTRIES {
                    let (id, v) = small_message::<pb::DecisionVariable>(bytes)?;
                    if let Some(&value) = fixed.get(&id) {
                        ommx30::check_variable(id, &v, Some(value), true).ok()?;
                    }
                }
                Some(())
            },
            drop,
        )?;
    }
    let mut path = Path::from_frames(vec![Frame::Borrowed(VARIABLES)]);
    for _ in fixed.keys() {
        Piece::FixedValue.visit_logical_memory(&mut path, aggregate);
    }
    Some(Variables {
        vars,
        binary: seen.binary.into_set(),
        fixed,
        max_id,
    })
}

/// One entry of the table, of field `number`, into `w`.
fn entry_of_table(w: &mut Window, seen: &Seen, number: u32, bytes: &[u8]) -> Option<()> {
    match number {
        variable_table::ENTRIES => {
            let (id, v) = small_message::<pb::DecisionVariable>(bytes)?;
            ommx30::check_variable(id, &v, None, true).ok()?;
            seen.vars.insert(id).then_some(())?;
            if v.kind == 1 {
                seen.binary.insert(id);
            }
            visit(w, Piece::VariableRow);
            w.variables += 1;
            w.max_id = w.max_id.max(Some(id));
        }
        variable_table::LABELS => {
            let id = match plain(bytes).and_then(|(id, body)| Some((id, wire_label(body)?))) {
                Some((id, label)) => {
                    visit(w, Piece::VariableLabel(LabelRef::Wire(label)));
                    id
                }
                None => {
                    let (id, label) = entry::<pb::ModelingLabel>(bytes)?;
                    let label = Label::from(label);
                    visit(w, Piece::VariableLabel(LabelRef::Built(&label)));
                    id
                }
            };
            seen.labels.insert(id).then_some(())?;
            if !seen.vars.contains(id) {
                w.labels.push(id);
            }
        }
        variable_table::FIXED_VALUES => w.fixed.push(number_entry(bytes)?),
        _ => {}
    }
    Some(())
}

/// Visits `piece` into the window, counted by its key where one
/// determines its leaves.
fn visit(w: &mut Window, piece: Piece<'_>) {
    visit_piece(&mut w.aggregate, &mut w.path, &mut w.pieces, piece);
}
