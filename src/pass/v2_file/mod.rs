//! The read step for an `ommx.v2` payload that lies in a regular file:
//! read a table entry at a time, never the whole message in memory. Where
//! an analysis looks at the entities (or the profile groups them, or the
//! wire view is asked), this reading checks the payload and [`Show`] then
//! shows it an entity at a time.
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

mod entry;
mod rows;
mod shown;
#[cfg(test)]
mod shown_tests;
mod table;
mod variables;

use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::sync::Mutex;

use prost::Message;

use super::terms;
use super::terms::spooled::SpooledFunction;
use crate::ids::{IdSet, SharedIdSet};
use crate::model::function::CountedFunction;
use crate::model::ommx30::{self, Func, Has, Label, LabelRef, Piece};
use crate::ommx_v1 as pb1;
use crate::ommx_v2 as pb;
use crate::profile::{Aggregate, Frame, LogicalMemoryProfile, Path};
use crate::profiled::{InstanceSummary, Unprofiled};
use crate::trace::{self, Phase};
use crate::wire::fields::v2::{instance, named_function_table};
use crate::wire::file::{read_exact_at, read_range};
use crate::wire::{key, varint, WireType};
use entry::entry;
use rows::Rows;
use table::Table;
use variables::{variables, Variables};

pub(super) use shown::{Accepted, Show};

/// Bytes the walk of the top-level fields reads at least at a time (a
/// header, and what follows it).
const HEADER: usize = 64;
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
                .max(HEADER)
                .min((self.len - pos.min(self.len)) as usize);
            self.buf.resize(size, 0);
            read_exact_at(self.file, &mut self.buf, self.start + pos).ok()?;
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
}

