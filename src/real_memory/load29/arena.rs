//! Phase 3 of the load: protobuf (upb) parses the bytes `to_bytes` made
//! into its arena, to read the annotations. The message's parts are
//! bump-allocated into blocks (the first ones small, then 32 KiB), each
//! repeated field's pointer array doubles as it fills (each larger array
//! allocated anew), an allocation larger than a block gets a block of its
//! own. The blocks are freed after; how many were made decides whether the
//! top the frees leave is trimmed.
//!
//! upb's message layouts are not in the extension's debug information, so
//! the bytes an element takes were read off traces: the arena blocks made
//! between two growths of one repeated field's pointer array (which are
//! blocks of their own past 4,096 elements), over instances built to vary
//! one thing at a time (`bench/real_memory.md`).

use super::function::{Function, Kind};
use super::labels::{Labels, Parameters};
use super::{capacities, Blueprint};
use glibc_model::{Malloc, Ptr};

/// protobuf's first arena blocks, then the size of the rest.
const FIRST_BLOCKS: [u64; 7] = [328, 560, 1136, 2288, 4592, 9200, 18416];
const BLOCK: u64 = 32 << 10;
/// A decision variable with its bound (traced: 113 bytes a variable over
/// 100,000 unnamed binaries, 177 over as many named with one subscript).
const VARIABLE: u64 = 112;
/// A repeated scalar field's array, besides its elements.
const ARRAY: u64 = 24;
/// A constraint with its function and that function's linear or quadratic
/// message, the arrays' headers included (traced: 20,000 constraints of 1
/// to 32 linear terms; 25,000 of 6 pairs and 4 linear terms).
const LINEAR_CONSTRAINT: u64 = 159;
const QUADRATIC_CONSTRAINT: u64 = 214;
/// A linear term's message.
const TERM: u64 = 24;
/// A removed constraint's message, besides its constraint's (traced on
/// removed-20k: 960 bytes a removed constraint of 10 terms with a reason
/// and one parameter).
const REMOVED: u64 = 83;
/// A parameter map, and each entry besides its strings (traced: 326 bytes
/// a map of two short entries, on metadata-100k's variables and
/// constraints alike; how that splits between map and entries is assumed).
const MAP: u64 = 166;
const MAP_ENTRY: u64 = 64;
/// A polynomial's monomial besides its ids' data: the message and its
/// array's header (traced on hubo-100k: 974 blocks of 32 KiB for 400,000
/// monomials of 2 to 4 ids).
const MONOMIAL: u64 = 48;

/// The parse; returns the blocks in the order they were made.
pub(super) fn annotations(s: &Blueprint, m: &mut Malloc) -> Vec<Ptr> {
    let mut a = Arena::default();
    a.repeated_alike(m, s.variables, |a, m| {
        a.take(m, VARIABLE);
        labels(a, m, &s.variable_labels);
    });
    function(&mut a, m, &s.objective);
    let constraint = match s.constraint.kind {
        Kind::Quadratic => QUADRATIC_CONSTRAINT,
        _ => LINEAR_CONSTRAINT,
    };
    a.repeated_alike(m, s.constraints, |a, m| {
        a.take(m, constraint);
        labels(a, m, &s.constraint_labels);
        function(a, m, &s.constraint);
    });
    let constraint = match s.removed_function.kind {
        Kind::Quadratic => QUADRATIC_CONSTRAINT,
        _ => LINEAR_CONSTRAINT,
    };
    a.repeated_alike(m, s.removed, |a, m| {
        a.take(m, REMOVED + constraint);
        labels(a, m, &s.removed_labels);
        function(a, m, &s.removed_function);
    });
    a.blocks
}

/// The strings' bytes, a subscript list's array (varints, grown as read),
/// the parameter maps.
fn labels(a: &mut Arena, m: &mut Malloc, l: &Labels) {
    let string = |a: &mut Arena, m: &mut Malloc, len: Option<u64>| {
        if let Some(len) = len.filter(|&n| n > 0) {
            a.take(m, len.next_multiple_of(8));
        }
    };
    let map = |a: &mut Arena, m: &mut Malloc, p: Option<Parameters>| {
        if let Some(p) = p {
            let entry = MAP_ENTRY + p.key.next_multiple_of(8) + p.value.next_multiple_of(8);
            a.take(m, MAP + p.entries * entry);
        }
    };
    string(a, m, l.name);
    if let Some(k) = l.subscripts.filter(|&k| k > 0) {
        a.take(m, ARRAY);
        a.array(m, k);
    }
    map(a, m, l.parameters);
    string(a, m, l.description);
    string(a, m, l.reason);
    map(a, m, l.reason_parameters);
}

/// A function's terms: a linear one's (messages in a pointer array), a
/// quadratic one's three packed arrays (traced on qubo-2000: two series of
/// doubling blocks, one block for the values) and its linear part's terms,
/// a polynomial's monomials (messages, each with its ids' array).
fn function(a: &mut Arena, m: &mut Malloc, g: &Function) {
    let term = |a: &mut Arena, m: &mut Malloc| a.take(m, TERM);
    match g.kind {
        Kind::Linear => a.repeated_alike(m, g.linear_terms, term),
        Kind::Quadratic => {
            // Columns and rows are varints, grown as they are read; the
            // values are doubles, whose count the field's length gives: one
            // array.
            a.array(m, g.pairs);
            a.array(m, g.pairs);
            if g.pairs > 0 {
                a.take(m, 8 * g.pairs.next_power_of_two().max(4));
            }
            a.repeated_alike(m, g.linear_terms, term);
        }
        Kind::Polynomial => {
            let mut i = 0;
            a.repeated(m, g.terms, |a, m| {
                a.take(m, MONOMIAL);
                a.array(m, g.monomial_len(i));
                i += 1;
            });
        }
    }
}

/// upb's arena: the blocks it has made and the room left in the last.
#[derive(Default)]
struct Arena {
    blocks: Vec<Ptr>,
    left: u64,
    made: usize,
    /// When set, what is taken is only written down here (an element's
    /// takes, read off it once: `repeated_alike`).
    noted: Option<Vec<u64>>,
}

impl Arena {
    /// Bump-allocates `bytes`, in a new block when the last has no room.
    fn take(&mut self, m: &mut Malloc, bytes: u64) {
        if let Some(noted) = &mut self.noted {
            noted.push(bytes);
            return;
        }
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

    /// [`Arena::repeated`] of elements that each take the same bytes in
    /// the same order, as fast: between two growths of the pointer array,
    /// as many whole elements as the block has room for are taken at once
    /// (each of its takes fits when the element's sum does, so none makes
    /// a block), the one that does not fit take by take.
    fn repeated_alike(
        &mut self,
        m: &mut Malloc,
        n: u64,
        mut element: impl FnMut(&mut Arena, &mut Malloc),
    ) {
        if self.noted.is_some() {
            return self.repeated(m, n, element);
        }
        self.noted = Some(Vec::new());
        element(self, m);
        let takes = self.noted.take().unwrap_or_default();
        let sum: u64 = takes.iter().sum();
        let (mut cap, mut i) = (0, 0);
        while i < n {
            if i == cap {
                cap = (2 * cap).max(4);
                self.take(m, 8 * cap);
            }
            let whole = self.left.checked_div(sum).unwrap_or(u64::MAX);
            let at_once = whole.min(cap.min(n) - i);
            self.left -= at_once * sum;
            i += at_once;
            if i < cap.min(n) {
                takes.iter().for_each(|&bytes| self.take(m, bytes));
                i += 1;
            }
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
