//! OMMX 2.9.3's accounting of the standard containers and scalars, as free
//! functions over a path and a visitor. Sizes are x86-64 `size_of` values;
//! heap contents count by length, never by capacity.

use super::{LogicalMemoryVisitor, Path};

/// `size_of::<String>()`, `size_of::<Vec<T>>()`.
pub const STRING_STACK: usize = 24;
pub const VEC_STACK: usize = 24;
pub const BTREE_STACK: usize = 24;
pub const FNV_HASHMAP_STACK: usize = 32;
pub const HASHMAP_STACK: usize = 48;

/// Bytes of a `String` holding `s`: its stack part plus its UTF-8 length.
pub fn string_bytes(s: &str) -> usize {
    STRING_STACK + s.len()
}

/// A plain scalar of `bytes` (ids, floats, enums) at `path`.
pub fn leaf<V: LogicalMemoryVisitor>(path: &Path, visitor: &mut V, bytes: usize) {
    visitor.visit_leaf(path, bytes);
}

/// An `Option<String>`: 24 bytes of stack either way.
pub fn option_string<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    value: Option<&str>,
) {
    match value {
        None => visitor.visit_leaf(&path.with("Option[stack]"), STRING_STACK),
        // size_of::<Option<String>>() == size_of::<String>(): no additional stack.
        Some(s) => visitor.visit_leaf(path, string_bytes(s)),
    }
}

/// An `Option<f64>`: 16 bytes when absent; 8 of tag plus the value when present.
pub fn option_f64<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, value: Option<f64>) {
    match value {
        None => visitor.visit_leaf(&path.with("Option[stack]"), 16),
        Some(_) => {
            visitor.visit_leaf(&path.with("Option[additional stack]"), 8);
            visitor.visit_leaf(path, 8);
        }
    }
}

/// A `Vec<i64>` / `Vec<u64>`: the vector's stack part, then 8 bytes per element.
pub fn vec_of_8_byte<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, len: usize) {
    visitor.visit_leaf(&path.with("Vec[stack]"), VEC_STACK);
    for _ in 0..len {
        visitor.visit_leaf(path, 8);
    }
}

/// A `Vec<String>`.
pub fn vec_of_strings<'a, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    items: impl IntoIterator<Item = &'a str>,
) {
    visitor.visit_leaf(&path.with("Vec[stack]"), VEC_STACK);
    for s in items {
        visitor.visit_leaf(path, string_bytes(s));
    }
}

/// A `BTreeSet<u64>` of `len` elements.
pub fn btree_set_u64<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, len: usize) {
    visitor.visit_leaf(&path.with("BTreeSet[stack]"), BTREE_STACK);
    for _ in 0..len {
        visitor.visit_leaf(path, 8);
    }
}

/// Which hash map type a string map is stored as; they differ only in the
/// stack size and the frame names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    FnvHashMap,
    HashMap,
}

impl MapKind {
    fn frames(self) -> (&'static str, &'static str, usize) {
        match self {
            MapKind::FnvHashMap => ("FnvHashMap[stack]", "FnvHashMap[key]", FNV_HASHMAP_STACK),
            MapKind::HashMap => ("HashMap[stack]", "HashMap[key]", HASHMAP_STACK),
        }
    }
}

/// A `String -> String` map: stack part, keys under `[key]`, values at `path`.
pub fn string_map<'a, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    kind: MapKind,
    entries: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    let (stack_frame, key_frame, stack) = kind.frames();
    visitor.visit_leaf(&path.with(stack_frame), stack);
    for (key, value) in entries {
        visitor.visit_leaf(&path.with(key_frame), string_bytes(key));
        visitor.visit_leaf(path, string_bytes(value));
    }
}

/// A map with 8-byte keys and 8-byte values (`HashMap<u64, f64>`).
pub fn scalar_map<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    kind: MapKind,
    len: usize,
) {
    let (stack_frame, key_frame, stack) = kind.frames();
    visitor.visit_leaf(&path.with(stack_frame), stack);
    for _ in 0..len {
        visitor.visit_leaf(&path.with(key_frame), 8);
        visitor.visit_leaf(path, 8);
    }
}
