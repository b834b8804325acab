//! OMMX 2.9.3's load of an instance (`ommx.v1.Instance.from_bytes`),
//! allocation by allocation, made from the instance's facts and run through
//! the model of glibc malloc: the resident it leaves is then where glibc
//! puts every chunk, not a count of live bytes.
//!
//! The calls are the ones the allocation traces show (`bench/alloc_trace.py
//! --steps`), phase by phase: prost's decode, the conversion with OMMX's
//! checks of the ids, `to_bytes` (the clone, the message, the encoding, the
//! Python `bytes`) and protobuf's arena for the annotations. So far only
//! instances whose functions are linear or quadratic and whose variables
//! and constraints carry at most a name and subscripts are made
//! ([`simulate`] says `None` for the rest): the traces of polynomial
//! functions, parameters, descriptions and removed constraints show steps
//! of their own. A quadratic function's linear terms come from the pass's
//! count of them (`Facts::quadratic_linear`): the 2.9.3 profile counts them
//! with the pairs. protobuf's per-element sizes are the estimate's
//! calibrated ones (`ommx29::upb`).
//! A load is a million calls or more at 100,000 entities (0.05 to 0.1 µs
//! each), so the estimate simulates only loads of at most a budget of
//! calls, counted beforehand (`calls`); `bench/simulate.rs` prints it
//! beside the closed form and `docs/real-memory.md` has how close it comes.

mod calls;
mod function;
mod parts;

use super::alloc::{btree_internal, btree_leaf};
use super::facts::{Facts, Owner};
use super::glibc::{Malloc, Ptr};
use super::ommx29::{size, upb};
use crate::model::function::Variant;
use function::Function;
use parts::{clone_tree, consume_tree, free_all, id_set, Pushed, Tree};

/// glibc's mmap threshold when the load begins: the interpreter's start and
/// the warm-up load raised it to this (traced).
const START_THRESHOLD: u64 = 495_616;
/// The Python object of an `ommx.v1.Instance` (its Rust instance inline).
const PYTHON_INSTANCE: u64 = 656;
/// protobuf's first arena blocks, then the size of the rest.
const FIRST_BLOCKS: [u64; 7] = [328, 560, 1136, 2288, 4592, 9200, 18416];
const BLOCK: u64 = 32 << 10;
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
    /// The heap's break at the end of the parse, of `to_bytes` and of the
    /// annotations.
    pub breaks: [u64; 3],
}

/// The instance as this generator makes it: linear functions, labels at
/// most a name and subscripts per entity.
struct Shape {
    variables: u64,
    constraints: u64,
    objective: Function,
    /// Each constraint's function (the group's mean).
    constraint: Function,
    variable_labels: Labels,
    constraint_labels: Labels,
}

/// A name's length and a subscript list's length, when the entities carry
/// them (the group's mean, as the facts give it).
#[derive(Clone, Copy, Default)]
struct Labels {
    name: Option<u64>,
    subscripts: Option<u64>,
}

impl Shape {
    fn of(f: &Facts) -> Option<Shape> {
        let with_terms = |g: &&super::facts::Functions| {
            matches!(g.variant, Variant::Linear | Variant::Quadratic)
        };
        let supported = f.functions.iter().all(|g| g.variant != Variant::Polynomial);
        if !supported || f.removed > 0 || !f.parameters.is_empty() {
            return None;
        }
        let objective: Vec<_> = f
            .functions
            .iter()
            .filter(|g| g.in_objective())
            .filter(with_terms)
            .collect();
        let constraints: Vec<_> = f
            .functions
            .iter()
            .filter(|g| g.owner == Owner::Constraints)
            .filter(with_terms)
            .collect();
        if objective.len() > 1 || constraints.len() > 1 {
            return None;
        }
        Some(Shape {
            variables: f.variables,
            constraints: f.constraints,
            objective: objective.first().map_or(Function::default(), |g| {
                Function::of(g.variant, g.terms, f.quadratic_linear.objective, 0)
            }),
            constraint: constraints.first().map_or(Function::default(), |g| {
                let linear = f.quadratic_linear.constraints.div_ceil(g.count.max(1));
                Function::of(g.variant, g.terms_each(), linear, 1)
            }),
            variable_labels: Labels::of(f, Owner::Variables)?,
            constraint_labels: Labels::of(f, Owner::Constraints)?,
        })
    }
}

