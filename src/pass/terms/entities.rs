//! Decision variables and constraints read on the wire without building
//! them, for a pass whose analyses look at no entity: what their leaves and
//! OMMX's checks depend on, borrowed from the encoding.
//!
//! As for functions, this reader answers only for what it reads exactly as
//! prost does, and narrower still: a field this reader leaves to prost (a
//! parameter map, a bound given twice, groups, a wrong wire type, a
//! malformed string) makes the whole entity [`Unsupported`], to be decoded
//! as before. Scalars given twice keep the last value, strings too, and
//! repeated subscripts may be packed, unpacked or both, as in prost.
//!
//! A linear function is counted without sorting its terms: a table or a
//! set of the ids seen ([`RepeatCheck`]) finds a repeated variable, and only then
//! is the function normalized in full. A polynomial is merged by keys that
//! hold each monomial's distinct variables, not its degree. Each variable is
//! named once, at its first use, whatever the function.

use super::polynomial::{merged_monomials, polynomial_shape, Merged};
use super::windows::InMemory;
use super::{
    count_varints, linear_terms, non_finite, normalize_arm, scan, Arm, Fields, Unsupported, Value,
    Wire,
};
use crate::ids::{distinct_in_table, table_len, IdSet, EMPTY_SLOT};
use crate::model::function::{Shape, Variant};
use crate::model::ModelError;
use crate::wire::fields::{bound, constraint, variable};
use crate::wire::tag;
use crate::wire::WireType::{Fixed64, Len, Varint};

/// A decision variable's fields, as the wire gives them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WireVariable<'a> {
    pub id: u64,
    pub kind: i32,
    pub bound: Option<(f64, f64)>,
    pub substituted_value: Option<f64>,
    pub name: Option<&'a str>,
    /// Number of subscripts.
    pub subscripts: usize,
    pub description: Option<&'a str>,
}

fn utf8(bytes: &[u8]) -> Wire<&str> {
    std::str::from_utf8(bytes).map_err(|_| Unsupported)
}

/// A `Bound` message's two values (0 when absent).
fn bound(body: &[u8]) -> Wire<(f64, f64)> {
    let (mut lower, mut upper) = (0.0, 0.0);
    let mut fields = Fields::new(body);
    while let Some((number, value)) = fields.next_field()? {
        match (number, value) {
            (bound::LOWER, Value::Fixed64(bits, _)) => lower = f64::from_bits(bits),
            (bound::UPPER, Value::Fixed64(bits, _)) => upper = f64::from_bits(bits),
            (bound::LOWER | bound::UPPER, _) => return Err(Unsupported),
            _ => {}
        }
    }
    Ok((lower, upper))
}

/// Reads the body of an `ommx.v1.DecisionVariable`.
pub fn variable(body: &[u8]) -> Wire<WireVariable<'_>> {
    match variable_in_order(body) {
        Some(v) => Ok(v),
        None => variable_fields(body),
    }
}

/// [`variable`] for any encoding, field by field.
fn variable_fields(body: &[u8]) -> Wire<WireVariable<'_>> {
    let mut v = WireVariable::default();
    let mut fields = Fields::new(body);
    while let Some((number, value)) = fields.next_field()? {
        match (number, value) {
            (variable::ID, Value::Varint(x, _)) => v.id = x,
            // An enum is an int32: prost keeps the low 32 bits.
            (variable::KIND, Value::Varint(x, _)) => v.kind = x as i32,
            (variable::BOUND, Value::Len(b)) if v.bound.is_none() => v.bound = Some(bound(b)?),
            (variable::NAME, Value::Len(s)) => v.name = Some(utf8(s)?),
            (variable::SUBSCRIPTS, Value::Len(packed)) => v.subscripts += count_varints(packed)?,
            (variable::SUBSCRIPTS, Value::Varint(..)) => v.subscripts += 1,
            (variable::DESCRIPTION, Value::Len(s)) => v.description = Some(utf8(s)?),
            (variable::SUBSTITUTED_VALUE, Value::Fixed64(bits, _)) => {
                v.substituted_value = Some(f64::from_bits(bits))
            }
            // Parameters, a second bound, wrong wire types.
            (variable::ID..=variable::SUBSTITUTED_VALUE, _) => return Err(Unsupported),
            _ => {}
        }
    }
    Ok(v)
}

