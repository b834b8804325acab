//! The one aggregate every output is a view of: a trie of frames where each
//! node holds the bytes and the number of leaves that landed exactly on it.
//!
//! Inserting a leaf walks the trie from the root, but consecutive leaves
//! usually share most of their path, so the walk starts from the longest
//! prefix shared with the previous leaf (compared by pointer for the static
//! frame names that make up nearly every path). A path made only of static
//! names is first looked up whole, by the addresses of its names, in a small
//! table of recent paths: the hundred thousand variables of an instance emit
//! the same ten paths each, and each is then one hash and one compare.

use std::collections::HashMap;

use super::{Frame, LogicalMemoryVisitor, Path};

/// Index of a node in an [`Aggregate`]. The root is [`Aggregate::ROOT`].
pub type NodeId = usize;

#[derive(Debug, Clone)]
pub struct Node {
    pub name: Frame,
    pub parent: Option<NodeId>,
    pub children: Vec<NodeId>,
    /// Bytes of the leaves whose path ends exactly here.
    pub own_bytes: u64,
    /// Number of (non-zero) leaves whose path ends exactly here.
    pub own_leaves: u64,
}

/// Inclusive figures of a node: its own plus all its descendants'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub bytes: u64,
    pub leaves: u64,
}

/// Slots of the child-lookup cache (a power of two).
const CACHE_SLOTS: usize = 1024;

/// One remembered `(parent, static frame) -> child` step.
#[derive(Debug, Clone, Copy, Default)]
struct CacheSlot {
    parent: NodeId,
    frame_ptr: usize,
    frame_len: usize,
    child: NodeId,
}

/// Slots of the whole-path table (a power of two).
const PATH_SLOTS: usize = 256;
/// Slots looked at for one path, from its hash on.
const PATH_PROBES: usize = 4;
/// Paths deeper than this are not kept in the whole-path table.
const PATH_DEPTH: usize = 6;

/// One remembered path of static names (their addresses and lengths) and
/// the node it ends at. `depth` 0 marks an empty slot.
#[derive(Debug, Clone, Copy, Default)]
struct PathSlot {
    depth: usize,
    frames: [(usize, usize); PATH_DEPTH],
    node: NodeId,
}

