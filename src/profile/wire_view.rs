//! The wire view: encoded protobuf bytes per logical path.
//!
//! Each field of the encoded instance is attributed to the path its value
//! has in OMMX's in-memory profile (a constraint's terms to
//! `Instance.constraints;Constraint.function;Linear;PolynomialBase.terms`, a
//! variable's name to `...;DecisionVariableMetadata.name`, map keys under
//! `...[key]`), so the two views line up path by path. What has no in-memory
//! counterpart gets frames of its own:
//! - `P;Wire[tag]`: the field tags of the fields at `P`;
//! - `P;Wire[length]`: the length prefixes of the length-delimited fields at `P`;
//! - `P;Wire[unknown fields]`: fields the schema does not know, whole (tag
//!   included); at the top level, `Wire[unknown fields]` alone;
//! - `Instance.named_functions` and `Instance.format_version`, which 2.9.3
//!   does not count in memory.
//!
//! Every byte of the instance lands in exactly one leaf, so the wire total is
//! the size of the instance blob.

use super::{Frame, LogicalMemoryVisitor, Path};
use crate::wire::fields::map_entry;
use crate::wire::WireType;
use Shape::Message;

mod positions;
mod v1;
mod v2;
pub use positions::Positions;
use v1::{
    BOUND_V2, DESCRIPTION, FNV_STRING_ENTRY, HASH_ENTRY, INSTANCE, LINEAR, POLYNOMIAL, QUADRATIC,
};
pub use v1::{CONSTRAINT, DECISION_VARIABLE, NAMED_FUNCTION, REMOVED_CONSTRAINT};
pub use v2::{visit_v2_instance, visit_v2_table_field, visit_v2_table_head};

pub const TAG: &str = "Wire[tag]";
pub const LENGTH: &str = "Wire[length]";
pub const UNKNOWN: &str = "Wire[unknown fields]";

/// How a known field's value is accounted.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// Scalars, strings, packed lists: the value's bytes at the field's path.
    Payload,
    /// A nested message: its fields, below the field's path.
    Message(&'static Schema),
    /// `Function.constant`: at `Zero` or `Constant`, as OMMX names the variant.
    Constant,
    /// An entry of one of an OMMX 3.0 entity table's maps, keyed by the
    /// entity's id: a nested message that, when grouping by family, goes
    /// under its entity's family frame (tag and length prefix included).
    Entry(&'static Schema, Table),
}

/// The OMMX 3.0 tables whose entries belong to an entity; the entities of
/// one table share its labels, hence its names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    Variables,
    Regular,
    Indicator,
    OneHot,
    Sos1,
    NamedFunctions,
}

/// The family frame of entity `id` of a table, when grouping.
pub type Families<'a> = &'a dyn Fn(Table, u64) -> Option<Frame>;

/// What a walk needs besides the message: the families, and where the
/// family frame goes (right under the top-level field's frame).
#[derive(Clone, Copy)]
struct Walk<'a> {
    families: Option<Families<'a>>,
    /// Frames of the path the walk started at.
    base: usize,
}

/// Passes leaves on with a family frame inserted at `at`.
struct Inserting<'a> {
    visitor: &'a mut dyn LogicalMemoryVisitor,
    at: usize,
    frame: Frame,
}

impl LogicalMemoryVisitor for Inserting<'_> {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        let frames = path.frames();
        let at = self.at.min(frames.len());
        let mut moved = Vec::with_capacity(frames.len() + 1);
        moved.extend_from_slice(&frames[..at]);
        moved.push(self.frame.clone());
        moved.extend_from_slice(&frames[at..]);
        self.visitor.visit_leaf(&Path::from_frames(moved), bytes);
    }
}

/// The key (a varint) of a map entry's body; 0 when left out.
fn entry_key(body: &[u8]) -> u64 {
    let mut cur = Cursor { bytes: body, at: 0 };
    while cur.at < body.len() {
        let Some(key) = cur.varint() else { return 0 };
        if key == u64::from(crate::wire::tag(map_entry::KEY, WireType::Varint)) {
            return cur.varint().unwrap_or(0);
        }
        if cur.skip(key).is_none() {
            return 0;
        }
    }
    0
}

/// One known field: its number, the frames it adds, and its shape.
type FieldRule = (u32, &'static [&'static str], Shape);

/// The known fields of a message.
#[derive(Debug)]
pub struct Schema {
    fields: &'static [FieldRule],
}

impl Schema {
    fn field(&self, number: u32) -> Option<&FieldRule> {
        self.fields.iter().find(|f| f.0 == number)
    }
}

/// One top-level field of an instance as the stream framed it: `tag_bytes`
/// of tag, `wire_bytes` in all. `body` is the value of a length-delimited
/// field (the prefix is the rest of the header); `None` for a varint.
#[derive(Debug, Clone, Copy)]
pub struct TopLevelField<'a> {
    pub number: u32,
    pub tag_bytes: u64,
    pub wire_bytes: u64,
    pub body: Option<&'a [u8]>,
}

