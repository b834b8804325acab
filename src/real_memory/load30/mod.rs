//! OMMX 3.0.0b7's load of a v1 instance (`ommx.Instance.from_v1_bytes`),
//! allocation by allocation, made from the instance's facts and run through
//! the same model of glibc malloc as 2.9.3's (`load29`), with the same
//! pieces: the engine is one, the recipe is 3.0's.
//!
//! What the traces of its loads show (`bench/alloc_trace.py FILE --runtime
//! 3.0 --steps N`, on sparse_qubo-20k, quadratic_constraints-20k and
//! tiny_constraints-5k of `bench/real_memory.py`):
//! - prost's decode of the v1 message is 2.9.3's, call for call
//!   (`load29::decode`);
//! - the conversion: each variable's parameter map made anew (as 2.9.3
//!   makes it), the variable put in a `BTreeMap` of 24-byte values
//!   (368-byte leaves, 464-byte internal nodes) and its name, subscripts,
//!   parameters and description in the variables' label maps (one
//!   `FnvHashMap` per field for the whole instance, 32-byte entries, 40 for
//!   the parameters', grown insert by insert); the variables' messages
//!   freed; the objective's table made as 2.9.3 makes it; each
//!   constraint's parameter map and table the same, the constraint in a
//!   `BTreeMap` of 48-byte values (632 and 728 bytes), its labels in the
//!   constraints' label maps; the constraints' messages freed (traced on
//!   metadata-500 too);
//! - OMMX's checks of the ids, as 2.9.3 makes them but with no small value
//!   made per entry: the variables' id set, the objective's ids (pushed,
//!   sorted, a set, all freed), each constraint's; then 3.0's checks of
//!   the instance again: the objective's (its set kept), each
//!   constraint's, and three more id sets (the variables', one collected
//!   from twice as many ids, the constraints'), all freed at the end;
//! - the Python object (1,744 bytes), the last call.
//!
//! Removed constraints (traced on removed-20k: `bench/real_memory.py`'s
//! removed shape, each with a reason and one parameter) are converted
//! after the constraints' first checks and not checked: each one's
//! function's table, its reason's parameter map made anew (`RemovedReason`
//! collects it into an `FnvHashMap`), it in a `BTreeMap` of 232-byte values
//! (its constraint, its labels, its reason); their messages freed; then
//! that map consumed into the instance's, of 104-byte values (the
//! constraint and its reason), its labels moved to the constraints' label
//! maps; the constraints' id set at the end spans them too.
//!
//! There is no `to_bytes` round trip and no arena: the load's peak is the
//! conversion's or the checks', which this samples where they are largest
//! (the largest table's last growth, an id list beside its sort's scratch,
//! the removed constraints' conversion with their messages still there).
//! Shapes it does not make yet (removed constraints' own labels, an
//! instance-wide list or map) say `None` and get the closed form
//! (`ommx30.rs`).
//!
//! v2 input (`ommx.Instance.from_v2_bytes`) is its own recipe on the same
//! parts (`v2.rs`): prost decodes 3.0's message into `BTreeMap`s, which the
//! conversion consumes, and the checks come in another order. Its facts
//! are the v1 ones (the pass reads the same profile off either schema and
//! counts a quadratic objective's linear terms in both), and what only v2
//! carries, which no recipe makes (`Facts::unmade`).
//! Against `bench/real_memory.py measure X.v2.pb --runtime 3.0-v2`: lp-10k
//! resident +0.1 %, load peak -3 %; metadata-20k +0.6 % and +0.2 %;
//! sparse_qubo-20k +6 % and +8 % (before, the closed form: -2 % and -17 %,
//! -26 % and -25 %, -12 % and -17 %).

mod calls;
mod v2;

use super::facts::{Facts, Field, Owner};
use super::load29::function::{Function, Kind, Vectors};
use super::load29::{self, Blueprint, Decoded, Message};
use super::ommx29::size;
use crate::model::alloc::{btree_internal, btree_leaf, buckets, table, table_of};
use crate::profiled::Schema;
use glibc_model::{Malloc, Ptr};
use load29::parts::{consume_tree, free_all, id_set, Pushed, Tree};

