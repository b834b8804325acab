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
pub mod wire_view;

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

/// A countable noun in both numbers: `1 map`, `2 maps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Noun {
    pub one: &'static str,
    pub many: &'static str,
}

impl Noun {
    pub const fn new(one: &'static str, many: &'static str) -> Self {
        Self { one, many }
    }

    /// The form `n` takes.
    pub fn of(self, n: u64) -> &'static str {
        if n == 1 {
            self.one
        } else {
            self.many
        }
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
    /// What one leaf is (`function`, `string`).
    pub leaves: Noun,
    pub base: usize,
    /// `(bytes per unit, unit)`; unused slots are `(0, Noun::NONE)`.
    pub per: [(usize, Noun); 2],
}

impl Noun {
    /// An unused unit slot.
    pub const NONE: Noun = Noun::new("", "");
}

impl Rule {
    pub const fn fixed(what: &'static str, leaves: Noun, base: usize) -> Self {
        Self {
            what,
            leaves,
            base,
            per: [(0, Noun::NONE), (0, Noun::NONE)],
        }
    }

    pub const fn per_unit(
        what: &'static str,
        leaves: Noun,
        base: usize,
        per: (usize, Noun),
    ) -> Self {
        Self {
            what,
            leaves,
            base,
            per: [per, (0, Noun::NONE)],
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
