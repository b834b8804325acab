//! The tree a page's flamegraph draws, flattened for JSON: nodes in
//! preorder (each followed by its subtree), one column per figure, frame
//! names in a table of their own (a name such as `Vec[stack]` recurs all
//! over a profile).
//!
//! A tree is kept small enough to ship and to draw: frames below a share of
//! the total too small to see, even zoomed in a hundredfold, are folded per
//! parent into one `(N others)` frame holding their bytes and leaves, so
//! every level still adds up to its parent.

use std::collections::HashMap;

use serde::Serialize;

use crate::diff::Diff;
use crate::profile::Aggregate;
use crate::profiled::Profile;

/// Frames below this share of the total are folded (1/100,000: a pixel of
/// a 1,000-pixel graph zoomed a hundredfold).
pub const MIN_SHARE: f64 = 1e-5;

/// At most this many frames, `(N others)` frames included: the share is
/// raised when more than half of them would be above it (each parent gets
/// at most one `(N others)` frame).
pub const MAX_FRAMES: usize = 20_000;

/// A flattened tree (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlameTree {
    /// The distinct frame names; `name` indexes it.
    pub names: Vec<String>,
    pub name: Vec<u32>,
    /// Inclusive bytes (of the new side, in a diff).
    pub bytes: Vec<u64>,
    /// Inclusive leaves.
    pub leaves: Vec<u64>,
    /// How many children follow each node (their subtrees in between).
    pub children: Vec<u32>,
    /// A diff's old side: inclusive bytes and leaves, zero where the path
    /// did not exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_bytes: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_leaves: Option<Vec<u64>>,
    /// The smallest frame kept unfolded, in bytes, and how many were folded.
    pub min_bytes: u64,
    pub folded: u64,
}

/// What the flattening needs to know of a tree.
trait Shape {
    /// Children, in the order they are drawn.
    fn children(&self, id: usize) -> Vec<usize>;
    fn name(&self, id: usize) -> &str;
    /// (bytes, leaves) of the drawn side (a diff's new side).
    fn after(&self, id: usize) -> (u64, u64);
    /// (bytes, leaves) of a diff's old side.
    fn before(&self, id: usize) -> Option<(u64, u64)>;
    /// The size that decides whether a node is folded.
    fn size(&self, id: usize) -> u64 {
        let before = self.before(id).map_or(0, |o| o.0);
        self.after(id).0.max(before)
    }
    fn len(&self) -> usize;
}

impl Shape for Profile<'_> {
    fn children(&self, id: usize) -> Vec<usize> {
        self.sorted_children(id)
    }
    fn name(&self, id: usize) -> &str {
        self.aggregate.node(id).name.as_ref()
    }
    fn after(&self, id: usize) -> (u64, u64) {
        let t = self.totals[id];
        (t.bytes, t.leaves)
    }
    fn before(&self, _id: usize) -> Option<(u64, u64)> {
        None
    }
    fn len(&self) -> usize {
        self.aggregate.len()
    }
}

impl Shape for Diff {
    /// Largest side first, so the widest frames stand left in either width.
    fn children(&self, id: usize) -> Vec<usize> {
        let mut children = self.node(id).children.clone();
        children.sort_by(|&a, &b| {
            self.size(b)
                .cmp(&self.size(a))
                .then_with(|| self.node(a).name.cmp(&self.node(b).name))
        });
        children
    }
    fn name(&self, id: usize) -> &str {
        &self.node(id).name
    }
    fn after(&self, id: usize) -> (u64, u64) {
        let n = self.node(id);
        (n.new_bytes(), n.new_leaves())
    }
    fn before(&self, id: usize) -> Option<(u64, u64)> {
        let n = self.node(id);
        Some((n.old_bytes(), n.old_leaves()))
    }
    fn len(&self) -> usize {
        Diff::len(self)
    }
}

impl FlameTree {
    /// The profile's tree; the root is named `total`.
    pub fn of_profile(profile: &Profile<'_>) -> Self {
        flatten(profile, Aggregate::ROOT)
    }

    /// The union of a diff's paths with both sides' figures.
    pub fn of_diff(diff: &Diff) -> Self {
        flatten(diff, Diff::ROOT)
    }

