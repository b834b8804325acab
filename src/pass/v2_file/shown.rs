//! An `ommx.v2` payload in a regular file shown to the analyses riding on
//! the pass, once the table-entry reading ([`super::profile`]) has accepted
//! it: each entity built alone, in profile order (variables, each
//! collection's active rows then its removed ones, named functions), from
//! its entries in its table's maps, and shown with what it costs, as the
//! whole reading shows the entities of the model it builds
//! (`pass/ommx30.rs`). Its leaves go into the profile under their family
//! frame when grouping by name, and to an analysis that wants them.
//!
//! A table's entries are first indexed (key, map, where the entry lies),
//! on every thread, and the index sorted by key: a 3.0 payload writes some
//! maps in hash order, and an entity's entries lie in several maps. Then
//! each entity's entries are read where they lie, a window of each map
//! at a time (an entry or so at a time where a map is in hash order). Memory: the index (32 bytes an entry), a window a map, one
//! entity, the objective (built: the analyses look at it) and the set of
//! the variables anything uses.

use std::collections::BTreeMap;
use std::fs::File;

use prost::encoding::{encoded_len_varint, key_len};
use prost::Message;

use crate::ids::IdSet;
use crate::model::ommx30::{self, Entity, Func, Label, Part, Reason, Row};
use crate::model::{EntityKind, FileWaste};
use crate::ommx_v1 as pb1;
use crate::ommx_v2 as pb;
use crate::pass::accounts::{Families, Summing};
use crate::pass::terms;
use crate::pass::{Cost, EntityObserver, EntityView, InstanceError, Singular30};
use crate::profile::family::GroupBy;
use crate::profile::replay::Tally;
use crate::profile::wire_view::{visit_v2_instance, visit_v2_table_field, visit_v2_table_head};
use crate::profile::{Aggregate, LogicalMemoryProfile, Path};
use crate::wire::fields::v2::{collection, instance, named_function_table, variable_table};
use crate::wire::file::{read_exact_at, read_range};

use super::entry::{entry_key, number_entry, small_message};
use super::table::Table;

/// What the table-entry reading of an accepted payload keeps for showing
/// its entities.
pub(in crate::pass) struct Accepted {
    /// Where each table's body lies (payload offsets), by field number.
    pub(super) tables: BTreeMap<u32, (u64, u64)>,
    /// Where the objective's body lies.
    pub(super) objective: (u64, u64),
    /// Where the key of each table and of the objective starts and ends.
    pub(super) keys: BTreeMap<u32, (u64, u64)>,
    /// The other top-level fields, as encoded.
    pub(super) rest: Vec<u8>,
    /// The instance-wide parts but the objective (the layer's annotations
    /// folded in).
    pub(super) parts: ommx30::Instance,
    /// The variables the rows and named functions use.
    pub(super) used: IdSet,
}

/// Where, and to whom, an accepted payload's entities are shown.
pub(in crate::pass) struct Show<'a> {
    pub(in crate::pass) file: &'a File,
    /// Where the payload starts in the file.
    pub(in crate::pass) start: u64,
    pub(in crate::pass) threads: usize,
    pub(in crate::pass) group_by: GroupBy,
    pub(in crate::pass) observer: &'a mut dyn EntityObserver,
    /// The profile's leaves.
    pub(in crate::pass) aggregate: &'a mut Aggregate,
    /// The wire view's, when asked (not with family frames).
    pub(in crate::pass) wire: Option<&'a mut Aggregate>,
}

/// One field of a table (a map entry): its key, its map (field number)
/// and where its bytes (key, length prefix and body) lie in the payload.
#[derive(Clone, Copy)]
struct Slot {
    id: u64,
    field: u32,
    /// Bytes of its key.
    key: u32,
    at: u64,
    len: u64,
}

/// Bytes read at a time from one map's entries while they are read in the
/// order they lie (a map written in key order)...
const READ_AHEAD: usize = 1 << 20;
/// ... and at least, where the next entry lies elsewhere (a map written in
/// hash order): about an entry a read.
const READ_AT_LEAST: usize = 4 << 10;

/// The entries of one table, indexed by key, read back a window of each
/// map at a time.
struct Entries<'f> {
    table: Table<'f>,
    slots: Vec<Slot>,
    /// Per map: the bytes read, and the payload offset of their first.
    windows: BTreeMap<u32, (Vec<u8>, u64)>,
}