impl Labels {
    /// At most one string (the name) and one subscript list an entity, on
    /// every entity of the kind, or none.
    fn of(f: &Facts, owner: Owner) -> Option<Labels> {
        let entities = if owner == Owner::Variables {
            f.variables
        } else {
            f.constraints
        };
        let strings: Vec<_> = f.strings.iter().filter(|s| s.owner == owner).collect();
        let lists: Vec<_> = f.subscripts.iter().filter(|s| s.owner == owner).collect();
        if strings.len() > 1
            || lists.len() > 1
            || f.strings.iter().any(|s| s.owner == Owner::Instance)
        {
            return None;
        }
        if strings.iter().chain(&lists).any(|s| s.count != entities) {
            return None;
        }
        Some(Labels {
            name: strings.first().map(|s| s.each()),
            subscripts: lists.first().map(|s| s.each()),
        })
    }

    /// prost's decode: a string of at least 8 bytes, a list pushed.
    fn decode(&self, m: &mut Malloc, kept: &mut Vec<Ptr>, lists: &mut Vec<Pushed>) {
        if let Some(len) = self.name {
            kept.push(m.malloc(len.max(8)));
        }
        if let Some(k) = self.subscripts {
            lists.push(Pushed::grown(m, k, 8));
        }
    }

    /// A clone: exact sizes.
    fn clone_into(&self, m: &mut Malloc, out: &mut Vec<Ptr>) {
        if let Some(len) = self.name.filter(|&l| l > 0) {
            out.push(m.malloc(len));
        }
        if let Some(k) = self.subscripts.filter(|&k| k > 0) {
            out.push(m.malloc(8 * k));
        }
    }
}

/// The malloc calls the load of an instance this generator makes would
/// take (close, not exact: `calls`).
pub fn predicted_calls(f: &Facts) -> Option<u64> {
    Shape::of(f).map(|s| calls::predicted(&s))
}

/// The load, simulated; `None` for an instance this generator does not make
/// or whose load would take more than `budget` calls.
pub fn simulate(f: &Facts, budget: u64) -> Option<Simulated> {
    let s = Shape::of(f)?;
    if calls::predicted(&s) > budget {
        return None;
    }
    Some(run(&s, f, Malloc::after_mapping(START_THRESHOLD)).0)
}

/// The load simulated with every call recorded, in `bench/alloc_trace.c`'s
/// records (phases marked as its harness marks them), to compare with a
/// traced load (`bench/simulate.rs --record`).
pub fn record(f: &Facts) -> Option<(Simulated, Vec<[u64; 4]>)> {
    let s = Shape::of(f)?;
    let mut m = Malloc::after_mapping(START_THRESHOLD);
    m.record();
    let (simulated, m) = run(&s, f, m);
    Some((simulated, m.records().to_vec()))
}

fn run(s: &Shape, f: &Facts, mut m: Malloc) -> (Simulated, Malloc) {
    m.init_tcache();
    let before = m.resident_heap() + m.mapped_bytes();
    let base = m.brk();
    let input = m.malloc(f.payload + 33);
    m.mark(0);
    let instance = parse(s, &mut m);
    // The Python object that wraps the instance, made as the parse returns
    // and kept with it (the last call of every traced parse).
    m.malloc(PYTHON_INSTANCE);
    let after_parse = m.brk() - base;
    m.mark(1);
    let python_bytes = to_bytes(s, f, &mut m, instance);
    let after_to_bytes = m.brk() - base;
    m.mark(2);
    let blocks = annotations(s, &mut m);
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
    m.free(input);
    let simulated = Simulated {
        calls: m.calls(),
        resident: (m.resident_heap() + m.mapped_bytes()).saturating_sub(before),
        breaks: [after_parse, after_to_bytes, after_annotations],
    };
    (simulated, m)
}

/// What the parse leaves: the instance's maps (their shapes, for the clone).
struct Parsed {
    variables: Option<parts::Node>,
    constraints: Option<parts::Node>,
}

