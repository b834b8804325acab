//! `ommx.v1.Function` read straight from the wire, for the hot path.
//!
//! prost would build a `LinearTerm` message per term (or three vectors for a
//! quadratic) that normalization then copies again. Here the encoded
//! function is walked once: [`normalize`] builds the normalized
//! [`Function`] directly, and [`count`] only counts what OMMX would store,
//! with an exact duplicate check that costs a bitmap for dense ids, nothing
//! for keys written in increasing order, and a hash set otherwise, on every
//! core for a large function.
//!
//! Exactness comes first, so this reader only answers for encodings it
//! reads exactly as prost does. Anything else (groups, an `expression` arm,
//! a wrong wire type, a truncated field, an overlong varint) is
//! [`Unsupported`], and the caller decodes the element with prost as before,
//! which gives the same result or the same error. Protobuf's merge rules are
//! followed: a message given in several pieces is their concatenation, the
//! last scalar wins, the last `oneof` arm wins (a different arm resets it),
//! repeated scalars may be packed, unpacked or both, unknown fields are
//! skipped.

use prost::{encoding, Message};

use crate::model::function::{merge, merge_linear, CountedFunction, Shape, Variant};
use crate::model::{Constraint, ConstraintFields, FileWaste, Function, ModelError};
use crate::ommx_v1 as pb;
use crate::profiled::Unprofiled;

mod count;
pub mod entities;
pub mod held;
mod polynomial;
mod quadratic_held;
mod split;
pub mod spooled;
mod windows;
pub use crate::wire::Unsupported;
pub use count::{count, count_bounded, growths};

use crate::wire::fields::{constraint, function, linear, linear_term, monomial, quadratic};
use crate::wire::packed::{count_checked_on, count_varints, count_varints_on, doubles, Varints};
use crate::wire::slice::varint;
use crate::wire::term::{common_term, CommonTerm, COEFFICIENT_KEY, ID_KEY, TERM_KEY};
use crate::wire::{Fields, Value, Wire};

/// The arm a function ends with, as the pieces of its sub-message (their
/// concatenation is the message prost would merge).
#[derive(Debug, Clone, PartialEq)]
pub enum Arm<'a> {
    Constant(f64),
    Linear(Vec<&'a [u8]>),
    Quadratic(Vec<&'a [u8]>),
    Polynomial(Vec<&'a [u8]>),
}

/// The final arm of the function whose encoding is the concatenation of
/// `pieces` (`None`: no arm, an empty function). Every arm on the way is
/// checked, since prost decodes the arms that a later one replaces.
pub fn scan<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Wire<Option<Arm<'a>>> {
    let mut arm: Option<Arm<'a>> = None;
    for piece in pieces {
        let mut fields = Fields::new(piece);
        while let Some((number, value)) = fields.next_field()? {
            let body = match (number, value) {
                (function::CONSTANT, Value::Fixed64(bits, _)) => {
                    if let Some(old) = arm.replace(Arm::Constant(f64::from_bits(bits))) {
                        check(&old)?;
                    }
                    continue;
                }
                (function::LINEAR..=function::POLYNOMIAL, Value::Len(body)) => body,
                // The expression arm (newer SDKs) and wrong wire types.
                (function::CONSTANT..=function::EXPRESSION, _) => return Err(Unsupported),
                _ => continue,
            };
            match (number, &mut arm) {
                (function::LINEAR, Some(Arm::Linear(p)))
                | (function::QUADRATIC, Some(Arm::Quadratic(p)))
                | (function::POLYNOMIAL, Some(Arm::Polynomial(p))) => p.push(body),
                _ => {
                    let new = match number {
                        function::LINEAR => Arm::Linear(vec![body]),
                        function::QUADRATIC => Arm::Quadratic(vec![body]),
                        _ => Arm::Polynomial(vec![body]),
                    };
                    if let Some(old) = arm.replace(new) {
                        check(&old)?;
                    }
                }
            }
        }
    }
    Ok(arm)
}

/// [`check`], a large linear or quadratic arm on up to `threads` threads.
pub fn check_on(arm: &Arm<'_>, threads: usize) -> Wire<()> {
    match arm {
        Arm::Linear(pieces) => {
            if let Some(ranges) = split::held(pieces, threads) {
                let mut ranges: Vec<_> = ranges.iter().map(|r| windows::InMemory(r)).collect();
                if split::check_linear(&mut ranges).is_some() {
                    return Ok(());
                }
            }
            check(arm)
        }
        Arm::Quadratic(p) => quadratic_read(p, false, threads).map(|_| ()),
        _ => check(arm),
    }
}

/// Checks an arm's encoding without keeping anything.
pub fn check(arm: &Arm<'_>) -> Wire<()> {
    match arm {
        Arm::Constant(_) => Ok(()),
        Arm::Linear(p) => linear(p, |_, _| {}).map(|_| ()),
        Arm::Quadratic(p) => quadratic(p).map(|_| ()),
        Arm::Polynomial(p) => walk_polynomial(p, &mut ()).map(|_| ()),
    }
}

/// Walks a `Linear` given in pieces: `term(id, coefficient)` for each term
/// in file order; returns the constant and the number of terms.
fn linear(pieces: &[&[u8]], term: impl FnMut(u64, f64)) -> Wire<(f64, usize)> {
    linear_walk(pieces, term).map(|(constant, n)| (constant.unwrap_or(0.0), n))
}

/// [`linear`], with the constant only if the pieces set it (the last one
/// wins, across pieces read one window after another too). Inlined into
/// its callers: it is the v1 pass's hottest loop, once per constraint, and
/// called apart it cost the 1M-term LP 0.8% more instructions.
#[inline(always)]
fn linear_walk(pieces: &[&[u8]], mut term: impl FnMut(u64, f64)) -> Wire<(Option<f64>, usize)> {
    let mut constant = None;
    let mut terms = 0;
    for piece in pieces {
        let mut fields = Fields::new(piece);
        loop {
            while let Some(CommonTerm {
                id,
                coefficient,
                end,
                ..
            }) = common_term(piece, fields.pos)
            {
                fields.pos = end;
                term(id, coefficient);
                terms += 1;
            }
            // A term record (a one-byte key) shorter than 128 bytes (a
            // one-byte length), read without the general field reader.
            let pos = fields.pos;
            if let [TERM_KEY, len, ..] = piece[pos..] {
                if len < 0x80 {
                    if let Some(body) = piece.get(pos + 2..pos + 2 + usize::from(len)) {
                        fields.pos = pos + 2 + usize::from(len);
                        let (id, coefficient) = linear_term(body)?;
                        term(id, coefficient);
                        terms += 1;
                        continue;
                    }
                }
            }
            let Some((number, value)) = fields.next_field()? else {
                break;
            };
            match (number, value) {
                (linear::TERMS, Value::Len(body)) => {
                    let (id, coefficient) = linear_term(body)?;
                    term(id, coefficient);
                    terms += 1;
                }
                (linear::CONSTANT, Value::Fixed64(bits, _)) => {
                    constant = Some(f64::from_bits(bits))
                }
                (linear::TERMS | linear::CONSTANT, _) => return Err(Unsupported),
                _ => {}
            }
        }
    }
    Ok((constant, terms))
}

/// `Polynomial.terms` (the submodule `polynomial` holds the merge).
const POLYNOMIAL_TERMS: u32 = crate::wire::fields::polynomial::TERMS;

#[inline]
fn linear_term(body: &[u8]) -> Wire<(u64, f64)> {
    // What every writer emits: the id (its key, a varint), then the
    // coefficient (its key, eight bytes).
    if body.len() >= 10 && body[0] == ID_KEY {
        let mut pos = 1;
        let id = varint(body, &mut pos)?;
        if body.len() == pos + 9 && body[pos] == COEFFICIENT_KEY {
            let bits = u64::from_le_bytes(body[pos + 1..].try_into().expect("8 bytes"));
            return Ok((id, f64::from_bits(bits)));
        }
    }
    let (mut id, mut coefficient) = (0, 0.0);
    let mut fields = Fields::new(body);
    while let Some((number, value)) = fields.next_field()? {
        match (number, value) {
            (linear_term::ID, Value::Varint(v, _)) => id = v,
            (linear_term::COEFFICIENT, Value::Fixed64(bits, _)) => {
                coefficient = f64::from_bits(bits)
            }
            (linear_term::ID | linear_term::COEFFICIENT, _) => return Err(Unsupported),
            _ => {}
        }
    }
    Ok((id, coefficient))
}

/// A linear part counted: its stored terms, whether its constant is one
/// too, and the terms of coefficient zero the file holds beside them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct LinearCount {
    pub(super) terms: usize,
    pub(super) constant: bool,
    pub(super) zeros: usize,
}

