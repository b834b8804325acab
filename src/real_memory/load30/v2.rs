//! OMMX 3.0.0b7's load of a v2 instance (`ommx.Instance.from_v2_bytes`):
//! the same engine and parts as its v1 load, another message and order.
//!
//! What the traces of its loads show (`bench/alloc_trace.py FILE.v2.pb
//! --runtime 3.0-v2 --steps N`, on lp-10k, sparse_qubo-20k and
//! metadata-20k of `bench/real_memory.py`, written by 3.0's
//! `to_v2_bytes`):
//! - prost decodes the message's maps into `BTreeMap`s, filled in key
//!   order: the variables (32-byte values), their labels (`ModelingLabel`,
//!   96 bytes: a name, a subscript list, a parameter map, itself a
//!   `BTreeMap` of strings, and a description, decoded in that order), the
//!   objective (as v1's function), the constraints (112 bytes, each one's
//!   function decoded before it is inserted) and their labels (120 bytes);
//! - the conversion consumes each decoded map in turn: the variables into
//!   3.0's map (as from v1), their labels into the label maps (a parameter
//!   map made an `FnvHashMap`, its decoded leaf freed); two id sets of the
//!   variables (their ids, their label maps' ids) made and freed, then the
//!   one of the defined variables, kept; the objective's table and its
//!   check (as from v1); each constraint's table, the constraint pushed
//!   onto a list of (id, constraint) pairs, which is sorted and bulk-built
//!   into 3.0's map (`BTreeMap::from_iter`), then freed; the constraints'
//!   labels into their label maps;
//! - 3.0's checks: twice, the constraints' ids and their label maps' ids
//!   made sets; each constraint's ids checked, the objective's (its set
//!   kept), each constraint's again, their ids gathered into one list this
//!   time, made a set; every set freed;
//! - the Python object (1,744 bytes), then the input freed.
//!
//! Shapes no trace has shown (removed constraints, a polynomial or a
//! quadratic constraint, a parameter map of more than one leaf's entries,
//! and the parts only v2 carries: `Facts::unmade`) say `None` and get the
//! closed form (`ommx30.rs`).

use super::{
    check, check_constraints, convert_objective, decoded_unwritten, end, held, set_of, tree,
    variable_set, LabelMaps, Peak, Recipe, Simulated, CONSTRAINT, PAGE, VARIABLE,
};
use crate::model::alloc::{btree_internal, btree_leaf};
use crate::real_memory::facts::Facts;
use crate::real_memory::load29::function::{Kind, Vectors};
use crate::real_memory::load29::labels::Labels;
use crate::real_memory::load29::parts::{bulk_tree, consume_tree, free_all, id_set, Pushed, Tree};
use crate::real_memory::load29::{self, Blueprint};
use glibc_model::{Malloc, Ptr};

/// A decoded variable's value in prost's `BTreeMap` (traced: 456-byte
/// leaves), a decoded `ModelingLabel`'s, a decoded constraint's and a
/// decoded constraint label's (`ConstraintContext`).
const DECODED_VARIABLE: u64 = 32;
const DECODED_LABEL: u64 = 96;
const DECODED_CONSTRAINT: u64 = 112;
const DECODED_CONTEXT: u64 = 120;
/// The leaf of a decoded parameter map, a `BTreeMap<String, String>`
/// (traced: 544 bytes, made at its first entry).
const PARAMETER_LEAF: u64 = 544;
/// Entries a leaf holds.
const LEAF_ENTRIES: u64 = 11;
/// An (id, constraint) pair of the list 3.0's constraint map is built from.
const CONSTRAINT_PAIR: u64 = 56;

/// Whether an entity's labels carry any field.
pub(super) fn labelled(l: &Labels) -> bool {
    l.name.is_some() || l.subscripts.is_some() || l.parameters.is_some() || l.description.is_some()
}

/// Whether this recipe makes the shape: what the traces showed.
pub(super) fn makes(s: &Blueprint) -> bool {
    let one_leaf = |l: &Labels| l.parameters.is_none_or(|p| p.entries <= LEAF_ENTRIES);
    s.removed == 0
        && s.objective.kind != Kind::Polynomial
        && (s.constraints == 0 || s.constraint.kind == Kind::Linear)
        && one_leaf(&s.variable_labels)
        && one_leaf(&s.constraint_labels)
}

/// The message as prost decoded it: each map, with what its conversion
/// reads (a label's parameter leaf, a constraint's function).
struct Message {
    variables: Tree,
    variable_labels: DecodedLabels,
    objective: Vectors,
    constraints: Tree,
    functions: Vec<Vectors>,
    constraint_labels: DecodedLabels,
}

/// A map of decoded labels and each one's parameter leaf.
struct DecodedLabels {
    map: Tree,
    leaves: Vec<Option<Ptr>>,
}