/// A variable's value in 3.0's `BTreeMap` (its kind and bound), and a
/// constraint's.
const VARIABLE: u64 = 24;
const CONSTRAINT: u64 = 48;
/// A removed constraint as its parse makes it (the constraint, 48 bytes,
/// its labels, 128, and its removed reason, a `String` and an
/// `FnvHashMap`: 2,656-byte leaves, 2,752-byte internal nodes, traced), and
/// as the instance keeps it (the constraint and its reason: 1,248 and
/// 1,344).
const REMOVED_PARSED: u64 = 232;
const REMOVED: u64 = 104;
/// An entry of a label map: an id and a `String` or `Vec`; of the
/// parameters' map, an id and an `FnvHashMap`.
const LABEL_ENTRY: u64 = 32;
const PARAMETERS_ENTRY: u64 = 40;
/// The Python object of an `ommx.Instance` (traced: every load's last call).
const PYTHON_INSTANCE: u64 = 1_744;

/// What the simulated load left and took, relative to where it began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulated {
    /// Calls the load made of malloc.
    pub calls: u64,
    /// Heap pages and mappings held after the load, the input freed.
    pub resident: u64,
    /// The most heap pages and mappings held while loading, the input
    /// included.
    pub load_peak: u64,
}

/// The instance as 3.0's recipe makes it: 2.9.3's blueprint (the message
/// is the same) and the label maps 3.0 fills.
struct Recipe {
    /// Which message the load decodes: `from_v1_bytes`' or `from_v2_bytes`'.
    schema: Schema,
    blueprint: Blueprint,
    /// Each owner's label maps: for each, its entries and an entry's bytes.
    variable_maps: Vec<(u64, u64)>,
    constraint_maps: Vec<(u64, u64)>,
}

impl Recipe {
    fn of(f: &Facts) -> Option<Recipe> {
        let blueprint = Blueprint::of(f)?;
        let maps = |owner: Owner, entities: u64| -> Option<Vec<(u64, u64)>> {
            let sizes: Vec<(u64, u64)> = f
                .label_maps
                .iter()
                .filter(|g| g.owner == owner)
                .map(|g| match g.field {
                    Field::Parameters(_) => (g.size, PARAMETERS_ENTRY),
                    _ => (g.size, LABEL_ENTRY),
                })
                .collect();
            sizes.iter().all(|&(n, _)| n <= entities).then_some(sizes)
        };
        // A removed constraint's own labels (name, subscripts, parameters,
        // description) go to the constraints' label maps as its parse is
        // rebuilt, which no trace has shown yet: only its reason and the
        // reason's parameters are made.
        let makes = match f.schema {
            Schema::V1 => !v2::labelled(&blueprint.removed_labels),
            Schema::V2 => f.unmade == 0 && v2::makes(&blueprint),
        };
        if !makes {
            return None;
        }
        Some(Recipe {
            schema: f.schema,
            variable_maps: maps(Owner::Variables, f.variables)?,
            constraint_maps: maps(Owner::Constraints, f.constraints)?,
            blueprint,
        })
    }
}

/// The malloc calls the load of an instance this recipe makes would take
/// (close, not exact).
pub fn predicted_calls(f: &Facts) -> Option<u64> {
    Recipe::of(f).map(|r| calls::predicted(&r))
}

/// The load, simulated; `None` for an instance this recipe does not make
/// or whose load would take more than `budget` calls.
pub fn simulate(f: &Facts, budget: u64) -> Option<Simulated> {
    let r = Recipe::of(f)?;
    if calls::predicted(&r) > budget {
        return None;
    }
    Some(run_either(&r, f, interpreter_heap()).0)
}

/// The load simulated with every call recorded, in `bench/alloc_trace.c`'s
/// records, to compare with a traced load (`bench/simulate.rs --accounting
/// 3.0 --record`).
pub fn record(f: &Facts) -> Option<(Simulated, Vec<[u64; 4]>)> {
    let r = Recipe::of(f)?;
    let mut m = interpreter_heap();
    m.record();
    let (simulated, m) = run_either(&r, f, m);
    Some((simulated, m.records().to_vec()))
}

/// The load of the recipe's schema, and the heap it leaves.
fn run_either(r: &Recipe, f: &Facts, m: Malloc) -> (Simulated, Malloc) {
    match r.schema {
        Schema::V1 => run(r, f, m),
        Schema::V2 => v2::run(r, f, m),
    }
}

/// The heap of the measuring interpreter as a 3.0 load begins
/// (`bench/heap_snapshot.py --runtime 3.0`, on sparse_qubo-20k): 3.0's
/// imports and its warm-up load, not 2.9.3's.
fn interpreter_heap() -> Malloc {
    static HEAP: std::sync::OnceLock<Malloc> = std::sync::OnceLock::new();
    HEAP.get_or_init(|| {
        Malloc::from_snapshot(include_str!("interpreter.heap"))
            .expect("the interpreter's heap, as committed")
    })
    .clone()
}

