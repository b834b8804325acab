//! The read step for an `ommx.v2` payload that lies in a regular file and
//! whose entities no analysis looks at: read a table entry at a time, never
//! the whole message in memory.
//!
//! A v2 message keeps an entity's parts in several maps of its table (a
//! variable's row, label and fixed value; a row, its removed reason and its
//! context), and 3.0 checks them in an order of its own whatever the order
//! of the bytes. So the payload's top-level fields are first walked for
//! where they lie (their bodies skipped), then read in 3.0's order with
//! positioned reads: the header and the small singular fields, the
//! variable table, the objective (counted on the wire where it can be),
//! the four constraint collections, the named functions. Each map entry is
//! decoded by prost alone, checked by 3.0's rules for it
//! ([`ommx30::check_variable`], [`ommx30::regular_row`], ...) and its
//! leaves visited ([`ommx30::Piece`]); what crosses entries (references,
//! keys present in one map and not another) is checked with id sets.
//!
//! This is a fast path, not a second reader: anything it does not read as
//! plainly accepted (a refusal, a table or an objective given twice, a key
//! twice in a map, which protobuf merges, a group) makes it give up, and
//! the payload is read whole as before, for the same profile or the same
//! error (`pass/ommx30.rs`).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

use prost::encoding::{btree_map, message, uint64, DecodeContext};
use prost::Message;

use super::terms;
use super::terms::entities::RepeatCheck;
use crate::ids::IdSet;
use crate::model::function::Shape;
use crate::model::ommx30::{self, Func, Has, Label, Names, Piece, Reason, Row};
use crate::ommx_v1 as pb1;
use crate::ommx_v2 as pb;
use crate::profile::replay::Tally;
use crate::profile::{Aggregate, LogicalMemoryProfile, Path};
use crate::report::InstanceSummary;
use crate::trace::{self, Phase};
use crate::wire::fields::v2::regular;
use crate::wire::fields::v2::{collection, instance, named_function_table, variable_table};
use crate::wire::{key, varint, WireType};
use crate::wire::{Fields, Value};

/// Bytes read at a time.
const WINDOW: usize = 1 << 20;
/// Singular fields (all but the tables and the objective) larger than this
/// together are left to the whole reading.
const REST_LIMIT: usize = 16 << 20;

/// A payload of `len` bytes at `start` in `file`, read forward a window at
/// a time.
struct Window<'f> {
    file: &'f File,
    start: u64,
    len: u64,
    buf: Vec<u8>,
    /// Payload offset of `buf[0]`.
    at: u64,
}

impl<'f> Window<'f> {
    fn new(file: &'f File, start: u64, len: u64) -> Self {
        Self {
            file,
            start,
            len,
            buf: Vec::new(),
            at: 0,
        }
    }

