//! OMMX 2.9.3 in Python: what `ommx.v1.Instance.from_bytes(b)` allocates,
//! phase by phase, and so what it holds and the most it held.
//!
//! `from_bytes` runs three phases, each read from ommx 2.9.3's source and
//! confirmed on allocation traces (`bench/real_memory.md`):
//!
//! 1. *parse*: prost decodes `b` into an `ommx.v1.Instance` message (every
//!    repeated field pushed, so capacities double), then OMMX converts it
//!    entity by entity into its `Instance` (BTreeMaps of entities, a
//!    hashbrown table per function), moving strings and subscript lists
//!    over and freeing each function's term list once its table is built;
//! 2. *to_bytes*: the Python wrapper's `__post_init__` calls
//!    `raw.to_bytes()`, which clones the whole instance, converts the clone
//!    back into a message (exact-size vectors) and encodes it into a `Vec`
//!    that is copied into a Python `bytes`;
//! 3. *annotations*: protobuf (upb) parses those bytes into a Python message
//!    (arena blocks) to read the annotations, then everything but the
//!    instance is freed.
//!
//! What is held after is the instance plus the heap that the largest phase
//! grew and glibc did not give back; the peak adds `b` to the largest phase.

use super::facts::{Facts, Functions, Owner};
use super::mem::{Allocator, Mem, INTERPRETER_THRESHOLD};
use super::{settle, Estimate, Moment};
use crate::model::alloc::{btree, buckets, chunk, grown_from, mapped, pushed, table, table_of};
use crate::model::function::Variant;
use crate::profiled::real::Held;

/// Sizes read from the extension's debug information (DWARF of
/// `ommx/_ommx_rust.abi3.so` 2.9.3).
pub(super) mod size {
    /// `ommx::DecisionVariable`, `Constraint`, `RemovedConstraint`: the
    /// values of the entity maps.
    pub const VARIABLE: u64 = 152;
    pub const CONSTRAINT: u64 = 160;
    pub const REMOVED: u64 = 216;
    /// The prost messages `ommx::v1::DecisionVariable`, `Constraint`,
    /// `RemovedConstraint`.
    pub const VARIABLE_MESSAGE: u64 = 176;
    pub const CONSTRAINT_MESSAGE: u64 = 240;
    pub const REMOVED_MESSAGE: u64 = 312;
    /// `ommx::v1::Term` (id, coefficient) and `Monomial` (ids, coefficient).
    pub const TERM: u64 = 16;
    pub const MONOMIAL: u64 = 32;
    /// A `FnvHashMap<String, String>` entry.
    pub const STRING_PAIR: u64 = 48;
}

/// Bytes protobuf's upb arena takes per element of the Python message
/// (message, pointer in its repeated field, arrays doubling in the arena);
/// upb's layouts are not in the extension's debug information, so these were
/// measured: phase 3's arena over instances of one shape at two sizes.
pub(super) mod upb {
    pub const LINEAR_TERM: u64 = 48;
    pub const QUADRATIC_TERM: u64 = 69;
    pub const MONOMIAL: u64 = 118;
    pub const VARIABLE: u64 = 168;
    pub const CONSTRAINT: u64 = 170;
    pub const MAP_ENTRY: u64 = 64;
}

/// The heap that glibc keeps beyond the chunks in use: free chunks between
/// live ones and the slack of bins, as a share of the heap in use at the
/// high-water mark. Calibrated (the one number that is): see
/// `docs/real-memory.md`.
const FRAGMENTATION_PERCENT: u64 = 8;

pub fn estimate(f: &Facts) -> Estimate {
    let start = Allocator::after_freeing(INTERPRETER_THRESHOLD);
    let message = Message::of(f, start);
    // Every vector of the decoded message is freed during the parse; the
    // largest raises glibc's mmap threshold for everything after.
    let after = Allocator::after_freeing(message.largest.max(INTERPRETER_THRESHOLD));
    let held = Instance::of(f, after, Copy::Decoded);
    let clone = Instance::of(f, after, Copy::Cloned);
    // The parse's two largest moments: the message whole as the variables'
    // nodes are made, and the instance built with the message's containers
    // gone, but not all of their term vectors' room (`Message::holes`).
    let building = message.total + variable_nodes(f);
    let built = message.total - message.containers - message.terms
        + Mem {
            heap: message.holes,
            mapped: 0,
        }
        + held.nodes
        + held.tables
        + largest_growth(f, after);
    // Phase 2 ends with the Python `bytes` of the encoding, made last: on the
    // heap, it pins what phase 2 grew the heap by. Phase 3's arena is freed
    // with nothing made after it.
    let pinned = after.one(f.payload + 33).mapped == 0;
    let [clone_made, variables, constraints, encoded, copied, annotations] =
        to_bytes(f, after, &held, &clone).map(|m| held.total() + m);
    let moment = |live, pinned| Moment { live, pinned };
    let held_by_owner = by_owner(&owned(
        f,
        after,
        [size::VARIABLE, size::CONSTRAINT, size::REMOVED],
        std::iter::empty(),
    ));
    settle(
        &[
            moment(building, true),
            moment(built, true),
            moment(clone_made, pinned),
            moment(variables, pinned),
            moment(constraints, pinned),
            moment(encoded, pinned),
            moment(copied, pinned),
            moment(annotations, false),
        ],
        held.total(),
        held_by_owner,
        mapped(f.payload),
        after_to_bytes(f, after).trim_threshold(),
        FRAGMENTATION_PERCENT,
    )
}