/// Heap pages and mappings held now.
fn held(m: &Malloc) -> u64 {
    m.resident_heap() + m.mapped_bytes()
}

/// The load's largest moment so far: what is held now and `more` about to
/// be (a chunk a step makes before it frees another), less the pages of
/// the live vectors' mapped capacity that nothing has written yet
/// (`Peak::unwritten`): the kernel counts a page when it is first written,
/// and a vector grown to twice its length writes only its length.
struct Peak(u64);

impl Peak {
    fn at(&mut self, m: &Malloc, more: u64, unwritten: u64) {
        self.0 = self.0.max((held(m) + more).saturating_sub(unwritten));
    }

    /// The unwritten pages of a mapped vector pushed to `len` elements of
    /// `elem` bytes (none while its capacity is under glibc's mmap
    /// threshold: the heap's pages were written before).
    fn unwritten(m: &Malloc, len: u64, elem: u64) -> u64 {
        let cap = if len == 0 {
            0
        } else {
            len.next_power_of_two().max(4)
        };
        if cap * elem < m.mmap_threshold() {
            return 0;
        }
        ((cap - len) * elem) & !(PAGE - 1)
    }
}

/// The kernel's page.
const PAGE: u64 = 4096;

fn run(r: &Recipe, f: &Facts, mut m: Malloc) -> (Simulated, Malloc) {
    let s = &r.blueprint;
    let before = held(&m);
    let input = m.malloc(f.payload + 33);
    // The phases `bench/alloc_trace.py --runtime 3.0` marks.
    m.mark(0);
    let mut peak = Peak(held(&m));
    let Message {
        variables,
        variable_tables,
        objective,
        constraints,
        removed,
    } = load29::decode(s, &mut m);
    // What the decoded message's vectors leave unwritten: the variables',
    // the objective's, the constraints', the removed ones'.
    let unwritten = [
        Peak::unwritten(&m, s.variables, size::VARIABLE_MESSAGE),
        decoded_unwritten(&m, &s.objective),
        Peak::unwritten(&m, s.constraints, size::CONSTRAINT_MESSAGE),
        Peak::unwritten(&m, s.removed, size::REMOVED_MESSAGE),
    ];
    peak.at(&m, 0, unwritten.iter().sum());
    // The variables: each one's parameter map made anew, it in the map,
    // its labels in the label maps.
    let mut variable_map = tree(VARIABLE);
    let mut variable_labels = LabelMaps::new(&r.variable_maps, s.variables);
    let mut tables = variable_tables.into_iter();
    for i in 0..s.variables {
        s.variable_labels
            .convert(&mut m, tables.next().unwrap_or_default());
        variable_map.insert(&mut m);
        variable_labels.insert(&mut m, i);
    }
    peak.at(&m, variable_labels.growing(), unwritten.iter().sum());
    variables.free(&mut m);
    let after = unwritten[2] + unwritten[3];
    let objective_unwritten = (unwritten[1] + after, after);
    convert_objective(
        &mut m,
        &s.objective,
        objective,
        (&mut peak, objective_unwritten),
    );
    let defined = variable_set(&mut m, s.variables, 1, &mut peak);
    let objective_ids = s.objective.ids(0);
    let set = check(&mut m, objective_ids, s.variables, true, &mut peak);
    free_all(&mut m, set);
    let constraint_map = convert_constraints(
        &mut m,
        r,
        constraints,
        (&mut peak, unwritten[2] + unwritten[3]),
    );
    check_constraints(&mut m, s, &mut peak);
    let removed_map = convert_removed(&mut m, s, removed, (&mut peak, unwritten[3]));
    // 3.0's checks of the instance: the objective's set kept while each
    // constraint is checked again.
    let kept = check(&mut m, objective_ids, s.variables, true, &mut peak);
    check_constraints(&mut m, s, &mut peak);
    free_all(&mut m, kept);
    free_all(&mut m, defined);
    let mut sets = variable_set(&mut m, s.variables, 1, &mut peak);
    sets.extend(variable_set(&mut m, s.variables, 2, &mut peak));
    // The constraints' ids, the removed ones' with them.
    sets.extend(variable_set(
        &mut m,
        s.constraints + s.removed,
        1,
        &mut peak,
    ));
    free_all(&mut m, sets);
    // Kept by the instance: the maps, the tables, the labels.
    drop((variable_map, constraint_map, removed_map, variable_labels));
    end(m, input, peak, before)
}