/// A field of a variable as writers emit it, at `*pos` in `body`: a
/// one-byte tag `tag`, then for a string or a packed list a one-byte length
/// and the bytes it covers, which are returned; `pos` moves past the field.
#[inline(always)]
fn short_len<'a>(body: &'a [u8], pos: &mut usize, tag: u8) -> Option<&'a [u8]> {
    match body[*pos..] {
        [t, len, ..] if t == tag && len < 0x80 => {
            let value = body.get(*pos + 2..*pos + 2 + usize::from(len))?;
            *pos += 2 + usize::from(len);
            Some(value)
        }
        _ => None,
    }
}

/// [`variable`] for the encoding every writer emits: each field at most
/// once, in field order, with one-byte tags and lengths and a bound of two
/// values; `None` for anything else, which the general reader then reads
/// (to the same variable, since that encoding has one reading).
#[inline]
fn variable_in_order(body: &[u8]) -> Option<WireVariable<'_>> {
    let mut v = WireVariable::default();
    let mut pos = 0;
    // The one-byte keys of each field, and a bound's whole header: its key,
    // its length (two keys and two doubles) and its first field's key.
    const ID: u8 = tag(variable::ID, Varint);
    const KIND: u8 = tag(variable::KIND, Varint);
    const BOUND: [u8; 3] = [tag(variable::BOUND, Len), 18, tag(bound::LOWER, Fixed64)];
    const UPPER: u8 = tag(bound::UPPER, Fixed64);
    const NAME: u8 = tag(variable::NAME, Len);
    const SUBSCRIPTS: u8 = tag(variable::SUBSCRIPTS, Len);
    const DESCRIPTION: u8 = tag(variable::DESCRIPTION, Len);
    const SUBSTITUTED_VALUE: u8 = tag(variable::SUBSTITUTED_VALUE, Fixed64);
    if body.first() == Some(&ID) {
        pos = 1;
        v.id = crate::wire::varint(body, &mut pos)?;
    }
    if body.get(pos) == Some(&KIND) {
        pos += 1;
        // An enum is an int32: prost keeps the low 32 bits.
        v.kind = crate::wire::varint(body, &mut pos)? as i32;
    }
    if let Some(b) = body.get(pos..pos + 20).filter(|b| b[..3] == BOUND) {
        if b[11] != UPPER {
            return None;
        }
        let value = |at: usize| f64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        v.bound = Some((value(3), value(12)));
        pos += 20;
    }
    if pos < body.len() {
        if let Some(name) = short_len(body, &mut pos, NAME) {
            v.name = Some(std::str::from_utf8(name).ok()?);
        }
    }
    if pos < body.len() {
        if let Some(packed) = short_len(body, &mut pos, SUBSCRIPTS) {
            // Bytes below 0x80 are each a whole varint.
            v.subscripts = if packed.iter().all(|&b| b < 0x80) {
                packed.len()
            } else {
                count_varints(packed).ok()?
            };
        }
    }
    if pos < body.len() {
        if let Some(description) = short_len(body, &mut pos, DESCRIPTION) {
            v.description = Some(std::str::from_utf8(description).ok()?);
        }
    }
    if let Some(b) = body.get(pos..pos + 9).filter(|b| b[0] == SUBSTITUTED_VALUE) {
        v.substituted_value = Some(f64::from_le_bytes(b[1..].try_into().expect("8 bytes")));
        pos += 9;
    }
    (pos == body.len()).then_some(v)
}

/// A constraint's fields, as the wire gives them; its function as the
/// pieces of its encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct WireConstraint<'a> {
    pub id: u64,
    pub equality: i32,
    pub function: Vec<&'a [u8]>,
    pub name: Option<&'a str>,
    /// Number of subscripts.
    pub subscripts: usize,
    pub description: Option<&'a str>,
}

/// Reads the body of an `ommx.v1.Constraint`, its function left in pieces.
pub fn constraint(body: &[u8]) -> Wire<WireConstraint<'_>> {
    let mut c = WireConstraint {
        id: 0,
        equality: 0,
        function: Vec::new(),
        name: None,
        subscripts: 0,
        description: None,
    };
    let mut fields = Fields::new(body);
    while let Some((number, value)) = fields.next_field()? {
        match (number, value) {
            (constraint::ID, Value::Varint(x, _)) => c.id = x,
            (constraint::EQUALITY, Value::Varint(x, _)) => c.equality = x as i32,
            (constraint::FUNCTION, Value::Len(piece)) => c.function.push(piece),
            (constraint::NAME, Value::Len(s)) => c.name = Some(utf8(s)?),
            (constraint::DESCRIPTION, Value::Len(s)) => c.description = Some(utf8(s)?),
            (constraint::SUBSCRIPTS, Value::Len(packed)) => c.subscripts += count_varints(packed)?,
            (constraint::SUBSCRIPTS, Value::Varint(..)) => c.subscripts += 1,
            // Parameters, wrong wire types.
            (constraint::ID..=constraint::FUNCTION, _)
            | (constraint::PARAMETERS..=constraint::SUBSCRIPTS, _) => return Err(Unsupported),
            _ => {}
        }
    }
    Ok(c)
}

