//! What an entity carries besides its function, as OMMX 2.9.3's load makes
//! it: a name, a subscript list, a parameter map and a description (and a
//! removed constraint's reason and its parameters), each the group's mean
//! size, on every entity of the group or on none.
//!
//! The traces (metadata-100k, removed-20k) show each step:
//! - prost decodes the fields in their numbers' order: a variable's name,
//!   subscripts, parameters, description; a constraint's (after its
//!   function) parameters, name, description, subscripts; a removed one's
//!   reason and its parameters after its constraint. A string takes at least
//!   8 bytes, a list is pushed, a parameter map (a `HashMap` of strings) is
//!   made at its first entry and grows as it fills, each entry's key and
//!   value made before it is inserted.
//! - The conversion moves the strings and lists over and makes each map an
//!   `FnvHashMap` of its size, freeing the decoded one.
//! - `to_bytes` clones them exactly (a map: its table, then each key and
//!   value), makes each map a `HashMap` again as the clone is consumed
//!   (freeing the clone's table), and drops the message in its fields'
//!   order.

use super::parts::{free_all, Pushed};
use crate::model::alloc::{self, buckets, table, table_of};
use crate::real_memory::facts::{Facts, Field, Group, Map, Owner};
use glibc_model::{Malloc, Ptr};

/// A map entry: two `String`s.
const ENTRY: u64 = 48;

#[derive(Clone, Copy, Default)]
pub(in crate::real_memory) struct Labels {
    pub(in crate::real_memory) name: Option<u64>,
    pub(in crate::real_memory) subscripts: Option<u64>,
    pub(in crate::real_memory) parameters: Option<Parameters>,
    pub(in crate::real_memory) description: Option<u64>,
    pub(in crate::real_memory) reason: Option<u64>,
    pub(in crate::real_memory) reason_parameters: Option<Parameters>,
}

/// A parameter map: its entries, and the mean length of a key and a value.
#[derive(Clone, Copy)]
pub(in crate::real_memory) struct Parameters {
    pub(in crate::real_memory) entries: u64,
    pub(in crate::real_memory) key: u64,
    pub(in crate::real_memory) value: u64,
}

/// Which entity's fields, for their order in the message.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Entity {
    Variable,
    Constraint,
}

/// One entity's decoded maps' tables, which the conversion replaces (its
/// strings and lists are kept by the instance: nothing frees them).
pub(in crate::real_memory) type Tables = [Option<Ptr>; 2];

/// One entity's labels as the message holds them: what its drop frees.
#[derive(Default)]
pub(super) struct LabelPtrs {
    name: Option<Ptr>,
    subscripts: Option<Ptr>,
    parameters: Vec<Ptr>,
    description: Option<Ptr>,
    reason: Option<Ptr>,
    reason_parameters: Vec<Ptr>,
    /// The maps' tables, while the decoded or cloned ones wait to be
    /// replaced.
    tables: [Option<Ptr>; 2],
}

impl Labels {
    /// The labels of every entity of `owner` (`entities` of them), if each
    /// field present is on all of them and the generator knows it.
    pub(super) fn of(f: &Facts, owner: Owner, entities: u64) -> Option<Labels> {
        let mut l = Labels::default();
        let mut keys: [Option<Group>; 2] = [None; 2];
        let mut values: [Option<Group>; 2] = [None; 2];
        let mut maps: [Option<Group>; 2] = [None; 2];
        let slot = |map: Map| usize::from(map == Map::RemovedReason);
        // Each field at most once, on every entity.
        let once =
            |target: &mut Option<Group>, g: &Group| target.replace(*g).is_none().then_some(());
        for g in f.strings.iter().chain(&f.subscripts).chain(&f.parameters) {
            if g.owner != owner {
                continue;
            }
            let target = match g.field {
                Field::Name => &mut l.name,
                Field::Description => &mut l.description,
                Field::Subscripts => &mut l.subscripts,
                Field::RemovedReason if owner == Owner::Removed => &mut l.reason,
                Field::Key(map) => {
                    once(&mut keys[slot(map)], g)?;
                    continue;
                }
                Field::Value(map) => {
                    once(&mut values[slot(map)], g)?;
                    continue;
                }
                Field::Parameters(map) if g.count == entities => {
                    once(&mut maps[slot(map)], g)?;
                    continue;
                }
                _ => return None,
            };
            if g.count != entities || target.replace(g.each()).is_some() {
                return None;
            }
        }
        let parameters = |i: usize| -> Option<Option<Parameters>> {
            let Some(map) = maps[i] else {
                return (keys[i].is_none() && values[i].is_none()).then_some(None);
            };
            let (key, value) = (keys[i]?, values[i]?);
            Some(Some(Parameters {
                entries: map.each(),
                key: key.each(),
                value: value.each(),
            }))
        };
        l.parameters = parameters(0)?;
        l.reason_parameters = parameters(1)?;
        if owner != Owner::Removed && l.reason_parameters.is_some() {
            return None;
        }
        Some(l)
    }

