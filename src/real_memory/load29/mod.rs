//! OMMX 2.9.3's load of an instance (`ommx.v1.Instance.from_bytes`),
//! allocation by allocation, made from the instance's facts and run through
//! the model of glibc malloc: the resident it leaves and the peak it
//! reaches are then where glibc puts every chunk, not a count of live
//! bytes.
//!
//! The calls are the ones the allocation traces show (`bench/alloc_trace.py
//! --steps`), phase by phase: prost's decode, the conversion with OMMX's
//! checks of the ids, `to_bytes` (the clone, the message, the encoding, the
//! Python `bytes`) and protobuf's arena for the annotations (`arena`), on
//! the heap the interpreter had when the load began (a traced one). Each
//! group of entities is made alike, of its mean size ([`simulate`] says
//! `None` where a field only some of a group carry, or an instance-wide
//! list or map). What the 2.9.3 profile does not count, a quadratic
//! function's linear terms (counted with its pairs) and a polynomial's ids,
//! comes from the pass's count of them (`Facts::unprofiled`), and a
//! quadratic objective's table order, which places `to_bytes`' and the
//! check's small chunks, from the pass's reading of it
//! (`Facts::objective_growths`; an even spread where it has none).
//! A load is a million calls or more at 100,000 entities (0.05 to 0.1 µs
//! each), so the estimate simulates only loads of at most a budget of
//! calls, counted beforehand (`calls`); `bench/simulate.rs` prints it
//! beside the closed form and `docs/real-memory.md` has how close it comes.

mod arena;
pub(in crate::real_memory) mod calls;
pub(in crate::real_memory) mod function;
pub(in crate::real_memory) mod labels;
pub(in crate::real_memory) mod parts;

use super::facts::{Facts, Owner};
use super::ommx29::size;
use crate::model::alloc::{btree_internal, btree_leaf};
use crate::model::function::Variant;
use crate::profiled::{Growth, Unprofiled};
use function::{Function, Kind};
use glibc_model::{Malloc, Ptr};
use labels::{Entity, LabelRuns, Labels, Tables};
use parts::{clone_tree, consume_tree, free_all, id_set, Pushed, Tree};

/// The Python object of an `ommx.v1.Instance` (its Rust instance inline).
const PYTHON_INSTANCE: u64 = 656;
/// protobuf's upb allocator calls `malloc_trim(0)` each time this many
/// arena blocks have been freed (read in its disassembly, protobuf 5.29.6).
const UPB_TRIM_EVERY: usize = 10_000;

/// What the simulated load left, relative to where it began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulated {
    /// Calls the load made of malloc.
    pub calls: u64,
    /// Heap pages and mappings held after the load, the input freed.
    pub resident: u64,
    /// The most heap pages and mappings held while loading, the input
    /// included ([`Peak`]).
    pub load_peak: u64,
    /// The heap's break at the end of the parse, of `to_bytes` and of the
    /// annotations.
    pub breaks: [u64; 3],
}

/// The instance as this generator makes it: each group of entities alike,
/// of the group's mean size.
pub(in crate::real_memory) struct Blueprint {
    pub(in crate::real_memory) variables: u64,
    pub(in crate::real_memory) constraints: u64,
    pub(in crate::real_memory) removed: u64,
    pub(in crate::real_memory) objective: Function,
    /// The objective's growths in `to_bytes`, when the pass made them and
    /// they agree with its counts.
    objective_growths: Option<Vec<Growth>>,
    /// Each constraint's and removed constraint's function.
    pub(in crate::real_memory) constraint: Function,
    pub(in crate::real_memory) removed_function: Function,
    pub(in crate::real_memory) variable_labels: Labels,
    pub(in crate::real_memory) constraint_labels: Labels,
    pub(in crate::real_memory) removed_labels: Labels,
    /// The instance's description's strings: how many, and each one's
    /// length.
    instance_strings: (u64, u64),
}

