//! The v1 wire view counted by position, the walk of [`super`] without a
//! path: OMMX 2.9.3's schema holds no message inside itself, so every path
//! the walk can give a leaf is known before any byte is read. Each is a
//! **position**, numbered once ([`Compiled`]); a walk then sums each leaf
//! at its position ([`Positions`]), and the sums go to the aggregate once,
//! at the end of the pass ([`Positions::settle`]), where
//! [`super::visit_top_level`] pushes frames and looks the path up leaf
//! after leaf. The leaves and the nodes they make are the same (a position
//! with no nonzero leaf makes none, as a visit makes no node for a leaf of
//! no bytes); only the order the nodes are made in differs, which no
//! output shows.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::OnceLock;

use super::v1::{INSTANCE, LINEAR};
use super::{Cursor, Schema, Shape, TopLevelField, LENGTH, MAX_DEPTH, TAG, UNKNOWN};
use crate::profile::{Aggregate, Frame};
use crate::wire::fields::{linear, linear_term};
use crate::wire::file::append_at;
use crate::wire::term::common_term;

/// One known field at its place: the positions of its leaves and, for a
/// nested message, that message's fields there.
#[derive(Debug, Clone, Copy)]
struct Field {
    number: u32,
    shape: Shape,
    /// The field's path itself (its value's bytes), `;Wire[tag]`,
    /// `;Wire[length]`, `;Zero` and `;Constant` below it.
    value: usize,
    tag: usize,
    length: usize,
    zero: usize,
    constant: usize,
    /// Index in [`Compiled::messages`] of the nested message at this place.
    message: Option<usize>,
}

/// A message at one place: its known fields, and where its unknown ones go.
#[derive(Debug)]
struct Message {
    fields: Vec<Field>,
    /// The index in `fields` of each field number below [`SHORT_KEYS`]
    /// ([`NO_FIELD`]: unknown), for the fields behind a one-byte key.
    by_number: [u8; SHORT_KEYS],
    unknown: usize,
    /// For a `Linear`, the positions of a term record's leaves, for the
    /// record every writer emits ([`common_term`]).
    term: Option<TermPositions>,
}

/// Where the six leaves of a `Linear.terms` record go: its tag, its length
/// prefix, then the `LinearTerm`'s id (tag, value) and coefficient (tag,
/// value), in the order the walk gives them.
#[derive(Debug, Clone, Copy)]
struct TermPositions {
    leaves: [usize; 6],
}

/// Field numbers below this fit a one-byte key.
const SHORT_KEYS: usize = 16;

/// [`Message::by_number`]'s mark for a number the message does not know.
const NO_FIELD: u8 = u8::MAX;

impl Message {
    #[inline]
    fn field(&self, number: u64) -> Option<&Field> {
        self.fields.iter().find(|f| u64::from(f.number) == number)
    }

    /// The known field behind the one-byte `key` (below 0x80), when its
    /// wire type is not a group's.
    #[inline(always)]
    fn short(&self, key: u8) -> Option<&Field> {
        let at = self.by_number[usize::from(key >> 3)];
        let group = matches!(key & 7, 3 | 4);
        (at != NO_FIELD && !group).then(|| &self.fields[usize::from(at)])
    }
}

/// Every position of the v1 schema, from `Instance` down.
#[derive(Debug)]
struct Compiled {
    /// Each position's path.
    paths: Vec<Vec<Frame>>,
    messages: Vec<Message>,
}

/// The top-level message (`Instance`) is the first compiled.
const INSTANCE_AT: usize = 0;

impl Compiled {
    fn get() -> &'static Compiled {
        static COMPILED: OnceLock<Compiled> = OnceLock::new();
        COMPILED.get_or_init(|| {
            let mut builder = Builder::default();
            builder.message(&INSTANCE, &[]);
            Compiled {
                paths: builder.paths,
                messages: builder.messages,
            }
        })
    }
}

#[derive(Default)]
struct Builder {
    paths: Vec<Vec<Frame>>,
    index: HashMap<Vec<&'static str>, usize>,
    messages: Vec<Message>,
}

