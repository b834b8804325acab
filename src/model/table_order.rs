//! The order of a quadratic function's table in OMMX 2.9.3, the order in
//! which `to_bytes` reads it back: made by hashing each key as OMMX does
//! and placing it as the hash table OMMX's map is built on places it.
//!
//! OMMX keeps a quadratic function as an `FnvHashMap` from its monomial (a
//! pair `lower <= upper`, a variable of its linear part, or its constant)
//! to the coefficient. The map is Rust's `HashMap` (hashbrown's SwissTable:
//! control bytes read sixteen at a time with SSE2 on x86-64, a triangular
//! probe from the hash's low bits, at most 7/8 of the buckets full, a table
//! that doubles when it is full and puts its entries into the new one in its
//! own order) and FNV-1a over the bytes the key's derived `Hash` writes:
//! the variant's index as 8 bytes, then each id as 8 bytes. The pairs go in
//! first, in the file's order; the linear part is a linear function first,
//! in its own table (the same scheme, its variables' index 0 and its
//! constant's 1), whose order then merges it into the quadratic one.
//!
//! Reading the table in order, `to_bytes` pushes each pair onto three
//! vectors (columns, rows, values) and each linear term onto one more:
//! which of them grows when ([`Growth`]) places the small chunks of the
//! load's end, and with them what the heap keeps (`load29`). Checked
//! against traced loads (`bench/table_order.py`, whose output on
//! `fixtures/table_order/` `src/pass/growths_tests.rs` holds this to).

use super::alloc::{buckets, pushed, room};
use crate::profiled::Growth;

/// FNV-1a, 64 bits, over the bytes a key's `Hash` writes: its variant's
/// index and its ids, each 8 bytes in the machine's (little-endian) order.
fn fnv(variant: u64, ids: &[u64]) -> u64 {
    ids.iter()
        .fold(fnv_word(FNV_OFFSET, variant), |h, &id| fnv_word(h, id))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a's state after one more 8-byte word.
#[inline]
fn fnv_word(mut hash: u64, word: u64) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    for byte in word.to_le_bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
    }
    hash
}

/// A quadratic monomial's variant index: a pair, a linear part's
/// variable, the constant.
const PAIR: u64 = 0;
const QUADRATIC_LINEAR: u64 = 1;
const QUADRATIC_CONSTANT: u64 = 2;
/// A linear monomial's: a variable, the constant.
const VARIABLE: u64 = 0;
const LINEAR_CONSTANT: u64 = 1;

/// Control bytes read at once (SSE2's 16 on x86-64).
const GROUP: usize = 16;

/// What an entry of the table is, kept in its slot's top two bits above
/// the hash's low 30 (which place it in any table of up to 2^30 buckets);
/// an empty slot is 0.
const KIND_SHIFT: u32 = 30;
const HASH: u32 = (1 << KIND_SHIFT) - 1;
const PAIR_ENTRY: u32 = 1;
const LINEAR_ENTRY: u32 = 2;
const CONSTANT_ENTRY: u32 = 3;

/// A hashbrown table of distinct keys by their hashes, each with a value
/// (a linear table's id; nothing for a quadratic one), placed as hashbrown
/// places them.
#[derive(Default)]
struct Table<V> {
    slots: Vec<u32>,
    values: Vec<V>,
    items: usize,
    growth_left: usize,
}

impl<V: Copy + Default> Table<V> {
    /// Inserts a key (not in the table) of `hash` and kind `kind`; as
    /// hashbrown, the table grows first when it is full.
    #[inline]
    fn insert(&mut self, hash: u64, kind: u32, value: V) {
        if self.growth_left == 0 {
            self.grow();
        }
        let slot = (kind << KIND_SHIFT) | (hash as u32 & HASH);
        let at = self.free_slot(slot);
        self.put(at, slot, value);
        self.items += 1;
        self.growth_left -= 1;
    }

    /// Buckets, without the mirror of the first group.
    fn buckets(&self) -> usize {
        self.values.len()
    }

    fn put(&mut self, at: usize, slot: u32, value: V) {
        self.slots[at] = slot;
        self.values[at] = value;
        // As hashbrown's control bytes, the first group is mirrored past
        // the end, so that a group read anywhere is one run.
        let buckets = self.buckets();
        if at < GROUP && buckets >= GROUP {
            self.slots[buckets + at] = slot;
        }
    }