    /// Another window on the same payload (for another thread).
    fn again(&self) -> Window<'f> {
        Window::new(self.file, self.start, self.len)
    }

    /// `len` bytes at payload offset `pos`, or as many as there are up to
    /// `end` when `short` allows fewer; `None` past the end or on an error.
    fn get(&mut self, pos: u64, len: usize, end: u64, short: bool) -> Option<&[u8]> {
        let want = (len as u64).min(end.saturating_sub(pos));
        if !short && want < len as u64 {
            return None;
        }
        let inside = pos >= self.at && pos + want <= self.at + self.buf.len() as u64;
        if !inside {
            let size = (want as usize)
                .max(WINDOW)
                .min((self.len - pos.min(self.len)) as usize);
            self.buf.resize(size, 0);
            self.file
                .read_exact_at(&mut self.buf, self.start + pos)
                .ok()?;
            self.at = pos;
        }
        let from = (pos - self.at) as usize;
        Some(&self.buf[from..from + want as usize])
    }

    /// The field whose key is at `pos` (before `end`): its number, wire
    /// type, where its key ends, and where its value (a length-delimited
    /// field's body) starts and ends. `None` for a group, or bytes that are
    /// no field.
    fn field(&mut self, pos: u64, end: u64) -> Option<(u32, WireType, u64, u64, u64)> {
        let head = self.get(pos, 20, end, true)?;
        let mut at = 0;
        let (number, wire_type) = key(varint(head, &mut at)?).ok()?;
        let after_key = pos + at as u64;
        let (start, stop) = match wire_type {
            WireType::Varint => {
                varint(head, &mut at)?;
                (pos + at as u64, pos + at as u64)
            }
            WireType::Fixed64 => (pos + at as u64, pos + at as u64 + 8),
            WireType::Fixed32 => (pos + at as u64, pos + at as u64 + 4),
            WireType::Len => {
                let len = varint(head, &mut at)?;
                let start = pos + at as u64;
                (start, start.checked_add(len)?)
            }
            _ => return None,
        };
        (stop <= end).then_some((number, wire_type, after_key, start, stop))
    }

    /// Each field of the message between `start` and `end`, its number and
    /// its length prefix and body (length-delimited fields only: a map
    /// entry as prost's map decoding takes it; others are skipped): `None`
    /// as soon as one is no field.
    fn each<T>(
        &mut self,
        (start, end): (u64, u64),
        mut f: impl FnMut(u32, &[u8]) -> Option<T>,
    ) -> Option<()> {
        let mut pos = start;
        while pos < end {
            let (number, wire_type, prefixed, _, stop) = self.field(pos, end)?;
            if wire_type == WireType::Len {
                let bytes = self.get(prefixed, (stop - prefixed) as usize, stop, false)?;
                f(number, bytes)?;
            }
            pos = stop;
        }
        Some(())
    }
}

/// One map entry's key and value, as prost decodes it.
fn entry<V: Message + Default>(bytes: &[u8]) -> Option<(u64, V)> {
    let mut map = BTreeMap::new();
    let mut buf = bytes;
    btree_map::merge(
        uint64::merge,
        message::merge,
        &mut map,
        &mut buf,
        DecodeContext::default(),
    )
    .ok()?;
    map.into_iter().next()
}

/// One `map<uint64, double>` entry.
fn number_entry(bytes: &[u8]) -> Option<(u64, f64)> {
    let mut map = BTreeMap::new();
    let mut buf = bytes;
    btree_map::merge(
        uint64::merge,
        prost::encoding::double::merge,
        &mut map,
        &mut buf,
        DecodeContext::default(),
    )
    .ok()?;
    map.into_iter().next()
}

/// Where the payload's top-level fields lie.
#[derive(Default)]
struct Layout {
    /// The tables, by field number (each once).
    tables: BTreeMap<u32, (u64, u64)>,
    objective: Option<(u64, u64)>,
    /// Every other field, as encoded, in stream order.
    rest: Vec<u8>,
}

const TABLES: [u32; 6] = [
    instance::DECISION_VARIABLES,
    instance::REGULAR_CONSTRAINTS,
    instance::INDICATOR_CONSTRAINTS,
    instance::ONE_HOT_CONSTRAINTS,
    instance::SOS1_CONSTRAINTS,
    instance::NAMED_FUNCTIONS,
];

fn layout(w: &mut Window<'_>) -> Option<Layout> {
    let mut layout = Layout::default();
    let end = w.len;
    let mut pos = 0;
    while pos < end {
        let (number, wire_type, _, body, stop) = w.field(pos, end)?;
        let table = TABLES.contains(&number);
        if (table || number == instance::OBJECTIVE) && wire_type != WireType::Len {
            return None;
        }
        if table {
            layout
                .tables
                .insert(number, (body, stop))
                .is_none()
                .then_some(())?;
        } else if number == instance::OBJECTIVE {
            layout
                .objective
                .replace((body, stop))
                .is_none()
                .then_some(())?;
        } else {
            let bytes = w.get(pos, (stop - pos) as usize, stop, false)?;
            layout.rest.extend_from_slice(bytes);
            (layout.rest.len() <= REST_LIMIT).then_some(())?;
        }
        pos = stop;
    }
    Some(layout)
}