impl LinearCount {
    pub(super) fn stored(self) -> usize {
        self.terms + usize::from(self.constant)
    }

    pub(super) fn in_file(self) -> u64 {
        (self.stored() + self.zeros) as u64
    }

    pub(super) fn degree(self) -> usize {
        usize::from(self.terms > 0)
    }

    /// The linear function of this part.
    pub(super) fn function(self) -> CountedFunction {
        CountedFunction {
            shape: Shape {
                variant: Variant::Linear,
                stored_terms: self.stored(),
                unprofiled: Unprofiled::default(),
            },
            degree: self.degree(),
            in_file: self.in_file(),
        }
    }
}

/// A `Quadratic` given in pieces: each array as the pieces of its encoded
/// elements (a packed body or one unpacked element), checked.
#[derive(Debug, Default)]
struct QuadraticWire<'a> {
    rows: Vec<&'a [u8]>,
    columns: Vec<&'a [u8]>,
    values: Vec<&'a [u8]>,
    n_rows: usize,
    n_columns: usize,
    n_values: usize,
    linear: Option<Vec<&'a [u8]>>,
}

fn quadratic<'a>(pieces: &[&'a [u8]]) -> Wire<QuadraticWire<'a>> {
    quadratic_read(pieces, false, 1)
}

/// [`quadratic`]; `checked`: the pieces passed [`check`] already, so packed
/// arrays are only counted. Large arrays are read on up to `threads`
/// threads.
fn quadratic_read<'a>(
    pieces: &[&'a [u8]],
    checked: bool,
    threads: usize,
) -> Wire<QuadraticWire<'a>> {
    let count_varints = |body: &[u8]| {
        if checked {
            Ok(count_checked_on(body, threads))
        } else {
            count_varints_on(body, threads)
        }
    };
    let mut q = QuadraticWire::default();
    for piece in pieces {
        let mut fields = Fields::new(piece);
        while let Some((number, value)) = fields.next_field()? {
            match (number, value) {
                (quadratic::ROWS, Value::Len(body)) => {
                    q.n_rows += count_varints(body)?;
                    q.rows.push(body);
                }
                (quadratic::ROWS, Value::Varint(_, raw)) => {
                    q.n_rows += 1;
                    q.rows.push(raw);
                }
                (quadratic::COLUMNS, Value::Len(body)) => {
                    q.n_columns += count_varints(body)?;
                    q.columns.push(body);
                }
                (quadratic::COLUMNS, Value::Varint(_, raw)) => {
                    q.n_columns += 1;
                    q.columns.push(raw);
                }
                (quadratic::VALUES, Value::Len(body)) => {
                    if body.len() % 8 != 0 {
                        return Err(Unsupported);
                    }
                    q.n_values += body.len() / 8;
                    q.values.push(body);
                }
                (quadratic::VALUES, Value::Fixed64(_, raw)) => {
                    q.n_values += 1;
                    q.values.push(raw);
                }
                (quadratic::LINEAR, Value::Len(body)) => {
                    q.linear.get_or_insert_with(Vec::new).push(body)
                }
                (quadratic::ROWS..=quadratic::LINEAR, _) => return Err(Unsupported),
                _ => {}
            }
        }
    }
    if let Some(l) = q.linear.as_ref().filter(|_| !checked) {
        linear(l, |_, _| {})?;
    }
    Ok(q)
}

