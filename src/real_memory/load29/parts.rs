//! The containers of OMMX 2.9.3's load as glibc sees them: a `Vec` pushed
//! to (Rust's `RawVec` growth), a hashbrown table grown insert by insert, a
//! `BTreeMap` filled in key order, cloned and consumed, and a `BTreeSet`
//! built from sorted ids; each makes the calls the traces show.

use crate::model::alloc::{buckets, table_of};
use glibc_model::{Malloc, Ptr};

/// A `Vec` pushed to: 4 elements first, then doubling by `realloc`.
pub(in crate::real_memory) struct Pushed {
    ptr: Option<Ptr>,
    cap: u64,
    elem: u64,
}

impl Pushed {
    pub(in crate::real_memory) fn new(elem: u64) -> Pushed {
        Pushed {
            ptr: None,
            cap: 0,
            elem,
        }
    }

    /// Its `len`-th push (from `len - 1`).
    pub(in crate::real_memory) fn push(&mut self, m: &mut Malloc, len: u64) {
        if len <= self.cap {
            return;
        }
        let cap = if self.cap == 0 { 4 } else { self.cap * 2 };
        self.ptr = Some(match self.ptr {
            None => m.malloc(cap * self.elem),
            Some(p) => m.realloc(p, cap * self.elem),
        });
        self.cap = cap;
    }

    /// The index of the next push that grows it (pushes before it only
    /// write into its capacity).
    pub(in crate::real_memory) fn next_growth(&self) -> u64 {
        self.cap
    }

    /// `n` pushes from empty.
    pub(in crate::real_memory) fn grown(m: &mut Malloc, n: u64, elem: u64) -> Pushed {
        let mut v = Pushed::new(elem);
        if n > 0 {
            v.push(m, 1);
            while v.cap < n {
                v.push(m, v.cap + 1);
            }
        }
        v
    }

    pub(in crate::real_memory) fn free(self, m: &mut Malloc) {
        if let Some(p) = self.ptr {
            m.free(p);
        }
    }

    /// Its buffer, kept by whoever takes it (none when it is empty).
    pub(super) fn into_ptr(self) -> Option<Ptr> {
        self.ptr
    }
}

/// A hashbrown table grown insert by insert to `items`: each larger table
/// made before the smaller one is freed.
pub(super) fn grown_table(m: &mut Malloc, items: u64, entry: u64) -> Option<Ptr> {
    let mut table = None;
    let mut b = 4;
    while items > 0 && b <= buckets(items) {
        let larger = m.malloc(table_of(b, entry));
        if let Some(smaller) = table.replace(larger) {
            m.free(smaller);
        }
        b *= 2;
    }
    table
}

/// A node of a `BTreeMap` and its children.
pub(in crate::real_memory) struct Node {
    keys: u64,
    ptr: Ptr,
    children: Vec<Node>,
}

/// A `BTreeMap` filled in ascending key order: a full node splits as Rust
/// splits it at its end (6 keys stay, the middle one goes up, 4 go right
/// beside the new key), the new node made first, then a parent's split,
/// then a new root.
pub(in crate::real_memory) struct Tree {
    /// The rightmost node of each level, leaf first, with its finished
    /// children (the unfinished one is the level below's).
    spine: Vec<Node>,
    leaf: u64,
    internal: u64,
}

impl Tree {
    pub(in crate::real_memory) fn new(leaf: u64, internal: u64) -> Tree {
        Tree {
            spine: Vec::new(),
            leaf,
            internal,
        }
    }

    pub(in crate::real_memory) fn insert(&mut self, m: &mut Malloc) {
        let Some(leaf) = self.spine.first_mut() else {
            let ptr = m.malloc(self.leaf);
            self.spine.push(Node {
                keys: 1,
                ptr,
                children: Vec::new(),
            });
            return;
        };
        leaf.keys += 1;
        if leaf.keys <= 11 {
            return;
        }
        let mut size = self.leaf;
        let mut level = 0;
        loop {
            // Split the overfull node: the new right one takes its place.
            let right = m.malloc(size);
            let node = &mut self.spine[level];
            let left = Node {
                keys: 6,
                ptr: std::mem::replace(&mut node.ptr, right),
                children: node.children.drain(..node.children.len().min(7)).collect(),
            };
            node.keys = 5;
            level += 1;
            size = self.internal;
            if level == self.spine.len() {
                let ptr = m.malloc(self.internal);
                self.spine.push(Node {
                    keys: 1,
                    ptr,
                    children: vec![left],
                });
                return;
            }
            let parent = &mut self.spine[level];
            parent.children.push(left);
            parent.keys += 1;
            if parent.keys <= 11 {
                return;
            }
        }
    }

    /// The finished tree's root.
    pub(in crate::real_memory) fn root(self) -> Option<Node> {
        let mut below: Option<Node> = None;
        for mut node in self.spine {
            node.children.extend(below.take());
            below = Some(node);
        }
        below
    }
}