/// Where the payload's top-level fields lie.
#[derive(Default)]
struct Layout {
    /// The tables, by field number (each once).
    tables: BTreeMap<u32, (u64, u64)>,
    objective: Option<(u64, u64)>,
    /// Where the key of each table and of the objective starts and ends.
    keys: BTreeMap<u32, (u64, u64)>,
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

/// Where the top-level fields lie, walked with small reads (a header at a
/// time; only the fields kept in `rest` are read whole).
fn layout(w: &mut Window<'_>) -> Option<Layout> {
    let mut layout = Layout::default();
    let end = w.len;
    let mut pos = 0;
    while pos < end {
        let (number, wire_type, after_key, body, stop) = w.field(pos, end)?;
        let table = TABLES.contains(&number);
        if table || number == instance::OBJECTIVE {
            layout.keys.insert(number, (pos, after_key));
        }
        // A map (read by prost as length-delimited whatever its key's wire
        // type) of another wire type is left to the whole message's reading.
        let message = table || number == instance::OBJECTIVE || instance::MAPS.contains(&number);
        if message && wire_type != WireType::Len {
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

/// Top-level fields [`v1_refuses`] looks at, at most: a v1 payload has
/// one per entity, a v2 payload has its sense among its first few.
pub(super) const V1_WALK: usize = 16;

/// Whether `ommx.v1.Instance` certainly refuses the payload: one of its
/// first top-level fields is of a wire type v1's schema does not allow for
/// its number ([`v1_misfit`]), which prost refuses whatever else the bytes
/// hold.
fn v1_refuses(w: &mut Window<'_>) -> bool {
    let mut pos = 0;
    for _ in 0..V1_WALK {
        let Some((number, wire_type, _, _, stop)) = w.field(pos, w.len) else {
            return false;
        };
        if v1_misfit(number, wire_type) {
            return true;
        }
        pos = stop;
    }
    false
}

/// Whether prost refuses a top-level field of `number` and `wire_type` in
/// an `ommx.v1.Instance`: a known field of another wire type than its
/// schema's (a message wants a length-delimited field, the sense and the
/// format version a varint; a map takes any, as prost reads it). Every
/// payload 3.0 accepts has one:
/// its sense, a varint, is field 6, v1's `parameters`, a message, and
/// 3.0 writes its fields in order.
pub(super) fn v1_misfit(number: u32, wire_type: WireType) -> bool {
    use crate::wire::fields::instance as v1;
    if v1::MAPS.contains(&number) {
        // Length-delimited whatever the key's wire type, as prost reads it.
        return false;
    }
    let wants = match number {
        v1::SENSE | v1::FORMAT_VERSION => WireType::Varint,
        v1::DESCRIPTION..=v1::ANNOTATIONS => WireType::Len,
        _ => return false,
    };
    wire_type != wants
}

/// What the fast path read: the profile's leaves (in `aggregate`), the
/// summary, and the objective's bytes and encoded size.
pub(super) struct Read {
    pub(super) summary: InstanceSummary,
    pub(super) objective_bytes: u64,
    pub(super) objective_wire_bytes: u64,
    pub(super) objective_terms: u64,
    /// What the objective's load takes that the profile does not count (a
    /// quadratic one's linear terms, a polynomial's ids), for the
    /// real-memory estimate.
    pub(super) objective_unprofiled: Unprofiled,
    /// What showing the entities needs ([`Show`]), when asked
    /// ([`Ask::entities`]).
    pub(super) accepted: Option<Accepted>,
}

/// How the fast path reads a payload.
pub(super) struct Ask<'a> {
    /// Threads a large table or objective is read on.
    pub(super) threads: usize,
    /// The archive layer's annotations, folded in.
    pub(super) layer_annotations: Option<&'a BTreeMap<String, String>>,
    /// Read it only when `ommx.v1.Instance` certainly refuses it (a raw
    /// payload read as v2 before v1 has tried: see
    /// [`Pass::profile_v2_first`](super::Pass::profile_v2_first)).
    pub(super) only_if_v1_refuses: bool,
    /// An objective longer than this is counted where it lies
    /// ([`IN_PLACE_ABOVE`]; tests move it).
    pub(super) in_place_above: u64,
    /// Also keep what showing the entities to an analysis needs
    /// ([`Read::accepted`]).
    pub(super) entities: bool,
}

/// Reads the v2 payload of `len` bytes at `start` in `file` into
/// `aggregate`, as `ask` says; `None`: read it whole instead.
pub(super) fn profile(
    file: &File,
    (start, len): (u64, u64),
    ask: Ask<'_>,
    aggregate: &mut Aggregate,
) -> Option<Read> {
    let Ask {
        threads,
        layer_annotations,
        only_if_v1_refuses,
        in_place_above,
        entities,
    } = ask;
    let used = entities.then(SharedIdSet::default);
    let mut w = Window::new(file, start, len);
    // Reading, decoding, checking and visiting go entry by entry: timed as
    // a whole, where the top-level fields are walked (read) and where the
    // tables are (decode).
    let read = trace::span(Phase::Read);
    if only_if_v1_refuses && !v1_refuses(&mut w) {
        return None;
    }
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

    // The variables: their rows, labels and fixed values.
    let table = Table {
        file,
        start,
        range: *layout.tables.get(&instance::DECISION_VARIABLES)?,
    };
    let Variables {
        vars,
        binary,
        fixed,
        max_id,
    } = variables(table, threads, aggregate, &mut summary)?;
    let mut fixed_set = IdSet::default();
    fixed.keys().for_each(|&id| _ = fixed_set.insert(id));
    let dependency = ommx30::assignments(&rest.decision_variable_dependency, &vars, true).ok()?;
    // A variable both fixed and assigned is refused: by the whole reading,
    // which tells it in 3.0's order.
    let assigned = dependency.assignments.keys();
    if assigned.clone().any(|&id| fixed_set.contains(&id)) {
        return None;
    }
    // Fixed and dependent variables are substituted out of the active
    // problem: what is left are the free ones.
    let mut free = vars.clone();
    fixed.keys().for_each(|&id| free.remove(id));
    dependency
        .assignments
        .keys()
        .for_each(|&id| free.remove(id));

    // The objective: counted on the wire where it can be, else built.
    let (body_start, body_end) = layout.objective?;
    let objective_wire_bytes = body_end - body_start + tag_and_length(body_end - body_start);
    let range = start + body_start..start + body_end;
    let mut objective_path = path.with(ommx30::OBJECTIVE);
    let read = Objective {
        free: &free,
        max_id,
        threads,
        in_place_above,
    };
    let (objective_bytes, objective_terms, objective_unprofiled) =
        read.profile(file, range, &mut objective_path, aggregate)?;
    drop(objective_path);
    summary.terms += objective_terms;

    // The four constraint collections, in 3.0's order.
    let numbers = [
        instance::REGULAR_CONSTRAINTS,
        instance::INDICATOR_CONSTRAINTS,
        instance::ONE_HOT_CONSTRAINTS,
        instance::SOS1_CONSTRAINTS,
    ];
    for (number, (container, names, ..)) in numbers.into_iter().zip(ommx30::COLLECTIONS) {
        let Some(&range) = layout.tables.get(&number) else {
            continue;
        };
        let rows = Rows {
            number,
            container,
            names,
            vars: &vars,
            binary: &binary,
            free: &free,
            threads,
            used: used.as_ref(),
        };
        rows.read(Table { file, start, range }, aggregate, &mut summary)?;
    }

    // The named functions and their labels.
    if let Some(&range) = layout.tables.get(&instance::NAMED_FUNCTIONS) {
        let table = Table { file, start, range };
        let used = used.as_ref();
        summary.named_functions += named_functions(table, &vars, threads, used, aggregate)?;
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
    let accepted = used.map(|used| Accepted {
        tables: layout.tables,
        objective: (body_start, body_end),
        keys: layout.keys,
        rest: layout.rest,
        parts,
        used: used.into_set(),
    });
    Some(Read {
        summary,
        objective_bytes,
        objective_wire_bytes,
        objective_terms,
        objective_unprofiled,
        accepted,
    })
}

/// Reads the named functions and their labels into `aggregate` (the
/// variables they use noted in `used`, when given): how many functions;
/// `None` where the whole reading must say what it is.
fn named_functions(
    table: Table<'_>,
    vars: &IdSet,
    threads: usize,
    used: Option<&SharedIdSet>,
    aggregate: &mut Aggregate,
) -> Option<u64> {
    let (named, labels) = (SharedIdSet::default(), Mutex::new(Vec::new()));
    let new = || (Aggregate::new(), 0);
    let mut functions = 0;
    let merge = |(window, count): (Aggregate, u64)| {
        aggregate.merge_under(&[], &window);
        functions += count;
    };
    let each = |(window, count): &mut (Aggregate, u64), number, bytes: &[u8]| {
        let mut path = Path::from_frames(vec![Frame::Borrowed(ommx30::NAMED_FUNCTIONS)]);
        match number {
            named_function_table::ENTRIES => {
                let (id, nf) = entry::<pb::NamedFunction>(bytes)?;
                let f = ommx30::named_function(id, &nf, vars).ok()?;
                named.insert(id).then_some(())?;
                if let Some(used) = used {
                    f.for_each_variable(|id| _ = used.insert(id));
                }
                Piece::NamedFunction(&f).visit_logical_memory(&mut path, window);
                *count += 1;
            }
            named_function_table::LABELS => {
                let (id, label) = entry::<pb::ModelingLabel>(bytes)?;
                let label = Label::from(label);
                Piece::NamedLabel(LabelRef::Built(&label)).visit_logical_memory(&mut path, window);
                labels.lock().unwrap_or_else(|e| e.into_inner()).push(id);
            }
            _ => {}
        }
        Some(())
    };
    table.read(threads, new, each, merge)?;
    let named = named.into_set();
    let mut labels = labels.into_inner().unwrap_or_else(|e| e.into_inner());
    distinct(&mut labels)?;
    labels.iter().all(|&id| named.has(id)).then_some(())?;
    Some(functions)
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
fn all_free(f: &Func, free: &IdSet) -> Option<()> {
    let mut ok = true;
    f.for_each_variable(|id| ok &= free.has(id));
    ok.then_some(())
}

/// How the objective is read.
struct Objective<'a> {
    /// The free variables (defined, neither fixed nor dependent).
    free: &'a IdSet,
    /// The largest id of a variable.
    max_id: Option<u64>,
    threads: usize,
    in_place_above: u64,
}

impl Objective<'_> {
    /// The objective encoded in `range` of `file`, visited at `path`: its
    /// bytes, stored terms and what its load takes beyond them. Counted on the wire where it can be: where
    /// it lies, a window at a time on every thread, when it is long (as the
    /// v1 pass counts a large objective), else held; built where the count
    /// cannot answer.
    fn profile(
        &self,
        file: &File,
        range: Range<u64>,
        path: &mut Path,
        aggregate: &mut Aggregate,
    ) -> Option<(u64, u64, Unprofiled)> {
        let Objective {
            free,
            max_id,
            threads,
            in_place_above,
        } = *self;
        let is_free = |id: u64| free.has(id);
        let in_place = match range.end - range.start > in_place_above {
            true => file.try_clone().ok().and_then(|file| {
                let arm = SpooledFunction::within(file, range.clone())
                    .scan(threads)
                    .ok()?;
                arm.count_bounded(&is_free, threads, max_id).ok()
            }),
            false => None,
        };
        let mut body = None;
        let counted = match in_place {
            Some(counted) => counted,
            None => {
                let held = body.insert(read_range(file, range.clone()).ok()?);
                match terms::scan([held.as_slice()]) {
                    Ok(arm) => terms::count_bounded(arm.as_ref(), &is_free, threads, max_id)
                        .ok()
                        .flatten(),
                    Err(_) => None,
                }
            }
        };
        if let Some(CountedFunction { shape, .. }) = counted {
            shape.visit_logical_memory(path, aggregate);
            let terms = shape.stored_terms as u64;
            return Some((shape.bytes() as u64, terms, shape.unprofiled));
        }
        let body = match body {
            Some(body) => body,
            None => read_range(file, range).ok()?,
        };
        let wire = pb1::Function::decode(body.as_slice()).ok()?;
        drop(body);
        let f = ommx30::read_function(Some(&wire), || "the objective".into()).ok()?;
        all_free(&f, free)?;
        f.visit_logical_memory(path, aggregate);
        let unprofiled = f.compact().map(|c| c.shape().unprofiled);
        let terms = f.stored_terms() as u64;
        Some((
            crate::profile::bytes_of(&f),
            terms,
            unprofiled.unwrap_or_default(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every raw v2 fixture that the fast path reads gives ommx 3.0.0b7's
    /// profile byte for byte, and most of them are read by it (a fast path
    /// that always gave up would pass the CLI's tests unseen).
    #[test]
    fn v2_fixtures_read_entry_by_entry_match_ommx_3() {
        let (mut read, mut left) = (0, Vec::new());
        for path in crate::fixtures::raw_v2() {
            let file = File::open(&path).unwrap();
            let len = file.metadata().unwrap().len();
            let expected = std::fs::read_to_string(path.with_extension("folded")).unwrap();
            // On one thread, the objective held, and in chunks on
            // three, the objective read where it lies.
            let mut summaries = Vec::new();
            for (threads, in_place_above) in [(1, u64::MAX), (3, 0)] {
                let mut aggregate = Aggregate::new();
                let ask = Ask {
                    threads,
                    layer_annotations: None,
                    only_if_v1_refuses: false,
                    in_place_above,
                    entities: false,
                };
                let Some(done) = profile(&file, (0, len), ask, &mut aggregate) else {
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
        assert!(
            read >= 40,
            "read {read}, left to the whole reading: {left:?}"
        );
    }

    /// What a quadratic objective's load takes beyond its stored terms (its
    /// linear terms, for the real-memory estimate) is what the v1 pass
    /// counts of the same objective, whether it is held or read where it
    /// lies.
    #[test]
    fn a_quadratic_objectives_linear_terms_are_counted_as_from_v1() {
        let root = env!("CARGO_MANIFEST_DIR");
        let v1 = std::fs::read(format!("{root}/fixtures/oracle/obj_quadratic_linear.pb")).unwrap();
        let v1 = pb1::Instance::decode(v1.as_slice()).unwrap();
        let objective = v1.objective.as_ref().expect("an objective");
        let expected = crate::model::Function::from_wire(objective)
            .unwrap()
            .shape()
            .unprofiled;
        assert!(expected.quadratic_linear > 0);
        let path = format!("{root}/fixtures/v2/from_v1/obj_quadratic_linear.pb");
        let file = File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        for in_place_above in [u64::MAX, 0] {
            let ask = Ask {
                threads: 1,
                layer_annotations: None,
                only_if_v1_refuses: false,
                in_place_above,
                entities: false,
            };
            let done = profile(&file, (0, len), ask, &mut Aggregate::new()).expect("read");
            assert_eq!(done.objective_unprofiled, expected, "{in_place_above}");
        }
    }
}