/// What walking a `Polynomial` shows of each monomial, in file order: its
/// ids as written, then its coefficient (the last one given, else 0).
trait Monomials {
    fn id(&mut self, id: u64);
    fn end(&mut self, coefficient: f64);
}

/// Only the encoding checked.
impl Monomials for () {
    fn id(&mut self, _: u64) {}
    fn end(&mut self, _: f64) {}
}

/// Walks a `Polynomial` given in pieces, showing each monomial to
/// `monomials`; returns their number.
fn walk_polynomial(pieces: &[&[u8]], monomials: &mut impl Monomials) -> Wire<usize> {
    let mut n = 0;
    for piece in pieces {
        let mut fields = Fields::new(piece);
        while let Some((number, value)) = fields.next_field()? {
            match (number, value) {
                (POLYNOMIAL_TERMS, Value::Len(body)) => {
                    let mut coefficient = 0.0;
                    let mut inner = Fields::new(body);
                    while let Some((number, value)) = inner.next_field()? {
                        match (number, value) {
                            (monomial::IDS, Value::Len(packed)) => {
                                let mut pos = 0;
                                while pos < packed.len() {
                                    monomials.id(varint(packed, &mut pos)?);
                                }
                            }
                            (monomial::IDS, Value::Varint(v, _)) => monomials.id(v),
                            (monomial::COEFFICIENT, Value::Fixed64(bits, _)) => {
                                coefficient = f64::from_bits(bits)
                            }
                            (monomial::IDS | monomial::COEFFICIENT, _) => return Err(Unsupported),
                            _ => {}
                        }
                    }
                    monomials.end(coefficient);
                    n += 1;
                }
                (POLYNOMIAL_TERMS, _) => return Err(Unsupported),
                _ => {}
            }
        }
    }
    Ok(n)
}

/// [`walk_polynomial`] with each monomial's ids gathered as written:
/// `monomial(ids, coefficient)`.
fn polynomial(pieces: &[&[u8]], monomial: impl FnMut(&mut Vec<u64>, f64)) -> Wire<usize> {
    struct Gathered<F> {
        ids: Vec<u64>,
        monomial: F,
    }
    impl<F: FnMut(&mut Vec<u64>, f64)> Monomials for Gathered<F> {
        fn id(&mut self, id: u64) {
            self.ids.push(id);
        }
        fn end(&mut self, coefficient: f64) {
            (self.monomial)(&mut self.ids, coefficient);
            self.ids.clear();
        }
    }
    let ids = Vec::new();
    walk_polynomial(pieces, &mut Gathered { ids, monomial })
}

fn non_finite(what: &str, value: f64) -> ModelError {
    ModelError::NonFinite {
        what: what.to_string(),
        value,
    }
}

fn finite(value: f64, what: &str) -> Result<f64, ModelError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(non_finite(what, value))
    }
}

/// Passes a linear part's non-zero terms to `term` in file order, as
/// `Function::from_wire` reads them: the first non-finite coefficient is
/// the error (no term after it is passed). Returns the constant and the
/// number of terms in the file.
fn linear_terms(
    pieces: &[&[u8]],
    mut term: impl FnMut(u64, f64),
) -> Wire<Result<(f64, usize), ModelError>> {
    let mut error = None;
    let (constant, n) = linear(pieces, |id, c| {
        if error.is_some() {
        } else if !c.is_finite() {
            error = Some(non_finite("linear coefficient", c));
        } else if c != 0.0 {
            term(id, c);
        }
    })?;
    Ok(match error {
        Some(e) => Err(e),
        None => Ok((constant, n)),
    })
}

/// The normalized function, exactly what `Function::from_wire` gives for
/// prost's decoding of the same bytes, and the number of terms in the file
/// (what `FileWaste` compares with the stored ones). The encoding is checked
/// in full before any model error is reported, as prost decodes before
/// OMMX normalizes.
pub fn normalize_arm(
    arm: Option<&Arm<'_>>,
    threads: usize,
) -> Wire<Result<(Function, u64), ModelError>> {
    let nonzero = |c: f64| u64::from(c != 0.0);
    let Some(arm) = arm else {
        return Ok(Err(ModelError::EmptyFunction));
    };
    Ok(match arm {
        Arm::Constant(c) => finite(*c, "constant").map(|c| {
            let f = if c == 0.0 {
                Function::Zero
            } else {
                Function::Constant(c)
            };
            (f, 0)
        }),
        Arm::Linear(pieces) => {
            // A term takes 12 bytes or more on the wire.
            let bytes: usize = pieces.iter().map(|p| p.len()).sum();
            let mut terms = Vec::with_capacity(bytes / 12);
            // A large objective's: in huge pages, when they are to be had.
            crate::pages::prefer_huge(&terms);
            match linear_terms(pieces, |id, c| terms.push((id, c)))? {
                Err(e) => Err(e),
                Ok((constant, n)) => finite(constant, "constant").map(|constant| {
                    let f = Function::Linear {
                        terms: merge_linear(terms),
                        constant,
                    };
                    (f, n as u64 + nonzero(constant))
                }),
            }
        }
        Arm::Quadratic(pieces) => {
            let q = quadratic_read(pieces, false, threads)?;
            let mut linear = Vec::new();
            let linear_part = match &q.linear {
                Some(l) => Some(linear_terms(l, |id, c| linear.push((id, c)))?),
                None => None,
            };
            normalize_quadratic(&q, linear, linear_part, threads)
        }
        Arm::Polynomial(pieces) => {
            let mut terms = Vec::new();
            let mut error = None;
            let n = polynomial(pieces, |ids, c| {
                if error.is_some() {
                } else if !c.is_finite() {
                    error = Some(non_finite("polynomial coefficient", c));
                } else if c != 0.0 {
                    let mut ids = ids.clone();
                    ids.sort_unstable();
                    terms.push((ids, c));
                }
            })?;
            match error {
                Some(e) => Err(e),
                None => Ok((
                    Function::Polynomial {
                        terms: merge(terms),
                    },
                    n as u64,
                )),
            }
        }
    })
}