/// `BTreeMap::clone`: a leaf made before its entries, an internal node
/// after its first child; `entry` clones one value.
pub(super) fn clone_tree(
    m: &mut Malloc,
    node: &Node,
    sizes: (u64, u64),
    entry: &mut impl FnMut(&mut Malloc),
) -> Node {
    let Some((first, rest)) = node.children.split_first() else {
        let ptr = m.malloc(sizes.0);
        (0..node.keys).for_each(|_| entry(m));
        return Node {
            keys: node.keys,
            ptr,
            children: Vec::new(),
        };
    };
    let mut children = vec![clone_tree(m, first, sizes, entry)];
    let ptr = m.malloc(sizes.1);
    for child in rest {
        entry(m);
        children.push(clone_tree(m, child, sizes, entry));
    }
    Node {
        keys: node.keys,
        ptr,
        children,
    }
}

/// A `BTreeMap` consumed by its `IntoIter`: entries in key order, each node
/// freed once its entries and children are done.
pub(in crate::real_memory) fn consume_tree(
    m: &mut Malloc,
    node: Node,
    entry: &mut impl FnMut(&mut Malloc),
) {
    let mut children = node.children.into_iter();
    if let Some(first) = children.next() {
        consume_tree(m, first, entry);
        for child in children {
            entry(m);
            consume_tree(m, child, entry);
        }
    } else {
        (0..node.keys).for_each(|_| entry(m));
    }
    m.free(node.ptr);
}

/// A `BTreeSet<u64>` bulk-built from `n` sorted ids as Rust builds it
/// (full nodes of 11 keys; a new right subtree, leaf first, each time the
/// rightmost leaf is full; then each node of the right border left with
/// fewer than 5 keys takes the missing ones, and their edges, from its left
/// sibling): its nodes in the order its drop frees them, each after all of
/// its children, the root last. The tcache keeps the last chunks freed of a
/// size, so the order decides where a later trim stops (traced).
pub(in crate::real_memory) fn id_set(m: &mut Malloc, n: u64) -> Vec<Ptr> {
    bulk_tree(m, n, (104, 200))
}

/// A `BTreeMap` bulk-built from `n` sorted entries (`BTreeMap::from_iter`,
/// `BTreeSet::from_iter` after their sort), of nodes of `sizes` (a leaf's
/// and an internal node's bytes), as [`id_set`] builds its set: its nodes
/// in the order its drop frees them.
pub(in crate::real_memory) fn bulk_tree(
    m: &mut Malloc,
    n: u64,
    (leaf, internal): (u64, u64),
) -> Vec<Ptr> {
    const CAPACITY: u64 = 11;
    const MIN_LEN: u64 = 5;
    let open = |ptr| Node {
        keys: 0,
        ptr,
        children: Vec::new(),
    };
    if n == 0 {
        return Vec::new();
    }
    // The rightmost node of each level, leaf first; its finished children
    // are in `children`, the unfinished one is the level below.
    let mut spine = vec![open(m.malloc(leaf))];
    for _ in 0..n {
        if spine[0].keys < CAPACITY {
            spine[0].keys += 1;
            continue;
        }
        let level = match (1..spine.len()).find(|&l| spine[l].keys < CAPACITY) {
            Some(level) => level,
            None => {
                spine.push(open(m.malloc(internal)));
                spine.len() - 1
            }
        };
        spine[level].keys += 1;
        let mut fresh = vec![m.malloc(leaf)];
        fresh.extend((1..level).map(|_| m.malloc(internal)));
        // The nodes below `level` are finished: each joins its parent.
        let mut finished: Option<Node> = None;
        for (l, ptr) in fresh.into_iter().enumerate() {
            let mut done = std::mem::replace(&mut spine[l], open(ptr));
            done.children.extend(finished.take());
            finished = Some(done);
        }
        spine[level].children.extend(finished);
    }
    // The right border, from the root down: an underfull node takes keys
    // (and as many edges) from its left sibling.
    for level in (1..spine.len()).rev() {
        let short = MIN_LEN.saturating_sub(spine[level - 1].keys);
        if short == 0 {
            continue;
        }
        let (lower, upper) = spine.split_at_mut(level);
        let right = &mut lower[level - 1];
        let left = upper[0]
            .children
            .last_mut()
            .expect("a right node short of keys has a left sibling");
        left.keys -= short;
        right.keys += short;
        if level > 1 {
            let moved = left
                .children
                .split_off(left.children.len() - short as usize);
            right.children.splice(0..0, moved);
        }
    }
    // The whole tree, bottom up, then in the order a drop frees it.
    let mut root: Option<Node> = None;
    for mut node in spine {
        node.children.extend(root.take());
        root = Some(node);
    }
    let mut order = Vec::new();
    post_order(root.expect("a root"), &mut order);
    order
}

/// A tree's nodes, each after its children.
fn post_order(node: Node, out: &mut Vec<Ptr>) {
    for child in node.children {
        post_order(child, out);
    }
    out.push(node.ptr);
}

pub(in crate::real_memory) fn free_all(m: &mut Malloc, ptrs: impl IntoIterator<Item = Ptr>) {
    for p in ptrs {
        m.free(p);
    }
}
