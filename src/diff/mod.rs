//! Two profiles side by side: the union of their paths, each with its old
//! and new inclusive bytes and leaves. Inclusive figures make every ancestor
//! carry the sum of its descendants' deltas. A path present on one side only
//! is added or removed; the other side counts as zero bytes.
//!
//! `check` evaluates its rules on the same union, with an empty old side when
//! there is no baseline.

use std::collections::BTreeMap;

use crate::profile::aggregate::Totals;
use crate::profile::{Aggregate, NodeId};
use crate::profiled::InstanceSummary;
use crate::profiled::Profile;

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Added,
    Removed,
    Changed,
    Unchanged,
}

#[derive(Debug, Clone)]
pub struct DiffNode {
    pub name: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Inclusive figures; `None` where the path does not exist.
    pub old: Option<Totals>,
    pub new: Option<Totals>,
    pub old_own: u64,
    pub new_own: u64,
    /// Whether anything at or below this path differs.
    pub changed: bool,
}

impl DiffNode {
    pub fn old_bytes(&self) -> u64 {
        self.old.map_or(0, |t| t.bytes)
    }
    pub fn new_bytes(&self) -> u64 {
        self.new.map_or(0, |t| t.bytes)
    }
    pub fn old_leaves(&self) -> u64 {
        self.old.map_or(0, |t| t.leaves)
    }
    pub fn new_leaves(&self) -> u64 {
        self.new.map_or(0, |t| t.leaves)
    }
    /// New minus old bytes (both fit in i64: baselines are checked, and
    /// decoded instances are far smaller).
    pub fn delta(&self) -> i64 {
        self.new_bytes() as i64 - self.old_bytes() as i64
    }
    /// The delta as a percentage of the old bytes; `None` when there were none.
    pub fn delta_percent(&self) -> Option<f64> {
        match self.old_bytes() {
            0 if self.new_bytes() == 0 => Some(0.0),
            0 => None,
            old => Some(self.delta() as f64 * 100.0 / old as f64),
        }
    }
    pub fn status(&self) -> Status {
        match (self.old, self.new) {
            (None, Some(_)) => Status::Added,
            (Some(_), None) => Status::Removed,
            _ if self.changed => Status::Changed,
            _ => Status::Unchanged,
        }
    }
}

/// The union of two profiles' paths. Node 0 is the root (the total).
#[derive(Debug, Clone)]
pub struct Diff {
    pub nodes: Vec<DiffNode>,
    paths: Vec<String>,
}

impl Diff {
    pub const ROOT: usize = 0;

    /// Compares two aggregates.
    pub fn new(old: &Aggregate, new: &Aggregate) -> Self {
        let (old_totals, new_totals) = (old.totals(), new.totals());
        let sides = Sides {
            old,
            new,
            old_totals: &old_totals,
            new_totals: &new_totals,
        };
        let mut diff = Diff {
            nodes: Vec::new(),
            paths: Vec::new(),
        };
        diff.build(
            &sides,
            None,
            String::new(),
            Some(Aggregate::ROOT),
            Some(Aggregate::ROOT),
        );
        diff
    }

    /// Compares two profiles.
    pub fn of(old: &Profile<'_>, new: &Profile<'_>) -> Self {
        Self::new(&old.aggregate, &new.aggregate)
    }

    fn build(
        &mut self,
        sides: &Sides<'_>,
        parent: Option<usize>,
        name: String,
        old: Option<NodeId>,
        new: Option<NodeId>,
    ) -> usize {
        let id = self.nodes.len();
        let path = match parent {
            None => String::new(),
            Some(Self::ROOT) => name.clone(),
            Some(p) => format!("{};{name}", self.paths[p]),
        };
        let old_own = old.map_or(0, |o| sides.old.node(o).own_bytes);
        let new_own = new.map_or(0, |n| sides.new.node(n).own_bytes);
        let own_differs = old.is_some() != new.is_some()
            || old_own != new_own
            || old.map(|o| sides.old.node(o).own_leaves)
                != new.map(|n| sides.new.node(n).own_leaves);
        self.nodes.push(DiffNode {
            name,
            parent,
            children: Vec::new(),
            old: old.map(|o| sides.old_totals[o]),
            new: new.map(|n| sides.new_totals[n]),
            old_own,
            new_own,
            changed: own_differs,
        });
        self.paths.push(path);
        let mut children: BTreeMap<&str, (Option<NodeId>, Option<NodeId>)> = BTreeMap::new();
        if let Some(o) = old {
            for &c in &sides.old.node(o).children {
                children
                    .entry(sides.old.node(c).name.as_ref())
                    .or_default()
                    .0 = Some(c);
            }
        }
        if let Some(n) = new {
            for &c in &sides.new.node(n).children {
                children
                    .entry(sides.new.node(c).name.as_ref())
                    .or_default()
                    .1 = Some(c);
            }
        }
        for (child_name, (o, n)) in children {
            let child = self.build(sides, Some(id), child_name.to_string(), o, n);
            self.nodes[id].children.push(child);
            if self.nodes[child].changed {
                self.nodes[id].changed = true;
            }
        }
        id
    }

    pub fn node(&self, id: usize) -> &DiffNode {
        &self.nodes[id]
    }

    pub fn root(&self) -> &DiffNode {
        &self.nodes[Self::ROOT]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 1
    }