pub(super) fn variable_nodes(f: &Facts) -> Mem {
    Mem {
        heap: btree(f.variables, size::VARIABLE),
        mapped: 0,
    }
}

/// Phase 1's message, as prost decodes it.
pub(super) struct Message {
    pub(super) total: Mem,
    /// The vectors of entity messages.
    pub(super) containers: Mem,
    /// The functions' term lists.
    pub(super) terms: Mem,
    /// The heap their freeing leaves as holes during the parse: the term
    /// vectors of a kilobyte or more (an LP's constraint of 51 terms: 1,040
    /// bytes), which no later request of the parse fits (traced: the LPs'
    /// parse ends with the heap higher than what is live by all of them);
    /// smaller ones are refilled by the conversion's own small requests
    /// (traced: many tiny and quadratic constraints end within 1.5 % of what
    /// is live).
    pub(super) holes: u64,
    /// The largest vector, in bytes of capacity.
    pub(super) largest: u64,
}

impl Message {
    pub(super) fn of(f: &Facts, a: Allocator) -> Message {
        let mut largest = 0;
        let mut pushed_vec = |count: u64, n: u64, size: u64| {
            let capacity = pushed(n, 4) * size;
            largest = largest.max(capacity);
            // A mapped vector is touched only as far as it is filled.
            match a.one(capacity) {
                Mem { mapped: 0, heap } => Mem { heap, mapped: 0 } * count,
                _ => {
                    Mem {
                        heap: 0,
                        mapped: mapped(n * size),
                    } * count
                }
            }
        };
        let containers = pushed_vec(1, f.variables, size::VARIABLE_MESSAGE)
            + pushed_vec(1, f.constraints, size::CONSTRAINT_MESSAGE)
            + pushed_vec(1, f.removed, size::REMOVED_MESSAGE);
        let (mut terms, mut holes) = (Mem::default(), 0);
        for g in &f.functions {
            let n = g.terms_each();
            // Each function's term vectors: how many, and bytes a term.
            let (vectors, size) = match g.variant {
                Variant::Linear => (g.count, size::TERM),
                Variant::Quadratic => (g.count * 3, 8),
                Variant::Polynomial => (g.count, size::MONOMIAL),
                Variant::Zero | Variant::Constant => continue,
            };
            let made = pushed_vec(vectors, n, size);
            if made.heap >= 1024 * vectors {
                holes += made.heap;
            }
            terms += made;
            if g.variant == Variant::Polynomial {
                // Each monomial's ids.
                terms += Mem {
                    heap: g.count * n * chunk(8 * 4),
                    mapped: 0,
                };
            }
        }
        let total = containers + terms + labels(f, a, Copy::Decoded);
        Message {
            total,
            containers,
            terms,
            holes,
            largest,
        }
    }
}

/// How strings and lists were made: decoded by prost (a string's capacity is
/// at least 8, a list's doubles from 4), or cloned (exact).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Copy {
    Decoded,
    Cloned,
}

/// Names, descriptions, subscripts and parameters, as heap chunks.
pub(super) fn labels(f: &Facts, a: Allocator, copy: Copy) -> Mem {
    label_parts(f, a, copy).fold(Mem::default(), |sum, (_, mem)| sum + mem)
}