    pub fn len(&self) -> usize {
        self.name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
}

/// The smallest size kept: [`MIN_SHARE`] of the total, raised so that at
/// most half of [`MAX_FRAMES`] frames are at or above it.
fn threshold(shape: &impl Shape, root: usize) -> u64 {
    let total = shape.size(root);
    let by_share = ((total as f64 * MIN_SHARE).ceil() as u64).max(1);
    let kept = MAX_FRAMES / 2;
    let mut sizes: Vec<u64> = (0..shape.len()).map(|id| shape.size(id)).collect();
    if sizes.len() <= kept {
        return by_share;
    }
    let (_, &mut nth, _) = sizes.select_nth_unstable_by(kept, |a, b| b.cmp(a));
    by_share.max(nth + 1)
}

struct Builder {
    tree: FlameTree,
    index: HashMap<String, u32>,
    diff: bool,
}

impl Builder {
    fn push(&mut self, name: &str, new: (u64, u64), old: Option<(u64, u64)>) -> usize {
        let next = self.index.len() as u32;
        let at = *self.index.entry(name.to_string()).or_insert_with(|| {
            self.tree.names.push(name.to_string());
            next
        });
        let t = &mut self.tree;
        t.name.push(at);
        t.bytes.push(new.0);
        t.leaves.push(new.1);
        t.children.push(0);
        if self.diff {
            let (bytes, leaves) = old.unwrap_or_default();
            t.old_bytes.get_or_insert_with(Vec::new).push(bytes);
            t.old_leaves.get_or_insert_with(Vec::new).push(leaves);
        }
        t.name.len() - 1
    }
}

fn flatten(shape: &impl Shape, root: usize) -> FlameTree {
    let diff = shape.before(root).is_some();
    let mut b = Builder {
        tree: FlameTree {
            names: Vec::new(),
            name: Vec::new(),
            bytes: Vec::new(),
            leaves: Vec::new(),
            children: Vec::new(),
            old_bytes: diff.then(Vec::new),
            old_leaves: diff.then(Vec::new),
            min_bytes: threshold(shape, root),
            folded: 0,
        },
        index: HashMap::new(),
        diff,
    };
    b.push("total", shape.after(root), shape.before(root));
    visit(shape, root, 0, &mut b);
    b.tree
}

/// Writes the children of `id` (already written at `at`) and their subtrees.
fn visit(shape: &impl Shape, id: usize, at: usize, b: &mut Builder) {
    let children = shape.children(id);
    let min = b.tree.min_bytes;
    let small: Vec<usize> = children
        .iter()
        .copied()
        .filter(|&c| shape.size(c) < min)
        .collect();
    // One small child alone is drawn: folding it would hide its name for nothing.
    let fold = small.len() > 1;
    for &c in &children {
        if fold && shape.size(c) < min {
            continue;
        }
        let child = b.push(shape.name(c), shape.after(c), shape.before(c));
        b.tree.children[at] += 1;
        visit(shape, c, child, b);
    }
    if fold {
        let sum = |side: &dyn Fn(usize) -> Option<(u64, u64)>| {
            small.iter().fold((0, 0), |(bytes, leaves), &c| {
                let (b2, l2) = side(c).unwrap_or_default();
                (bytes + b2, leaves + l2)
            })
        };
        let new = sum(&|c| Some(shape.after(c)));
        let old = b.diff.then(|| sum(&|c| shape.before(c)));
        b.push(&format!("({} others)", small.len()), new, old);
        b.tree.children[at] += 1;
        b.tree.folded += small.len() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Frame;
    use crate::profiled::{
        Account, Accounting, Container, InputInfo, ProfiledInput, ProfiledInstance,
    };

    fn aggregate(leaves: &[(&[&'static str], u64)]) -> Aggregate {
        let mut a = Aggregate::new();
        for (frames, bytes) in leaves {
            let frames: Vec<Frame> = frames.iter().map(|f| Frame::Borrowed(f)).collect();
            let id = a.node_for(&frames);
            a.add(id, *bytes, 1);
        }
        a
    }

    fn report(aggregate: Aggregate) -> ProfiledInput {
        ProfiledInput {
            input: InputInfo {
                name: "x.pb".into(),
                file_bytes: None,
                container: Container::Raw,
                gzip: false,
                layers: Vec::new(),
                raw_schema: None,
                registry: None,
            },
            instances: vec![ProfiledInstance {
                instance_index: None,
                observed_as: None,
                title: None,
                summary: Default::default(),
                aggregate,
                wire: None,
                schema: crate::profiled::Schema::V1,
                accounting: Accounting::Ommx29,
                gathered: None,
                real_memory: None,
                compared: Vec::new(),
            }],
        }
    }

    /// (depth, name, bytes) in preorder, rebuilt from the columns.
    fn rows(t: &FlameTree) -> Vec<(usize, &str, u64)> {
        let mut out = Vec::new();
        let mut open: Vec<u32> = Vec::new();
        for i in 0..t.len() {
            out.push((open.len(), t.names[t.name[i] as usize].as_str(), t.bytes[i]));
            if let Some(last) = open.last_mut() {
                *last -= 1;
            }
            open.push(t.children[i]);
            while open.last() == Some(&0) && open.len() > 1 {
                open.pop();
            }
        }
        out
    }

    #[test]
    fn preorder_largest_first_with_shared_names() {
        let r = report(aggregate(&[
            (&["A", "Vec[stack]"], 10),
            (&["B", "Vec[stack]"], 30),
            (&["B", "C"], 5),
        ]));
        let t = FlameTree::of_profile(&Profile::of(&r, Account::Memory));
        assert_eq!(
            rows(&t),
            [
                (0, "total", 45),
                (1, "B", 35),
                (2, "Vec[stack]", 30),
                (2, "C", 5),
                (1, "A", 10),
                (2, "Vec[stack]", 10),
            ]
        );
        assert_eq!(t.names, ["total", "B", "Vec[stack]", "C", "A"]);
        assert_eq!((t.folded, t.old_bytes.is_none()), (0, true));
    }

    #[test]
    fn frames_too_small_to_see_are_folded_and_still_add_up() {
        let mut leaves: Vec<(&[&'static str], u64)> = vec![(&["Big"], 10_000_000)];
        // Three tiny siblings fold into one frame; the lone tiny one under
        // Big stays itself.
        leaves.extend([
            (&["t1"][..], 1),
            (&["t2"][..], 2),
            (&["t3"][..], 3),
            (&["Big", "lone"][..], 4),
        ]);
        let r = report(aggregate(&leaves));
        let t = FlameTree::of_profile(&Profile::of(&r, Account::Memory));
        assert_eq!(t.min_bytes, 101);
        assert_eq!(
            rows(&t),
            [
                (0, "total", 10_000_010),
                (1, "Big", 10_000_004),
                (2, "lone", 4),
                (1, "(3 others)", 6),
            ]
        );
        assert_eq!(t.folded, 3);
        assert_eq!(t.leaves[3], 3);
    }

    #[test]
    fn many_frames_raise_the_threshold_and_still_add_up() {
        // 12,000 parents, each with one sizeable child and two tiny ones.
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let paths: Vec<[&'static str; 2]> = (0..12_000)
            .flat_map(|i| {
                let p = leak(format!("p{i}"));
                [[p, "a"], [p, "b"], [p, "c"]]
            })
            .collect();
        let leaves: Vec<(&[&'static str], u64)> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| (&p[..], if p[1] == "a" { 1000 + i as u64 } else { 1 }))
            .collect();
        let r = report(aggregate(&leaves));
        let t = FlameTree::of_profile(&Profile::of(&r, Account::Memory));
        assert!(t.len() <= MAX_FRAMES, "{} frames", t.len());
        assert!(t.folded > 0 && t.min_bytes > 1);
        // Every frame with children holds exactly their bytes (the leaves
        // are at the bottom here).
        let rows = rows(&t);
        for (i, &(depth, _, bytes)) in rows.iter().enumerate() {
            let below: u64 = rows[i + 1..]
                .iter()
                .take_while(|r| r.0 > depth)
                .filter(|r| r.0 == depth + 1)
                .map(|r| r.2)
                .sum();
            assert!(below == 0 || below == bytes, "row {i}: {below} != {bytes}");
        }
    }

    #[test]
    fn a_diff_carries_both_sides() {
        let old = aggregate(&[(&["A"], 10), (&["Gone"], 4)]);
        let new = aggregate(&[(&["A"], 12), (&["Added"], 20)]);
        let t = FlameTree::of_diff(&Diff::new(&old, &new));
        let names: Vec<&str> = t
            .name
            .iter()
            .map(|&n| t.names[n as usize].as_str())
            .collect();
        assert_eq!(names, ["total", "Added", "A", "Gone"]);
        assert_eq!(t.bytes, [32, 20, 12, 0]);
        assert_eq!(t.old_bytes.as_deref(), Some(&[14, 0, 10, 4][..]));
    }
}
