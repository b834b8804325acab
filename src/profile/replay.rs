//! Entity after entity into one aggregate, each leaf found by its position.
//!
//! The entities of one kind in a large instance nearly all emit the same
//! paths in the same order: every variable of an LP, the same ten. A
//! [`Replay`] remembers the node each leaf of the previous entity landed on.
//! A leaf whose path is the one at its position there goes straight to that
//! node, compared by the addresses of its static names; any other is looked
//! up in the aggregate as usual and remembered in its place. The aggregate
//! ends up exactly as if every leaf had been visited into it directly.
//!
//! Cheaper still, a [`Tally`] counts entities by a key that determines all
//! their leaves (their type says which key does): the leaves of a key are
//! found once, and each further entity with that key only adds one to its
//! count, until [`Tally::settle`] adds them all.

use std::borrow::Cow;
use std::collections::HashMap;

use super::{Aggregate, Frame, LogicalMemoryVisitor, NodeId, Path};
use crate::ids::BuildIdHasher;

/// Paths deeper than this are looked up every time.
const DEPTH: usize = 8;

/// The leaves of the previous entity, in order: a path of static names (as
/// address and length) and the node it ends at. `depth` 0 never matches.
#[derive(Debug, Clone, Copy)]
struct Step {
    depth: usize,
    frames: [(usize, usize); DEPTH],
    node: NodeId,
}

impl Step {
    const NONE: Step = Step {
        depth: 0,
        frames: [(0, 0); DEPTH],
        node: Aggregate::ROOT,
    };

    #[inline]
    fn matches(&self, frames: &[Frame]) -> bool {
        self.depth == frames.len()
            && frames
                .iter()
                .zip(&self.frames)
                .all(|(frame, &key)| match frame {
                    Cow::Borrowed(name) => (name.as_ptr() as usize, name.len()) == key,
                    Cow::Owned(_) => false,
                })
    }

    fn of(frames: &[Frame], node: NodeId) -> Step {
        if frames.len() > DEPTH {
            return Step::NONE;
        }
        let mut step = Step {
            depth: frames.len(),
            node,
            ..Step::NONE
        };
        for (slot, frame) in step.frames.iter_mut().zip(frames) {
            match frame {
                Cow::Borrowed(name) => *slot = (name.as_ptr() as usize, name.len()),
                Cow::Owned(_) => return Step::NONE,
            }
        }
        step
    }
}

/// What the previous entity of one kind emitted; see the module's text.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    steps: Vec<Step>,
}

impl Replay {
    /// A visitor for the next entity's leaves, into `aggregate`.
    pub fn entity<'a>(&'a mut self, aggregate: &'a mut Aggregate) -> ReplayVisitor<'a> {
        ReplayVisitor {
            replay: self,
            aggregate,
            at: 0,
        }
    }
}

/// Visits one entity's leaves into an aggregate through a [`Replay`].
pub struct ReplayVisitor<'a> {
    replay: &'a mut Replay,
    aggregate: &'a mut Aggregate,
    at: usize,
}

impl ReplayVisitor<'_> {
    /// The node of the next nonzero leaf, at `frames`.
    #[inline]
    fn node(&mut self, frames: &[Frame]) -> NodeId {
        let at = self.at;
        self.at += 1;
        let steps = &mut self.replay.steps;
        if let Some(step) = steps.get(at).filter(|s| s.matches(frames)) {
            return step.node;
        }
        let node = self.aggregate.node_for(frames);
        let step = Step::of(frames, node);
        match steps.get_mut(at) {
            Some(slot) => *slot = step,
            None => steps.push(step),
        }
        node
    }
}

impl LogicalMemoryVisitor for ReplayVisitor<'_> {
    #[inline]
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        // As the aggregate's own visit: zero-byte leaves are dropped.
        if bytes == 0 {
            return;
        }
        let node = self.node(path.frames());
        self.aggregate.add(node, bytes as u64, 1);
    }
}

/// Keys a [`Tally`] keeps at most; entities with further keys are visited
/// through its replay.
const TALLY_KEYS: usize = 4096;

/// Entities counted by their leaf key; see the module's text.
#[derive(Debug, Default)]
pub struct Tally {
    replay: Replay,
    index: HashMap<u128, usize, BuildIdHasher>,
    /// The leaves of each key (node and bytes), and how many entities had it.
    keys: Vec<(Vec<(NodeId, u64)>, u64)>,
    /// The key of the previous entity and its index.
    last: Option<(u128, usize)>,
}