/// The load, in the traces' order: the decode, each decoded map consumed,
/// the checks, the Python object, the input freed; the peak sampled where
/// the decoded maps, a table's last growth, an id list and its sort's
/// scratch, or the constraints' list of pairs hold the most.
pub(super) fn run(r: &Recipe, f: &Facts, mut m: Malloc) -> (Simulated, Malloc) {
    let s = &r.blueprint;
    let before = held(&m);
    let input = m.malloc(f.payload + 33);
    // The phases `bench/alloc_trace.py --runtime 3.0-v2` marks.
    m.mark(0);
    let mut peak = Peak(held(&m));
    let d = decode(s, &mut m);
    let unwritten = decoded_unwritten(&m, &s.objective);
    peak.at(&m, 0, unwritten);
    let mut variable_map = tree(VARIABLE);
    if let Some(root) = d.variables.root() {
        consume_tree(&mut m, root, &mut |m| variable_map.insert(m));
    }
    let variable_labels = convert_labels(
        &mut m,
        &s.variable_labels,
        d.variable_labels,
        (&r.variable_maps, s.variables),
    );
    peak.at(&m, variable_labels.growing(), unwritten);
    // The variables' ids, their label maps' ids: sets made and freed; the
    // defined variables' set, kept until the end.
    let ids = variable_set(&mut m, s.variables, 1, &mut peak);
    let labels = set_of(&mut m, entries(&r.variable_maps), s.variables, &mut peak);
    free_all(&mut m, ids.into_iter().chain(labels));
    let defined = variable_set(&mut m, s.variables, 1, &mut peak);
    convert_objective(
        &mut m,
        &s.objective,
        d.objective,
        (&mut peak, (unwritten, 0)),
    );
    let objective_ids = s.objective.ids(0);
    let set = check(&mut m, objective_ids, s.variables, true, &mut peak);
    free_all(&mut m, set);
    let constraint_map = convert_constraints(&mut m, s, (d.constraints, d.functions), &mut peak);
    let constraint_labels = convert_labels(
        &mut m,
        &s.constraint_labels,
        d.constraint_labels,
        (&r.constraint_maps, s.constraints),
    );
    peak.at(&m, constraint_labels.growing(), 0);
    check_constraint_ids(
        &mut m,
        s.constraints,
        entries(&r.constraint_maps),
        &mut peak,
    );
    check_constraints(&mut m, s, &mut peak);
    let kept = check(&mut m, objective_ids, s.variables, true, &mut peak);
    let used = gather_constraint_ids(&mut m, s, &mut peak);
    free_all(&mut m, used.into_iter().chain(kept).chain(defined));
    // Kept by the instance: the maps, the tables, the labels.
    drop((
        variable_map,
        constraint_map,
        variable_labels,
        constraint_labels,
    ));
    end(m, input, peak, before)
}

/// The entries of an owner's label maps, all together.
fn entries(maps: &[(u64, u64)]) -> u64 {
    maps.iter().map(|&(n, _)| n).sum()
}

/// prost's decode of the message, field by field: each map's entry decoded,
/// then inserted.
fn decode(s: &Blueprint, m: &mut Malloc) -> Message {
    load29::decode_description(s, m);
    let mut variables = tree(DECODED_VARIABLE);
    (0..s.variables).for_each(|_| variables.insert(m));
    let variable_labels = decode_labels(m, &s.variable_labels, s.variables, DECODED_LABEL);
    let objective = s.objective.decode(m);
    let mut constraints = tree(DECODED_CONSTRAINT);
    let functions = (0..s.constraints)
        .map(|_| {
            let function = s.constraint.decode(m);
            constraints.insert(m);
            function
        })
        .collect();
    let constraint_labels = decode_labels(m, &s.constraint_labels, s.constraints, DECODED_CONTEXT);
    Message {
        variables,
        variable_labels,
        objective,
        constraints,
        functions,
        constraint_labels,
    }
}

/// The labels of `entities` (none where they carry no field), each decoded
/// then inserted into a map of `size`-byte values.
fn decode_labels(m: &mut Malloc, l: &Labels, entities: u64, size: u64) -> DecodedLabels {
    let mut map = tree(size);
    let count = if labelled(l) { entities } else { 0 };
    let leaves = (0..count)
        .map(|_| {
            let leaf = decode_label(m, l);
            map.insert(m);
            leaf
        })
        .collect();
    DecodedLabels { map, leaves }
}

/// A `ModelingLabel` decoded in its fields' order: its name, subscripts and
/// description, kept by the instance, and its parameter map's leaf (made
/// at its first entry, after that entry's key and value), which the
/// conversion frees.
fn decode_label(m: &mut Malloc, l: &Labels) -> Option<Ptr> {
    let string = |m: &mut Malloc, len: Option<u64>| {
        if let Some(n) = len.filter(|&n| n > 0) {
            m.malloc(n.max(8));
        }
    };
    string(m, l.name);
    if let Some(k) = l.subscripts.filter(|&k| k > 0) {
        Pushed::grown(m, k, 8);
    }
    let mut leaf = None;
    if let Some(p) = l.parameters {
        for _ in 0..p.entries {
            m.malloc(p.key.max(8));
            m.malloc(p.value.max(8));
            leaf = leaf.or_else(|| Some(m.malloc(PARAMETER_LEAF)));
        }
    }
    string(m, l.description);
    leaf
}