/// What the fast path read: the profile's leaves (in `aggregate`), the
/// summary, and the objective's bytes and encoded size.
pub(super) struct Read {
    pub(super) summary: InstanceSummary,
    pub(super) objective_bytes: u64,
    pub(super) objective_wire_bytes: u64,
    pub(super) objective_terms: u64,
}

/// Reads the v2 payload of `len` bytes at `start` in `file` into
/// `aggregate`, with a large objective counted on `threads` threads, and
/// the layer's annotations folded in; `None`: read it whole instead.
pub(super) fn profile(
    file: &File,
    (start, len): (u64, u64),
    threads: usize,
    layer_annotations: Option<&BTreeMap<String, String>>,
    aggregate: &mut Aggregate,
) -> Option<Read> {
    let mut w = Window::new(file, start, len);
    // Reading, decoding, checking and visiting go entry by entry: timed as
    // a whole, where the top-level fields are walked (read) and where the
    // tables are (decode).
    let read = trace::span(Phase::Read);
    let layout = layout(&mut w)?;
    drop(read);
    let _decode = trace::span(Phase::Decode);
    let rest = pb::Instance::decode(layout.rest.as_slice()).ok()?;
    ommx30::check_header(&rest.required_features, rest.sense, true).ok()?;
    let mut summary = InstanceSummary {
        wire_bytes: len,
        ..InstanceSummary::default()
    };
    let mut path = Path::new();

    // The variables: their fixed values and labels, then their rows.
    let table = *layout.tables.get(&instance::DECISION_VARIABLES)?;
    let mut root = path.with(ommx30::VARIABLES);
    let mut fixed = BTreeMap::new();
    let mut labels = Vec::new();
    w.each(table, |number, bytes| {
        match number {
            variable_table::FIXED_VALUES => {
                let (id, value) = number_entry(bytes)?;
                fixed.insert(id, value).is_none().then_some(())?;
            }
            variable_table::LABELS => {
                let (id, label) = entry::<pb::ModelingLabel>(bytes)?;
                Piece::VariableLabel(&Label::from(label))
                    .visit_logical_memory(&mut root, aggregate);
                labels.push(id);
            }
            _ => {}
        }
        Some(())
    })?;
    let (mut vars, mut binary) = (IdSet::default(), IdSet::default());
    // Every variable's row has the same leaves.
    let mut rows = Tally::default();
    w.each(table, |number, bytes| {
        if number == variable_table::ENTRIES {
            let (id, v) = entry::<pb::DecisionVariable>(bytes)?;
            ommx30::check_variable(id, &v, fixed.get(&id).copied(), true).ok()?;
            vars.insert(id).then_some(())?;
            if v.kind == 1 {
                binary.insert(id);
            }
            rows.count(Some(0), aggregate, |visitor| {
                Piece::VariableRow.visit_logical_memory(&mut root, &mut { visitor })
            });
            summary.variables += 1;
        }
        Some(())
    })?;
    rows.settle(aggregate);
    distinct(&mut labels)?;
    labels.iter().all(|&id| vars.has(id)).then_some(())?;
    fixed.keys().all(|&id| vars.has(id)).then_some(())?;
    for _ in fixed.keys() {
        Piece::FixedValue.visit_logical_memory(&mut root, aggregate);
    }
    drop(root);
    let mut fixed_set = IdSet::default();
    fixed.keys().for_each(|&id| _ = fixed_set.insert(id));
    let dependency =
        ommx30::assignments(&rest.decision_variable_dependency, &vars, &fixed_set, true).ok()?;
    // Fixed and dependent variables are substituted out of the active problem.
    let free =
        |id: u64| vars.has(id) && !fixed_set.has(id) && !dependency.assignments.contains_key(&id);

    // The objective: counted on the wire where it can be, else built.
    let (body_start, body_end) = layout.objective?;
    let body = w
        .get(
            body_start,
            (body_end - body_start) as usize,
            body_end,
            false,
        )?
        .to_vec();
    let objective_wire_bytes = body_end - body_start + tag_and_length(body.len() as u64);
    let counted = match terms::scan([body.as_slice()]) {
        Ok(arm) => terms::count(arm.as_ref(), &free, threads).ok().flatten(),
        Err(_) => None,
    };
    let mut objective_path = path.with(ommx30::OBJECTIVE);
    let (objective_bytes, objective_terms) = match counted {
        Some(shape) => {
            shape.visit_logical_memory(&mut objective_path, aggregate);
            (shape.bytes() as u64, shape.stored_terms as u64)
        }
        None => {
            let wire = pb1::Function::decode(body.as_slice()).ok()?;
            let f = ommx30::read_function(Some(&wire), || "the objective".into()).ok()?;
            all_free(&f, &free)?;
            f.visit_logical_memory(&mut objective_path, aggregate);
            (crate::profile::bytes_of(&f), f.stored_terms() as u64)
        }
    };
    drop(objective_path);
    drop(body);
    summary.terms += objective_terms;

    // The four constraint collections, in 3.0's order.
    let numbers = [
        instance::REGULAR_CONSTRAINTS,
        instance::INDICATOR_CONSTRAINTS,
        instance::ONE_HOT_CONSTRAINTS,
        instance::SOS1_CONSTRAINTS,
    ];
    for (number, (container, names, ..)) in numbers.into_iter().zip(ommx30::COLLECTIONS) {
        let Some(&table) = layout.tables.get(&number) else {
            continue;
        };
        let read = Rows {
            number,
            names,
            vars: &vars,
            binary: &binary,
            free: &free,
            threads,
        };
        read.collection(&mut w, table, container, aggregate, &mut summary)?;
    }

    // The named functions, then their labels.
    if let Some(&table) = layout.tables.get(&instance::NAMED_FUNCTIONS) {
        let mut root = path.with(ommx30::NAMED_FUNCTIONS);
        let mut named = IdSet::default();
        let mut labels = Vec::new();
        w.each(table, |number, bytes| {
            match number {
                named_function_table::ENTRIES => {
                    let (id, nf) = entry::<pb::NamedFunction>(bytes)?;
                    let f = ommx30::named_function(id, &nf, &vars).ok()?;
                    named.insert(id).then_some(())?;
                    Piece::NamedFunction(&f).visit_logical_memory(&mut root, aggregate);
                    summary.named_functions += 1;
                }
                named_function_table::LABELS => {
                    let (id, label) = entry::<pb::ModelingLabel>(bytes)?;
                    Piece::NamedLabel(&Label::from(label))
                        .visit_logical_memory(&mut root, aggregate);
                    labels.push(id);
                }
                _ => {}
            }
            Some(())
        })?;
        distinct(&mut labels)?;
        labels.iter().all(|&id| named.has(id)).then_some(())?;
    }

    // The output objective, and the instance-wide parts.
    let output_objective = match &rest.output_objective {
        None => None,
        Some(o) => {
            (1..=2).contains(&o.sense).then_some(())?;
            let f = ommx30::read_function(o.function.as_ref(), || "the output objective".into())
                .ok()?;
            let mut defined = true;
            f.for_each_variable(|id| defined &= vars.has(id));
            defined.then_some(())?;
            Some(ommx30::OutputObjective { function: f })
        }
    };
    let mut parts = ommx30::Instance {
        description: rest.description,
        parameters: rest.parameters.map(|p| p.entries.into_iter().collect()),
        annotations: rest.annotations,
        dependency,
        output_objective,
        ..ommx30::Instance::default()
    };
    if let Some(layer) = layer_annotations {
        ommx30::fold_layer_annotations(&mut parts, layer);
    }
    parts.visit_parts_but_objective(&mut path, aggregate);
    Some(Read {
        summary,
        objective_bytes,
        objective_wire_bytes,
        objective_terms,
    })
}