impl Builder {
    /// The position of `path`, numbered when first seen.
    fn position(&mut self, path: &[&'static str]) -> usize {
        if let Some(&at) = self.index.get(path) {
            return at;
        }
        self.paths
            .push(path.iter().map(|&f| Frame::Borrowed(f)).collect());
        self.index.insert(path.to_vec(), self.paths.len() - 1);
        self.paths.len() - 1
    }

    /// Compiles `schema` at `path`; its index in `messages`.
    fn message(&mut self, schema: &'static Schema, path: &[&'static str]) -> usize {
        let at = self.messages.len();
        let unknown = self.position(&[path, &[UNKNOWN]].concat());
        self.messages.push(Message {
            fields: Vec::new(),
            by_number: [NO_FIELD; SHORT_KEYS],
            unknown,
            term: None,
        });
        let fields: Vec<Field> = schema
            .fields
            .iter()
            .map(|&(number, frames, shape)| {
                let here = [path, frames].concat();
                let below = |s: &'static str| [here.as_slice(), &[s]].concat();
                let message = match shape {
                    Shape::Message(inner) | Shape::Entry(inner, _) => {
                        Some(self.message(inner, &here))
                    }
                    Shape::Payload | Shape::Constant => None,
                };
                Field {
                    number,
                    shape,
                    value: self.position(&here),
                    tag: self.position(&below(TAG)),
                    length: self.position(&below(LENGTH)),
                    zero: self.position(&below("Zero")),
                    constant: self.position(&below("Constant")),
                    message,
                }
            })
            .collect();
        let mut by_number = [NO_FIELD; SHORT_KEYS];
        for (index, field) in fields.iter().enumerate() {
            if let Some(slot) = by_number.get_mut(field.number as usize) {
                *slot = u8::try_from(index).expect("a schema's fields are few");
            }
        }
        self.messages[at].fields = fields;
        self.messages[at].by_number = by_number;
        if std::ptr::eq(schema, &LINEAR) {
            self.messages[at].term = Some(self.term_positions(at));
        }
        at
    }

    /// The positions of a term record's leaves in the `Linear` compiled at
    /// `linear`.
    fn term_positions(&self, linear: usize) -> TermPositions {
        let field = |message: usize, number: u32| {
            *self.messages[message]
                .fields
                .iter()
                .find(|f| f.number == number)
                .expect("a field of the schema")
        };
        let terms = field(linear, linear::TERMS);
        let term = terms.message.expect("a term is a message");
        let (id, coefficient) = (
            field(term, linear_term::ID),
            field(term, linear_term::COEFFICIENT),
        );
        TermPositions {
            leaves: [
                terms.tag,
                terms.length,
                id.tag,
                id.value,
                coefficient.tag,
                coefficient.value,
            ],
        }
    }
}

/// The leaves counted at each position, bytes and leaves, until they are
/// added to an aggregate ([`Positions::settle`]).
#[derive(Debug, Clone, Default)]
pub struct Positions {
    sums: Vec<Sum>,
}

/// The bytes and the number of the leaves at one position.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    bytes: u64,
    leaves: u64,
}

/// A walk's leaves, summed by position.
struct Counter<'a> {
    compiled: &'static Compiled,
    sums: &'a mut [Sum],
}

