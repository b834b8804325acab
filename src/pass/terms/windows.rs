//! A function's encoding read a window at a time, wherever it lies: held
//! in memory, or in a file (`spooled.rs`) read a window at a time.

use crate::wire::Wire;

/// A message's encoding (a linear part, a polynomial), a window at a time:
/// the pieces each window gives continue the encoding, cut at field
/// boundaries. A message is the concatenation of its fields, so any such
/// cut reads the same.
pub(super) trait FieldWindows {
    fn each(&mut self, window: &mut dyn FnMut(&[&[u8]]) -> Wire<()>) -> Wire<()>;
}

/// The pieces held in memory: one window.
pub(super) struct InMemory<'p, 'a>(pub(super) &'p [&'a [u8]]);

impl FieldWindows for InMemory<'_, '_> {
    fn each(&mut self, window: &mut dyn FnMut(&[&[u8]]) -> Wire<()>) -> Wire<()> {
        window(self.0)
    }
}