/// Sorts `ids`: `Some` when none is there twice (a key twice in a map,
/// which protobuf merges, is left to the whole reading).
fn distinct(ids: &mut [u64]) -> Option<()> {
    ids.sort_unstable();
    ids.windows(2).all(|p| p[0] != p[1]).then_some(())
}

/// The bytes of a length-delimited field's key (one byte: field numbers
/// below 16) and length prefix.
fn tag_and_length(len: u64) -> u64 {
    let mut prefix = Vec::new();
    prost::encoding::encode_varint(len, &mut prefix);
    1 + prefix.len() as u64
}

/// `Some` when every variable `f` uses is free (defined, neither fixed nor
/// dependent).
fn all_free(f: &Func, free: &dyn Fn(u64) -> bool) -> Option<()> {
    let mut ok = true;
    f.for_each_variable(|id| ok &= free(id));
    ok.then_some(())
}

/// How one constraint collection's rows are read.
struct Rows<'a> {
    number: u32,
    names: &'static Names,
    vars: &'a IdSet,
    binary: &'a IdSet,
    free: &'a (dyn Fn(u64) -> bool + Sync),
    /// Threads a large collection is read on.
    threads: usize,
}

/// A regular row counted on the wire.
enum Counted {
    Shape(Shape),
    /// 3.0 refuses it (the whole reading says why).
    Refused,
}