/// Attributes one top-level field to its paths. `family`, when given, is
/// inserted below the entity container (`--group-by name`); the element's
/// tag and length prefix belong to it.
pub fn visit_top_level<V: LogicalMemoryVisitor>(
    field: TopLevelField<'_>,
    family: Option<Frame>,
    path: &mut Path,
    visitor: &mut V,
) {
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let Some(&(_, frames, shape)) = INSTANCE.field(field.number) else {
        visitor.visit_leaf(&path.with(UNKNOWN), to_usize(field.wire_bytes));
        return;
    };
    with_frames(path, frames, &mut |path| match &family {
        Some(f) => visit_element(field, shape, &mut path.with(f.clone()), visitor),
        None => visit_element(field, shape, path, visitor),
    });
}

fn visit_element<V: LogicalMemoryVisitor>(
    field: TopLevelField<'_>,
    shape: Shape,
    path: &mut Path,
    visitor: &mut V,
) {
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    visitor.visit_leaf(&path.with(TAG), to_usize(field.tag_bytes));
    let value = field.wire_bytes - field.tag_bytes;
    match (field.body, shape) {
        (Some(body), Message(schema) | Shape::Entry(schema, _)) => {
            let prefix = value - body.len() as u64;
            visitor.visit_leaf(&path.with(LENGTH), to_usize(prefix));
            let walk = Walk {
                families: None,
                base: 0,
            };
            visit_message(schema, body, path, visitor, 0, walk);
        }
        (Some(body), _) => {
            let prefix = value - body.len() as u64;
            visitor.visit_leaf(&path.with(LENGTH), to_usize(prefix));
            visitor.visit_leaf(path, body.len());
        }
        (None, _) => visitor.visit_leaf(path, to_usize(value)),
    }
}

/// Runs `f` with `frames` pushed on `path`.
fn with_frames(path: &mut Path, frames: &[&'static str], f: &mut dyn FnMut(&mut Path)) {
    match frames.split_first() {
        None => f(path),
        Some((first, rest)) => with_frames(&mut path.with(*first), rest, f),
    }
}

/// Nesting deeper than this is accounted as unknown rather than walked
/// (prost itself refuses messages nested 100 deep).
const MAX_DEPTH: u32 = crate::wire::GROUP_DEPTH_LIMIT;

/// A read position in a message body.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    #[inline]
    fn varint(&mut self) -> Option<u64> {
        crate::wire::varint(self.bytes, &mut self.at)
    }

    #[inline]
    fn advance(&mut self, n: u64) -> Option<()> {
        let end = self.at.checked_add(usize::try_from(n).ok()?)?;
        (end <= self.bytes.len()).then(|| self.at = end)
    }

    /// Skips the value of the field whose `key` was just read (groups
    /// included, to their end key).
    #[inline]
    fn skip_at(&mut self, key: u64, depth: u32) -> Option<()> {
        // The scalars of nearly every field, without the call.
        match key & 7 {
            0 => return self.varint().map(drop),
            1 => return self.advance(8),
            5 => return self.advance(4),
            _ => {}
        }
        let wire_type = WireType::from_bits(key)?;
        crate::wire::slice::skip(self.bytes, &mut self.at, key >> 3, wire_type, depth)
    }

    fn skip(&mut self, key: u64) -> Option<()> {
        self.skip_at(key, 0)
    }
}

impl<'a> Cursor<'a> {
    /// Passes over the value of the field whose `key` was just read: a
    /// length-delimited field's body (`Some`), or `None` for any other.
    #[inline]
    fn value(&mut self, key: u64, depth: u32) -> Option<Option<&'a [u8]>> {
        if key & 7 != 2 {
            self.skip_at(key, depth)?;
            return Some(None);
        }
        let len = self.varint()?;
        let value_start = self.at;
        self.advance(len)?;
        Some(Some(&self.bytes[value_start..self.at]))
    }
}