impl Blueprint {
    pub(in crate::real_memory) fn of(f: &Facts) -> Option<Blueprint> {
        let with_terms = |g: &&super::facts::Functions| {
            matches!(
                g.variant,
                Variant::Linear | Variant::Quadratic | Variant::Polynomial
            )
        };
        let group = |owner: Owner| -> Option<Option<&super::facts::Functions>> {
            let mut of_owner = f
                .functions
                .iter()
                .filter(move |g| g.owner == owner)
                .filter(with_terms);
            let first = of_owner.next();
            of_owner.next().is_none().then_some(first)
        };
        // Each function of a group, of its mean size (a constraint's
        // constant stored, the objective's not).
        let function = |owner: Owner, more: &Unprofiled, constant: u64| {
            Some(group(owner)?.map_or(Function::default(), |g| {
                let each = per_function(more, g.count);
                Function::of(g.variant, g.terms_each(), &each, constant)
            }))
        };
        let instance: Vec<_> = f
            .strings
            .iter()
            .filter(|g| g.owner == Owner::Instance)
            .collect();
        let lists_or_maps = f.subscripts.iter().chain(&f.parameters);
        if lists_or_maps.filter(|g| g.owner == Owner::Instance).count() > 0 {
            return None;
        }
        let objective = function(Owner::Objective, &f.unprofiled.objective, 0)?;
        let instance_count = instance.iter().map(|g| g.count).sum::<u64>();
        let instance_size = instance.iter().map(|g| g.size).sum::<u64>();
        Some(Blueprint {
            variables: f.variables,
            constraints: f.constraints,
            removed: f.removed,
            objective_growths: f.objective_growths.clone().filter(|g| objective.agrees(g)),
            objective,
            constraint: function(Owner::Constraints, &f.unprofiled.constraints, 1)?,
            removed_function: function(Owner::Removed, &f.unprofiled.removed, 1)?,
            variable_labels: Labels::of(f, Owner::Variables, f.variables)?,
            constraint_labels: Labels::of(f, Owner::Constraints, f.constraints)?,
            removed_labels: Labels::of(f, Owner::Removed, f.removed)?,
            instance_strings: (
                instance_count,
                instance_size.div_ceil(instance_count.max(1)),
            ),
        })
    }
}

/// What the pass counted of a group's `count` functions, for one (the
/// mean, rounded up).
fn per_function(all: &Unprofiled, count: u64) -> Unprofiled {
    let each = |n: u64| n.div_ceil(count.max(1));
    Unprofiled {
        quadratic_linear: each(all.quadratic_linear),
        monomial_ids: each(all.monomial_ids),
        long_monomials: each(all.long_monomials),
        long_monomial_ids: each(all.long_monomial_ids),
    }
}

/// The malloc calls the load of an instance this generator makes would
/// take (close, not exact: `calls`).
pub fn predicted_calls(f: &Facts) -> Option<u64> {
    Blueprint::of(f).map(|s| calls::predicted(&s))
}

/// The load, simulated; `None` for an instance this generator does not make
/// or whose load would take more than `budget` calls.
pub fn simulate(f: &Facts, budget: u64) -> Option<Simulated> {
    let s = Blueprint::of(f)?;
    if calls::predicted(&s) > budget {
        return None;
    }
    Some(run(&s, f, interpreter_heap()).0)
}

/// The load simulated with every call recorded, in `bench/alloc_trace.c`'s
/// records (phases marked as its harness marks them), to compare with a
/// traced load (`bench/simulate.rs --record`).
pub fn record(f: &Facts) -> Option<(Simulated, Vec<[u64; 4]>)> {
    let s = Blueprint::of(f)?;
    let mut m = interpreter_heap();
    m.record();
    let (simulated, m) = run(&s, f, m);
    Some((simulated, m.records().to_vec()))
}