/// The quadratic arm of [`normalize_arm`]: `linear` and `linear_part` are
/// the linear part's non-zero terms and what reading them gave; a large
/// quadratic part is read on up to `threads` threads.
fn normalize_quadratic(
    q: &QuadraticWire<'_>,
    linear: Vec<(u64, f64)>,
    linear_part: Option<Result<(f64, usize), ModelError>>,
    threads: usize,
) -> Result<(Function, u64), ModelError> {
    if q.n_rows != q.n_columns || q.n_rows != q.n_values {
        return Err(ModelError::QuadraticLengths {
            rows: q.n_rows,
            columns: q.n_columns,
            values: q.n_values,
        });
    }
    let quadratic = match quadratic_held::quadratic_terms(q, threads) {
        Some(held) => {
            let held = held?;
            if held.ascending {
                held.terms
            } else {
                merge(held.terms)
            }
        }
        None => {
            let mut quadratic = Vec::with_capacity(q.n_values);
            let pairs = Varints::new(&q.rows).zip(Varints::new(&q.columns));
            for ((r, c), v) in pairs.zip(doubles(&q.values)) {
                let v = finite(v, "quadratic coefficient")?;
                if v != 0.0 {
                    quadratic.push(((r.min(c), r.max(c)), v));
                }
            }
            merge(quadratic)
        }
    };
    let mut constant = 0.0;
    let mut in_file = q.n_values as u64;
    if let Some(part) = linear_part {
        let (c, n) = part?;
        constant = finite(c, "constant")?;
        in_file += n as u64 + u64::from(constant != 0.0);
    }
    let f = Function::Quadratic {
        quadratic,
        linear: merge(linear),
        constant,
    };
    Ok((f, in_file))
}

/// prost's encoded length of the function `body` whose final arm is
/// quadratic, as re-encoding prost's decoding of it gives (the final arm
/// alone, the arrays packed, unknown fields gone), read off the wire
/// without that decoding; `None` for another arm, an encoding this reader
/// does not vouch for, or a varint not in its shortest form (only a
/// re-encoding tells its length then). Long arrays are checked on up to
/// `threads` threads.
pub fn quadratic_encoded_len(body: &[u8], threads: usize) -> Option<usize> {
    use encoding::{encoded_len_varint, key_len};
    let Ok(Some(Arm::Quadratic(pieces))) = scan([body]) else {
        return None;
    };
    let q = quadratic_read(&pieces, false, threads).ok()?;
    // A varint is longer than it need be exactly when it ends in a zero
    // byte after a continuation byte.
    let shortest = |pieces: &[&[u8]]| {
        pieces
            .iter()
            .all(|p| !p.windows(2).any(|w| w[0] >= 0x80 && w[1] == 0))
    };
    if !shortest(&q.rows) || !shortest(&q.columns) {
        return None;
    }
    let field = |number: u32, len: usize| key_len(number) + encoded_len_varint(len as u64) + len;
    let packed = |number: u32, len: usize| if len == 0 { 0 } else { field(number, len) };
    let bytes = |pieces: &[&[u8]]| pieces.iter().map(|p| p.len()).sum::<usize>();
    let linear = match &q.linear {
        None => 0,
        Some(l) => field(
            quadratic::LINEAR,
            pb::Linear::decode(l.concat().as_slice())
                .ok()?
                .encoded_len(),
        ),
    };
    let body = packed(quadratic::ROWS, bytes(&q.rows))
        + packed(quadratic::COLUMNS, bytes(&q.columns))
        + packed(quadratic::VALUES, 8 * q.n_values)
        + linear;
    Some(field(function::QUADRATIC, body))
}

/// Normalizes the function encoded as the concatenation of `pieces`, with
/// what normalizing removed from the file, as `Function::from_wire` and
/// `FileWaste::of` give for prost's decoding of the same bytes; a large
/// quadratic part read on up to `threads` threads.
pub fn normalize(
    pieces: &[&[u8]],
    threads: usize,
) -> Wire<Result<(Function, FileWaste), ModelError>> {
    let arm = scan(pieces.iter().copied())?;
    Ok(match normalize_arm(arm.as_ref(), threads)? {
        Err(e) => Err(e),
        Ok((f, in_file)) if in_file == f.stored_terms() as u64 => Ok((f, FileWaste::default())),
        Ok((f, _)) => {
            // Normalization removed terms (rare): measure with prost's
            // decoding, which holds the terms as written.
            let bytes = pieces.concat();
            let wire = pb::Function::decode(bytes.as_slice()).map_err(|_| Unsupported)?;
            let waste = FileWaste::of(&wire, &f);
            Ok((f, waste))
        }
    })
}