    /// Whether the entities carry a parameter map (their decoded tables
    /// are then kept for the conversion).
    pub(in crate::real_memory) fn has_maps(&self) -> bool {
        self.parameters.is_some() || self.reason_parameters.is_some()
    }

    /// prost's decode of the entity's labels, in its fields' order (a
    /// constraint's after its function): the strings and lists it keeps
    /// (the instance's from then on), the maps' tables, which the
    /// conversion replaces.
    pub(super) fn decode(&self, m: &mut Malloc, entity: Entity) -> Tables {
        let mut tables = [None; 2];
        let mut kept = Vec::new();
        let string = |m: &mut Malloc, len: Option<u64>| {
            if let Some(n) = len.filter(|&n| n > 0) {
                m.malloc(n.max(8));
            }
        };
        let list = |m: &mut Malloc, k: Option<u64>| {
            if let Some(k) = k.filter(|&k| k > 0) {
                Pushed::grown(m, k, 8);
            }
        };
        match entity {
            Entity::Variable => {
                string(m, self.name);
                list(m, self.subscripts);
                tables[0] = decode_map(m, self.parameters, &mut kept);
                string(m, self.description);
            }
            Entity::Constraint => {
                tables[0] = decode_map(m, self.parameters, &mut kept);
                string(m, self.name);
                string(m, self.description);
                list(m, self.subscripts);
            }
        }
        string(m, self.reason);
        tables[1] = decode_map(m, self.reason_parameters, &mut kept);
        tables
    }

    /// The conversion: each decoded map made an `FnvHashMap` of its size.
    pub(in crate::real_memory) fn convert(&self, m: &mut Malloc, decoded: Tables) {
        let maps = [self.parameters, self.reason_parameters];
        for (p, decoded) in maps.iter().zip(decoded) {
            if let Some(p) = p {
                m.malloc(table(p.entries, ENTRY));
            }
            free_all(m, decoded);
        }
    }

    /// `to_bytes`' clone: exact copies, in the OMMX type's fields' order.
    pub(super) fn clone_into(&self, m: &mut Malloc) -> LabelPtrs {
        let string = |m: &mut Malloc, len: Option<u64>| len.filter(|&n| n > 0).map(|n| m.malloc(n));
        let mut h = LabelPtrs {
            name: string(m, self.name),
            subscripts: string(m, self.subscripts.map(|k| 8 * k)),
            ..LabelPtrs::default()
        };
        h.tables[0] = clone_map(m, self.parameters, &mut h.parameters);
        h.description = string(m, self.description);
        h.reason = string(m, self.reason);
        h.tables[1] = clone_map(m, self.reason_parameters, &mut h.reason_parameters);
        h
    }

    /// The clone consumed into the message: each map a `HashMap` again, the
    /// clone's table freed.
    pub(super) fn consume(&self, m: &mut Malloc, h: &mut LabelPtrs) {
        let maps = [self.parameters, self.reason_parameters];
        for (p, cloned) in maps.iter().zip(&mut h.tables) {
            let message = p.map(|p| m.malloc(table(p.entries, ENTRY)));
            free_all(m, cloned.take());
            *cloned = message;
        }
    }
}