/// Each group of labels' chunks, with its owner.
pub(super) fn label_parts(
    f: &Facts,
    a: Allocator,
    copy: Copy,
) -> impl Iterator<Item = (Owner, Mem)> + '_ {
    let heap = |owner, heap| (owner, Mem { heap, mapped: 0 });
    let strings = f.strings.iter().map(move |s| {
        let len = s.each();
        let capacity = match copy {
            Copy::Decoded => len.max(8),
            Copy::Cloned => len,
        };
        heap(
            s.owner,
            s.count * chunk(if len == 0 { 0 } else { capacity }),
        )
    });
    let subscripts = f.subscripts.iter().map(move |l| {
        let k = l.each();
        let capacity = match copy {
            Copy::Decoded => pushed(k, 4),
            Copy::Cloned => k,
        };
        heap(l.owner, l.count * chunk(8 * capacity))
    });
    let parameters = f
        .parameters
        .iter()
        .map(move |m| (m.owner, a.many(m.count, table(m.each(), size::STRING_PAIR))));
    strings.chain(subscripts).chain(parameters)
}

/// The loaded instance's own allocations, each with its owner: the entity
/// maps' nodes (`node` bytes a value for variables, constraints, removed
/// constraints), the functions' tables, the labels, and `extra` (a runtime's
/// own label maps).
pub(super) fn owned(
    f: &Facts,
    a: Allocator,
    node: [u64; 3],
    extra: impl Iterator<Item = (Owner, Mem)>,
) -> Vec<(Owner, Mem)> {
    let heap = |heap| Mem { heap, mapped: 0 };
    [
        (Owner::Variables, heap(btree(f.variables, node[0]))),
        (Owner::Constraints, heap(btree(f.constraints, node[1]))),
        (Owner::Removed, heap(btree(f.removed, node[2]))),
    ]
    .into_iter()
    .chain(f.functions.iter().map(|g| (g.owner, function_tables(g, a))))
    .chain(label_parts(f, a, Copy::Decoded))
    .chain(extra)
    .collect()
}

/// All of them, as glibc holds them.
pub(super) fn owned_total(owned: &[(Owner, Mem)]) -> Mem {
    owned
        .iter()
        .fold(Mem::default(), |sum, (_, mem)| sum + *mem)
}

/// Their bytes by owner.
pub(super) fn by_owner(owned: &[(Owner, Mem)]) -> Held {
    let mut held = Held::default();
    for (owner, mem) in owned {
        *match owner {
            Owner::Variables => &mut held.decision_variables,
            Owner::Objective => &mut held.objective,
            Owner::Constraints => &mut held.constraints,
            Owner::Removed => &mut held.removed_constraints,
            Owner::Instance => &mut held.instance,
        } += mem.total();
    }
    held
}

/// OMMX's `Instance` (or its clone in phase 2).
struct Instance {
    nodes: Mem,
    /// The functions' tables.
    tables: Mem,
    /// The tables of the constraints' functions alone.
    constraint_tables: Mem,
    labels: Mem,
}

impl Instance {
    fn of(f: &Facts, a: Allocator, copy: Copy) -> Instance {
        let nodes = Mem {
            heap: btree(f.variables, size::VARIABLE)
                + btree(f.constraints, size::CONSTRAINT)
                + btree(f.removed, size::REMOVED),
            mapped: 0,
        };
        let mut tables = Mem::default();
        let mut constraint_tables = Mem::default();
        for g in &f.functions {
            let t = function_tables(g, a);
            tables += t;
            if !g.in_objective() {
                constraint_tables += t;
            }
        }
        Instance {
            nodes,
            tables,
            constraint_tables,
            labels: labels(f, a, copy),
        }
    }

    fn total(&self) -> Mem {
        self.nodes + self.tables + self.labels
    }
}

/// The tables of one group of functions, as OMMX holds them.
pub(super) fn function_tables(g: &Functions, a: Allocator) -> Mem {
    let mut t = a.many(g.count, table(g.terms_each(), entry(g)));
    if g.variant == Variant::Polynomial {
        // A monomial keeps the ids vector prost decoded (capacity 4, more
        // than its `SmallVec`'s 3 inline) instead of copying it inline.
        t += Mem {
            heap: g.terms * chunk(8 * 4),
            mapped: 0,
        };
    }
    t
}

/// The largest table's growth: while its last insert rehashes, the table
/// it grew from is there too.
pub(super) fn largest_growth(f: &Facts, a: Allocator) -> Mem {
    f.functions
        .iter()
        .map(|g| a.one(grown_from(g.terms_each(), entry(g))))
        .fold(Mem::default(), Mem::max)
}

