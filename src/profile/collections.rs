//! OMMX 2.9.3's accounting of the standard containers and scalars, as free
//! functions over a path and a visitor. Sizes are x86-64 `size_of` values;
//! heap contents count by length, never by capacity.
//!
//! Every leaf is emitted through a named [`Rule`], so the numbers here are
//! the only copy: `memprof explain` restates these rules, it does not
//! repeat them.

use super::{LogicalMemoryVisitor, Noun, Path, Rule};

/// `size_of::<String>()`, `size_of::<Vec<T>>()`.
pub const STRING_STACK: usize = 24;
pub const VEC_STACK: usize = 24;
pub const BTREE_STACK: usize = 24;
pub const FNV_HASHMAP_STACK: usize = 32;
pub const HASHMAP_STACK: usize = 48;

/// An id, an i64 or an f64 (also a map key of those types).
pub const SCALAR_8: Rule = Rule::fixed(
    "an 8-byte value (u64 id, i64 or f64)",
    Noun::new("value", "values"),
    8,
);
/// A one-byte enum (kind, equality, sense).
pub const ENUM: Rule = Rule::fixed("a one-byte enum", Noun::new("value", "values"), 1);
/// A `String`: stack part plus UTF-8 length.
pub const STRING: Rule = Rule::per_unit(
    "a String: its stack part plus its UTF-8 length",
    Noun::new("string", "strings"),
    STRING_STACK,
    (1, Noun::new("UTF-8 byte", "UTF-8 bytes")),
);
/// An absent `Option<String>` (the niche makes it the size of a String).
pub const OPTION_STRING_NONE: Rule = Rule::fixed(
    "an absent Option<String>",
    Noun::new("absent value", "absent values"),
    STRING_STACK,
);
/// An absent `Option<f64>`.
pub const OPTION_F64_NONE: Rule = Rule::fixed(
    "an absent Option<f64>",
    Noun::new("absent value", "absent values"),
    16,
);
/// The tag an `Option<f64>` holds beside its value.
pub const OPTION_F64_TAG: Rule = Rule::fixed(
    "the tag of a present Option<f64> (size_of Option<f64> − size_of f64)",
    Noun::new("present value", "present values"),
    8,
);
pub const VEC: Rule = Rule::fixed(
    "a Vec's stack part",
    Noun::new("vector", "vectors"),
    VEC_STACK,
);
pub const BTREE_MAP: Rule = Rule::fixed(
    "a BTreeMap's stack part",
    Noun::new("map", "maps"),
    BTREE_STACK,
);
pub const BTREE_SET: Rule = Rule::fixed(
    "a BTreeSet's stack part",
    Noun::new("set", "sets"),
    BTREE_STACK,
);
pub const FNV_HASHMAP: Rule = Rule::fixed(
    "an FnvHashMap's stack part",
    Noun::new("map", "maps"),
    FNV_HASHMAP_STACK,
);
pub const HASHMAP: Rule = Rule::fixed(
    "a HashMap's stack part",
    Noun::new("map", "maps"),
    HASHMAP_STACK,
);

/// A leaf of `rule` with no per-unit part at `path`.
pub fn leaf<V: LogicalMemoryVisitor>(path: &Path, visitor: &mut V, rule: &'static Rule) {
    visitor.visit_rule(path, rule, [0, 0]);
}

/// A `String` holding `s` at `path`.
pub fn string<V: LogicalMemoryVisitor>(path: &Path, visitor: &mut V, s: &str) {
    visitor.visit_rule(path, &STRING, [s.len(), 0]);
}

/// An `Option<String>`: 24 bytes of stack either way.
pub fn option_string<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    value: Option<&str>,
) {
    match value {
        None => leaf(&path.with("Option[stack]"), visitor, &OPTION_STRING_NONE),
        // size_of::<Option<String>>() == size_of::<String>(): no additional stack.
        Some(s) => string(path, visitor, s),
    }
}

/// An `Option<f64>`: 16 bytes when absent; 8 of tag plus the value when present.
pub fn option_f64<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, value: Option<f64>) {
    match value {
        None => leaf(&path.with("Option[stack]"), visitor, &OPTION_F64_NONE),
        Some(_) => {
            leaf(
                &path.with("Option[additional stack]"),
                visitor,
                &OPTION_F64_TAG,
            );
            leaf(path, visitor, &SCALAR_8);
        }
    }
}

/// A `Vec<i64>` / `Vec<u64>`: the vector's stack part, then 8 bytes per element.
pub fn vec_of_8_byte<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, len: usize) {
    leaf(&path.with("Vec[stack]"), visitor, &VEC);
    for _ in 0..len {
        leaf(path, visitor, &SCALAR_8);
    }
}

/// A `Vec<String>`.
pub fn vec_of_strings<'a, V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    items: impl IntoIterator<Item = &'a str>,
) {
    leaf(&path.with("Vec[stack]"), visitor, &VEC);
    for s in items {
        string(path, visitor, s);
    }
}

/// A `BTreeSet<u64>` of `len` elements.
pub fn btree_set_u64<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, len: usize) {
    leaf(&path.with("BTreeSet[stack]"), visitor, &BTREE_SET);
    for _ in 0..len {
        leaf(path, visitor, &SCALAR_8);
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
    fn frames(self) -> (&'static str, &'static str, &'static Rule) {
        match self {
            MapKind::FnvHashMap => ("FnvHashMap[stack]", "FnvHashMap[key]", &FNV_HASHMAP),
            MapKind::HashMap => ("HashMap[stack]", "HashMap[key]", &HASHMAP),
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
    leaf(&path.with(stack_frame), visitor, stack);
    for (key, value) in entries {
        string(&path.with(key_frame), visitor, key);
        string(path, visitor, value);
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
    leaf(&path.with(stack_frame), visitor, stack);
    for _ in 0..len {
        leaf(&path.with(key_frame), visitor, &SCALAR_8);
        leaf(path, visitor, &SCALAR_8);
    }
}