/// The most slots sorted with a scratch copy of half of them (32 MiB).
const MERGED_UP_TO: usize = 2 << 20;

impl<'f> Entries<'f> {
    /// The entries of `table` in the maps `fields`, sorted by key; `None`
    /// also when the table holds any other field (bytes that only the
    /// whole reading's wire view attributes).
    fn index(table: Table<'f>, fields: &[u32], threads: usize) -> Option<Self> {
        let each = |slots: &mut Vec<Slot>, field, at, bytes: &[u8], key: usize| {
            fields.contains(&field).then_some(())?;
            let id = entry_key(&bytes[key..])?;
            let (key, len) = (u32::try_from(key).ok()?, bytes.len() as u64);
            slots.push(Slot {
                id,
                field,
                key,
                at,
                len,
            });
            Some(())
        };
        let mut slots = Vec::new();
        table.read_at(threads, Vec::new, each, |window| slots.extend(window))?;
        // Every byte of the table is an entry's (none is another field, nor
        // a field of another wire type, which the windows pass over).
        let covered: u64 = slots.iter().map(|s| s.len).sum();
        (covered == table.range.1 - table.range.0).then_some(())?;
        // Each map is written in key order as a rule, so the slots are a
        // few ascending runs, which a stable sort merges in linear time
        // (the keys are distinct: either sort gives one order). Its scratch
        // is half the slots: above `MERGED_UP_TO`, they are sorted in place.
        let key = |s: &Slot| (s.id, s.field, s.at);
        match slots.len() <= MERGED_UP_TO {
            true => slots.sort_by_key(key),
            false => slots.sort_unstable_by_key(key),
        }
        Some(Self {
            table,
            slots,
            windows: BTreeMap::new(),
        })
    }

    /// The bytes of `slot`: the whole field.
    fn bytes(&mut self, slot: Slot) -> Option<&[u8]> {
        let (buf, from) = self.windows.entry(slot.field).or_default();
        let len = usize::try_from(slot.len).ok()?;
        let inside = slot.at >= *from && slot.at + slot.len <= *from + buf.len() as u64;
        if !inside {
            let left = self.table.range.1.checked_sub(slot.at)?;
            let end = *from + buf.len() as u64;
            let ahead = slot.at >= end && slot.at - end < READ_AT_LEAST as u64;
            let window = if ahead { READ_AHEAD } else { READ_AT_LEAST };
            let size = len.max(window).min(usize::try_from(left).ok()?);
            buf.resize(size, 0);
            read_exact_at(self.table.file, buf, self.table.start + slot.at).ok()?;
            *from = slot.at;
        }
        let i = usize::try_from(slot.at - *from).ok()?;
        buf.get(i..i + len)
    }

    /// The runs of slots of one key each, as ranges of `slots`.
    fn groups(&self) -> Vec<std::ops::Range<usize>> {
        let mut groups = Vec::new();
        let mut from = 0;
        for i in 1..=self.slots.len() {
            if i == self.slots.len() || self.slots[i].id != self.slots[from].id {
                groups.push(from..i);
                from = i;
            }
        }
        groups
    }
}

/// An entity built from its entries, with what it costs beside its leaves.
struct Built {
    kind: EntityKind,
    id: u64,
    label: Option<Label>,
    container: &'static str,
    held: Held,
    wire_bytes: u64,
    waste: Option<FileWaste>,
}

/// What an entity holds besides its label.
enum Held {
    Variable {
        fixed: bool,
    },
    Row {
        names: &'static ommx30::Names,
        row: Row,
        reason: Option<Reason>,
        provenance: usize,
    },
    NamedFunction(Func),
}

impl Built {
    fn entity(&self) -> Entity<'_> {
        let part = match &self.held {
            Held::Variable { fixed } => Part::Variable { fixed: *fixed },
            Held::Row {
                names,
                row,
                reason,
                provenance,
            } => Part::Row {
                names,
                row,
                reason: reason.as_ref(),
                provenance: *provenance,
            },
            Held::NamedFunction(f) => Part::NamedFunction(f),
        };
        Entity {
            kind: self.kind,
            id: self.id,
            label: self.label.as_ref(),
            container: self.container,
            part,
        }
    }
}

