//! What one allocation really takes: glibc malloc's chunks, hashbrown's
//! tables, the nodes of a `BTreeMap` filled in key order and the capacity a
//! `Vec` reaches when pushed to. Every number here was read from an
//! allocation trace of ommx 2.9.3 in Python (an `LD_PRELOAD` interposer
//! recording each request and the chunk glibc returned; see
//! `bench/real_memory.md`), and the unit tests hold the arithmetic to it.

use glibc_model::PAGE;

/// The heap chunk glibc malloc carves for a request of `bytes`: the request
/// plus its 8-byte size header, rounded up to 16, at least 32. Nothing for
/// no request (an empty `Vec` or `String` allocates nothing).
pub const fn chunk(bytes: u64) -> u64 {
    if bytes == 0 {
        return 0;
    }
    glibc_model::request(bytes)
}

/// The pages a mapped request takes (a 16-byte header, then whole pages).
pub const fn mapped(bytes: u64) -> u64 {
    if bytes == 0 {
        return 0;
    }
    (bytes + 16 + PAGE - 1) & !(PAGE - 1)
}

/// Buckets of a hashbrown table holding `items` (std's `HashMap`, and so
/// `FnvHashMap`, are hashbrown): grown one insert at a time or made with
/// `with_capacity(items)`, it ends at the same count: 4 up to 3 items, 8 up
/// to 7, then the next power of two of `items * 8 / 7`.
pub const fn buckets(items: u64) -> u64 {
    match items {
        0 => 0,
        1..=3 => 4,
        4..=7 => 8,
        _ => (items * 8).div_ceil(7).next_power_of_two(),
    }
}

/// Entries a hashbrown table of `buckets` buckets holds before it grows:
/// all but one up to 8 buckets, then 7/8 of them.
pub const fn room(buckets: u64) -> u64 {
    if buckets <= 8 {
        buckets.saturating_sub(1)
    } else {
        buckets / 8 * 7
    }
}

/// Bytes of the one allocation of a hashbrown table of `buckets` buckets of
/// `entry` bytes: the buckets (rounded up to 16), a control byte per bucket
/// and a 16-byte group of trailing control bytes.
pub const fn table_of(buckets: u64, entry: u64) -> u64 {
    ((buckets * entry + 15) & !15) + buckets + 16
}

/// Bytes of the table of `items` entries of `entry` bytes.
pub const fn table(items: u64, entry: u64) -> u64 {
    let b = buckets(items);
    if b == 0 {
        return 0;
    }
    table_of(b, entry)
}

/// Bytes of the table a hashbrown table of `items` entries grew from: half
/// its buckets (none for the first table, of 4). Both are there while the
/// last insert rehashes.
pub const fn grown_from(items: u64, entry: u64) -> u64 {
    let b = buckets(items) / 2;
    if b < 4 {
        return 0;
    }
    table_of(b, entry)
}

/// Capacity a `Vec` reaches when its `items` are pushed one at a time (as
/// prost decodes repeated and packed fields): 4 first (8 for bytes), then
/// doubling.
pub const fn pushed(items: u64, min: u64) -> u64 {
    if items == 0 {
        0
    } else if items <= min {
        min
    } else {
        items.next_power_of_two()
    }
}

/// Nodes of a `BTreeMap` whose `keys` were inserted in ascending order (as
/// OMMX inserts its entities, in file order): each full node of 11 keys
/// splits into 6 left and 5 right, so every 7 keys past the first 11 add a
/// node, at each level the keys pushed up from the level below.
/// Returns (leaves, internal nodes).
pub const fn btree_nodes(keys: u64) -> (u64, u64) {
    let leaves = level(keys);
    let mut internal = 0;
    let mut below = leaves;
    while below > 1 {
        let here = level(below - 1);
        internal += here;
        below = here;
    }
    (leaves, internal)
}

const fn level(keys: u64) -> u64 {
    match keys {
        0 => 0,
        1..=11 => 1,
        _ => 1 + (keys - 11).div_ceil(7),
    }
}

/// Bytes of a `BTreeMap` leaf node of 8-byte keys and `value`-byte values:
/// a parent pointer, 11 keys, 11 values, a parent index and a length,
/// aligned to 8.
pub const fn btree_leaf(value: u64) -> u64 {
    (8 + 11 * 8 + 11 * value + 4 + 7) & !7
}

/// An internal node: a leaf and 12 edges.
pub const fn btree_internal(value: u64) -> u64 {
    btree_leaf(value) + 12 * 8
}

/// Heap bytes of a `BTreeMap<u64, V>` of `keys` entries filled in order.
pub const fn btree(keys: u64, value: u64) -> u64 {
    let (leaves, internal) = btree_nodes(keys);
    leaves * chunk(btree_leaf(value)) + internal * chunk(btree_internal(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests and the chunk glibc returned for them, from the trace.
    #[test]
    fn chunks_are_the_ones_glibc_returned() {
        for (request, chunk_bytes) in [
            (1, 32),
            (8, 32),
            (24, 32),
            (25, 48),
            (32, 48),
            (116, 128),
            (416, 432),
            (1616, 1632),
            (1776, 1792),
            (1864, 1872),
            (1872, 1888),
            (1960, 1968),
            (409_616, 409_632),
        ] {
            assert_eq!(chunk(request), chunk_bytes, "request {request}");
        }
        assert_eq!(chunk(0), 0);
        assert_eq!(mapped(2_883_584), 2_887_680);
    }

    /// The tables of linear functions in the trace: 3 entries (2 terms and
    /// a constant) took 116 bytes, 51 entries 1,616, the 10,000-term
    /// objective 409,616; hashbrown's own rule between.
    #[test]
    fn tables_are_the_sizes_traced() {
        assert_eq!(table(3, 24), 116);
        assert_eq!(table(51, 24), 1616);
        assert_eq!(table(10_000, 24), 409_616);
        assert_eq!(table(0, 24), 0);
        assert_eq!(grown_from(51, 24), 32 * 24 + 32 + 16);
        assert_eq!(grown_from(3, 24), 0);
        assert_eq!(
            [1, 3, 4, 7, 8, 14, 15, 28, 29, 56, 57].map(buckets),
            [4, 4, 8, 8, 16, 16, 32, 32, 64, 64, 128]
        );
    }

    /// Node counts and sizes of the maps of 10,000 variables (152-byte
    /// values) and 2,000 constraints (160-byte values) in the trace: 1,428
    /// leaves of 1,776 bytes and 238 internal nodes of 1,872; 286 leaves of
    /// 1,864 bytes.
    #[test]
    fn btree_nodes_are_the_ones_traced() {
        assert_eq!(btree_nodes(10_000), (1428, 238));
        assert_eq!(btree_nodes(2_000).0, 286);
        assert_eq!(btree_nodes(20_000).0, 2857);
        assert_eq!(btree_nodes(0), (0, 0));
        assert_eq!(btree_nodes(11), (1, 0));
        assert_eq!(btree_nodes(12), (2, 1));
        assert_eq!((btree_leaf(152), btree_internal(152)), (1776, 1872));
        assert_eq!((btree_leaf(160), btree_internal(160)), (1864, 1960));
        assert_eq!(btree_leaf(216), 2480);
    }

    #[test]
    fn pushed_vectors_double_from_their_minimum() {
        assert_eq!(
            [0, 1, 4, 5, 9, 51].map(|n| pushed(n, 4)),
            [0, 4, 4, 8, 16, 64]
        );
        assert_eq!(pushed(1, 8), 8);
    }
}