/// Functions with at most this many terms are checked in a small hash
/// table that stays in the processor's nearest cache, not in the set.
const TABLE_TERMS: usize = 512;

/// Functions whose ids are all below this are checked in the set's bitmap,
/// at most 128 KiB of it, within the processor's near caches: a bit test
/// per term, no hashing and no probing.
const BITMAP_IDS: u64 = 1 << 20;

/// Finds a repeated variable in a function: for low ids (or a long function)
/// in a set of ids, for a short function over high ids in a small
/// open-addressing table; both empty between functions.
#[derive(Debug, Default)]
pub struct RepeatCheck {
    ids: IdSet,
    table: Vec<u64>,
}

impl RepeatCheck {
    /// True when `ids` holds no id twice (nor the table's empty mark).
    /// `bound` is at least every id in `ids` (say, their bitwise or).
    fn distinct(&mut self, ids: &[u64], bound: u64) -> bool {
        if bound >= BITMAP_IDS && ids.len() <= TABLE_TERMS {
            self.distinct_in_table(ids)
        } else {
            self.ids.all_fresh(ids, bound)
        }
    }

    fn distinct_in_table(&mut self, ids: &[u64]) -> bool {
        let size = table_len(ids.len());
        if self.table.len() < size {
            self.table.resize(size, EMPTY_SLOT);
        }
        let table = &mut self.table[..size];
        let distinct = distinct_in_table(ids.iter().copied(), table);
        table.fill(EMPTY_SLOT);
        distinct
    }

    /// Keeps the first of each id in `ids`, in order.
    fn keep_first(&mut self, ids: &mut Vec<u64>) {
        ids.retain(|&id| self.ids.insert(id));
        for &id in ids.iter() {
            self.ids.remove(id);
        }
    }
}

/// The shape of the function encoded in `pieces` and, in `ids`, the
/// variable of each of its stored terms: exactly the shape and
/// `for_each_variable` of the function `normalize` gives, or its error.
pub fn count_function(
    pieces: &[&[u8]],
    seen: &mut RepeatCheck,
    ids: &mut Vec<u64>,
) -> Wire<Result<Shape, ModelError>> {
    let arm = scan(pieces.iter().copied())?;
    if let Some(Arm::Linear(linear)) = &arm {
        if let Some(counted) = linear_distinct(linear, seen, ids)? {
            return Ok(counted);
        }
        ids.clear();
    }
    if let Some(Arm::Polynomial(pieces)) = &arm {
        return Ok(
            merged_monomials(&mut InMemory(pieces))?.map(|Merged { terms, .. }| {
                ids.extend(terms.iter().flat_map(|(key, _)| key.ids()));
                seen.keep_first(ids);
                polynomial_shape(&terms)
            }),
        );
    }
    Ok(normalize_arm(arm.as_ref(), 1)?.map(|(function, _)| {
        function.for_each_variable(|id| ids.push(id));
        let shape = function.shape();
        // A quadratic names its variables many times over.
        if shape.variant != Variant::Linear {
            seen.keep_first(ids);
        }
        shape
    }))
}