/// Phase 1: prost's decode, then OMMX's conversion and its checks.
fn parse(s: &Shape, m: &mut Malloc) -> Parsed {
    let (mut kept, mut lists) = (Vec::new(), Vec::new());
    let mut variables = Pushed::new(size::VARIABLE_MESSAGE);
    for i in 1..=s.variables {
        s.variable_labels.decode(m, &mut kept, &mut lists);
        variables.push(m, i);
    }
    let objective = s.objective.decode(m);
    let mut terms = Vec::new();
    let mut constraints = Pushed::new(size::CONSTRAINT_MESSAGE);
    for j in 1..=s.constraints {
        terms.push(s.constraint.decode(m));
        s.constraint_labels.decode(m, &mut kept, &mut lists);
        constraints.push(m, j);
    }
    // The conversion: labels move over; the variables' map, the objective's
    // table, the ids checked against the variables' set.
    let mut variable_map = Tree::new(btree_leaf(size::VARIABLE), btree_internal(size::VARIABLE));
    (0..s.variables).for_each(|_| variable_map.insert(m));
    variables.free(m);
    s.objective.convert(m, objective);
    let collected = m.malloc(8 * s.variables);
    sort(m, s.variables);
    let defined = id_set(m, s.variables);
    m.free(collected);
    check_ids(m, s.objective.ids(0), s.variables, true);
    let mut constraint_map = Tree::new(
        btree_leaf(size::CONSTRAINT),
        btree_internal(size::CONSTRAINT),
    );
    for t in terms {
        s.constraint.convert(m, t);
        constraint_map.insert(m);
    }
    constraints.free(m);
    for _ in 0..s.constraints {
        // A constraint's constant is no id.
        check_ids(m, s.constraint.ids(1), s.variables, false);
    }
    free_all(m, defined);
    Parsed {
        variables: variable_map.root(),
        constraints: constraint_map.root(),
    }
}