impl Rows<'_> {
    /// A regular row's function counted on the wire, as the v1 pass counts
    /// a constraint's ([`terms::entities::count_function`]), its equality
    /// and its variables checked; `None` where the wire reader leaves it to
    /// prost (an expression, a row given twice), which then builds it.
    fn counted_regular(
        &self,
        entry: &[u8],
        active: bool,
        seen: &mut RepeatCheck,
        ids: &mut Vec<u64>,
    ) -> Option<Counted> {
        if self.number != instance::REGULAR_CONSTRAINTS {
            return None;
        }
        let value = single_value(entry)?;
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
        ids.clear();
        let shape = match terms::entities::count_function(&pieces, seen, ids).ok()? {
            Ok(shape) => shape,
            Err(_) => return Some(Counted::Refused),
        };
        let ok = ids.iter().all(|&id| {
            if active {
                (self.free)(id)
            } else {
                self.vars.has(id)
            }
        });
        Some(match ok {
            true => Counted::Shape(shape),
            false => Counted::Refused,
        })
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
        // The active problem uses no fixed or dependent variable: no row's
        // function, indicator or set of variables.
        if active {
            let mut ok = true;
            row.for_each_variable(|id| ok &= (self.free)(id));
            ok.then_some(())?;
        }
        Some(row)
    }

    /// Reads the collection in `table`: its rows, reasons and contexts,
    /// in chunks on up to `threads` threads when it is large.
    fn collection(
        &self,
        w: &mut Window<'_>,
        table: (u64, u64),
        container: &'static str,
        aggregate: &mut Aggregate,
        summary: &mut InstanceSummary,
    ) -> Option<()> {
        let parts = match self.threads > 1 && table.1 - table.0 > PARALLEL_ABOVE {
            false => {
                let mut path = Path::new();
                let mut root = path.with(container);
                vec![self.part(w, table, &mut root, aggregate)?]
            }
            true => {
                let cuts = cuts(w, table, self.threads)?;
                let done: Vec<Option<(Part, Aggregate)>> = std::thread::scope(|scope| {
                    let workers: Vec<_> = cuts
                        .windows(2)
                        .map(|c| {
                            let mut w = w.again();
                            let range = (c[0], c[1]);
                            scope.spawn(move || {
                                let mut local = Aggregate::new();
                                let mut path = Path::new();
                                let mut root = path.with(container);
                                let part = self.part(&mut w, range, &mut root, &mut local)?;
                                Some((part, local))
                            })
                        })
                        .collect();
                    workers
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                        .collect()
                });
                let mut parts = Vec::new();
                for one in done {
                    let (part, local) = one?;
                    aggregate.merge_under(&[], &local);
                    parts.push(part);
                }
                parts
            }
        };
        let mut all = Part::default();
        for part in parts {
            all.absorb(part);
        }
        summary.terms += all.terms;
        summary.constraints += all.active.len() as u64;
        summary.removed_constraints += all.removed.len() as u64;
        let Part {
            mut reasons,
            mut contexts,
            active: active_ids,
            mut removed,
            terms: _,
        } = all;
        let mut active = IdSet::default();
        for id in active_ids {
            active.insert(id).then_some(())?;
        }
        // Removed rows: none active too, none twice, each with its reason
        // and every reason a removed row's; every context a row's.
        distinct(&mut removed)?;
        distinct(&mut reasons)?;
        (removed == reasons).then_some(())?;
        removed.iter().all(|&id| !active.has(id)).then_some(())?;
        distinct(&mut contexts)?;
        let known = |id: &u64| active.has(*id) || removed.binary_search(id).is_ok();
        contexts.iter().all(known).then_some(())
    }

    /// Reads the collection's fields between `range`'s ends into
    /// `aggregate`: what the checks across them need.
    fn part(
        &self,
        w: &mut Window<'_>,
        range: (u64, u64),
        root: &mut Path,
        aggregate: &mut Aggregate,
    ) -> Option<Part> {
        let names = self.names;
        let mut part = Part::default();
        let (mut seen, mut ids) = (RepeatCheck::default(), Vec::new());
        // Rows counted on the wire leave leaves their shape decides.
        let mut tally = Tally::default();
        w.each(range, |number, bytes| {
            let removing = match number {
                collection::ACTIVE => false,
                collection::REMOVED => true,
                collection::REMOVED_REASONS => {
                    let (id, r) = entry::<pb::RemovedReason>(bytes)?;
                    let reason = Reason {
                        reason: r.reason,
                        parameters: r.parameters,
                    };
                    Piece::Reason {
                        names,
                        reason: &reason,
                    }
                    .visit_logical_memory(root, aggregate);
                    part.reasons.push(id);
                    return Some(());
                }
                collection::CONTEXTS => {
                    let (id, c) = entry::<pb::ConstraintContext>(bytes)?;
                    let label = c.label.map(Label::from);
                    Piece::Context {
                        names,
                        label: label.as_ref(),
                        provenance: c.provenance.len(),
                    }
                    .visit_logical_memory(root, aggregate);
                    part.contexts.push(id);
                    return Some(());
                }
                _ => return Some(()),
            };
            let id = entry_key(bytes)?;
            match self.counted_regular(bytes, !removing, &mut seen, &mut ids) {
                Some(Counted::Shape(shape)) => {
                    let key = shape_key(&shape, removing);
                    tally.count(key, aggregate, |visitor| {
                        ommx30::regular_row_leaves(root, &mut { visitor }, names, &shape, removing)
                    });
                    part.terms += shape.stored_terms as u64;
                }
                Some(Counted::Refused) => return None,
                None => {
                    let row = self.row(id, bytes, !removing)?;
                    Piece::Row {
                        names,
                        row: &row,
                        removed: removing,
                    }
                    .visit_logical_memory(root, aggregate);
                    part.terms += match &row {
                        Row::Regular(f) | Row::Indicator(_, f) => f.stored_terms() as u64,
                        Row::Set(_) => 0,
                    };
                }
            }
            match removing {
                false => part.active.push(id),
                true => part.removed.push(id),
            }
            Some(())
        })?;
        tally.settle(aggregate);
        Some(part)
    }
}