/// A load's last calls, once the instance holds what it keeps: its Python
/// object made (the peak sampled there), then the input freed; what the
/// load left and took, relative to `before`.
fn end(mut m: Malloc, input: Ptr, mut peak: Peak, before: u64) -> (Simulated, Malloc) {
    m.malloc(PYTHON_INSTANCE);
    m.mark(1);
    peak.at(&m, 0, 0);
    m.free(input);
    m.mark(2);
    let simulated = Simulated {
        calls: m.calls(),
        resident: held(&m).saturating_sub(before),
        load_peak: peak.0.saturating_sub(before),
    };
    (simulated, m)
}

/// The objective's table: its last growth holds both tables beside the
/// decoded vectors, over the heap its smaller tables grew (seen once the
/// conversion is done: the larger table and the heap's pages are held
/// then, the smaller table and the vectors, where mapped, given back).
/// `unwritten`: what the decoded vectors still held leave unwritten, before
/// the conversion (the objective's included) and after.
fn convert_objective(
    m: &mut Malloc,
    g: &Function,
    decoded: Vectors,
    (peak, (before, after)): (&mut Peak, (u64, u64)),
) {
    let (terms, entry) = (g.terms, g.entry());
    peak.at(m, grown(terms, entry), before);
    let threshold = m.mmap_threshold();
    let written = decoded_written(m, g);
    g.convert(m, decoded);
    let smaller = match buckets(terms) {
        0..=4 => 0,
        b => table_of(b / 2, entry),
    };
    let given_back = written + if smaller >= threshold { smaller } else { 0 };
    peak.at(m, given_back, after);
}

/// The bytes a function's decoded vectors wrote where they are mapped
/// (their elements; those on the heap stay held once freed).
fn decoded_written(m: &Malloc, g: &Function) -> u64 {
    let written = |len: u64, elem: u64| {
        let cap = if len == 0 {
            0
        } else {
            len.next_power_of_two().max(4)
        };
        if cap * elem < m.mmap_threshold() {
            0
        } else {
            len * elem
        }
    };
    match g.kind {
        Kind::Linear => written(g.linear_terms, size::TERM),
        Kind::Quadratic => 3 * written(g.pairs, 8) + written(g.linear_terms, size::TERM),
        Kind::Polynomial => written(g.terms, size::MONOMIAL),
    }
}

/// What a function's decoded vectors leave unwritten (a quadratic one's
/// three of its pairs and its linear terms; a linear one's terms; a
/// polynomial's monomials).
fn decoded_unwritten(m: &Malloc, g: &Function) -> u64 {
    match g.kind {
        Kind::Linear => Peak::unwritten(m, g.linear_terms, size::TERM),
        Kind::Quadratic => {
            3 * Peak::unwritten(m, g.pairs, 8) + Peak::unwritten(m, g.linear_terms, size::TERM)
        }
        Kind::Polynomial => Peak::unwritten(m, g.terms, size::MONOMIAL),
    }
}

/// The constraints converted: each one's parameter map made anew, its
/// table, then it in the map, then its labels in the label maps; the
/// messages freed.
fn convert_constraints(
    m: &mut Malloc,
    r: &Recipe,
    decoded: Decoded,
    (peak, unwritten): (&mut Peak, u64),
) -> Tree {
    let s = &r.blueprint;
    let mut map = tree(CONSTRAINT);
    let mut labels = LabelMaps::new(&r.constraint_maps, s.constraints);
    let Decoded { entities, messages } = decoded;
    for (i, (terms, tables)) in entities.into_iter().enumerate() {
        s.constraint_labels.convert(m, tables);
        s.constraint.convert(m, terms);
        map.insert(m);
        labels.insert(m, i as u64);
    }
    peak.at(m, labels.growing(), unwritten);
    messages.free(m);
    map
}