/// OMMX's check of a function's ids: pushed into a list one at a time
/// (beside a small value made and freed each time), a set made of them
/// (at most the `distinct` variables; the objective's list sorted first),
/// all freed.
fn check_ids(m: &mut Malloc, n: u64, distinct: u64, sorted_copy: bool) {
    // The check also makes a small value for each id and frees it before
    // the next: made from the tcache's bin of its size and given back to
    // it, the same chunk each time (nothing between them frees a chunk of
    // that size), so it is made once here, for the same heap.
    let boxed = m.malloc(16);
    let mut ids = Pushed::new(8);
    for i in 1..=n {
        ids.push(m, i);
    }
    m.free(boxed);
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
fn to_bytes(s: &Shape, f: &Facts, m: &mut Malloc, instance: Parsed) -> Ptr {
    let objective = s.objective.clone_table(m);
    let mut variable_labels = Vec::new();
    let variables = instance.variables.as_ref().map(|root| {
        let sizes = (btree_leaf(size::VARIABLE), btree_internal(size::VARIABLE));
        clone_tree(m, root, sizes, &mut |m: &mut Malloc| {
            s.variable_labels.clone_into(m, &mut variable_labels)
        })
    });
    let mut tables = Vec::new();
    let mut constraint_labels = Vec::new();
    let constraints = instance.constraints.as_ref().map(|root| {
        let sizes = (
            btree_leaf(size::CONSTRAINT),
            btree_internal(size::CONSTRAINT),
        );
        clone_tree(m, root, sizes, &mut |m: &mut Malloc| {
            tables.extend(s.constraint.clone_table(m));
            let mut labels = Vec::new();
            s.constraint_labels.clone_into(m, &mut labels);
            constraint_labels.push(labels);
        })
    });
    // The message: each function's terms pushed from its table, which is
    // then freed; the maps' nodes freed as they are consumed.
    // An empty vector allocates nothing.
    let variable_message =
        (s.variables > 0).then(|| m.malloc(size::VARIABLE_MESSAGE * s.variables));
    if let Some(root) = variables {
        consume_tree(m, root, &mut |_: &mut Malloc| {});
    }
    let constraint_message =
        (s.constraints > 0).then(|| m.malloc(size::CONSTRAINT_MESSAGE * s.constraints));
    let mut terms = Vec::new();
    let mut tables = tables.into_iter();
    if let Some(root) = constraints {
        consume_tree(m, root, &mut |m: &mut Malloc| {
            terms.push(s.constraint.encode(m));
            free_all(m, tables.next());
        });
    }
    let objective_terms = s.objective.encode(m);
    free_all(m, objective);
    let encoded = m.malloc(f.payload);
    free_all(m, variable_labels);
    free_all(m, variable_message);
    objective_terms.free(m);
    for (t, labels) in terms.into_iter().zip(constraint_labels) {
        t.free(m);
        free_all(m, labels);
    }
    free_all(m, constraint_message);
    let python_bytes = m.malloc(f.payload + 33);
    m.free(encoded);
    python_bytes
}

/// Phase 3: protobuf (upb) parses the bytes into its arena for the
/// annotations: the message's parts bump-allocated into blocks (the first
/// ones small, then 32 KiB), each repeated field's array doubling as it
/// fills, an allocation larger than a block given a block of its own.
/// Returns the blocks in the order they were made.
fn annotations(s: &Shape, m: &mut Malloc) -> Vec<Ptr> {
    let mut a = Arena::default();
    // A name's bytes (the calibrated figures hold the rest of an element).
    let label = |l: &Labels| l.name.map_or(0, |n| n.next_multiple_of(8));
    let variable = upb::VARIABLE - ARRAY_SHARE + label(&s.variable_labels);
    a.repeated(m, s.variables, |a, m| a.take(m, variable));
    function(&mut a, m, &s.objective);
    let constraint = upb::CONSTRAINT - ARRAY_SHARE + label(&s.constraint_labels);
    a.repeated(m, s.constraints, |a, m| {
        a.take(m, constraint);
        function(a, m, &s.constraint);
    });
    a.blocks
}

/// Bytes of an element's message that its share of the doubling pointer
/// array takes in the calibrated per-element figures (`ommx29::upb`).
const ARRAY_SHARE: u64 = 16;

/// A function's part of the arena: a linear one's terms (messages in a
/// pointer array), a quadratic one's three packed arrays (traced on
/// qubo-2000: two series of doubling blocks, one block for the values).
fn function(a: &mut Arena, m: &mut Malloc, g: &Function) {
    if g.quadratic {
        // Columns and rows are varints, grown as they are read; the values
        // are doubles, whose count the field's length gives: one array.
        // Then the linear part's terms, messages like a linear function's.
        a.array(m, g.pairs);
        a.array(m, g.pairs);
        if g.pairs > 0 {
            a.take(m, 8 * g.pairs.next_power_of_two().max(4));
        }
        a.repeated(m, g.linear_terms, |a, m| {
            a.take(m, upb::LINEAR_TERM - ARRAY_SHARE)
        });
    } else {
        a.repeated(m, g.terms, |a, m| a.take(m, upb::LINEAR_TERM - ARRAY_SHARE));
    }
}

/// upb's arena: the blocks it has made and the room left in the last.
#[derive(Default)]
struct Arena {
    blocks: Vec<Ptr>,
    left: u64,
    made: usize,
}

impl Arena {
    /// Bump-allocates `bytes`, in a new block when the last has no room.
    fn take(&mut self, m: &mut Malloc, bytes: u64) {
        if bytes <= self.left {
            self.left -= bytes;
            return;
        }
        let size = FIRST_BLOCKS.get(self.made).copied().unwrap_or(BLOCK + 16);
        if bytes + 16 > size {
            self.blocks.push(m.malloc(bytes + 16));
            return;
        }
        self.blocks.push(m.malloc(size));
        self.made += 1;
        self.left = size - 16 - bytes;
    }

    /// An array of 8-byte elements filled to `n`: 4 first, then doubling,
    /// each larger array allocated anew.
    fn array(&mut self, m: &mut Malloc, n: u64) {
        for cap in capacities(n) {
            self.take(m, 8 * cap);
        }
    }

    /// A repeated field of `n` messages: each made by `element`, its
    /// pointer array growing as it fills.
    fn repeated(
        &mut self,
        m: &mut Malloc,
        n: u64,
        mut element: impl FnMut(&mut Arena, &mut Malloc),
    ) {
        let mut cap = 0;
        for i in 0..n {
            if i == cap {
                cap = (2 * cap).max(4);
                self.take(m, 8 * cap);
            }
            element(self, m);
        }
    }
}

/// Rust's sort of `n` ids: its scratch buffer is half of them or as many
/// as fit in 8 MB, whichever is more, on the stack up to 4 KiB (traced:
/// 339,878 ids took 2,719,024 bytes).
fn sort(m: &mut Malloc, n: u64) {
    let scratch = 8 * (n - n / 2).max(n.min(8_000_000 / 8));
    if scratch > 4096 {
        let p = m.malloc(scratch);
        m.free(p);
    }
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