/// The heap of the interpreter as a load begins: read off a traced process
/// at that moment (`bench/glibc_replay.rs --snapshot`, sparse_qubo-20k's
/// trace, the bytes to load mapped): the imports' and the warm-up load's
/// chunks, the free ones between them, a top of 57 KiB, and glibc's mmap
/// threshold as the interpreter's start raised it. Where the load's first
/// chunks go, and so where its trims stop, depends on them: started on an
/// empty heap instead, the load of a 2,000-variable QUBO leaves 20 % less
/// resident, that of sparse_qubo-20k 28 % less.
fn interpreter_heap() -> Malloc {
    static HEAP: std::sync::OnceLock<Malloc> = std::sync::OnceLock::new();
    HEAP.get_or_init(|| {
        Malloc::from_snapshot(include_str!("interpreter.heap"))
            .expect("the interpreter's heap, as committed")
    })
    .clone()
}

/// Heap pages resident and bytes mapped.
fn held(m: &Malloc) -> u64 {
    m.resident_heap() + m.mapped_bytes()
}

/// The load's largest moment so far: the heap's pages and the mappings
/// held, sampled where a phase holds the most (the decode done, each
/// conversion, the round trip's clone, message and encoding, the arena,
/// the end with the input still there). Every mapped page is counted,
/// written or not (`load30` leaves out what 3.0's vectors have not written
/// yet; on the bench instances 2.9.3's samples come within 5 % of the
/// measured peak without that: `docs/real-memory.md`).
struct Peak(u64);

impl Peak {
    fn at(&mut self, m: &Malloc) {
        self.0 = self.0.max(held(m));
    }
}

fn run(s: &Blueprint, f: &Facts, mut m: Malloc) -> (Simulated, Malloc) {
    let before = held(&m);
    let base = m.brk();
    let input = m.malloc(f.payload + 33);
    m.mark(0);
    let mut peak = Peak(held(&m));
    let instance = parse(s, &mut m, &mut peak);
    // The Python object that wraps the instance, made as the parse returns
    // and kept with it (the last call of every traced parse): the tcache
    // hands it the chunk the warm-up load's object freed (traced: every
    // load's), below the load's heap.
    m.malloc(PYTHON_INSTANCE);
    let after_parse = m.brk() - base;
    m.mark(1);
    let python_bytes = to_bytes(s, f, &mut m, instance, &mut peak);
    let after_to_bytes = m.brk() - base;
    m.mark(2);
    let blocks = arena::annotations(s, &mut m);
    peak.at(&m);
    let after_annotations = m.brk() - base;
    m.mark(3);
    m.free(python_bytes);
    for (i, block) in blocks.into_iter().rev().enumerate() {
        m.free(block);
        // protobuf's allocator trims the heap at every 10,000th block it
        // frees (counted over the process; the load's are nearly all).
        if (i + 1) % UPB_TRIM_EVERY == 0 {
            m.trim(0);
        }
    }
    peak.at(&m);
    m.free(input);
    let simulated = Simulated {
        calls: m.calls(),
        resident: held(&m).saturating_sub(before),
        load_peak: peak.0.saturating_sub(before),
        breaks: [after_parse, after_to_bytes, after_annotations],
    };
    (simulated, m)
}

/// What the parse leaves: the instance's maps (their shapes, for the clone).
struct Parsed {
    variables: Option<parts::Node>,
    constraints: Option<parts::Node>,
    removed: Option<parts::Node>,
}

/// The `ommx.v1.Instance` message as prost decoded it, before OMMX's
/// conversion (2.9.3's and 3.0's alike: both decode the same message).
pub(in crate::real_memory) struct Message {
    /// The variables' messages, and their decoded maps' tables (none
    /// without maps).
    pub(in crate::real_memory) variables: Pushed,
    pub(in crate::real_memory) variable_tables: Vec<Tables>,
    pub(in crate::real_memory) objective: function::Vectors,
    pub(in crate::real_memory) constraints: Decoded,
    pub(in crate::real_memory) removed: Decoded,
}

