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

/// Receives the leaves of a traversal. Leaves on the same path may arrive many
/// times; summing them is the visitor's job.
pub trait LogicalMemoryVisitor {
    fn visit_leaf(&mut self, path: &Path, bytes: usize);
}

/// A value that can report its logical memory as leaves under `path`.
pub trait LogicalMemoryProfile {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V);
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