/// The allocator once phase 2 has freed what it frees, in order, and so the
/// trim threshold its growth and phase 3's are judged by: the tables the
/// parse's tables grew from (hashbrown frees the old table once it has
/// rehashed into the new one), then the clone's tables, the message's
/// vectors and the encoding.
pub(super) fn after_to_bytes(f: &Facts, after: Allocator) -> Allocator {
    let mut a = after;
    for g in &f.functions {
        let items = g.terms_each();
        let mut b = 4;
        while b < buckets(items) {
            a = a.after_free(table_of(b, entry(g)));
            b *= 2;
        }
    }
    for g in &f.functions {
        a = a.after_free(table(g.terms_each(), entry(g)));
    }
    for g in &f.functions {
        let n = g.terms_each();
        a = a.after_free(match g.variant {
            Variant::Linear => size::TERM * n,
            Variant::Quadratic => 8 * n,
            Variant::Polynomial => size::MONOMIAL * n,
            Variant::Zero | Variant::Constant => 0,
        });
    }
    a.after_free(size::VARIABLE_MESSAGE * f.variables)
        .after_free(size::CONSTRAINT_MESSAGE * f.constraints)
        .after_free(size::REMOVED_MESSAGE * f.removed)
        .after_free(f.payload)
}

/// A table entry: the monomial and its coefficient.
pub(super) fn entry(g: &Functions) -> u64 {
    match g.variant {
        Variant::Linear => 24,
        Variant::Quadratic => 32,
        _ => 48,
    }
}

/// Phase 2 and 3's moments, in order, beyond the instance held: the clone and
/// the message it becomes, the encoded bytes, their Python copy and upb's
/// message of them.
fn to_bytes(f: &Facts, a: Allocator, held: &Instance, clone: &Instance) -> [Mem; 6] {
    let variables = a.one(size::VARIABLE_MESSAGE * f.variables);
    let constraints = a.one(size::CONSTRAINT_MESSAGE * f.constraints);
    let removed = a.one(size::REMOVED_MESSAGE * f.removed);
    let variable_nodes = variable_nodes(f);
    let constraint_nodes = held.nodes - variable_nodes;
    let mut constraint_terms = Mem::default();
    let mut objective_terms = Mem::default();
    let mut terms = Mem::default();
    for g in &f.functions {
        let n = g.terms_each();
        let v = match g.variant {
            Variant::Linear => a.many(g.count, size::TERM * n),
            Variant::Quadratic => a.many(g.count * 3, 8 * n),
            Variant::Polynomial => {
                a.many(g.count, size::MONOMIAL * n)
                    + Mem {
                        heap: g.count * n * chunk(24),
                        mapped: 0,
                    }
            }
            Variant::Zero | Variant::Constant => Mem::default(),
        };
        terms += v;
        if g.in_objective() {
            objective_terms += v;
        } else {
            constraint_terms += v;
        }
    }
    let clone_total = clone.total();
    let encoded = a.one(f.payload);
    let python_bytes = a.one(f.payload + 33);
    let message = variables + constraints + removed + clone.labels + terms;
    [
        clone_total + variables,
        clone_total - variable_nodes + variables + constraints,
        // The objective's vectors made while its table is still there.
        clone_total - variable_nodes - constraint_nodes - clone.constraint_tables
            + constraint_terms
            + objective_terms
            + variables
            + constraints
            + removed,
        message + encoded,
        encoded + python_bytes,
        python_bytes + upb_message(f),
    ]
}