impl Counter<'_> {
    /// One leaf at `position`; as a visit, zero-byte leaves are dropped.
    #[inline(always)]
    fn leaf(&mut self, position: usize, bytes: usize) {
        if bytes != 0 {
            self.leaves(position, bytes as u64, 1);
        }
    }

    /// `count` leaves of `bytes` in all at `position`, none of zero bytes.
    #[inline(always)]
    fn leaves(&mut self, position: usize, bytes: u64, count: u64) {
        let sum = &mut self.sums[position];
        sum.bytes += bytes;
        sum.leaves += count;
    }

    /// The leaves of `terms` common term records (`common_term`) whose ids
    /// take `id_bytes` in all: each record's six leaves, added once a run.
    fn term_run(&mut self, positions: TermPositions, terms: u64, id_bytes: u64) {
        if terms == 0 {
            return;
        }
        let [tag, length, id_tag, id, coefficient_tag, coefficient] = positions.leaves;
        for position in [tag, length, id_tag, coefficient_tag] {
            self.leaves(position, terms, terms);
        }
        self.leaves(id, id_bytes, terms);
        self.leaves(coefficient, 8 * terms, terms);
    }

    /// [`super::visit_message`] of `message` at its place.
    fn message(&mut self, message: usize, body: &[u8], depth: u32) {
        let compiled = self.compiled;
        let message = &compiled.messages[message];
        let mut cur = Cursor { bytes: body, at: 0 };
        // A term's own fields are known only above the depth limit.
        let term = message.term.filter(|_| depth + 1 < MAX_DEPTH);
        // The common term records met so far, and their ids' bytes.
        let (mut terms, mut id_bytes) = (0, 0);
        while cur.at < body.len() {
            if term.is_some() {
                while let Some(record) = common_term(body, cur.at) {
                    (terms, id_bytes) = (terms + 1, id_bytes + record.id_bytes as u64);
                    cur.at = record.end;
                }
                if cur.at == body.len() {
                    break;
                }
            }
            if let Some(end) = self.short_field(message, body, cur.at, depth) {
                cur.at = end;
                continue;
            }
            let start = cur.at;
            let parsed = cur.varint().and_then(|key| {
                let tag_end = cur.at;
                let wire_type = key & 7;
                let known = message
                    .field(key >> 3)
                    .filter(|_| depth < MAX_DEPTH && wire_type != 3 && wire_type != 4);
                let Some(field) = known else {
                    cur.skip_at(key, depth)?;
                    self.leaf(message.unknown, cur.at - start);
                    return Some(());
                };
                let len_start = cur.at;
                let inner = cur.value(key, depth)?;
                self.field(
                    field,
                    tag_end - start,
                    &body[len_start..cur.at],
                    inner,
                    depth,
                );
                Some(())
            });
            if parsed.is_none() {
                self.leaf(message.unknown, body.len() - start);
                break;
            }
        }
        if let Some(positions) = term {
            self.term_run(positions, terms, id_bytes);
        }
    }

    /// The field at `at` of a `message` body, when it is a known one
    /// behind a one-byte key, whole, above the depth limit: counted as the
    /// loop of [`Counter::message`] counts it, without its search and its
    /// general reading of a value; where it ends. `None` (nothing counted)
    /// for any other, which that loop reads.
    #[inline(always)]
    fn short_field(
        &mut self,
        message: &Message,
        body: &[u8],
        at: usize,
        depth: u32,
    ) -> Option<usize> {
        let key = *body
            .get(at)
            .filter(|&&key| key < 0x80 && depth < MAX_DEPTH)?;
        let field = message.short(key)?;
        let value_start = at + 1;
        let mut end = value_start;
        let inner = match key & 7 {
            0 => {
                crate::wire::varint(body, &mut end)?;
                None
            }
            1 => {
                end = end.checked_add(8).filter(|&end| end <= body.len())?;
                None
            }
            5 => {
                end = end.checked_add(4).filter(|&end| end <= body.len())?;
                None
            }
            2 => {
                let len = usize::try_from(crate::wire::varint(body, &mut end)?).ok()?;
                let inner_start = end;
                end = end.checked_add(len).filter(|&end| end <= body.len())?;
                Some(&body[inner_start..end])
            }
            _ => return None,
        };
        self.field(field, 1, &body[value_start..end], inner, depth);
        Some(end)
    }

    /// [`super::visit_field`] at `field`'s place.
    #[inline(always)]
    fn field(&mut self, field: &Field, tag: usize, value: &[u8], inner: Option<&[u8]>, depth: u32) {
        self.leaf(field.tag, tag);
        match (inner, field.message) {
            (Some(inner), Some(message)) => {
                self.leaf(field.length, value.len() - inner.len());
                self.message(message, inner, depth + 1);
            }
            (Some(inner), None) => {
                self.leaf(field.length, value.len() - inner.len());
                self.leaf(field.value, inner.len());
            }
            (None, _) if matches!(field.shape, Shape::Constant) => {
                let zero = value
                    .try_into()
                    .map(f64::from_le_bytes)
                    .is_ok_and(|c| c == 0.0);
                let variant = if zero { field.zero } else { field.constant };
                self.leaf(variant, value.len());
            }
            (None, _) => self.leaf(field.value, value.len()),
        }
    }
}