/// Why showing stopped: a refusal the whole reading reports too, or
/// bytes this reading does not take (`None`: read the payload whole).
type Stop = Option<InstanceError>;

/// The per-holder waste, for the holders' length prefixes
/// ([`ommx30::framing`]).
#[derive(Default)]
struct Framing {
    wasted: BTreeMap<u32, u64>,
}

impl Show<'_> {
    /// Shows the entities of the accepted payload, puts their leaves and
    /// the instance-wide parts' into the aggregate (under family frames
    /// when grouping). `Err(None)`: bytes this reading does not take, the
    /// observer begun and shown some (the caller abandons it).
    pub(in crate::pass) fn show(self, accepted: Accepted) -> Result<(), Stop> {
        let Accepted {
            tables,
            objective,
            keys,
            rest,
            mut parts,
            mut used,
        } = accepted;
        let Show {
            file,
            start,
            threads,
            group_by,
            observer,
            aggregate,
            mut wire,
        } = self;
        let key_start = |number: u32| keys.get(&number).copied().ok_or(None);
        let (field, body) = (key_start(instance::OBJECTIVE)?, objective);
        let objective_field = read_range(file, start + field.0..start + body.1)
            .ok()
            .ok_or(None)?;
        if let Some(wire) = wire.as_deref_mut() {
            visit_v2_instance(&rest, None, &mut Path::new(), wire);
            visit_v2_instance(&objective_field, None, &mut Path::new(), wire);
            for (&number, &(body, _)) in &tables {
                let (from, to) = key_start(number)?;
                let head = ((to - from) as usize, (body - to) as usize);
                visit_v2_table_head(number, head, &mut Path::new(), wire);
            }
        }
        drop(rest);
        let body = &objective_field[(body.0 - field.0) as usize..];
        let (objective, objective_cost) = build_objective(body, threads).ok_or(None)?;
        drop(objective_field);
        objective.for_each_variable(|id| _ = used.insert(id));
        if let Some(o) = &parts.output_objective {
            o.function.for_each_variable(|id| _ = used.insert(id));
        }
        for (&id, f) in &parts.dependency.assignments {
            used.insert(id);
            f.for_each_variable(|id| _ = used.insert(id));
        }
        parts.objective = Some(objective);
        parts.visit_parts(&mut Path::new(), aggregate);
        let mut shower = Shower {
            families: Families::new(group_by),
            group_by,
            observer,
            aggregate,
            used: &used,
            framing: Framing::default(),
            wire,
            path: Path::new(),
            pieces: BTreeMap::new(),
        };
        let table = |number: u32| {
            tables
                .get(&number)
                .map(|&range| Table { file, start, range })
        };
        let mut show_tables = || {
            let variables = table(instance::DECISION_VARIABLES).ok_or(None)?;
            shower.variables(variables, threads)?;
            let numbers = [
                instance::REGULAR_CONSTRAINTS,
                instance::INDICATOR_CONSTRAINTS,
                instance::ONE_HOT_CONSTRAINTS,
                instance::SOS1_CONSTRAINTS,
            ];
            for (number, c) in numbers.into_iter().zip(ommx30::COLLECTIONS) {
                if let Some(t) = table(number) {
                    shower.rows(t, number, c, threads)?;
                }
            }
            if let Some(t) = table(instance::NAMED_FUNCTIONS) {
                shower.named_functions(t, threads)?;
            }
            Ok::<(), Stop>(())
        };
        let shown = show_tables();
        // What was shown is in the profile, as when each leaf is added.
        for tally in shower.pieces.values_mut() {
            tally.settle(shower.aggregate);
        }
        shown?;
        let terms = parts
            .objective
            .as_ref()
            .map_or(0, |f| f.stored_terms() as u64);
        let observer = shower.observer;
        observer.objective(&EntityView::objective(terms), objective_cost);
        let framing_waste = shower
            .framing
            .wasted
            .iter()
            .map(|(number, &wasted)| {
                let (from, to) = tables[number];
                ommx30::framing(wasted, to - from)
            })
            .sum();
        observer.ommx30_singular(&Singular30 {
            objective: parts.objective.as_ref(),
            output_objective: parts.output_objective.as_ref().map(|o| &o.function),
            assignments: &parts.dependency.assignments,
            description: parts.description.as_ref(),
            annotations: &parts.annotations,
            framing_waste,
        });
        if let Some(mut leaves) = observer.leaves() {
            parts.visit_parts(&mut Path::new(), &mut leaves);
        }
        Ok(())
    }
}