/// The static names of `frames` as (address, length) pairs and their hash,
/// `None` when a frame is built at run time or the path is too deep.
#[inline]
fn static_key(frames: &[Frame]) -> Option<([(usize, usize); PATH_DEPTH], usize)> {
    if frames.is_empty() || frames.len() > PATH_DEPTH {
        return None;
    }
    let mut key = [(0, 0); PATH_DEPTH];
    let mut hash: u64 = 0;
    for (slot, frame) in key.iter_mut().zip(frames) {
        let Frame::Borrowed(name) = frame else {
            return None;
        };
        let (ptr, len) = (name.as_ptr() as usize, name.len());
        *slot = (ptr, len);
        hash = (hash.rotate_left(5) ^ (ptr as u64) ^ ((len as u64) << 48))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    Some((key, (hash >> 56) as usize % PATH_SLOTS))
}

#[derive(Debug, Clone)]
pub struct Aggregate {
    nodes: Vec<Node>,
    /// Node ids along the previous leaf's path (index i = depth i + 1).
    last_path: Vec<NodeId>,
    /// Direct-mapped cache of child lookups by static frame address, so the
    /// common step costs a hash and a compare instead of a scan.
    /// Allocated on first use and released by [`Aggregate::release_cache`],
    /// so the many finished aggregates of a large archive cost nothing.
    cache: Vec<CacheSlot>,
    /// Direct-mapped table of whole static paths to their node, allocated
    /// and released with `cache`.
    paths: Vec<PathSlot>,
    /// Children by name, for nodes with many children: family frames
    /// (`--group-by name`) can put thousands under one node.
    by_name: HashMap<NodeId, HashMap<Box<str>, NodeId>>,
}

/// Above this many children a node's children are looked up by name
/// instead of scanned.
const SCAN_CHILDREN: usize = 16;

impl Default for Aggregate {
    fn default() -> Self {
        Self::new()
    }
}

fn same_frame(a: &Frame, b: &Frame) -> bool {
    match (a, b) {
        (Frame::Borrowed(x), Frame::Borrowed(y)) if std::ptr::eq(*x, *y) => true,
        _ => a.as_ref() == b.as_ref(),
    }
}

impl Aggregate {
    pub const ROOT: NodeId = 0;

    pub fn new() -> Self {
        Self {
            nodes: vec![Node {
                name: Frame::Borrowed(""),
                parent: None,
                children: Vec::new(),
                own_bytes: 0,
                own_leaves: 0,
            }],
            last_path: Vec::new(),
            // Slot 0 of an empty cache maps (ROOT, null) to ROOT; a null
            // frame pointer never occurs, so it never matches.
            cache: Vec::new(),
            paths: Vec::new(),
            by_name: HashMap::new(),
        }
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1 && self.nodes[0].own_bytes == 0
    }

    /// The child of `parent` named `name`, created if missing.
    pub fn child(&mut self, parent: NodeId, name: &Frame) -> NodeId {
        let children = &self.nodes[parent].children;
        let found = if children.len() > SCAN_CHILDREN {
            self.by_name
                .get(&parent)
                .and_then(|m| m.get(name.as_ref()))
                .copied()
        } else {
            children
                .iter()
                .copied()
                .find(|&c| same_frame(&self.nodes[c].name, name))
        };
        if let Some(id) = found {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            name: name.clone(),
            parent: Some(parent),
            children: Vec::new(),
            own_bytes: 0,
            own_leaves: 0,
        });
        self.nodes[parent].children.push(id);
        let children = &self.nodes[parent].children;
        if children.len() > SCAN_CHILDREN {
            let index = self.by_name.entry(parent).or_default();
            if index.is_empty() {
                for &c in children {
                    index.insert(self.nodes[c].name.as_ref().into(), c);
                }
            } else {
                index.insert(name.as_ref().into(), id);
            }
        }
        id
    }

    /// The node for `frames`, created if missing.
    pub fn node_for(&mut self, frames: &[Frame]) -> NodeId {
        let Some((key, slot)) = static_key(frames) else {
            return self.walk(frames);
        };
        if self.paths.is_empty() {
            self.paths = vec![PathSlot::default(); PATH_SLOTS];
        }
        // Open addressing over a few slots, so that two paths whose names
        // happen to hash alike do not evict each other leaf after leaf.
        let mut free = None;
        for probe in 0..PATH_PROBES {
            let at = (slot + probe) % PATH_SLOTS;
            let hit = &self.paths[at];
            if hit.depth == frames.len() && hit.frames == key {
                return hit.node;
            }
            if hit.depth == 0 {
                free = Some(at);
                break;
            }
        }
        let node = self.walk(frames);
        self.paths[free.unwrap_or(slot)] = PathSlot {
            depth: frames.len(),
            frames: key,
            node,
        };
        node
    }

    /// [`Aggregate::node_for`] step by step, from the longest prefix shared
    /// with the previous walk.
    fn walk(&mut self, frames: &[Frame]) -> NodeId {
        let mut shared = 0;
        while shared < frames.len()
            && shared < self.last_path.len()
            && same_frame(&self.nodes[self.last_path[shared]].name, &frames[shared])
        {
            shared += 1;
        }
        self.last_path.truncate(shared);
        let mut id = self.last_path.last().copied().unwrap_or(Self::ROOT);
        for frame in &frames[shared..] {
            id = match frame {
                Frame::Borrowed(name) => {
                    let (ptr, len) = (name.as_ptr() as usize, name.len());
                    let slot = (id.wrapping_mul(0x9e37_79b9) ^ (ptr >> 3)) % CACHE_SLOTS;
                    if self.cache.is_empty() {
                        self.cache = vec![CacheSlot::default(); CACHE_SLOTS];
                    }
                    let hit = self.cache[slot];
                    if hit.parent == id && hit.frame_ptr == ptr && hit.frame_len == len {
                        hit.child
                    } else {
                        let child = self.child(id, frame);
                        self.cache[slot] = CacheSlot {
                            parent: id,
                            frame_ptr: ptr,
                            frame_len: len,
                            child,
                        };
                        child
                    }
                }
                Frame::Owned(_) => self.child(id, frame),
            };
            self.last_path.push(id);
        }
        id
    }

    /// Frees the insertion caches (about 60 KiB) of an aggregate that is complete;
    /// inserting afterwards still works, only the first steps are slower.
    pub fn release_cache(&mut self) {
        self.cache = Vec::new();
        self.paths = Vec::new();
        self.last_path = Vec::new();
    }

    /// Adds `leaves` leaves totalling `bytes` at `id`.
    pub fn add(&mut self, id: NodeId, bytes: u64, leaves: u64) {
        let node = &mut self.nodes[id];
        node.own_bytes += bytes;
        node.own_leaves += leaves;
    }

    /// Adds everything in `other` below `prefix` (a path from the root).
    pub fn merge_under(&mut self, prefix: &[Frame], other: &Aggregate) {
        let base = self.node_for(prefix);
        self.last_path.clear();
        let mut mapping = vec![base; other.nodes.len()];
        // Parents always precede their children, so one forward pass suffices.
        for (id, node) in other.nodes.iter().enumerate().skip(1) {
            let parent = mapping[node.parent.expect("non-root node has a parent")];
            let mine = self.child(parent, &node.name);
            mapping[id] = mine;
            self.add(mine, node.own_bytes, node.own_leaves);
        }
        self.add(base, other.nodes[0].own_bytes, other.nodes[0].own_leaves);
    }

    /// Inclusive totals of every node, indexed by [`NodeId`].
    pub fn totals(&self) -> Vec<Totals> {
        let mut totals: Vec<Totals> = self
            .nodes
            .iter()
            .map(|n| Totals {
                bytes: n.own_bytes,
                leaves: n.own_leaves,
            })
            .collect();
        for id in (1..self.nodes.len()).rev() {
            let parent = self.nodes[id].parent.expect("non-root node has a parent");
            let t = totals[id];
            totals[parent].bytes += t.bytes;
            totals[parent].leaves += t.leaves;
        }
        totals
    }

    /// Total bytes of every leaf.
    pub fn total_bytes(&self) -> u64 {
        self.nodes.iter().map(|n| n.own_bytes).sum()
    }

    /// The frames from the root (exclusive) down to `id`.
    pub fn frames_of(&self, mut id: NodeId) -> Vec<&str> {
        let mut frames = Vec::new();
        while let Some(parent) = self.nodes[id].parent {
            frames.push(self.nodes[id].name.as_ref());
            id = parent;
        }
        frames.reverse();
        frames
    }

    /// Every node with bytes or leaves of its own: its `;`-joined path,
    /// bytes and leaves, sorted (what two aggregates are compared by in
    /// tests).
    #[cfg(test)]
    pub(crate) fn own_lines(&self) -> Vec<(String, u64, u64)> {
        let mut lines: Vec<_> = (1..self.nodes.len())
            .filter(|&id| self.nodes[id].own_bytes > 0 || self.nodes[id].own_leaves > 0)
            .map(|id| {
                let node = &self.nodes[id];
                (
                    self.frames_of(id).join(";"),
                    node.own_bytes,
                    node.own_leaves,
                )
            })
            .collect();
        lines.sort();
        lines
    }

    /// Every node that holds bytes of its own, with its `;`-joined path,
    /// sorted as whole strings (the order of OMMX's folded output).
    pub fn folded_lines(&self) -> Vec<(String, u64)> {
        self.folded_nodes()
            .into_iter()
            .map(|(id, path)| (path, self.nodes[id].own_bytes))
            .collect()
    }

    /// The nodes of [`Aggregate::folded_lines`], in its order, each with its
    /// `;`-joined path.
    pub fn folded_nodes(&self) -> Vec<(NodeId, String)> {
        let mut lines = Vec::new();
        let mut stack: Vec<(NodeId, String)> = self.nodes[Self::ROOT]
            .children
            .iter()
            .map(|&c| (c, self.nodes[c].name.to_string()))
            .collect();
        while let Some((id, path)) = stack.pop() {
            let node = &self.nodes[id];
            for &c in &node.children {
                stack.push((c, format!("{path};{}", self.nodes[c].name)));
            }
            if node.own_bytes > 0 {
                lines.push((id, path));
            }
        }
        lines.sort_unstable_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
        lines
    }
}