/// Records the nonzero leaves of one entity instead of adding them.
struct Recording<'a> {
    replay: ReplayVisitor<'a>,
    leaves: Vec<(NodeId, u64)>,
}

impl LogicalMemoryVisitor for Recording<'_> {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        if bytes > 0 {
            let node = self.replay.node(path.frames());
            self.leaves.push((node, bytes as u64));
        }
    }
}

/// Passes leaves on and sums their bytes.
struct Summed<'a> {
    inner: &'a mut dyn LogicalMemoryVisitor,
    bytes: u64,
}

impl LogicalMemoryVisitor for Summed<'_> {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        self.bytes += bytes as u64;
        self.inner.visit_leaf(path, bytes);
    }
}

impl Tally {
    /// Counts one entity: `key`, when given, determines every leaf that
    /// `visit` emits; `visit` is called only for a key not seen before (or
    /// none). Inlined where it is called: most entities only add one to
    /// the count of the previous one's key.
    #[inline]
    pub fn count(
        &mut self,
        key: Option<u128>,
        aggregate: &mut Aggregate,
        visit: impl FnOnce(&mut dyn LogicalMemoryVisitor),
    ) {
        let Some(key) = key else {
            visit(&mut self.replay.entity(aggregate));
            return;
        };
        let at = match self.last {
            Some((last, at)) if last == key => at,
            _ => match self.index.get(&key) {
                Some(&at) => at,
                None if self.keys.len() >= TALLY_KEYS => {
                    visit(&mut self.replay.entity(aggregate));
                    return;
                }
                None => {
                    let mut recording = Recording {
                        replay: self.replay.entity(aggregate),
                        leaves: Vec::new(),
                    };
                    visit(&mut recording);
                    self.keys.push((recording.leaves, 0));
                    self.index.insert(key, self.keys.len() - 1);
                    self.keys.len() - 1
                }
            },
        };
        self.keys[at].1 += 1;
        self.last = Some((key, at));
    }

    /// [`Tally::count`], returning the bytes of the entity's leaves.
    pub fn count_summed(
        &mut self,
        key: Option<u128>,
        aggregate: &mut Aggregate,
        visit: impl FnOnce(&mut dyn LogicalMemoryVisitor),
    ) -> u64 {
        let mut visited = None;
        self.count(key, aggregate, |inner| {
            let mut summing = Summed { inner, bytes: 0 };
            visit(&mut summing);
            visited = Some(summing.bytes);
        });
        match (visited, self.last) {
            (Some(bytes), _) => bytes,
            (None, Some((_, at))) => self.keys[at].0.iter().map(|&(_, bytes)| bytes).sum(),
            (None, None) => unreachable!("an entity not visited was counted by its key"),
        }
    }

    /// Adds the leaves of every entity counted by key to `aggregate` (the
    /// one they were counted against), and forgets them.
    pub fn settle(&mut self, aggregate: &mut Aggregate) {
        for (leaves, count) in self.keys.drain(..) {
            for (node, bytes) in leaves {
                aggregate.add(node, bytes * count, count);
            }
        }
        self.index.clear();
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 5] = ["A", "B", "C", "D", "E"];

    /// Random entities of a few shapes (some with a run-time name, some
    /// deeper than the remembered depth, some zero-byte leaves) give the
    /// same aggregate through a replay as visited directly.
    #[test]
    fn a_replay_adds_up_as_the_aggregate_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut direct = Aggregate::new();
        let mut replayed = Aggregate::new();
        let mut replay = Replay::default();
        for _ in 0..2_000 {
            let shape = next(4);
            let mut leaves = Vec::new();
            for i in 0..(3 + shape as usize) {
                let depth = 1 + (i + shape as usize) % 10;
                let mut frames: Vec<Frame> = (0..depth)
                    .map(|d| Cow::Borrowed(NAMES[(d + i) % NAMES.len()]))
                    .collect();
                if next(50) == 0 {
                    frames.push(Cow::Owned(format!("x{}", next(3))));
                }
                leaves.push((Path::from_frames(frames), next(3) as usize * 8));
            }
            let mut visitor = replay.entity(&mut replayed);
            for (path, b) in &leaves {
                direct.visit_leaf(path, *b);
                visitor.visit_leaf(path, *b);
            }
        }
        assert_eq!(direct.own_lines(), replayed.own_lines());
    }
}