/// The objective built from its encoding `body`, and what it costs. A
/// quadratic one is read on the wire, on up to `threads` threads, as
/// prost's decoding would build it (which would hold its arrays beside the
/// function); anything else, or what the wire reader does not vouch for,
/// is decoded by prost.
fn build_objective(body: &[u8], threads: usize) -> Option<(Func, Cost)> {
    let field = |len: usize| key_len(instance::OBJECTIVE) + encoded_len_varint(len as u64) + len;
    if let Some(len) = terms::quadratic_encoded_len(body, threads) {
        if let Ok(Ok((f, waste))) = terms::normalize(&[body], threads) {
            let f = Func::Compact(f);
            let cost = Cost {
                bytes: crate::profile::bytes_of(&f),
                wire_bytes: field(len) as u64,
                // As `ommx30::objective_waste` counts it.
                waste: if waste.bytes > 0 {
                    waste
                } else {
                    FileWaste::default()
                },
            };
            return Some((f, cost));
        }
    }
    let encoded = pb1::Function::decode(body).ok()?;
    let f = ommx30::read_function(Some(&encoded), || "the objective".into()).ok()?;
    let cost = Cost {
        bytes: crate::profile::bytes_of(&f),
        wire_bytes: field(encoded.encoded_len()) as u64,
        waste: ommx30::objective_waste(Some(&encoded), &f).unwrap_or_default(),
    };
    Some((f, cost))
}

/// The state of one payload's showing.
struct Shower<'a, 'o> {
    families: Families,
    group_by: GroupBy,
    observer: &'o mut dyn EntityObserver,
    aggregate: &'o mut Aggregate,
    used: &'a IdSet,
    framing: Framing,
    wire: Option<&'o mut Aggregate>,
    /// Empty between entities: its frames' room is kept from one walk to
    /// the next.
    path: Path,
    /// The entities' pieces counted by key (ungrouped), for the profile:
    /// one tally a container, as a key holds within its container.
    pieces: BTreeMap<&'static str, Tally>,
}