/// A linear function whose non-zero terms use distinct variables, counted;
/// `None` if a variable repeats (or is too large to check), when only
/// merging in order gives OMMX's sums.
fn linear_distinct(
    pieces: &[&[u8]],
    seen: &mut RepeatCheck,
    ids: &mut Vec<u64>,
) -> Wire<Option<Result<Shape, ModelError>>> {
    let constant = match linear_terms(pieces, |id, _| ids.push(id))? {
        Ok((constant, _)) => constant,
        Err(e) => return Ok(Some(Err(e))),
    };
    let bound = ids.iter().fold(0, |bound, &id| bound | id);
    if !seen.distinct(ids, bound) {
        return Ok(None);
    }
    if !constant.is_finite() {
        return Ok(Some(Err(non_finite("constant", constant))));
    }
    Ok(Some(Ok(Shape {
        variant: Variant::Linear,
        stored_terms: ids.len() + usize::from(constant != 0.0),
        unprofiled: Default::default(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64;
    use crate::ommx_v1 as pb;
    use prost::Message;

    fn random_variable(rng: &mut SplitMix64) -> pb::DecisionVariable {
        let text = |rng: &mut SplitMix64| {
            rng.chance(3).then(|| {
                let len = [0, 1, 5, 127, 128, 300][rng.below(6) as usize];
                "é".repeat(len / 2) + &"x".repeat(len % 2)
            })
        };
        let value = |rng: &mut SplitMix64| [0.0, 1.5, -2.0, f64::INFINITY][rng.below(4) as usize];
        pb::DecisionVariable {
            id: [0, 1, 127, 128, 99_999, u64::MAX][rng.below(6) as usize],
            kind: rng.below(6) as i32 - 1,
            bound: rng.chance(4).then_some(()).map(|()| pb::Bound {
                lower: value(rng),
                upper: value(rng),
            }),
            name: text(rng),
            subscripts: (0..[0, 1, 3, 70][rng.below(4) as usize])
                .map(|_| [0, 5, 1_000, -1][rng.below(4) as usize])
                .collect(),
            parameters: Default::default(),
            description: text(rng),
            substituted_value: rng.chance(3).then(|| value(rng)),
        }
    }

    /// The reader of the usual encoding reads what the general one does, or
    /// leaves the variable to it; and it does read what prost writes with
    /// short strings and lists and a bound of two nonzero values.
    #[test]
    fn variables_in_order_read_as_field_by_field() {
        let mut rng = SplitMix64(7);
        let mut in_order = 0;
        for round in 0..20_000 {
            let v = random_variable(&mut rng);
            let mut body = v.encode_to_vec();
            let usual = body.len() < 1_000
                && v.name.as_ref().is_none_or(|s| s.len() < 128)
                && v.description.as_ref().is_none_or(|s| s.len() < 128)
                && v.subscripts.iter().map(|&s| encoding_len(s)).sum::<usize>() < 128
                && v.bound
                    .as_ref()
                    .is_none_or(|b| b.lower != 0.0 && b.upper != 0.0);
            match rng.below(4) {
                // As written.
                0 | 1 => {}
                // A byte changed, or the body cut short.
                2 if !body.is_empty() => {
                    let at = rng.below(body.len() as u64) as usize;
                    if rng.chance(2) {
                        body[at] = rng.next() as u8;
                    } else {
                        body.truncate(at);
                    }
                }
                // Two variables merged, as protobuf reads two pieces.
                _ => body.extend(random_variable(&mut rng).encode_to_vec()),
            }
            let fast = variable_in_order(&body);
            if let Some(fast) = &fast {
                in_order += 1;
                let general = variable_fields(&body).map(|v| bits(&v));
                assert_eq!(Ok(bits(fast)), general, "round {round}");
            }
            if usual && body == v.encode_to_vec() {
                assert!(fast.is_some(), "round {round}: {v:?}");
            }
        }
        assert!(in_order > 1_000, "{in_order}");
    }

    /// A variable's fields with its numbers as bits (a NaN equals itself).
    fn bits(v: &WireVariable<'_>) -> String {
        let b = v.bound.map(|(l, u)| (l.to_bits(), u.to_bits()));
        let s = v.substituted_value.map(f64::to_bits);
        let rest = (v.id, v.kind, v.name, v.subscripts, v.description);
        format!("{b:?} {s:?} {rest:?}")
    }

    fn encoding_len(s: i64) -> usize {
        prost::encoding::encoded_len_varint(s as u64)
    }

    /// The table and the set answer as a plain comparison does, and leave
    /// nothing behind for the next function.
    #[test]
    fn repeats_are_found_in_short_and_long_functions() {
        let mut rng = SplitMix64(42);
        let mut seen = RepeatCheck::default();
        for round in 0..400 {
            let n = [0, 1, 5, 50, 512, 513, 2_000][round % 7];
            let range = [20, 5_000, 1 << 20, u64::MAX][rng.below(4) as usize];
            let ids: Vec<u64> = (0..n)
                .map(|_| match rng.below(500) {
                    0 => u64::MAX,
                    1 => (1 << 27) + rng.below(4),
                    _ => rng.next() % range,
                })
                .collect();
            let plain = ids.iter().enumerate().all(|(i, id)| !ids[..i].contains(id))
                && !(n <= TABLE_TERMS && ids.contains(&EMPTY_SLOT));
            let bound = ids.iter().fold(0, |a, &b| a | b);
            assert_eq!(seen.distinct(&ids, bound), plain, "round {round}");
            // The same ids given a bound past the bitmap: the table or the set.
            let far = bound | BITMAP_IDS;
            assert_eq!(seen.distinct(&ids, far), plain, "round {round} far");
        }
    }
}