/// prost's decode of the whole message, field by field.
pub(in crate::real_memory) fn decode(s: &Blueprint, m: &mut Malloc) -> Message {
    decode_description(s, m);
    let mut variables = Pushed::new(size::VARIABLE_MESSAGE);
    let has_maps = s.variable_labels.has_maps();
    let mut variable_tables = Vec::with_capacity(if has_maps { s.variables as usize } else { 0 });
    for i in 1..=s.variables {
        let tables = s.variable_labels.decode(m, Entity::Variable);
        if has_maps {
            variable_tables.push(tables);
        }
        variables.push(m, i);
    }
    let objective = s.objective.decode(m);
    let constraints = Decoded::of(
        m,
        s.constraints,
        (&s.constraint, &s.constraint_labels),
        size::CONSTRAINT_MESSAGE,
    );
    let removed = Decoded::of(
        m,
        s.removed,
        (&s.removed_function, &s.removed_labels),
        size::REMOVED_MESSAGE,
    );
    Message {
        variables,
        variable_tables,
        objective,
        constraints,
        removed,
    }
}

/// The instance's description, which comes first in either schema's
/// message: its strings, kept.
pub(in crate::real_memory) fn decode_description(s: &Blueprint, m: &mut Malloc) {
    let (count, len) = s.instance_strings;
    for _ in (0..count).filter(|_| len > 0) {
        m.malloc(len.max(8));
    }
}

/// Phase 1: prost's decode, then OMMX's conversion and its checks.
fn parse(s: &Blueprint, m: &mut Malloc, peak: &mut Peak) -> Parsed {
    let Message {
        variables,
        variable_tables,
        objective,
        constraints,
        removed,
    } = decode(s, m);
    peak.at(m);
    // The conversion: strings and lists move over, maps are made anew; the
    // variables' map, the objective's table, the ids checked against the
    // variables' set; the constraints, their ids checked; the removed ones
    // (not checked).
    let mut variable_map = tree(size::VARIABLE);
    let mut tables = variable_tables.into_iter();
    for _ in 0..s.variables {
        let decoded = tables.next().unwrap_or_default();
        s.variable_labels.convert(m, decoded);
        variable_map.insert(m);
    }
    peak.at(m);
    variables.free(m);
    s.objective.convert(m, objective);
    peak.at(m);
    let collected = m.malloc(8 * s.variables);
    sort(m, s.variables);
    let defined = id_set(m, s.variables);
    m.free(collected);
    let growths = s.objective_growths.as_deref();
    let transients = s.objective.transients(growths);
    check_ids(m, (s.objective.ids(0), &transients), s.variables, true);
    let constraint_map =
        constraints.convert(m, (&s.constraint, &s.constraint_labels), size::CONSTRAINT);
    peak.at(m);
    let transients = s.constraint.transients(None);
    // Every constraint's check is alike and frees what it makes: once the
    // heap comes back to where it was, the model counts the rest.
    m.repeat(s.constraints, |m| {
        // A constraint's constant is no id.
        check_ids(m, (s.constraint.ids(1), &transients), s.variables, false);
    });
    let removed_map = removed.convert(m, (&s.removed_function, &s.removed_labels), size::REMOVED);
    peak.at(m);
    free_all(m, defined);
    Parsed {
        variables: variable_map.root(),
        constraints: constraint_map.root(),
        removed: removed_map.root(),
    }
}

/// The constraints or the removed ones as prost decoded them: each one's
/// function and labels, and the vector of their messages.
pub(in crate::real_memory) struct Decoded {
    pub(in crate::real_memory) entities: Vec<(function::Vectors, Tables)>,
    pub(in crate::real_memory) messages: Pushed,
}

impl Decoded {
    /// `count` entities decoded, each its function, then its labels, then
    /// pushed as a message of `message` bytes.
    fn of(
        m: &mut Malloc,
        count: u64,
        (function, labels): (&Function, &Labels),
        message: u64,
    ) -> Decoded {
        let mut d = Decoded {
            entities: Vec::with_capacity(count as usize),
            messages: Pushed::new(message),
        };
        for i in 1..=count {
            let terms = function.decode(m);
            d.entities
                .push((terms, labels.decode(m, Entity::Constraint)));
            d.messages.push(m, i);
        }
        d
    }

    /// The conversion: each entity's table and maps made, it inserted into
    /// the map of entities of `size` bytes; the messages' vector freed.
    fn convert(self, m: &mut Malloc, (function, labels): (&Function, &Labels), size: u64) -> Tree {
        let mut map = tree(size);
        for (terms, held) in self.entities {
            function.convert(m, terms);
            labels.convert(m, held);
            map.insert(m);
        }
        self.messages.free(m);
        map
    }
}