/// The removed constraints converted (not checked): each one's function's
/// table, then its reason's parameter map made anew, then it in a map of
/// its parse (its constraint, labels and reason); the messages freed; then
/// that map consumed into the one the instance keeps (the constraint and
/// its reason), each node of the first freed once its entries are moved.
/// The load's peak may be at the conversion's end, the messages still
/// there.
fn convert_removed(
    m: &mut Malloc,
    s: &Blueprint,
    decoded: Decoded,
    (peak, unwritten): (&mut Peak, u64),
) -> Tree {
    let mut parsed = tree(REMOVED_PARSED);
    let Decoded { entities, messages } = decoded;
    for (terms, tables) in entities {
        s.removed_function.convert(m, terms);
        s.removed_labels.convert(m, tables);
        parsed.insert(m);
    }
    peak.at(m, 0, unwritten);
    messages.free(m);
    let mut kept = tree(REMOVED);
    if let Some(root) = parsed.root() {
        consume_tree(m, root, &mut |m| kept.insert(m));
    }
    kept
}

/// A `BTreeMap` of values of `size` bytes, filled in key order.
fn tree(size: u64) -> Tree {
    Tree::new(btree_leaf(size), btree_internal(size))
}

/// Bytes a table of `items` entries and the one it grew from take at its
/// last growth.
fn grown(items: u64, entry: u64) -> u64 {
    let b = buckets(items);
    if b <= 4 {
        return table(items, entry);
    }
    table_of(b, entry) + table_of(b / 2, entry)
}

/// An id set of `n` distinct ids built from `times` as many collected and
/// sorted (the list and the sort's scratch freed, the set returned).
fn variable_set(m: &mut Malloc, n: u64, times: u64, peak: &mut Peak) -> Vec<Ptr> {
    set_of(m, times * n, n, peak)
}

/// An id set of at most `distinct` ids built from `collected` ones,
/// collected into a list and sorted.
fn set_of(m: &mut Malloc, collected: u64, distinct: u64, peak: &mut Peak) -> Vec<Ptr> {
    if collected == 0 || distinct == 0 {
        return Vec::new();
    }
    let list = m.malloc(8 * collected);
    peak.at(m, 8 * collected, 0);
    load29::sort(m, collected);
    let set = id_set(m, collected.min(distinct));
    m.free(list);
    set
}

/// Each constraint's check, alike and freeing what it makes: once the heap
/// comes back to where it was, the model counts the rest (`Malloc::repeat`).
fn check_constraints(m: &mut Malloc, s: &Blueprint, peak: &mut Peak) {
    let each = s.constraint.ids(1);
    m.repeat(s.constraints, |m| {
        let set = check(m, each, s.variables, false, peak);
        free_all(m, set);
    });
}

/// OMMX's check of a function's `n` ids: pushed into a list, sorted (the
/// objective's), a set of at most `distinct` made of them, the list freed;
/// the set returned.
fn check(m: &mut Malloc, n: u64, distinct: u64, sorted: bool, peak: &mut Peak) -> Vec<Ptr> {
    let ids = Pushed::grown(m, n, 8);
    if sorted {
        peak.at(m, 8 * n, Peak::unwritten(m, n, 8));
        load29::sort(m, n);
    }
    let set = id_set(m, n.min(distinct));
    ids.free(m);
    set
}

/// The label maps of one owner's entities, each grown insert by insert as
/// the entities that carry its field are converted (spread evenly when not
/// every one does).
struct LabelMaps {
    maps: Vec<LabelMap>,
    entities: u64,
}

/// One label map: its entries at the end and an entry's bytes, its table
/// and its entries so far.
struct LabelMap {
    size: u64,
    entry: u64,
    table: Option<Ptr>,
    len: u64,
}

impl LabelMaps {
    fn new(sizes: &[(u64, u64)], entities: u64) -> LabelMaps {
        LabelMaps {
            maps: sizes
                .iter()
                .map(|&(size, entry)| LabelMap {
                    size,
                    entry,
                    table: None,
                    len: 0,
                })
                .collect(),
            entities,
        }
    }

    /// The `i`-th entity's labels inserted.
    fn insert(&mut self, m: &mut Malloc, i: u64) {
        let entities = self.entities.max(1);
        for map in &mut self.maps {
            if (i + 1) * map.size / entities == i * map.size / entities {
                continue;
            }
            map.len += 1;
            let b = buckets(map.len);
            if map.len == 1 || b > buckets(map.len - 1) {
                let larger = m.malloc(table_of(b, map.entry));
                if let Some(smaller) = map.table.replace(larger) {
                    m.free(smaller);
                }
            }
        }
    }

    /// The bytes the maps' last growths held beside them (each map's last
    /// growth comes with the last entities).
    fn growing(&self) -> u64 {
        let before = |map: &LabelMap| match buckets(map.size) {
            0..=4 => 0,
            b => table_of(b / 2, map.entry),
        };
        self.maps.iter().map(before).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;