impl LabelPtrs {
    /// The message's drop, in its fields' order; a constraint's function,
    /// which comes first, is the caller's.
    pub(super) fn drop_message(self, m: &mut Malloc, entity: Entity) {
        let [table, reason_table] = self.tables;
        let map = |m: &mut Malloc, entries: Vec<Ptr>, table: Option<Ptr>| {
            free_all(m, entries);
            free_all(m, table);
        };
        match entity {
            Entity::Variable => {
                free_all(m, self.name);
                free_all(m, self.subscripts);
                map(m, self.parameters, table);
                free_all(m, self.description);
            }
            Entity::Constraint => {
                free_all(m, self.subscripts);
                map(m, self.parameters, table);
                free_all(m, self.name);
                free_all(m, self.description);
            }
        }
        free_all(m, self.reason);
        map(m, self.reason_parameters, reason_table);
    }
}

/// A parameter map decoded: each entry's key and value, then the entry
/// inserted, the table made at the first and grown when full.
fn decode_map(m: &mut Malloc, p: Option<Parameters>, entries: &mut Vec<Ptr>) -> Option<Ptr> {
    let p = p?;
    let mut table: Option<Ptr> = None;
    let mut room = 0;
    let mut b = 4;
    for i in 1..=p.entries {
        entries.push(m.malloc(p.key.max(8)));
        entries.push(m.malloc(p.value.max(8)));
        if i > room {
            b = if table.is_none() { 4 } else { 2 * b };
            let larger = m.malloc(table_of(b, ENTRY));
            free_all(m, table.replace(larger));
            room = alloc::room(b);
        }
    }
    debug_assert!(table.is_none() || b >= buckets(p.entries));
    table
}

/// A map cloned: its table, then each key and value.
fn clone_map(m: &mut Malloc, p: Option<Parameters>, entries: &mut Vec<Ptr>) -> Option<Ptr> {
    let p = p?;
    let t = m.malloc(table(p.entries, ENTRY));
    for _ in 0..p.entries {
        entries.extend((p.key > 0).then(|| m.malloc(p.key)));
        entries.extend((p.value > 0).then(|| m.malloc(p.value)));
    }
    Some(t)
}

/// The labels of a group's entities as `to_bytes` holds them, side by side
/// in one vector: every entity of a group carries the same fields, so each
/// one's pointers are a run of the same shape (two pointers for a named
/// variable with a subscript, where a `LabelPtrs` apiece would take 200
/// bytes).
#[derive(Default)]
pub(super) struct LabelRuns {
    ptrs: Vec<Ptr>,
    shape: Option<Shape>,
    count: usize,
}

/// Which of a `LabelPtrs`' fields are there, and its maps' entries.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Shape {
    present: [bool; 6],
    entries: [usize; 2],
}

impl Shape {
    fn of(h: &LabelPtrs) -> Shape {
        let [t0, t1] = h.tables;
        Shape {
            present: [h.name, h.subscripts, h.description, h.reason, t0, t1].map(|p| p.is_some()),
            entries: [h.parameters.len(), h.reason_parameters.len()],
        }
    }

    fn len(&self) -> usize {
        self.present.iter().filter(|&&p| p).count() + self.entries[0] + self.entries[1]
    }
}

impl LabelRuns {
    pub(super) fn with_capacity(entities: u64, labels: &Labels) -> LabelRuns {
        let singles = [
            labels.name,
            labels.subscripts,
            labels.description,
            labels.reason,
        ];
        let each = singles.iter().flatten().count() + 2;
        LabelRuns {
            ptrs: Vec::with_capacity(each * entities as usize),
            shape: None,
            count: 0,
        }
    }

    pub(super) fn push(&mut self, h: LabelPtrs) {
        let shape = Shape::of(&h);
        assert!(
            *self.shape.get_or_insert(shape) == shape,
            "every entity of a group has the same labels"
        );
        let [t0, t1] = h.tables;
        let singles = [h.name, h.subscripts, h.description, h.reason, t0, t1];
        self.ptrs.extend(singles.into_iter().flatten());
        self.ptrs.extend(h.parameters);
        self.ptrs.extend(h.reason_parameters);
        self.count += 1;
    }