/// Protobuf's Python message of the instance (upb arena blocks on the heap).
pub(super) fn upb_message(f: &Facts) -> Mem {
    let mut heap = f.variables * upb::VARIABLE + (f.constraints + f.removed) * upb::CONSTRAINT;
    for g in &f.functions {
        heap += g.terms
            * match g.variant {
                Variant::Linear => upb::LINEAR_TERM,
                Variant::Quadratic => upb::QUADRATIC_TERM,
                Variant::Polynomial => upb::MONOMIAL,
                Variant::Zero | Variant::Constant => 0,
            };
    }
    for s in &f.strings {
        heap += s.count * s.each().next_multiple_of(8);
    }
    for m in &f.parameters {
        heap += m.size * upb::MAP_ENTRY;
    }
    Mem { heap, mapped: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real_memory::fixtures::lp_10k;

    const MIB: f64 = 1048576.0;

    /// The allocation trace of lp-10k (bench/alloc_trace.py): 7.89 MiB of
    /// chunks held after the parse, and 9.40 MiB more at `to_bytes`' largest
    /// moment (the clone whole, and the variables' message vector).
    #[test]
    fn phases_hold_what_the_trace_held() {
        let f = lp_10k();
        let message = Message::of(&f, Allocator::after_freeing(INTERPRETER_THRESHOLD));
        let after = Allocator::after_freeing(message.largest.max(INTERPRETER_THRESHOLD));
        let held = Instance::of(&f, after, Copy::Decoded);
        let clone = Instance::of(&f, after, Copy::Cloned);
        let held_mib = held.total().total() as f64 / MIB;
        assert!((held_mib - 7.89).abs() < 0.02, "{held_mib}");
        let largest = to_bytes(&f, after, &held, &clone)
            .into_iter()
            .fold(Mem::default(), Mem::max);
        let transient_mib = largest.total() as f64 / MIB;
        assert!((transient_mib - 9.40).abs() < 0.05, "{transient_mib}");
    }

    /// The trace of lp-10k's parse ends with the heap 10.23 MiB above where
    /// it began and 7.89 MiB live: the 2,000 constraints' 1,040-byte term
    /// vectors and the objective's 256 KiB one are the holes between.
    #[test]
    fn the_parse_keeps_the_room_of_its_large_term_vectors() {
        let f = lp_10k();
        let start = Allocator::after_freeing(INTERPRETER_THRESHOLD);
        let holes = Message::of(&f, start).holes;
        assert_eq!(holes, 2_000 * 1_040 + chunk(16_384 * 16));
        let held = Instance::of(&f, start, Copy::Decoded).total();
        let extent_mib = (held.heap + holes) as f64 / MIB;
        assert!((extent_mib / 10.23 - 1.0).abs() < 0.02, "{extent_mib}");
        // Many tiny constraints' vectors (2 terms, 80-byte chunks) are refilled.
        let tiny = Facts {
            functions: vec![Functions {
                variant: Variant::Linear,
                owner: Owner::Constraints,
                count: 200_000,
                terms: 400_000,
            }],
            ..Facts::default()
        };
        assert_eq!(Message::of(&tiny, start).holes, 0);
    }

    /// The instance's allocations by owner add up to what it holds, and
    /// each owner gets its own: lp-10k's variables their map's nodes, names
    /// and subscripts; the objective its 10,000-term table.
    #[test]
    fn what_the_instance_holds_is_split_by_owner() {
        let f = lp_10k();
        let after = Allocator::after_freeing(INTERPRETER_THRESHOLD);
        let held = Instance::of(&f, after, Copy::Decoded).total().total();
        let parts = by_owner(&owned(
            &f,
            after,
            [size::VARIABLE, size::CONSTRAINT, size::REMOVED],
            std::iter::empty(),
        ));
        assert_eq!(parts.total(), held);
        assert_eq!(
            parts.decision_variables,
            btree(10_000, size::VARIABLE) + 10_000 * (chunk(8) + chunk(8 * 4))
        );
        assert_eq!(parts.objective, table(10_000, 24) + 16);
        assert_eq!(parts.removed_constraints + parts.instance, 0);
        let e = estimate(&f);
        assert_eq!(e.held, parts);
        assert!(e.resident > parts.total());
    }

    /// The trace of qubo-500 (a dense objective of 124,750 quadratic terms):
    /// the parse's table grew through mapped tables of up to 4.13 MiB, which
    /// raised the mmap threshold to that, and `to_bytes` freed the clone's
    /// 8.25 MiB table; twice that is the trim threshold, above the 6.7 MiB
    /// the round trip grew the heap by, which glibc therefore kept.
    #[test]
    fn the_trim_threshold_follows_the_largest_mapped_chunk_freed() {
        let f = Facts {
            variables: 500,
            functions: vec![Functions {
                variant: Variant::Quadratic,
                owner: Owner::Objective,
                count: 1,
                terms: 124_750,
            }],
            payload: 1_452_265,
            ..Facts::default()
        };
        let after = Allocator::after_freeing(INTERPRETER_THRESHOLD);
        let table_mib = mapped(table(124_750, 32)) as f64 / MIB;
        assert!((table_mib - 8.25).abs() < 0.01, "{table_mib}");
        assert_eq!(
            after_to_bytes(&f, after).trim_threshold(),
            2 * mapped(table(124_750, 32))
        );
    }

    /// Measured with ommx 2.9.3 (bench/real_memory.json): 18.9 MiB resident,
    /// 20.8 MiB load peak; the estimate is within 2 %.
    #[test]
    fn the_estimate_is_within_tolerance_of_the_measurement() {
        let e = estimate(&lp_10k());
        let (resident, peak) = (e.resident as f64 / MIB, e.load_peak as f64 / MIB);
        assert!((resident / 18.9 - 1.0).abs() < 0.02, "{resident}");
        assert!((peak / 20.8 - 1.0).abs() < 0.02, "{peak}");
    }
}