/// A `BTreeMap` of entities of `size` bytes.
fn tree(size: u64) -> Tree {
    Tree::new(btree_leaf(size), btree_internal(size))
}

/// OMMX's check of a function's ids: pushed into a list one at a time
/// (beside a small value made and freed each time), a set made of them
/// (at most the `distinct` variables; the objective's list sorted first),
/// all freed.
fn check_ids(
    m: &mut Malloc,
    (n, transients): (u64, &[(u64, u64)]),
    distinct: u64,
    sorted_copy: bool,
) {
    // The check also makes a small value for each entry and frees it before
    // the next (`Function::transients`): made where the first entry of its
    // kind comes, freed at the end.
    let mut pending = transients.iter().peekable();
    let mut made = Vec::new();
    let mut ids = Pushed::new(8);
    let mut i = 0;
    while i < n {
        while let Some((size, _)) = pending.next_if(|&&(_, at)| at <= i) {
            made.push(m.malloc(*size));
        }
        ids.push(m, i + 1);
        // Nothing is made until the next entry's value or the next growth:
        // the pushes between write into the list's capacity.
        let next_value = pending.peek().map_or(n, |&&(_, at)| at);
        i = (i + 1).max(next_value.min(ids.next_growth()));
    }
    free_all(m, made);
    if sorted_copy {
        sort(m, n);
    }
    let set = id_set(m, n.min(distinct));
    ids.free(m);
    free_all(m, set);
}

/// Phase 2: the Python wrapper's `raw.to_bytes()`: the instance cloned,
/// the clone consumed into a message, the message encoded and dropped, the
/// encoding copied into a Python `bytes` (returned) and freed.
fn to_bytes(s: &Blueprint, f: &Facts, m: &mut Malloc, instance: Parsed, peak: &mut Peak) -> Ptr {
    let (count, len) = s.instance_strings;
    let description: Vec<Ptr> = (0..count)
        .filter(|_| len > 0)
        .map(|_| m.malloc(len))
        .collect();
    let mut objective = s.objective.clone_table(m);
    let mut variable_labels = LabelRuns::with_capacity(s.variables, &s.variable_labels);
    let variables = instance.variables.as_ref().map(|root| {
        let sizes = (btree_leaf(size::VARIABLE), btree_internal(size::VARIABLE));
        clone_tree(m, root, sizes, &mut |m: &mut Malloc| {
            variable_labels.push_clone(m, &s.variable_labels)
        })
    });
    let constraints = Group::cloned(
        m,
        (instance.constraints.as_ref(), s.constraints),
        size::CONSTRAINT,
        &s.constraint,
        &s.constraint_labels,
    );
    let removed = Group::cloned(
        m,
        (instance.removed.as_ref(), s.removed),
        size::REMOVED,
        &s.removed_function,
        &s.removed_labels,
    );
    peak.at(m);
    // The message: each function's terms pushed from its table, which is
    // then freed, each map made anew; the maps' nodes freed as they are
    // consumed. An empty vector allocates nothing.
    let variable_message =
        (s.variables > 0).then(|| m.malloc(size::VARIABLE_MESSAGE * s.variables));
    if let Some(root) = variables {
        let mut i = 0;
        consume_tree(m, root, &mut |m: &mut Malloc| {
            variable_labels.consume(i, m, &s.variable_labels);
            i += 1;
        });
    }
    let constraints = constraints.into_message(m, size::CONSTRAINT_MESSAGE, s.constraints);
    let removed = removed.into_message(m, size::REMOVED_MESSAGE, s.removed);
    let growths = s.objective_growths.as_deref();
    let objective_terms = s.objective.encode(m, &mut objective, growths);
    peak.at(m);
    free_all(m, objective.table);
    let encoded = m.malloc(f.payload);
    peak.at(m);
    free_all(m, description);
    for i in 0..variable_labels.len() {
        variable_labels.drop_message(i, m, Entity::Variable);
    }
    free_all(m, variable_message);
    objective_terms.free(m);
    constraints.drop_message(m);
    removed.drop_message(m);
    let python_bytes = m.malloc(f.payload + 33);
    peak.at(m);
    m.free(encoded);
    python_bytes
}