impl Shower<'_, '_> {
    /// The entry `slot` of table field `number` (its length prefix and
    /// body), its bytes attributed in the wire view.
    fn entry<'e>(
        &mut self,
        entries: &'e mut Entries<'_>,
        number: u32,
        slot: Slot,
    ) -> Result<&'e [u8], Stop> {
        let field = entries.bytes(slot).ok_or(None)?;
        if let Some(wire) = self.wire.as_deref_mut() {
            visit_v2_table_field(number, field, &mut self.path, wire);
        }
        Ok(&field[slot.key as usize..])
    }

    /// Shows one built entity: its leaves into the profile (and to an
    /// analysis that wants them), the entity with its cost.
    fn one(&mut self, built: &Built) -> Result<(), Stop> {
        let e = built.entity();
        self.families.see(e.name()).map_err(Some)?;
        let family = (self.group_by == GroupBy::Name).then(|| e.family());
        let bytes = match &family {
            // Most entities' pieces have the leaves of one seen before.
            None => {
                let mut path = self.path.with(e.container);
                let tally = self.pieces.entry(e.container).or_default();
                let mut bytes = 0;
                for piece in e.pieces().into_iter().flatten() {
                    bytes += tally.count_summed(piece.key(), self.aggregate, |v| {
                        piece.visit_logical_memory(&mut path, &mut { v })
                    });
                }
                bytes
            }
            Some(_) => {
                let mut summing = Summing {
                    aggregate: &mut *self.aggregate,
                    bytes: 0,
                };
                e.visit_under(&mut self.path, family.clone(), &mut summing);
                summing.bytes
            }
        };
        let cost = Cost {
            bytes,
            wire_bytes: built.wire_bytes,
            waste: built.waste.unwrap_or_default(),
        };
        let used = (e.kind == EntityKind::Variable).then(|| self.used.contains(&e.id));
        self.observer.entity(&EntityView::ommx30(&e, used), cost);
        if let Some(mut leaves) = self.observer.entity_leaves() {
            e.visit_under(&mut self.path, family, &mut leaves);
        }
        Ok(())
    }

    /// The variables, by id.
    fn variables(&mut self, table: Table<'_>, threads: usize) -> Result<(), Stop> {
        use variable_table::{ENTRIES, FIXED_VALUES, LABELS};
        let mut entries =
            Entries::index(table, &[ENTRIES, LABELS, FIXED_VALUES], threads).ok_or(None)?;
        for group in entries.groups() {
            let mut built = Built {
                kind: EntityKind::Variable,
                id: entries.slots[group.start].id,
                label: None,
                container: ommx30::VARIABLES,
                held: Held::Variable { fixed: false },
                wire_bytes: 0,
                waste: None,
            };
            let mut row = false;
            for i in group {
                let slot = entries.slots[i];
                let number = instance::DECISION_VARIABLES;
                let (id, bytes) = (slot.id, self.entry(&mut entries, number, slot)?);
                built.wire_bytes += match slot.field {
                    ENTRIES => {
                        let (_, v) = small_message::<pb::DecisionVariable>(bytes).ok_or(None)?;
                        row = true;
                        ommx30::entry_wire_len(ENTRIES, id, ommx30::value_wire_len(&v))
                    }
                    LABELS => {
                        let (_, l) = small_message::<pb::ModelingLabel>(bytes).ok_or(None)?;
                        let len = ommx30::value_wire_len(&l);
                        built.label = Some(Label::from(l));
                        ommx30::entry_wire_len(LABELS, id, len)
                    }
                    _ => {
                        let (_, v) = number_entry(bytes).ok_or(None)?;
                        built.held = Held::Variable { fixed: true };
                        ommx30::entry_wire_len(FIXED_VALUES, id, ommx30::fixed_value_wire_len(v))
                    }
                };
            }
            // Every label and fixed value is a variable's (accepted).
            row.then_some(()).ok_or(None)?;
            self.one(&built)?;
        }
        Ok(())
    }

    /// One collection's rows: the active ones by id, then the removed.
    fn rows(
        &mut self,
        table: Table<'_>,
        number: u32,
        (container, names, active, removed): (
            &'static str,
            &'static ommx30::Names,
            EntityKind,
            EntityKind,
        ),
        threads: usize,
    ) -> Result<(), Stop> {
        use collection::{ACTIVE, CONTEXTS, REMOVED, REMOVED_REASONS};
        let fields = [ACTIVE, REMOVED, REMOVED_REASONS, CONTEXTS];
        let mut entries = Entries::index(table, &fields, threads).ok_or(None)?;
        let groups = entries.groups();
        let of = |field: u32| {
            let slots = &entries.slots;
            move |g: &&std::ops::Range<usize>| slots[(*g).clone()].iter().any(|s| s.field == field)
        };
        let order: Vec<_> = (groups.iter().filter(of(ACTIVE)))
            .chain(groups.iter().filter(of(REMOVED)))
            .cloned()
            .collect();
        // Every reason and context is a row's (accepted).
        (order.len() == groups.len()).then_some(()).ok_or(None)?;
        for group in order {
            let mut built = Built {
                kind: active,
                id: entries.slots[group.start].id,
                label: None,
                container,
                held: Held::Variable { fixed: false },
                wire_bytes: 0,
                waste: None,
            };
            let (mut row, mut reason, mut provenance) = (None, None, 0);
            for i in group {
                let slot = entries.slots[i];
                let (id, bytes) = (slot.id, self.entry(&mut entries, number, slot)?);
                let field = slot.field;
                built.wire_bytes += match field {
                    ACTIVE | REMOVED => {
                        if field == REMOVED {
                            built.kind = removed;
                        }
                        let (r, len, waste) = read_row(number, id, bytes).ok_or(None)?;
                        row = Some(r);
                        built.waste = waste;
                        ommx30::entry_wire_len(field, id, len)
                    }
                    REMOVED_REASONS => {
                        let (_, r) = small_message::<pb::RemovedReason>(bytes).ok_or(None)?;
                        let len = ommx30::value_wire_len(&r);
                        reason = Some(Reason {
                            reason: r.reason,
                            parameters: r.parameters,
                        });
                        ommx30::entry_wire_len(field, id, len)
                    }
                    _ => {
                        let (_, c) = small_message::<pb::ConstraintContext>(bytes).ok_or(None)?;
                        let len = ommx30::value_wire_len(&c);
                        built.label = c.label.map(Label::from);
                        provenance = c.provenance.len();
                        ommx30::entry_wire_len(field, id, len)
                    }
                };
            }
            let row = row.ok_or(None)?;
            (reason.is_some() == (built.kind == removed))
                .then_some(())
                .ok_or(None)?;
            if let Some(w) = &built.waste {
                *self.framing.wasted.entry(number).or_default() += w.bytes;
            }
            built.held = Held::Row {
                names,
                row,
                reason,
                provenance,
            };
            self.one(&built)?;
        }
        Ok(())
    }

    /// The named functions, by id.
    fn named_functions(&mut self, table: Table<'_>, threads: usize) -> Result<(), Stop> {
        use named_function_table::{ENTRIES, LABELS};
        let mut entries = Entries::index(table, &[ENTRIES, LABELS], threads).ok_or(None)?;
        for group in entries.groups() {
            let mut built = Built {
                kind: EntityKind::NamedFunction,
                id: entries.slots[group.start].id,
                label: None,
                container: ommx30::NAMED_FUNCTIONS,
                held: Held::Variable { fixed: false },
                wire_bytes: 0,
                waste: None,
            };
            let mut function = None;
            for i in group {
                let slot = entries.slots[i];
                let number = instance::NAMED_FUNCTIONS;
                let (id, bytes) = (slot.id, self.entry(&mut entries, number, slot)?);
                built.wire_bytes += match slot.field {
                    ENTRIES => {
                        let (_, nf) = small_message::<pb::NamedFunction>(bytes).ok_or(None)?;
                        let what = || format!("named function {id}");
                        let f = ommx30::read_function(nf.function.as_ref(), what)
                            .ok()
                            .ok_or(None)?;
                        built.waste = ommx30::entry_waste(id, nf.function.as_ref(), &f, 0);
                        function = Some(f);
                        ommx30::entry_wire_len(ENTRIES, id, ommx30::value_wire_len(&nf))
                    }
                    _ => {
                        let (_, l) = small_message::<pb::ModelingLabel>(bytes).ok_or(None)?;
                        let len = ommx30::value_wire_len(&l);
                        built.label = Some(Label::from(l));
                        ommx30::entry_wire_len(LABELS, id, len)
                    }
                };
            }
            built.held = Held::NamedFunction(function.ok_or(None)?);
            if let Some(w) = &built.waste {
                let number = instance::NAMED_FUNCTIONS;
                *self.framing.wasted.entry(number).or_default() += w.bytes;
            }
            self.one(&built)?;
        }
        Ok(())
    }
}