    /// Where a new key of slot value `slot` goes: the first empty bucket in
    /// the first group of its probe that has one.
    #[inline]
    fn free_slot(&self, slot: u32) -> usize {
        let buckets = self.buckets();
        let mask = buckets - 1;
        let home = (slot & HASH) as usize & mask;
        if buckets < GROUP {
            // The group read runs past the buckets onto bytes always
            // empty, which send the key to the first empty bucket.
            return (home..buckets)
                .chain(0..home)
                .find(|&i| self.slots[i] == 0)
                .expect("a table never full");
        }
        if self.slots[home] == 0 {
            // Most keys: the first byte of the first group read.
            return home;
        }
        let (mut pos, mut stride) = (home, 0);
        loop {
            let group: &[u32; GROUP] = self.slots[pos..pos + GROUP]
                .try_into()
                .expect("a whole group");
            let empty = group
                .iter()
                .enumerate()
                .fold(0u32, |m, (b, &s)| m | (u32::from(s == 0) << b));
            if empty != 0 {
                return (pos + empty.trailing_zeros() as usize) & mask;
            }
            stride += GROUP;
            pos = (pos + stride) & mask;
        }
    }

    /// The table made anew, one more entry's room at least, its entries
    /// put in it in its order.
    fn grow(&mut self) {
        // An empty table has no buckets (hashbrown's static empty one).
        let more = match self.buckets() {
            0 => 0,
            now => room(now as u64) + 1,
        };
        let buckets = buckets((self.items as u64 + 1).max(more)) as usize;
        let mirror = if buckets >= GROUP { GROUP } else { 0 };
        let old = std::mem::replace(
            self,
            Table {
                slots: vec![0; buckets + mirror],
                values: vec![V::default(); buckets],
                items: 0,
                growth_left: room(buckets as u64) as usize,
            },
        );
        for (slot, value) in old.entries() {
            let at = self.free_slot(slot);
            self.put(at, slot, value);
        }
        self.items = old.items;
        self.growth_left -= old.items;
    }

    /// The entries (slot value, value) in the table's order.
    fn entries(&self) -> impl Iterator<Item = (u32, V)> + '_ {
        self.slots[..self.buckets()]
            .iter()
            .zip(&self.values)
            .filter(|(s, _)| **s != 0)
            .map(|(s, v)| (*s, *v))
    }
}

/// A quadratic function's table as OMMX 2.9.3 builds it from the file:
/// [`pairs`](QuadraticTable::pairs): the nonzero terms in the file's order,
/// then [`linear_part`](QuadraticTable::linear_part), then read the
/// [`growths`](QuadraticTable::growths).
pub struct QuadraticTable {
    table: Table<()>,
    /// FNV's state after a pair's variant index, the same for every pair.
    pair_start: u64,
}

impl Default for QuadraticTable {
    fn default() -> QuadraticTable {
        QuadraticTable {
            table: Table::default(),
            pair_start: fnv(PAIR, &[]),
        }
    }
}

impl QuadraticTable {
    pub fn new() -> QuadraticTable {
        QuadraticTable::default()
    }

    /// Terms of row and column (either order), each pair once.
    pub fn pairs(&mut self, pairs: impl IntoIterator<Item = (u64, u64)>) {
        for (row, column) in pairs {
            let hash = fnv_word(fnv_word(self.pair_start, row.min(column)), row.max(column));
            self.table.insert(hash, PAIR_ENTRY, ());
        }
    }

    /// The linear part: its nonzero terms' variables in the file's order
    /// (each once), and whether its constant is nonzero.
    pub fn linear_part(&mut self, ids: impl IntoIterator<Item = u64>, constant: bool) {
        let mut linear = Table::default();
        for id in ids {
            linear.insert(fnv(VARIABLE, &[id]), LINEAR_ENTRY, id);
        }
        if constant {
            linear.insert(fnv(LINEAR_CONSTANT, &[]), CONSTANT_ENTRY, 0);
        }
        for (slot, id) in linear.entries() {
            let (hash, kind) = match slot >> KIND_SHIFT {
                CONSTANT_ENTRY => (fnv(QUADRATIC_CONSTANT, &[]), CONSTANT_ENTRY),
                _ => (fnv(QUADRATIC_LINEAR, &[id]), LINEAR_ENTRY),
            };
            self.table.insert(hash, kind, ());
        }
    }

    /// Keys inserted.
    pub fn len(&self) -> usize {
        self.table.items
    }

    pub fn is_empty(&self) -> bool {
        self.table.items == 0
    }

    /// The growths of `to_bytes`' vectors as it reads the table in order:
    /// the three pair vectors' together, the linear terms' (the constant
    /// is a field of its own). Each vector starts empty, takes 4 at its
    /// first push and doubles when full.
    pub fn growths(&self) -> Vec<Growth> {
        let (mut pairs, mut linear) = (0, 0);
        // Whether a vector of `len` elements grows for one more.
        let grows = |len: &mut u64| {
            *len += 1;
            pushed(*len, 4) > pushed(*len - 1, 4)
        };
        let kinds = self.table.entries().map(|(slot, ())| slot >> KIND_SHIFT);
        kinds
            .filter_map(|kind| match kind {
                PAIR_ENTRY => grows(&mut pairs).then_some(Growth::Pairs),
                LINEAR_ENTRY => grows(&mut linear).then_some(Growth::Linear),
                _ => None,
            })
            .collect()
    }
}