/// Attributes the fields of one message body to paths below `path`. Bytes
/// that do not parse (which the decoder rejects anyway) are unknown.
fn visit_message<V: LogicalMemoryVisitor>(
    schema: &Schema,
    body: &[u8],
    path: &mut Path,
    visitor: &mut V,
    depth: u32,
    walk: Walk<'_>,
) {
    let mut cur = Cursor { bytes: body, at: 0 };
    while cur.at < body.len() {
        let start = cur.at;
        let parsed = cur.varint().and_then(|key| {
            let tag_end = cur.at;
            let (number, wire_type) = (key >> 3, key & 7);
            let known = u32::try_from(number)
                .ok()
                .and_then(|n| schema.field(n))
                .filter(|_| depth < MAX_DEPTH && wire_type != 3 && wire_type != 4);
            let Some(&(_, frames, shape)) = known else {
                cur.skip_at(key, depth)?;
                visitor.visit_leaf(&path.with(UNKNOWN), cur.at - start);
                return Some(());
            };
            let len_start = cur.at;
            let value = cur.value(key, depth)?;
            let value_bytes = &body[len_start..cur.at];
            let family = match (value, shape, walk.families) {
                (Some(inner), Shape::Entry(_, table), Some(families)) => {
                    families(table, entry_key(inner))
                }
                _ => None,
            };
            let field = Field {
                tag: tag_end - start,
                value: value_bytes,
                inner: value,
                shape,
            };
            with_frames(path, frames, &mut |path| match &family {
                Some(frame) => {
                    let mut inserting = Inserting {
                        visitor: &mut *visitor,
                        at: walk.base + 1,
                        frame: frame.clone(),
                    };
                    visit_field(field, path, &mut inserting, depth, walk);
                }
                None => visit_field(field, path, visitor, depth, walk),
            });
            Some(())
        });
        if parsed.is_none() {
            visitor.visit_leaf(&path.with(UNKNOWN), body.len() - start);
            return;
        }
    }
}

/// One known field of a message body: its tag's length, its value's bytes
/// (length prefix included) and, when length-delimited, the value itself.
#[derive(Clone, Copy)]
struct Field<'a> {
    tag: usize,
    value: &'a [u8],
    inner: Option<&'a [u8]>,
    shape: Shape,
}

fn visit_field<V: LogicalMemoryVisitor>(
    field: Field<'_>,
    path: &mut Path,
    visitor: &mut V,
    depth: u32,
    walk: Walk<'_>,
) {
    let Field {
        tag,
        value,
        inner,
        shape,
    } = field;
    visitor.visit_leaf(&path.with(TAG), tag);
    match (inner, shape) {
        (Some(inner), Message(schema) | Shape::Entry(schema, _)) => {
            let prefix = value.len() - inner.len();
            visitor.visit_leaf(&path.with(LENGTH), prefix);
            visit_message(schema, inner, path, visitor, depth + 1, walk);
        }
        (Some(inner), _) => {
            let prefix = value.len() - inner.len();
            visitor.visit_leaf(&path.with(LENGTH), prefix);
            visitor.visit_leaf(path, inner.len());
        }
        (None, Shape::Constant) => {
            let zero = value
                .try_into()
                .map(f64::from_le_bytes)
                .is_ok_and(|c| c == 0.0);
            let variant = if zero { "Zero" } else { "Constant" };
            visitor.visit_leaf(&path.with(variant), value.len());
        }
        (None, _) => visitor.visit_leaf(path, value.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Aggregate;

    #[test]
    fn every_byte_lands_in_one_leaf() {
        // Constraint { id: 3, function: { linear: { terms: [{id 1, coef 2.0}] } },
        //              unknown field 4 = varint 7, name: "c" }
        let mut term = vec![0x08, 0x01, 0x11];
        term.extend_from_slice(&2.0f64.to_le_bytes());
        let mut linear = vec![0x0a, term.len() as u8];
        linear.extend_from_slice(&term);
        let mut function = vec![0x12, linear.len() as u8];
        function.extend_from_slice(&linear);
        let mut body = vec![0x08, 0x03, 0x1a, function.len() as u8];
        body.extend_from_slice(&function);
        body.extend_from_slice(&[0x20, 0x07, 0x32, 0x01, b'c']);
        let mut agg = Aggregate::new();
        let header = 2;
        visit_top_level(
            TopLevelField {
                number: 4,
                tag_bytes: 1,
                wire_bytes: header + body.len() as u64,
                body: Some(&body),
            },
            None,
            &mut Path::new(),
            &mut agg,
        );
        assert_eq!(agg.total_bytes(), header + body.len() as u64);
        let lines = agg.folded_lines();
        let get = |p: &str| lines.iter().find(|l| l.0 == p).map(|l| l.1);
        let terms = "Instance.constraints;Constraint.function;Linear;PolynomialBase.terms";
        assert_eq!(get(terms), Some(1 + 8));
        assert_eq!(get(&format!("{terms};Wire[tag]")), Some(4));
        assert_eq!(get(&format!("{terms};Wire[length]")), Some(2));
        assert_eq!(get("Instance.constraints;Wire[unknown fields]"), Some(2));
        assert_eq!(get("Instance.constraints;Constraint.name"), Some(1));
        assert_eq!(get("Instance.constraints;Constraint.id"), Some(1));
    }

    #[test]
    fn garbage_is_unknown_not_a_panic() {
        let mut agg = Aggregate::new();
        let body = [0x1a, 0xff, 0x01, 0x00];
        visit_top_level(
            TopLevelField {
                number: 4,
                tag_bytes: 1,
                wire_bytes: 2 + body.len() as u64,
                body: Some(&body),
            },
            None,
            &mut Path::new(),
            &mut agg,
        );
        assert_eq!(agg.total_bytes(), 2 + body.len() as u64);
    }
}