/// The decoded labels consumed into the owner's label maps (`maps`: each
/// one's entries and an entry's bytes, over `entities`): each one's
/// parameter map made anew, its decoded leaf freed.
fn convert_labels(
    m: &mut Malloc,
    l: &Labels,
    decoded: DecodedLabels,
    (maps, entities): (&[(u64, u64)], u64),
) -> LabelMaps {
    let mut label_maps = LabelMaps::new(maps, entities);
    let DecodedLabels { map, leaves } = decoded;
    let mut leaves = leaves.into_iter();
    let mut i = 0;
    if let Some(root) = map.root() {
        consume_tree(m, root, &mut |m| {
            l.convert(m, [leaves.next().flatten(), None]);
            label_maps.insert(m, i);
            i += 1;
        });
    }
    label_maps
}

/// The decoded constraints consumed: each one's table made, it pushed onto
/// a list of (id, constraint) pairs; the list sorted (a stable sort: its
/// scratch made and freed), 3.0's map bulk-built from it, the list freed.
/// The map's nodes are returned (kept by the instance).
fn convert_constraints(
    m: &mut Malloc,
    s: &Blueprint,
    (decoded, functions): (Tree, Vec<Vectors>),
    peak: &mut Peak,
) -> Vec<Ptr> {
    let n = s.constraints;
    let mut pairs = Pushed::new(CONSTRAINT_PAIR);
    let mut functions = functions.into_iter();
    let mut i = 0;
    if let Some(root) = decoded.root() {
        consume_tree(m, root, &mut |m| {
            let function = functions.next().expect("a function per constraint");
            s.constraint.convert(m, function);
            i += 1;
            pairs.push(m, i);
        });
    }
    // The pairs come in key order: the sort finds them one run and merges
    // nothing, so its scratch is made but never written (the peak is the
    // list's, beside what the decode still holds).
    peak.at(m, 0, Peak::unwritten(m, n, CONSTRAINT_PAIR));
    load29::sort_of(m, n, CONSTRAINT_PAIR);
    let sizes = (btree_leaf(CONSTRAINT), btree_internal(CONSTRAINT));
    let map = bulk_tree(m, n, sizes);
    pairs.free(m);
    map
}

/// 3.0's check of the constraints' ids: the constraints' ids a set, their
/// label maps' ids (`labelled` of them) another, the ids collected again
/// and made a set, each set freed (the first before the last is sorted).
/// Made twice where the constraints have labels (lp-10k, metadata-20k),
/// once where they have none, its sets then freed together
/// (tiny_constraints-20k).
fn check_constraint_ids(m: &mut Malloc, n: u64, labelled: u64, peak: &mut Peak) {
    if n == 0 {
        return;
    }
    let mut left = Vec::new();
    let rounds = if labelled > 0 { 2 } else { 1 };
    for round in 0..rounds {
        let ids = variable_set(m, n, 1, peak);
        let labels = set_of(m, labelled, n, peak);
        let list = m.malloc(8 * n);
        match labelled {
            0 => left.extend(ids),
            _ => free_all(m, ids),
        }
        load29::sort(m, n);
        left.extend(id_set(m, n));
        m.free(list);
        match round {
            0 => free_all(m, labels),
            _ => left.extend(labels),
        }
    }
    free_all(m, left);
}

/// Each constraint's check again, its ids also gathered into one list
/// (`Vec::extend`: made to the first constraint's, then twice as long each
/// time it is full), which is then sorted and made a set; the list freed,
/// the set returned. The checks between two growths only write into the
/// list's capacity and are alike: the model counts them (`Malloc::repeat`).
fn gather_constraint_ids(m: &mut Malloc, s: &Blueprint, peak: &mut Peak) -> Vec<Ptr> {
    let (n, each) = (s.constraints, s.constraint.ids(1));
    if n == 0 || each == 0 {
        check_constraints(m, s, peak);
        return Vec::new();
    }
    let (mut list, mut cap, mut done) = (None::<Ptr>, 0, 0);
    while done < n {
        let set = check(m, each, s.variables, false, peak);
        cap = (2 * cap).max((done + 1) * each).max(4);
        list = Some(match list {
            None => m.malloc(8 * cap),
            Some(p) => m.realloc(p, 8 * cap),
        });
        free_all(m, set);
        done += 1;
        let between = (cap / each).min(n) - done;
        m.repeat(between, |m| {
            let set = check(m, each, s.variables, false, peak);
            free_all(m, set);
        });
        done += between;
    }
    let total = n * each;
    let unwritten = if 8 * cap < m.mmap_threshold() {
        0
    } else {
        (8 * (cap - total)) & !(PAGE - 1)
    };
    peak.at(m, load29::sort_scratch(total, 8), unwritten);
    load29::sort(m, total);
    let used = id_set(m, total.min(s.variables));
    free_all(m, list);
    used
}