/// Collections longer than this are read in chunks on several threads (in
/// tests, every collection, so that the fixtures are read in chunks too).
const PARALLEL_ABOVE: u64 = if cfg!(test) { 0 } else { 1 << 20 };

/// What one run of a collection's fields holds: the ids the checks across
/// fields need, and its rows' stored terms.
#[derive(Default)]
struct Part {
    reasons: Vec<u64>,
    contexts: Vec<u64>,
    active: Vec<u64>,
    removed: Vec<u64>,
    terms: u64,
}

impl Part {
    fn absorb(&mut self, other: Part) {
        self.reasons.extend(other.reasons);
        self.contexts.extend(other.contexts);
        self.active.extend(other.active);
        self.removed.extend(other.removed);
        self.terms += other.terms;
    }
}

/// Where to cut the fields between `table`'s ends into about `n` runs of
/// whole fields: the runs' ends, first and last included.
fn cuts(w: &mut Window<'_>, (start, end): (u64, u64), n: usize) -> Option<Vec<u64>> {
    let step = ((end - start) / n as u64).max(1);
    let mut cuts = vec![start];
    let mut pos = start;
    while pos < end {
        let (_, _, _, _, stop) = w.field(pos, end)?;
        pos = stop;
        if pos - cuts.last().copied().unwrap_or(start) >= step && pos < end {
            cuts.push(pos);
        }
    }
    cuts.push(end);
    Some(cuts)
}

