//! The logical-memory traversal: types say what their leaves are, visitors
//! decide what to do with them.
//!
//! This mirrors the design of OMMX's own `logical_memory` module so that the
//! numbers agree: only leaves carry bytes, every intermediate value delegates
//! to its children, and frames are pushed with a guard that pops on drop.
//! [`collections`] holds the container rules (`Vec[stack]`, `BTreeMap[key]`,
//! ...) shared by every type.

pub mod aggregate;
pub mod collections;
pub mod family;
pub mod replay;
pub mod wire;

use std::borrow::Cow;
use std::ops::{Deref, DerefMut};

pub use aggregate::{Aggregate, Node, NodeId};

/// One frame of a path: a static type/field name (`Constraint.function`) or a
/// name built at run time (a layer root).
pub type Frame = Cow<'static, str>;

/// The current position in the traversal, outermost frame first.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Path {
    frames: Vec<Frame>,
}

impl Path {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// A path of `frames`, outermost first.
    pub fn from_frames(frames: Vec<Frame>) -> Self {
        Self { frames }
    }

    /// Pushes `frame` for as long as the returned guard lives.
    pub fn with(&mut self, frame: impl Into<Frame>) -> PathGuard<'_> {
        self.frames.push(frame.into());
        PathGuard { path: self }
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, frame) in self.frames.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            f.write_str(frame)?;
        }
        Ok(())
    }
}

/// Pops the frame it pushed when dropped; derefs to the [`Path`] so nested
/// frames can be pushed through it.
#[must_use = "the frame is popped as soon as the guard is dropped"]
pub struct PathGuard<'a> {
    path: &'a mut Path,
}

impl Deref for PathGuard<'_> {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.path
    }
}

impl DerefMut for PathGuard<'_> {
    fn deref_mut(&mut self) -> &mut Path {
        self.path
    }
}

impl Drop for PathGuard<'_> {
    fn drop(&mut self) {
        self.path.frames.pop();
    }
}

/// How a leaf's bytes are computed: `base` plus, for each of up to two
/// units, `bytes per unit × count` (`32 + 24 × terms`, `144 + 8 × nodes +
/// 16 × edges`). Every leaf of the in-memory profile is emitted with its
/// rule, so the rule that computes a number is the one that explains it.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// What the bytes are, in words.
    pub what: &'static str,
    /// What one leaf is, plural (`functions`, `strings`).
    pub leaves: &'static str,
    pub base: usize,
    /// `(bytes per unit, unit name)`; unused slots are `(0, "")`.
    pub per: [(usize, &'static str); 2],
}

impl Rule {
    pub const fn fixed(what: &'static str, leaves: &'static str, base: usize) -> Self {
        Self {
            what,
            leaves,
            base,
            per: [(0, ""), (0, "")],
        }
    }

    pub const fn per_unit(
        what: &'static str,
        leaves: &'static str,
        base: usize,
        per: (usize, &'static str),
    ) -> Self {
        Self {
            what,
            leaves,
            base,
            per: [per, (0, "")],
        }
    }

    /// The bytes of one leaf with `counts` units.
    pub const fn bytes(&self, counts: [usize; 2]) -> usize {
        self.base + self.per[0].0 * counts[0] + self.per[1].0 * counts[1]
    }
}

/// Receives the leaves of a traversal. Leaves on the same path may arrive many
/// times; summing them is the visitor's job.
pub trait LogicalMemoryVisitor {
    fn visit_leaf(&mut self, path: &Path, bytes: usize);

    /// A leaf computed by `rule` from `counts`. Visitors that only sum take
    /// the default; `explain` keeps the rule and the counts.
    fn visit_rule(&mut self, path: &Path, rule: &'static Rule, counts: [usize; 2]) {
        self.visit_leaf(path, rule.bytes(counts));
    }
}

/// A visitor chosen at run time (an analysis's, handed over by the pass).
impl LogicalMemoryVisitor for &mut dyn LogicalMemoryVisitor {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        (**self).visit_leaf(path, bytes);
    }

    fn visit_rule(&mut self, path: &Path, rule: &'static Rule, counts: [usize; 2]) {
        (**self).visit_rule(path, rule, counts);
    }
}

/// A value that can report its logical memory as leaves under `path`.
pub trait LogicalMemoryProfile {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V);
}

/// The logical bytes of `value`: its leaves summed.
pub fn bytes_of<T: LogicalMemoryProfile + ?Sized>(value: &T) -> u64 {
    struct Sum(u64);
    impl LogicalMemoryVisitor for Sum {
        fn visit_leaf(&mut self, _path: &Path, bytes: usize) {
            self.0 += bytes as u64;
        }
    }
    let mut sum = Sum(0);
    value.visit_logical_memory(&mut Path::new(), &mut sum);
    sum.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_pops_its_frame() {
        let mut path = Path::new();
        {
            let mut outer = path.with("A");
            {
                let inner = outer.with("B");
                assert_eq!(inner.to_string(), "A;B");
            }
            assert_eq!(outer.to_string(), "A");
        }
        assert!(path.frames().is_empty());
    }
}