/// A constraint's body with its function read from the wire and the rest
/// (id, equality, names, parameters) by [`held::constraint`] or else by
/// prost, as `Constraint::from_wire_measured` gives it for prost's decoding
/// of the whole body. `decode` decodes the body without its function fields
/// (as an Instance's field, where the caller's errors come from).
pub fn constraint<E>(
    body: &[u8],
    decode: impl FnOnce(&[u8]) -> Result<pb::Constraint, E>,
) -> Wire<Result<(Constraint, FileWaste), ModelError>> {
    let mut c = ConstraintFields::default();
    if let Some(function) = held::constraint(body, &mut c) {
        let function = match function {
            Some(piece) => Some(normalize(&[piece], 1)?),
            None => None,
        };
        return Ok(Constraint::from_wire_normalized(c, function));
    }
    let mut pieces = Vec::new();
    let mut others = Vec::with_capacity(64);
    let mut fields = Fields::new(body);
    let mut start = 0;
    while let Some((number, value)) = fields.next_field()? {
        match (number, value) {
            (constraint::FUNCTION, Value::Len(piece)) => pieces.push(piece),
            (constraint::FUNCTION, _) => return Err(Unsupported),
            _ => others.extend_from_slice(&body[start..fields.pos]),
        }
        start = fields.pos;
    }
    let function = if pieces.is_empty() {
        None
    } else {
        Some(normalize(&pieces, 1)?)
    };
    let c = decode(&others).map_err(|_| Unsupported)?;
    Ok(Constraint::from_wire_normalized(c.into(), function))
}