/// Bytes of a body left in a file that [`Counter::message_in_file`] reads
/// at a time, at least.
const WINDOW: usize = 1 << 20;

/// The most bytes a field's key and length prefix (or scalar value) take.
const HEADER_MOST: usize = 20;

/// The bytes of `range` of `file`.
fn read(file: &File, range: Range<u64>) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let len = usize::try_from(range.end - range.start).map_err(io::Error::other)?;
    append_at(file, &mut bytes, range.start, len)?;
    Ok(bytes)
}

/// What [`delimit`] found at a position of a window.
enum Delimited {
    /// A whole field, ending here.
    Field(usize),
    /// A length-delimited field whose value runs past the window: its key,
    /// the bytes of its key and of its length prefix, and its length.
    Long {
        key: u64,
        tag: usize,
        prefix: usize,
        len: u64,
    },
    /// The window ends inside the field's key or prefix (or scalar).
    Cut,
    /// Anything else (a group, a wire type that is none, an overlong
    /// varint): left to the walk of the whole rest of the body.
    Other,
}

/// The field at `at` of `bytes`, as far as its extent.
fn delimit(bytes: &[u8], at: usize) -> Delimited {
    let mut end = at;
    let cut = |bytes: &[u8]| match bytes.len() - at < HEADER_MOST {
        true => Delimited::Cut,
        false => Delimited::Other,
    };
    let Some(key) = crate::wire::varint(bytes, &mut end) else {
        return cut(bytes);
    };
    let scalar = |end: usize, n: usize| match end + n <= bytes.len() {
        true => Delimited::Field(end + n),
        false => cut(bytes),
    };
    match key & 7 {
        0 => match crate::wire::varint(bytes, &mut end) {
            Some(_) => Delimited::Field(end),
            None => cut(bytes),
        },
        1 => scalar(end, 8),
        5 => scalar(end, 4),
        2 => {
            let tag = end - at;
            let Some(len) = crate::wire::varint(bytes, &mut end) else {
                return cut(bytes);
            };
            match usize::try_from(len).ok().and_then(|l| end.checked_add(l)) {
                Some(field_end) if field_end <= bytes.len() => Delimited::Field(field_end),
                _ => Delimited::Long {
                    key,
                    tag,
                    prefix: end - at - tag,
                    len,
                },
            }
        }
        _ => Delimited::Other,
    }
}