    fn len_each(&self) -> usize {
        self.shape.map_or(0, |s| s.len())
    }

    /// Entity `i`'s labels.
    fn get(&self, i: usize) -> LabelPtrs {
        let Some(shape) = self.shape else {
            return LabelPtrs::default();
        };
        let run = &self.ptrs[i * shape.len()..(i + 1) * shape.len()];
        let mut next = run.iter().copied();
        let mut single = shape
            .present
            .map(|p| if p { next.next() } else { None })
            .into_iter();
        let mut one = || single.next().flatten();
        let (name, subscripts, description, reason) = (one(), one(), one(), one());
        let tables = [one(), one()];
        let parameters = next.by_ref().take(shape.entries[0]).collect();
        let reason_parameters = next.collect();
        LabelPtrs {
            name,
            subscripts,
            parameters,
            description,
            reason,
            reason_parameters,
            tables,
        }
    }

    /// `labels.clone_into(m)`, pushed. Labels without a map are cloned
    /// straight into the run (they are made in the run's order).
    pub(super) fn push_clone(&mut self, m: &mut Malloc, labels: &Labels) {
        if labels.has_maps() {
            return self.push(labels.clone_into(m));
        }
        let lengths = [
            labels.name,
            labels.subscripts.map(|k| 8 * k),
            labels.description,
            labels.reason,
        ];
        let lengths = lengths.map(|n| n.filter(|&n| n > 0));
        let [name, subscripts, description, reason] = lengths.map(|n| n.is_some());
        let shape = Shape {
            present: [name, subscripts, description, reason, false, false],
            entries: [0, 0],
        };
        assert!(
            *self.shape.get_or_insert(shape) == shape,
            "every entity of a group has the same labels"
        );
        self.ptrs
            .extend(lengths.into_iter().flatten().map(|n| m.malloc(n)));
        self.count += 1;
    }

    /// Entity `i`'s labels consumed into the message
    /// (`Labels::consume`: nothing to do without a map).
    pub(super) fn consume(&mut self, i: usize, m: &mut Malloc, labels: &Labels) {
        if labels.has_maps() {
            self.update(i, |held| labels.consume(m, held));
        }
    }

    /// Entity `i`'s part of the message dropped
    /// (`LabelPtrs::drop_message`). Without a map, a run holds the name,
    /// the subscripts, the description and the reason, in that order, each
    /// if present: a variable's drop frees them in that order, a
    /// constraint's the subscripts first.
    pub(super) fn drop_message(&self, i: usize, m: &mut Malloc, entity: Entity) {
        let Some(shape) = self.shape else {
            return;
        };
        if shape.entries != [0, 0] || shape.present[4] || shape.present[5] {
            return self.get(i).drop_message(m, entity);
        }
        let each = shape.len();
        let run = &self.ptrs[i * each..(i + 1) * each];
        let [name, subscripts, ..] = shape.present;
        if entity == Entity::Constraint && subscripts {
            let at = usize::from(name);
            m.free(run[at]);
            let others = run[..at].iter().chain(&run[at + 1..]);
            others.for_each(|&p| m.free(p));
        } else {
            run.iter().for_each(|&p| m.free(p));
        }
    }

    /// How many entities' labels it holds.
    pub(super) fn len(&self) -> usize {
        self.count
    }

    /// Entity `i`'s labels changed by `f` (which keeps their shape).
    pub(super) fn update(&mut self, i: usize, f: impl FnOnce(&mut LabelPtrs)) {
        let mut h = self.get(i);
        f(&mut h);
        debug_assert!(self.shape == Some(Shape::of(&h)));
        let [t0, t1] = h.tables;
        let singles = [h.name, h.subscripts, h.description, h.reason, t0, t1];
        let new = singles
            .into_iter()
            .flatten()
            .chain(h.parameters)
            .chain(h.reason_parameters);
        let each = self.len_each();
        for (slot, p) in self.ptrs[i * each..(i + 1) * each].iter_mut().zip(new) {
            *slot = p;
        }
    }
}