/// A row of collection `number` from its entry: the row, its value
/// field's encoded length and its function's waste.
fn read_row(number: u32, id: u64, bytes: &[u8]) -> Option<(Row, usize, Option<FileWaste>)> {
    use ommx30::{entry_waste, scalar};
    Some(match number {
        instance::REGULAR_CONSTRAINTS => {
            let (_, c) = small_message::<pb::RegularConstraint>(bytes)?;
            let row = ommx30::regular_row(id, &c, None).ok()?;
            let Row::Regular(f) = &row else { return None };
            let rest = scalar(c.equality as u64);
            let waste = entry_waste(id, c.function.as_ref(), f, rest);
            (row, ommx30::value_wire_len(&c), waste)
        }
        instance::INDICATOR_CONSTRAINTS => {
            let (_, c) = small_message::<pb::IndicatorConstraint>(bytes)?;
            let row = ommx30::indicator_row(id, &c, None, &IdSet::default()).ok()?;
            let Row::Indicator(_, f) = &row else {
                return None;
            };
            let rest = scalar(c.indicator_variable) + scalar(c.equality as u64);
            let waste = entry_waste(id, c.function.as_ref(), f, rest);
            (row, ommx30::value_wire_len(&c), waste)
        }
        instance::ONE_HOT_CONSTRAINTS => {
            let (_, c) = small_message::<pb::OneHotConstraint>(bytes)?;
            let len = ommx30::value_wire_len(&c);
            let row = ommx30::set_row("one-hot constraint", None)(id, c.variables, None).ok()?;
            (row, len, None)
        }
        _ => {
            let (_, c) = small_message::<pb::Sos1Constraint>(bytes)?;
            let len = ommx30::value_wire_len(&c);
            let row = ommx30::set_row("SOS1 constraint", None)(id, c.variables, None).ok()?;
            (row, len, None)
        }
    })
}