/// Decodes a message as a field of the Instance, one level down prost's
/// recursion budget, as OMMX's whole-Instance decode reads each element
/// (so unknown groups inside may nest exactly as deep as OMMX lets them).
pub fn decode_field<M: Message + Default>(bytes: &[u8]) -> Result<M, prost::DecodeError> {
    use prost::bytes::Buf;
    let mut prefix = Vec::with_capacity(10);
    encoding::encode_varint(bytes.len() as u64, &mut prefix);
    let mut buf = Buf::chain(prefix.as_slice(), bytes);
    let mut message = M::default();
    encoding::message::merge(
        encoding::WireType::LengthDelimited,
        &mut message,
        &mut buf,
        encoding::DecodeContext::default(),
    )?;
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::function::Function as ArmPb;

    use crate::ids::SplitMix64 as Rng;
    use crate::ids::{IdSet, SharedIdSet};

    /// What the tests draw.
    trait Draws {
        fn id(&mut self) -> u64;
        fn coefficient(&mut self) -> f64;
    }

    impl Draws for Rng {
        fn id(&mut self) -> u64 {
            // Few distinct ids, so that monomials repeat; now and then a
            // large one.
            if self.chance(20) {
                self.next() >> self.below(64)
            } else {
                self.below(6)
            }
        }
        fn coefficient(&mut self) -> f64 {
            const C: [f64; 10] = [1.0, -1.0, 0.5, -0.5, 0.0, -0.0, 0.1, 0.2, -0.3, 3.0];
            match self.below(200) {
                0 => f64::NAN,
                1 => f64::INFINITY,
                _ => C[self.below(C.len() as u64) as usize],
            }
        }
    }

    fn key(field: u32, wire_type: u8, out: &mut Vec<u8>) {
        encoding::encode_varint(u64::from(field) << 3 | u64::from(wire_type), out);
    }

    fn len_field(field: u32, body: &[u8], out: &mut Vec<u8>) {
        key(field, 2, out);
        encoding::encode_varint(body.len() as u64, out);
        out.extend_from_slice(body);
    }

    fn double_field(field: u32, v: f64, out: &mut Vec<u8>) {
        key(field, 1, out);
        out.extend_from_slice(&v.to_le_bytes());
    }

    fn varint_field(field: u32, v: u64, out: &mut Vec<u8>) {
        key(field, 0, out);
        encoding::encode_varint(v, out);
    }

    /// Sometimes an unknown field (numbers 6.. are unknown everywhere here).
    fn noise(rng: &mut Rng, out: &mut Vec<u8>) {
        if !rng.chance(6) {
            return;
        }
        let field = 6 + rng.below(40) as u32;
        match rng.below(4) {
            0 => varint_field(field, rng.next() >> rng.below(64), out),
            1 => double_field(field, 2.5, out),
            2 => {
                key(field, 5, out);
                out.extend_from_slice(&[1, 2, 3, 4]);
            }
            _ => len_field(field, &[0x08, 0x01], out),
        }
    }

    /// A message's fields, each already encoded: written in one piece or
    /// several (a sub-message field repeated, which protobuf merges).
    fn pieces(rng: &mut Rng, field: u32, fields: Vec<Vec<u8>>, out: &mut Vec<u8>) {
        let mut body = Vec::new();
        for f in fields {
            noise(rng, &mut body);
            body.extend_from_slice(&f);
            if rng.chance(5) {
                len_field(field, &std::mem::take(&mut body), out);
            }
        }
        noise(rng, &mut body);
        len_field(field, &body, out);
    }

    fn linear_fields(rng: &mut Rng) -> Vec<Vec<u8>> {
        let mut fields = Vec::new();
        for _ in 0..rng.below(12) {
            let (id, c) = (rng.id(), rng.coefficient());
            let mut term = Vec::new();
            // Defaults left out, written, written twice (last wins), in any order.
            let mut parts = Vec::new();
            if id != 0 || rng.chance(2) {
                let mut p = Vec::new();
                if rng.chance(8) {
                    varint_field(1, rng.id(), &mut p);
                }
                varint_field(1, id, &mut p);
                parts.push(p);
            }
            if c.to_bits() != 0 || rng.chance(2) {
                let mut p = Vec::new();
                if rng.chance(8) {
                    double_field(2, 7.0, &mut p);
                }
                double_field(2, c, &mut p);
                parts.push(p);
            }
            if rng.chance(4) {
                parts.reverse();
            }
            for p in parts {
                noise(rng, &mut term);
                term.extend_from_slice(&p);
            }
            let mut f = Vec::new();
            len_field(1, &term, &mut f);
            fields.push(f);
        }
        if rng.chance(2) {
            let mut f = Vec::new();
            if rng.chance(4) {
                double_field(2, 9.0, &mut f);
            }
            double_field(2, rng.coefficient(), &mut f);
            fields.insert(rng.below(fields.len() as u64 + 1) as usize, f);
        }
        fields
    }

    /// A repeated scalar array cut into runs, each packed or unpacked.
    fn array_fields(rng: &mut Rng, field: u32, values: &[u64], double: bool) -> Vec<Vec<u8>> {
        let mut fields = Vec::new();
        let mut i = 0;
        while i < values.len() {
            let run = 1 + rng.below((values.len() - i) as u64) as usize;
            let mut f = Vec::new();
            if rng.chance(3) {
                for &v in &values[i..i + run] {
                    if double {
                        double_field(field, f64::from_bits(v), &mut f);
                    } else {
                        varint_field(field, v, &mut f);
                    }
                }
            } else {
                let mut body = Vec::new();
                for &v in &values[i..i + run] {
                    if double {
                        body.extend_from_slice(&v.to_le_bytes());
                    } else {
                        encoding::encode_varint(v, &mut body);
                    }
                }
                len_field(field, &body, &mut f);
            }
            fields.push(f);
            i += run;
        }
        if rng.chance(10) {
            // An empty packed run.
            let mut f = Vec::new();
            len_field(field, &[], &mut f);
            fields.push(f);
        }
        fields
    }

    fn quadratic_fields(rng: &mut Rng) -> Vec<Vec<u8>> {
        let n = rng.below(12) as usize;
        let mut lengths = [n; 3];
        if rng.chance(15) {
            lengths[rng.below(3) as usize] += 1;
        }
        let rows: Vec<u64> = (0..lengths[0]).map(|_| rng.id()).collect();
        let columns: Vec<u64> = (0..lengths[1]).map(|_| rng.id()).collect();
        let values: Vec<u64> = (0..lengths[2])
            .map(|_| rng.coefficient().to_bits())
            .collect();
        let mut runs = vec![
            array_fields(rng, 1, &rows, false),
            array_fields(rng, 2, &columns, false),
            array_fields(rng, 3, &values, true),
        ];
        if rng.chance(2) {
            let mut linear = Vec::new();
            let fields = linear_fields(rng);
            pieces(rng, 4, fields, &mut linear);
            runs.push(vec![linear]);
        }
        // Interleave the runs of the arrays, each in its own order.
        let mut fields = Vec::new();
        while runs.iter().any(|r| !r.is_empty()) {
            let pick = rng.below(runs.len() as u64) as usize;
            if !runs[pick].is_empty() {
                fields.push(runs[pick].remove(0));
            }
        }
        fields
    }

    fn polynomial_fields(rng: &mut Rng) -> Vec<Vec<u8>> {
        let mut fields = Vec::new();
        for _ in 0..rng.below(8) {
            let ids: Vec<u64> = (0..rng.below(4)).map(|_| rng.id()).collect();
            let mut body = Vec::new();
            for f in array_fields(rng, 1, &ids, false) {
                noise(rng, &mut body);
                body.extend_from_slice(&f);
            }
            let c = rng.coefficient();
            if c.to_bits() != 0 || rng.chance(2) {
                double_field(2, c, &mut body);
            }
            let mut f = Vec::new();
            len_field(1, &body, &mut f);
            fields.push(f);
        }
        fields
    }

    /// A random encoding of a random function: possibly several arms in a
    /// row (the last wins), each sub-message possibly in pieces.
    fn function(rng: &mut Rng) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..1 + rng.below(2) + u64::from(rng.chance(4)) {
            noise(rng, &mut out);
            match rng.below(9) {
                0 => {}
                1 => double_field(1, rng.coefficient(), &mut out),
                2..=4 => {
                    let fields = linear_fields(rng);
                    pieces(rng, 2, fields, &mut out)
                }
                5..=7 => {
                    let fields = quadratic_fields(rng);
                    pieces(rng, 3, fields, &mut out)
                }
                _ => {
                    let fields = polynomial_fields(rng);
                    pieces(rng, 4, fields, &mut out)
                }
            }
        }
        out
    }

    /// What the prost path gives: `Function::from_wire` and `FileWaste::of`
    /// on prost's decoding, or `None` when prost refuses the bytes.
    fn oracle(bytes: &[u8]) -> Option<Result<(Function, FileWaste), ModelError>> {
        let wire = pb::Function::decode(bytes).ok()?;
        if matches!(wire.function, Some(ArmPb::Expression(_))) {
            return Some(Err(ModelError::ExpressionFunction));
        }
        Some(Function::from_wire(&wire).map(|f| {
            let waste = FileWaste::of(&wire, &f);
            (f, waste)
        }))
    }

    /// Cuts an encoding into pieces at field boundaries (its fields, read
    /// by the wire reader itself, so only for bytes it accepts).
    fn cut(bytes: &[u8], rng: &mut Rng) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut fields = Fields::new(bytes);
        let mut start = 0;
        while let Ok(Some(_)) = fields.next_field() {
            out.last_mut()
                .unwrap()
                .extend_from_slice(&bytes[start..fields.pos]);
            start = fields.pos;
            if rng.chance(3) {
                out.push(Vec::new());
            }
        }
        out
    }

    fn same(
        a: &Result<(Function, FileWaste), ModelError>,
        b: &Result<(Function, FileWaste), ModelError>,
    ) -> bool {
        // NaN in an error: compare the messages.
        match (a, b) {
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }

    /// What a count of the function `f` built with `waste` should give:
    /// its shape and degree, and its terms in the file.
    fn counted_as(f: &Function, waste: &FileWaste) -> CountedFunction {
        CountedFunction {
            shape: f.shape(),
            degree: f.degree(),
            in_file: f.stored_terms() as u64 + waste.zero_terms + waste.merged_terms,
        }
    }

    fn ids(set: &IdSet) -> std::collections::BTreeSet<u64> {
        let mut ids = std::collections::BTreeSet::new();
        set.for_each(|id| _ = ids.insert(id));
        ids
    }

    #[test]
    fn the_wire_reader_agrees_with_prost_on_random_encodings() {
        let mut rng = Rng(16);
        let (mut exercised, mut counted, mut built) = (0, 0, 0);
        for case in 0..12_000 {
            let bytes = function(&mut rng);
            let expected = oracle(&bytes).expect("the generator writes valid protobuf");
            let split = cut(&bytes, &mut rng);
            let split: Vec<&[u8]> = split.iter().map(Vec::as_slice).collect();
            for pieces in [&[bytes.as_slice()][..], &split] {
                match normalize(pieces, 1) {
                    Ok(got) => {
                        exercised += 1;
                        assert!(
                            same(&got, &expected),
                            "case {case}: {got:?} != {expected:?} for {bytes:02x?}"
                        );
                    }
                    Err(Unsupported) => {
                        // Only the expression arm is left to prost here.
                        assert!(
                            bytes.is_empty()
                                || matches!(expected, Err(ModelError::ExpressionFunction)),
                            "case {case}: {bytes:02x?}"
                        );
                    }
                }
                let arm = scan(pieces.iter().copied()).unwrap();
                for threads in [1, 2, 3] {
                    let variables = SharedIdSet::default();
                    let defined = |id| {
                        variables.note(id);
                        true
                    };
                    match count(arm.as_ref(), &defined, threads).unwrap() {
                        Some(c) => {
                            counted += 1;
                            let (f, waste) = expected
                                .as_ref()
                                .expect("a count only for a function OMMX accepts");
                            assert_eq!(counted_as(f, waste), c, "case {case}: {bytes:02x?}");
                            assert_eq!(
                                ids(&variables.into_set()),
                                ids(&f.variables(1)),
                                "case {case}: {bytes:02x?}"
                            );
                        }
                        None => built += 1,
                    }
                }
            }
        }
        // The generator reaches both outcomes of the count, often.
        assert!(
            exercised > 20_000 && counted > 12_000 && built > 12_000,
            "{exercised} {counted} {built}"
        );
    }

    #[test]
    fn corrupted_encodings_are_left_to_prost_or_read_alike() {
        let mut rng = Rng(7);
        let mut refused_by_prost = 0;
        for case in 0..12_000 {
            let mut bytes = function(&mut rng);
            if bytes.is_empty() {
                continue;
            }
            match rng.below(3) {
                0 => bytes.truncate(rng.below(bytes.len() as u64) as usize),
                1 => {
                    let i = rng.below(bytes.len() as u64) as usize;
                    bytes[i] = rng.next() as u8;
                }
                _ => {
                    let i = rng.below(bytes.len() as u64) as usize;
                    bytes.insert(i, [0x80, 0xff, 0x03, 0x04, 0x07][rng.below(5) as usize]);
                }
            }
            let expected = oracle(&bytes);
            refused_by_prost += usize::from(expected.is_none());
            if let Ok(got) = normalize(&[&bytes], 1) {
                let expected = expected.clone().unwrap_or_else(|| {
                    panic!("case {case}: accepted what prost refuses: {bytes:02x?}")
                });
                assert!(
                    same(&got, &expected),
                    "case {case}: {got:?} != {expected:?} for {bytes:02x?}"
                );
            }
            if let Ok(arm) = scan([bytes.as_slice()]) {
                if arm.as_ref().is_some_and(|a| check(a).is_err()) {
                    continue;
                }
                if let Ok(Some(counted)) = count(arm.as_ref(), &|_| true, 2) {
                    let expected = expected.unwrap_or_else(|| {
                        panic!("case {case}: counted what prost refuses: {bytes:02x?}")
                    });
                    assert_eq!(
                        Some(counted),
                        expected.ok().map(|(f, waste)| counted_as(&f, &waste)),
                        "case {case}: {bytes:02x?}"
                    );
                }
            }
        }
        assert!(refused_by_prost > 1_500, "{refused_by_prost}");
    }

    fn qubo(n: u64, order: &mut Rng, duplicate: Option<usize>) -> Vec<u8> {
        let mut pairs: Vec<(u64, u64)> = (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect();
        for i in (1..pairs.len()).rev() {
            pairs.swap(i, order.below(i as u64 + 1) as usize);
        }
        if let Some(i) = duplicate {
            // The same pair again, the other way round.
            let (a, b) = pairs[i];
            pairs.push((b, a));
        }
        let q = pb::Quadratic {
            rows: pairs.iter().map(|p| p.0).collect(),
            columns: pairs.iter().map(|p| p.1).collect(),
            values: pairs.iter().map(|_| 1.5).collect(),
            linear: None,
        };
        pb::Function {
            function: Some(ArmPb::Quadratic(q)),
        }
        .encode_to_vec()
    }

    #[test]
    fn a_large_quadratic_is_counted_in_parallel_and_a_repeat_is_caught() {
        let mut rng = Rng(3);
        // 300 variables: 45,150 pairs, shuffled, so the bitmap decides.
        for duplicate in [None, Some(0), Some(20_000), Some(45_149)] {
            let bytes = qubo(300, &mut rng, duplicate);
            let expected = oracle(&bytes).unwrap().unwrap().0;
            let arm = scan([bytes.as_slice()]).unwrap();
            for threads in [1, 2, 4] {
                let got = count(arm.as_ref(), &|_| true, threads).unwrap();
                assert_eq!(
                    got,
                    duplicate
                        .is_none()
                        .then(|| counted_as(&expected, &FileWaste::default())),
                    "{duplicate:?} {threads}"
                );
            }
            assert_eq!(normalize(&[&bytes], 1).unwrap().unwrap().0, expected);
        }
        // 400 variables, 80,200 pairs: the chunks of two threads, in order.
        let bytes = {
            let pairs: Vec<(u64, u64)> = (0..400)
                .flat_map(|i| (i..400).map(move |j| (i, j)))
                .collect();
            pb::Function {
                function: Some(ArmPb::Quadratic(pb::Quadratic {
                    rows: pairs.iter().map(|p| p.0).collect(),
                    columns: pairs.iter().map(|p| p.1).collect(),
                    values: vec![2.0; pairs.len()],
                    linear: None,
                })),
            }
            .encode_to_vec()
        };
        let arm = scan([bytes.as_slice()]).unwrap();
        let counted = count(arm.as_ref(), &|_| true, 2).unwrap().unwrap();
        assert_eq!(counted.shape.stored_terms, 80_200);
        // An undefined variable: built, so that its error names it.
        assert_eq!(count(arm.as_ref(), &|id| id != 399, 2).unwrap(), None);
    }

    #[test]
    fn a_quadratic_functions_encoded_length_is_prosts() {
        let mut rng = Rng(17);
        let mut declined = 0;
        for case in 0..2_000 {
            let n = rng.below(6) as usize;
            let id = |rng: &mut Rng| [0, 1, 127, 128, 300, 1 << 40][rng.below(6) as usize];
            let mut bytes = Vec::new();
            // Sometimes an earlier arm the quadratic one replaces.
            if rng.below(4) == 0 {
                encoding::double::encode(function::CONSTANT, &2.5, &mut bytes);
            }
            let mut q = Vec::new();
            for field in [quadratic::ROWS, quadratic::COLUMNS] {
                let ids: Vec<u64> = (0..n).map(|_| id(&mut rng)).collect();
                match rng.below(4) {
                    0 => ids
                        .iter()
                        .for_each(|v| encoding::uint64::encode(field, v, &mut q)),
                    1 => {
                        // A varint longer than it need be.
                        encoding::encode_key(field, encoding::WireType::LengthDelimited, &mut q);
                        let mut body = Vec::new();
                        ids.iter()
                            .for_each(|&v| encoding::encode_varint(v, &mut body));
                        if let Some(first) = body.first_mut() {
                            *first |= 0x80;
                            body.insert(1, 0x00);
                        }
                        encoding::encode_varint(body.len() as u64, &mut q);
                        q.extend_from_slice(&body);
                    }
                    _ => encoding::uint64::encode_packed(field, &ids, &mut q),
                }
            }
            let values: Vec<f64> = (0..n).map(|i| i as f64 - 1.0).collect();
            if rng.below(3) == 0 {
                values
                    .iter()
                    .for_each(|v| encoding::double::encode(quadratic::VALUES, v, &mut q));
            } else {
                encoding::double::encode_packed(quadratic::VALUES, &values, &mut q);
            }
            if rng.below(2) == 0 {
                let terms = (0..rng.below(3))
                    .map(|_| pb::LinearTerm {
                        id: id(&mut rng),
                        coefficient: [0.0, 1.5][rng.below(2) as usize],
                    })
                    .collect();
                let constant = [0.0, 3.0][rng.below(2) as usize];
                let linear = pb::Linear { terms, constant };
                encoding::message::encode(quadratic::LINEAR, &linear, &mut q);
            }
            if rng.below(4) == 0 {
                // An unknown field, dropped by re-encoding.
                encoding::uint64::encode(9, &7, &mut q);
            }
            encoding::bytes::encode(function::QUADRATIC, &q, &mut bytes);
            let prost = pb::Function::decode(bytes.as_slice())
                .unwrap()
                .encoded_len();
            match quadratic_encoded_len(&bytes, 1 + case % 3) {
                Some(len) => assert_eq!(len, prost, "case {case}: {bytes:02x?}"),
                None => declined += 1,
            }
        }
        assert!((300..1_500).contains(&declined), "{declined}");
    }

    #[test]
    fn a_large_quadratic_is_held_on_several_threads_as_on_one() {
        let mut rng = Rng(11);
        // 400 variables, 80,200 pairs: above the threshold for threads.
        let pairs: Vec<(u64, u64)> = (0..400)
            .flat_map(|i| (i..400).map(move |j| (i, j)))
            .collect();
        let n = pairs.len();
        for case in 0..12 {
            let mut pairs = pairs.clone();
            let mut values: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
            match case % 6 {
                0 if case == 0 => {}
                // Two sorted halves the wrong way round: each chunk of two
                // threads ascending, not the whole.
                0 => pairs.rotate_left(n / 2),
                // Shuffled: merged (sorted) after reading.
                1 => {
                    for i in (1..n).rev() {
                        pairs.swap(i, rng.below(i as u64 + 1) as usize);
                    }
                }
                // Zeros, some at the chunks' edges.
                2 => {
                    for i in [0, 1, n / 2 - 1, n / 2, n / 3, n - 1] {
                        values[i] = 0.0;
                    }
                    for _ in 0..100 {
                        values[rng.below(n as u64) as usize] = -0.0;
                    }
                }
                // Written the other way round (row above column).
                3 => pairs.iter_mut().for_each(|p| *p = (p.1, p.0)),
                // A pair again, its sum non-zero or cancelling.
                4 => {
                    let i = rng.below(n as u64) as usize;
                    pairs.push(pairs[i]);
                    values.push(if case < 6 { 0.5 } else { -values[i] });
                }
                // A non-finite coefficient (the first in file order wins).
                _ => {
                    let i = rng.below(n as u64) as usize;
                    values[i] = f64::INFINITY;
                    values[(i + n / 2) % n] = f64::NAN;
                }
            }
            let bytes = pb::Function {
                function: Some(ArmPb::Quadratic(pb::Quadratic {
                    rows: pairs.iter().map(|p| p.0).collect(),
                    columns: pairs.iter().map(|p| p.1).collect(),
                    values,
                    linear: None,
                })),
            }
            .encode_to_vec();
            let one = normalize(&[&bytes], 1).unwrap();
            assert!(same(&one, &oracle(&bytes).unwrap()), "case {case}");
            for threads in [2, 3, 4, 7] {
                let got = normalize(&[&bytes], threads).unwrap();
                assert!(same(&got, &one), "case {case}, {threads} threads");
            }
        }
    }
}