    /// The `;`-joined frames of `id` (empty for the root).
    pub fn path(&self, id: usize) -> &str {
        &self.paths[id]
    }

    /// The frames of `id`, outermost first.
    pub fn frames(&self, id: usize) -> Vec<&str> {
        let mut frames = Vec::new();
        let mut at = id;
        while let Some(parent) = self.nodes[at].parent {
            frames.push(self.nodes[at].name.as_str());
            at = parent;
        }
        frames.reverse();
        frames
    }

    fn by_size_of_change(&self, a: usize, b: usize) -> std::cmp::Ordering {
        let (na, nb) = (&self.nodes[a], &self.nodes[b]);
        nb.delta()
            .unsigned_abs()
            .cmp(&na.delta().unsigned_abs())
            .then_with(|| nb.changed.cmp(&na.changed))
            .then_with(|| self.paths[a].cmp(&self.paths[b]))
    }

    /// Children of `id`, largest |delta| first, then changed before
    /// unchanged, then by name.
    pub fn sorted_children(&self, id: usize) -> Vec<usize> {
        let mut children = self.nodes[id].children.clone();
        children.sort_by(|&a, &b| self.by_size_of_change(a, b));
        children
    }

    /// Every path (not the root), largest |delta| first, then changed
    /// before unchanged, then by path.
    pub fn ranked(&self) -> Vec<usize> {
        let mut ids: Vec<usize> = (1..self.nodes.len()).collect();
        ids.sort_by(|&a, &b| self.by_size_of_change(a, b));
        ids
    }

    /// Paths holding bytes of their own on either side, with old and new own
    /// bytes, sorted as whole strings: the two-column folded format.
    pub fn folded_lines(&self) -> Vec<(&str, u64, u64)> {
        let mut lines: Vec<(&str, u64, u64)> = (1..self.nodes.len())
            .filter(|&id| self.nodes[id].old_own > 0 || self.nodes[id].new_own > 0)
            .map(|id| {
                let n = &self.nodes[id];
                (self.paths[id].as_str(), n.old_own, n.new_own)
            })
            .collect();
        lines.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        lines
    }
}

struct Sides<'a> {
    old: &'a Aggregate,
    new: &'a Aggregate,
    old_totals: &'a [Totals],
    new_totals: &'a [Totals],
}

/// One compared count (variables, constraints, ...).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Count {
    pub name: &'static str,
    pub old: u64,
    pub new: u64,
    pub delta: i64,
}

/// The entity counts and totals of both sides.
pub fn counts(
    old: &InstanceSummary,
    new: &InstanceSummary,
    old_root: Totals,
    new_root: Totals,
) -> Vec<Count> {
    let row = |name, old: u64, new: u64| Count {
        name,
        old,
        new,
        delta: new as i64 - old as i64,
    };
    vec![
        row("variables", old.variables, new.variables),
        row("constraints", old.constraints, new.constraints),
        row(
            "removed constraints",
            old.removed_constraints,
            new.removed_constraints,
        ),
        row("named functions", old.named_functions, new.named_functions),
        row("stored terms", old.terms, new.terms),
        row("leaves", old_root.leaves, new_root.leaves),
        row("bytes", old_root.bytes, new_root.bytes),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Frame;

    fn agg(leaves: &[(&[&'static str], u64)]) -> Aggregate {
        let mut a = Aggregate::new();
        for (frames, bytes) in leaves {
            let frames: Vec<Frame> = frames.iter().map(|f| Frame::Borrowed(f)).collect();
            let id = a.node_for(&frames);
            a.add(id, *bytes, 1);
        }
        a
    }

    #[test]
    fn ancestors_carry_their_descendants_deltas() {
        let old = agg(&[(&["A", "B"], 10), (&["A", "C"], 5), (&["D"], 7)]);
        let new = agg(&[(&["A", "B"], 14), (&["A", "E"], 3), (&["D"], 7)]);
        let d = Diff::new(&old, &new);
        let find = |p: &str| (0..d.len()).find(|&i| d.path(i) == p).unwrap();
        assert_eq!(d.root().delta(), 2);
        assert_eq!(d.node(find("A")).delta(), 2);
        assert_eq!(d.node(find("A;B")).delta(), 4);
        assert_eq!(d.node(find("A;C")).status(), Status::Removed);
        assert_eq!(d.node(find("A;E")).status(), Status::Added);
        assert_eq!(d.node(find("D")).status(), Status::Unchanged);
        assert_eq!(d.node(find("A;C")).delta_percent(), Some(-100.0));
        assert_eq!(d.node(find("A;E")).delta_percent(), None);
        let ranked: Vec<&str> = d.ranked().into_iter().map(|i| d.path(i)).collect();
        assert_eq!(ranked, ["A;C", "A;B", "A;E", "A", "D"]);
        assert_eq!(
            d.folded_lines(),
            vec![("A;B", 10, 14), ("A;C", 5, 0), ("A;E", 0, 3), ("D", 7, 7)]
        );
    }

    #[test]
    fn self_diff_is_unchanged_everywhere() {
        let a = agg(&[(&["A", "B"], 10), (&["A"], 5)]);
        let d = Diff::new(&a, &a);
        assert!(d.nodes.iter().all(|n| !n.changed && n.delta() == 0));
    }
}