/// The constraints or the removed ones through `to_bytes`: cloned, then
/// consumed into the message, then the message dropped.
struct Group<'a> {
    function: &'a Function,
    labels: &'a Labels,
    root: Option<parts::Node>,
    tables: Vec<function::Cloned>,
    held: LabelRuns,
    terms: Vec<function::Vectors>,
    message: Option<Ptr>,
}

impl<'a> Group<'a> {
    /// The map cloned, each entity's table and labels with it.
    fn cloned(
        m: &mut Malloc,
        (root, count): (Option<&parts::Node>, u64),
        size: u64,
        function: &'a Function,
        labels: &'a Labels,
    ) -> Group<'a> {
        let mut tables = Vec::with_capacity(count as usize);
        let mut held = LabelRuns::with_capacity(count, labels);
        let root = root.map(|root| {
            let sizes = (btree_leaf(size), btree_internal(size));
            clone_tree(m, root, sizes, &mut |m: &mut Malloc| {
                tables.push(function.clone_table(m));
                held.push_clone(m, labels);
            })
        });
        Group {
            function,
            labels,
            root,
            tables,
            held,
            terms: Vec::with_capacity(count as usize),
            message: None,
        }
    }

    /// The clone consumed: the messages' vector, then each entity's terms
    /// encoded, its table freed, its maps made anew.
    fn into_message(mut self, m: &mut Malloc, message: u64, count: u64) -> Group<'a> {
        self.message = (count > 0).then(|| m.malloc(message * count));
        if let Some(root) = self.root.take() {
            let mut tables = std::mem::take(&mut self.tables).into_iter();
            let held = &mut self.held;
            let (function, labels, terms) = (self.function, self.labels, &mut self.terms);
            let mut i = 0;
            consume_tree(m, root, &mut |m: &mut Malloc| {
                let mut cloned = tables.next().expect("a table per entity");
                terms.push(function.encode(m, &mut cloned, None));
                free_all(m, cloned.table);
                held.consume(i, m, labels);
                i += 1;
            });
        }
        self
    }

    /// The message's part dropped: each entity's function, then its labels,
    /// then the vector.
    fn drop_message(self, m: &mut Malloc) {
        for (i, terms) in self.terms.into_iter().enumerate() {
            terms.free(m);
            self.held.drop_message(i, m, Entity::Constraint);
        }
        free_all(m, self.message);
    }
}

/// Rust's sort of `n` ids: its scratch buffer is half of them or as many
/// as fit in 8 MB, whichever is more, on the stack up to 4 KiB (traced:
/// 339,878 ids took 2,719,024 bytes).
pub(in crate::real_memory) fn sort(m: &mut Malloc, n: u64) {
    sort_of(m, n, 8);
}

/// Rust's stable sort of `n` elements of `elem` bytes: its scratch made
/// and freed, where it is not on the stack.
pub(in crate::real_memory) fn sort_of(m: &mut Malloc, n: u64, elem: u64) {
    let scratch = sort_scratch(n, elem);
    if scratch > 4096 {
        let p = m.malloc(scratch);
        m.free(p);
    }
}

/// The bytes of the scratch buffer of [`sort_of`].
pub(in crate::real_memory) fn sort_scratch(n: u64, elem: u64) -> u64 {
    elem * (n - n / 2).max(n.min(8_000_000 / elem))
}

/// The capacities a vector of `n` elements passes through: 4, then doubling
/// (none for no elements).
fn capacities(n: u64) -> impl Iterator<Item = u64> {
    let last = if n == 0 {
        0
    } else {
        n.next_power_of_two().max(4)
    };
    std::iter::successors(Some(4), |c| Some(c * 2)).take_while(move |&c| c <= last)
}

#[cfg(test)]
mod tests;