/// The key of a counted regular row's leaves: its function's shape and
/// whether it is removed (`None`: too large to pack, visited alone).
fn shape_key(shape: &Shape, removed: bool) -> Option<u128> {
    let terms = u128::try_from(shape.stored_terms)
        .ok()
        .filter(|&t| t < 1 << 64)?;
    Some((terms << 8) | ((shape.variant as u128) << 1) | u128::from(removed))
}

/// A map entry's value (field 2) when the entry holds it once.
fn single_value(entry: &[u8]) -> Option<&[u8]> {
    let mut pos = 0;
    varint(entry, &mut pos)?;
    let mut fields = Fields::new(&entry[pos..]);
    let mut value = None;
    while let Some(field) = fields.next_field().ok()? {
        match field {
            (2, Value::Len(body)) => value.replace(body).is_none().then_some(())?,
            (2, _) => return None,
            _ => {}
        }
    }
    value
}

/// A map entry's key (field 1), as prost reads it: the last one, 0 when
/// absent.
fn entry_key(bytes: &[u8]) -> Option<u64> {
    let mut key_value = 0;
    let mut pos = 0;
    varint(bytes, &mut pos)?;
    while pos < bytes.len() {
        let (number, wire_type) = key(varint(bytes, &mut pos)?).ok()?;
        match wire_type {
            WireType::Varint => {
                let v = varint(bytes, &mut pos)?;
                if number == 1 {
                    key_value = v;
                }
            }
            WireType::Len => {
                let len = usize::try_from(varint(bytes, &mut pos)?).ok()?;
                pos = pos.checked_add(len)?;
            }
            WireType::Fixed64 => pos += 8,
            WireType::Fixed32 => pos += 4,
            _ => return None,
        }
    }
    (pos == bytes.len()).then_some(key_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every raw v2 fixture that the fast path reads gives ommx 3.0.0b7's
    /// profile byte for byte, and most of them are read by it (a fast path
    /// that always gave up would pass the CLI's tests unseen).
    #[test]
    fn v2_fixtures_read_entry_by_entry_match_ommx_3() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/v2");
        let (mut read, mut left) = (0, Vec::new());
        for dir in ["oracle", "from_v1"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_none_or(|e| e != "pb") {
                    continue;
                }
                let file = File::open(&path).unwrap();
                let len = file.metadata().unwrap().len();
                let expected = std::fs::read_to_string(path.with_extension("folded")).unwrap();
                // On one thread, and in chunks on three.
                let mut summaries = Vec::new();
                for threads in [1, 3] {
                    let mut aggregate = Aggregate::new();
                    let Some(done) = profile(&file, (0, len), threads, None, &mut aggregate) else {
                        left.push(path.display().to_string());
                        break;
                    };
                    let lines: Vec<String> = aggregate
                        .folded_lines()
                        .into_iter()
                        .map(|(path, bytes)| format!("{path} {bytes}"))
                        .collect();
                    assert_eq!(lines.join("\n"), expected, "{}", path.display());
                    assert_eq!(done.summary.wire_bytes, len);
                    summaries.push(format!("{:?}", done.summary));
                }
                if summaries.len() == 2 {
                    assert_eq!(summaries[0], summaries[1], "{}", path.display());
                    read += 1;
                }
            }
        }
        assert!(
            read >= 40,
            "read {read}, left to the whole reading: {left:?}"
        );
    }
}