impl LogicalMemoryVisitor for Aggregate {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        // OMMX drops zero-byte leaves; so do we, leaf count included.
        if bytes == 0 {
            return;
        }
        let id = self.node_for(path.frames());
        self.add(id, bytes as u64, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(agg: &mut Aggregate, frames: &[&'static str], bytes: usize) {
        let mut path = Path::new();
        for f in frames {
            path.frames.push(Frame::Borrowed(f));
        }
        agg.visit_leaf(&path, bytes);
    }

    #[test]
    fn sums_leaves_per_path_and_sorts_lines_bytewise() {
        let mut agg = Aggregate::new();
        visit(&mut agg, &["A", "B"], 3);
        visit(&mut agg, &["A"], 5);
        visit(&mut agg, &["A", "B"], 4);
        visit(&mut agg, &["A b"], 1);
        visit(&mut agg, &["A", "C"], 0);
        let lines = agg.folded_lines();
        assert_eq!(
            lines,
            vec![
                ("A".to_string(), 5),
                ("A b".to_string(), 1),
                ("A;B".to_string(), 7)
            ]
        );
        let totals = agg.totals();
        assert_eq!(
            totals[Aggregate::ROOT],
            Totals {
                bytes: 13,
                leaves: 4
            }
        );
    }

    #[test]
    fn merge_under_prefixes_every_path() {
        let mut layer = Aggregate::new();
        visit(&mut layer, &["A", "B"], 3);
        let mut all = Aggregate::new();
        all.merge_under(&[Frame::Borrowed("L0")], &layer);
        all.merge_under(&[Frame::Borrowed("L1")], &layer);
        let lines = all.folded_lines();
        assert_eq!(lines, vec![("L0;A;B".into(), 3), ("L1;A;B".into(), 3)]);
    }

    #[test]
    fn whole_paths_resolve_to_their_nodes_however_they_collide() {
        // More static paths than the table has slots, visited in turns, so
        // that slots are overwritten: every leaf still lands on its path.
        let names: Vec<&'static str> = (0..60)
            .map(|i| &*Box::leak(format!("F{i}").into_boxed_str()))
            .collect();
        let mut agg = Aggregate::new();
        let mut expected = std::collections::BTreeMap::new();
        for round in 0..3 {
            for (i, a) in names.iter().enumerate() {
                for b in &names[..(i % 9) + 1] {
                    let bytes = 1 + round + i;
                    visit(&mut agg, &[a, b], bytes);
                    *expected.entry(format!("{a};{b}")).or_insert(0) += bytes as u64;
                }
            }
        }
        assert!(expected.len() > PATH_SLOTS);
        let lines: Vec<(String, u64)> = expected.into_iter().collect();
        assert_eq!(agg.folded_lines(), lines);
    }
}