impl Counter<'_> {
    /// [`Counter::message`] of a body left in `file` at `body`: its fields
    /// read a window of whole fields at a time (`window` bytes), each
    /// window walked as a body (the walk is one field after another, term
    /// records summed run by run, so a body cut between fields walks
    /// alike); a length-delimited field as long as a window counted from
    /// its key and length, walked the same way where it is a message, a
    /// payload never read. Whatever does not read as fields to the end of
    /// the body is walked from there in memory, for the walk's own ending.
    fn message_in_file(
        &mut self,
        message: usize,
        file: &File,
        body: Range<u64>,
        depth: u32,
        window: usize,
    ) -> io::Result<()> {
        let mut at = body.start;
        while at < body.end {
            // A long field's head alone, before a window is read.
            let head = read(file, at..body.end.min(at + 2 * HEADER_MOST as u64))?;
            if let long @ Delimited::Long { len, .. } = delimit(&head, 0) {
                if len >= window as u64 {
                    match self.long_field(message, file, (at, long), body.end, depth, window)? {
                        Some(end) => at = end,
                        None => return Ok(()),
                    }
                    continue;
                }
            }
            let bytes = read(file, at..body.end.min(at + window as u64))?;
            let whole = at + bytes.len() as u64 == body.end;
            let mut pos = 0;
            let stop = loop {
                if pos == bytes.len() {
                    break None;
                }
                match delimit(&bytes, pos) {
                    Delimited::Field(end) => pos = end,
                    Delimited::Cut if !whole => break None,
                    other => break Some(other),
                }
            };
            self.message(message, &bytes[..pos], depth);
            at += pos as u64;
            match stop {
                None => {}
                Some(long @ Delimited::Long { .. }) => {
                    match self.long_field(message, file, (at, long), body.end, depth, window)? {
                        Some(end) => at = end,
                        None => return Ok(()),
                    }
                }
                Some(_) => {
                    let rest = read(file, at..body.end)?;
                    self.message(message, &rest, depth);
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The length-delimited field at `at` of a `message` body in `file`
    /// ending at `body_end`, longer than what was read of it (`long`, a
    /// [`Delimited::Long`]): counted from its key and length, walked in the
    /// file where it is a known message. Where it ends; `None` where the
    /// body ends with it (it runs past the body's end).
    fn long_field(
        &mut self,
        message: usize,
        file: &File,
        (at, long): (u64, Delimited),
        body_end: u64,
        depth: u32,
        window: usize,
    ) -> io::Result<Option<u64>> {
        let Delimited::Long {
            key,
            tag,
            prefix,
            len,
        } = long
        else {
            unreachable!("called with a long field")
        };
        let compiled = self.compiled;
        let message = &compiled.messages[message];
        let inner = at + (tag + prefix) as u64;
        let Some(end) = inner.checked_add(len).filter(|&end| end <= body_end) else {
            // As the walk in memory ends on a field past the body.
            self.leaf(message.unknown, (body_end - at) as usize);
            return Ok(None);
        };
        match message.field(key >> 3).filter(|_| depth < MAX_DEPTH) {
            Some(field) => {
                self.leaf(field.tag, tag);
                self.leaf(field.length, prefix);
                match field.message {
                    Some(inner_message) => {
                        self.message_in_file(inner_message, file, inner..end, depth + 1, window)?
                    }
                    None => self.leaf(field.value, len as usize),
                }
            }
            None => self.leaf(message.unknown, (end - at) as usize),
        }
        Ok(Some(end))
    }
}

impl Positions {
    /// [`Positions::count_top_level`] of a length-delimited field whose
    /// body is left in `file` at `body` (its key and length prefix taking
    /// `tag_bytes` and the rest of `wire_bytes`): the same leaves, its
    /// fields read a window at a time and a long payload in it not read.
    pub fn count_top_level_in_file(
        &mut self,
        (number, tag_bytes, wire_bytes): (u32, u64, u64),
        file: &File,
        body: Range<u64>,
    ) -> io::Result<()> {
        self.count_in_file((number, tag_bytes, wire_bytes), file, body, WINDOW)
    }

    /// [`Positions::count_top_level_in_file`], `window` bytes at a time.
    fn count_in_file(
        &mut self,
        (number, tag_bytes, wire_bytes): (u32, u64, u64),
        file: &File,
        body: Range<u64>,
        window: usize,
    ) -> io::Result<()> {
        let compiled = Compiled::get();
        let known = compiled.messages[INSTANCE_AT].field(u64::from(number));
        let Some(message) = known.and_then(|f| f.message) else {
            // Nothing to walk: as held.
            let bytes = read(file, body)?;
            let body = Some(bytes.as_slice());
            self.count_top_level(TopLevelField {
                number,
                tag_bytes,
                wire_bytes,
                body,
            });
            return Ok(());
        };
        let known = known.expect("a message field is known");
        let mut counter = self.counter();
        let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let body_len = body.end - body.start;
        counter.leaf(known.tag, to_usize(tag_bytes));
        counter.leaf(known.length, to_usize(wire_bytes - tag_bytes - body_len));
        counter.message_in_file(message, file, body, 0, window.max(2 * HEADER_MOST))
    }

    /// A walk summing into these sums, made for every position at first.
    fn counter(&mut self) -> Counter<'_> {
        let compiled = Compiled::get();
        if self.sums.is_empty() {
            self.sums = vec![Sum::default(); compiled.paths.len()];
        }
        Counter {
            compiled,
            sums: &mut self.sums,
        }
    }

    /// Adds the leaves counted so far to `aggregate`, position by position,
    /// and starts again from none.
    pub fn settle(&mut self, aggregate: &mut Aggregate) {
        let compiled = Compiled::get();
        for (position, sum) in self.sums.iter_mut().enumerate() {
            if sum.leaves > 0 {
                let node = aggregate.node_for(&compiled.paths[position]);
                aggregate.add(node, sum.bytes, sum.leaves);
                *sum = Sum::default();
            }
        }
    }

    /// [`super::visit_top_level`] of `field` at the root of the path, with
    /// no family frame, into `aggregate` (always the same one).
    pub fn count_top_level(&mut self, field: TopLevelField<'_>) {
        let compiled = Compiled::get();
        let mut counter = self.counter();
        let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let instance = &compiled.messages[INSTANCE_AT];
        let Some(known) = instance.field(u64::from(field.number)) else {
            counter.leaf(instance.unknown, to_usize(field.wire_bytes));
            return;
        };
        // As `visit_element`: the element's tag, its length prefix and its
        // value, walked when it is a message.
        counter.leaf(known.tag, to_usize(field.tag_bytes));
        let value = field.wire_bytes - field.tag_bytes;
        match (field.body, known.message) {
            (Some(body), message) => {
                counter.leaf(known.length, to_usize(value - body.len() as u64));
                match message {
                    Some(message) => counter.message(message, body, 0),
                    None => counter.leaf(known.value, body.len()),
                }
            }
            (None, _) => counter.leaf(known.value, to_usize(value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Path;
    use crate::wire::term::{COEFFICIENT_KEY, ID_KEY, TERM_KEY};
    use crate::wire::{tag, WireType};

    /// A small xorshift, for reproducible random elements.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A random body of `schema`: its known fields, mostly of the wire type
    /// their shape has, nested messages filled in turn, unknown fields and
    /// now and then a wrong wire type or a group.
    fn body(schema: &Schema, random: &mut Random, depth: u32) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..random.below(6) {
            let (number, shape) = match random.below(10) {
                0 => (20 + random.below(5) as u32, Shape::Payload),
                _ if schema.fields.is_empty() => (1, Shape::Payload),
                _ => {
                    let (n, _, shape) =
                        schema.fields[random.below(schema.fields.len() as u64) as usize];
                    (n, shape)
                }
            };
            let wire_type = match (shape, random.below(12)) {
                (_, 0) => random.below(6),
                (Shape::Message(_) | Shape::Entry(..), _) => 2,
                (Shape::Constant, _) => 1,
                (Shape::Payload, r) => [0, 1, 2, 5][r as usize % 4],
            };
            varint(&mut out, u64::from(number) << 3 | wire_type);
            match wire_type {
                0 => {
                    let bits = 7 * random.below(5);
                    varint(&mut out, random.below(1 << bits));
                }
                1 => {
                    let value = [0.0f64, -0.0, 1.5][random.below(3) as usize];
                    out.extend_from_slice(&value.to_le_bytes());
                }
                2 => {
                    let inner = match shape {
                        Shape::Message(inner) | Shape::Entry(inner, _) if depth < 6 => {
                            body(inner, random, depth + 1)
                        }
                        _ => (0..random.below(4)).map(|i| b'a' + i as u8).collect(),
                    };
                    varint(&mut out, inner.len() as u64);
                    out.extend_from_slice(&inner);
                }
                3 => varint(&mut out, u64::from(number) << 3 | 4),
                5 => out.extend_from_slice(&[1, 2, 3, 4]),
                _ => {}
            }
        }
        out
    }

    /// Every node (in the order made) and every leaf of the two.
    fn nodes(aggregate: &Aggregate) -> (Vec<String>, Vec<(String, u64, u64)>) {
        let mut made: Vec<_> = (0..aggregate.len())
            .map(|id| aggregate.frames_of(id).join(";"))
            .collect();
        made.sort();
        (made, aggregate.own_lines())
    }

    /// Counted by position, random elements of every top-level field (some
    /// cut short, some with garbage) give the aggregate the walk with a
    /// path gives: the same leaves, and the same nodes.
    #[test]
    fn counted_by_position_as_walked() {
        let mut random = Random(0x2545_f491_4f6c_dd1d);
        let (mut walked, mut counted) = (Aggregate::new(), Aggregate::new());
        let mut positions = Positions::default();
        for _ in 0..3_000 {
            let (number, shape) = match random.below(14) {
                13 => (99, Shape::Payload),
                i => {
                    let (n, _, shape) = INSTANCE.fields[i as usize % INSTANCE.fields.len()];
                    (n, shape)
                }
            };
            let mut value = match shape {
                Shape::Message(schema) => body(schema, &mut random, 0),
                _ => vec![7; random.below(3) as usize],
            };
            match random.below(8) {
                0 => value.truncate(random.below(value.len() as u64 + 1) as usize),
                1 => value.push(0xff),
                _ => {}
            }
            let varint_value = random.below(4) == 0;
            let mut prefix = Vec::new();
            varint(&mut prefix, value.len() as u64);
            let field = TopLevelField {
                number,
                tag_bytes: 1,
                wire_bytes: 1 + if varint_value {
                    1
                } else {
                    (prefix.len() + value.len()) as u64
                },
                body: (!varint_value).then_some(&value[..]),
            };
            super::super::visit_top_level(field, None, &mut Path::new(), &mut walked);
            positions.count_top_level(field);
        }
        positions.settle(&mut counted);
        assert_eq!(nodes(&walked), nodes(&counted));
        assert!(walked.len() > 100, "the elements reach deep");
    }

    fn len_field(out: &mut Vec<u8>, number: u32, body: &[u8]) {
        out.push(tag(number, WireType::Len));
        varint(out, body.len() as u64);
        out.extend_from_slice(body);
    }

    /// A `Linear` body of term records as writers emit them, among records
    /// that differ a little (a longer id, an overlong or cut varint, a
    /// field more, another order) and the constant.
    fn linear_body(random: &mut Random) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..random.below(8) {
            let mut term = vec![ID_KEY];
            match random.below(8) {
                0 => term.extend([0x80, 0x00]),
                1 => term.extend([0xff; 10]),
                2 => term.extend([0xff; 11]),
                _ => {
                    let bits = 7 * random.below(10);
                    varint(&mut term, random.below(1 << bits));
                }
            }
            term.push(COEFFICIENT_KEY);
            term.extend(1.5f64.to_le_bytes());
            match random.below(10) {
                0 => term.push(0x18),
                1 => term.rotate_left(1),
                2 => term.truncate(term.len() - 1),
                _ => {}
            }
            match random.below(12) {
                0 => {
                    out.push(tag(linear::CONSTANT, WireType::Fixed64));
                    out.extend(2.0f64.to_le_bytes());
                }
                1 => out.push(TERM_KEY),
                _ => len_field(&mut out, linear::TERMS, &term),
            }
        }
        out
    }

    /// An objective (or constraint, or description) whose body is left in
    /// a file counts as held, whatever the window: random bodies, a
    /// quadratic one with long arrays and term records in its linear part,
    /// some cut short or with garbage.
    #[test]
    fn a_body_left_in_a_file_counts_as_held() {
        use crate::wire::fields::{function, instance, quadratic};
        use std::io::Write;
        let mut random = Random(0x1234_5678_9abc_def1);
        let (mut longs, mut checked) = (0, 0);
        for case in 0..3_000 {
            let number = [
                instance::OBJECTIVE,
                instance::CONSTRAINTS,
                instance::DESCRIPTION,
            ][random.below(3) as usize];
            let schema = match INSTANCE.fields.iter().find(|f| f.0 == number) {
                Some(&(_, _, Shape::Message(schema))) => schema,
                _ => unreachable!("message fields"),
            };
            let mut body = if number == instance::OBJECTIVE && random.below(2) == 0 {
                let mut q = Vec::new();
                for array in [quadratic::ROWS, quadratic::COLUMNS, quadratic::VALUES] {
                    let len = random.below(300) as usize;
                    len_field(&mut q, array, &vec![1; len]);
                }
                if random.below(3) > 0 {
                    len_field(&mut q, quadratic::LINEAR, &linear_body(&mut random));
                }
                let mut f = Vec::new();
                len_field(&mut f, function::QUADRATIC, &q);
                f
            } else {
                body(schema, &mut random, 0)
            };
            match random.below(8) {
                0 => body.truncate(random.below(body.len() as u64 + 1) as usize),
                1 => body.push(0xff),
                2 if !body.is_empty() => {
                    let at = random.below(body.len() as u64) as usize;
                    body[at] = random.below(256) as u8;
                }
                _ => {}
            }
            let mut prefix = Vec::new();
            varint(&mut prefix, body.len() as u64);
            let wire_bytes = (1 + prefix.len() + body.len()) as u64;
            let held = TopLevelField {
                number,
                tag_bytes: 1,
                wire_bytes,
                body: Some(&body),
            };
            let mut expected = Positions::default();
            expected.count_top_level(held);
            let mut file = tempfile::tempfile().unwrap();
            file.write_all(b"abc").unwrap();
            file.write_all(&body).unwrap();
            let window = [40, 41, 57, 100, 1000, WINDOW][random.below(6) as usize];
            let mut got = Positions::default();
            let range = 3..3 + body.len() as u64;
            got.count_in_file((number, 1, wire_bytes), &file, range, window)
                .unwrap();
            let (mut a, mut b) = (Aggregate::new(), Aggregate::new());
            expected.settle(&mut a);
            got.settle(&mut b);
            assert_eq!(
                nodes(&a),
                nodes(&b),
                "case {case}, window {window}: {body:02x?}"
            );
            longs += usize::from(body.len() > window);
            checked += 1;
        }
        assert!(longs > 300 && checked == 3_000, "{longs}");
    }

    /// Constraints whose linear functions (or a quadratic's linear part)
    /// hold term records as writers emit them, counted by position with
    /// the records read at once, give the aggregate the walk gives.
    #[test]
    fn common_term_records_counted_as_walked() {
        use crate::wire::fields::{constraint, function, instance, quadratic};
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        let (mut walked, mut counted) = (Aggregate::new(), Aggregate::new());
        let mut positions = Positions::default();
        let mut common = 0;
        for _ in 0..2_000 {
            let linear = linear_body(&mut random);
            common += (0..linear.len())
                .filter(|&at| common_term(&linear, at).is_some())
                .count();
            let mut f = Vec::new();
            match random.below(3) {
                0 => {
                    let mut q = Vec::new();
                    len_field(&mut q, quadratic::LINEAR, &linear);
                    len_field(&mut f, function::QUADRATIC, &q);
                }
                _ => len_field(&mut f, function::LINEAR, &linear),
            }
            let mut body = vec![tag(constraint::ID, WireType::Varint), 5];
            len_field(&mut body, constraint::FUNCTION, &f);
            if random.below(8) == 0 {
                body.truncate(random.below(body.len() as u64) as usize);
            }
            let mut prefix = Vec::new();
            varint(&mut prefix, body.len() as u64);
            let field = TopLevelField {
                number: instance::CONSTRAINTS,
                tag_bytes: 1,
                wire_bytes: (1 + prefix.len() + body.len()) as u64,
                body: Some(&body),
            };
            super::super::visit_top_level(field, None, &mut Path::new(), &mut walked);
            positions.count_top_level(field);
        }
        positions.settle(&mut counted);
        assert_eq!(nodes(&walked), nodes(&counted));
        assert!(common > 2_000, "{common}");
    }
}
