//! A held decision variable's fields, and a held constraint's other than
//! its function, read on the wire as prost would decode them, where
//! prost's decoding of every element cost the pass more than building the
//! model. Names and subscripts land in the model's inline types
//! ([`Name`], [`Subscripts`]) without passing through prost's.
//!
//! This reader vouches only for the encoding writers emit: each field at
//! most once, in increasing field order, behind its one-byte key with its
//! schema's wire type (a list of subscripts packed), strings valid UTF-8,
//! nothing unknown. That encoding has one reading, prost's, which this
//! reader gives. Anything else (a parameter map, a field repeated or out of
//! order, an unknown field, a wrong wire type, a malformed value) is
//! `None`, and the caller decodes the element with prost as before, for the
//! same result or the same error.

use crate::model::{ConstraintFields, Name, Subscripts, VariableFields};
use crate::wire::fields::{bound, constraint, variable};
use crate::wire::tag;
use crate::wire::WireType::{Fixed64, Len, Varint};

/// A message body read as writers emit it: each field at most once, in
/// field order, behind its one-byte key (every field number here is below
/// 16). The reader asks for each field in turn; a body is read only if
/// nothing is left once every field has had its turn.
struct InOrder<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> InOrder<'a> {
    fn new(body: &'a [u8]) -> Self {
        Self { body, pos: 0 }
    }

    /// Whether the next field has the key `key`, moving past the key.
    #[inline(always)]
    fn next_is(&mut self, key: u8) -> bool {
        let here = self.body.get(self.pos) == Some(&key);
        self.pos += usize::from(here);
        here
    }

    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        crate::wire::varint(self.body, &mut self.pos)
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let bytes = self.body.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(bytes)
    }

    /// A length-delimited value.
    #[inline(always)]
    fn len(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.varint()?).ok()?;
        self.take(len)
    }

    #[inline(always)]
    fn double(&mut self) -> Option<f64> {
        let bytes = self.take(8)?.try_into().expect("8 bytes");
        Some(f64::from_le_bytes(bytes))
    }

    /// Whether the whole body was read.
    fn done(&self) -> bool {
        self.pos == self.body.len()
    }
}

fn string(bytes: &[u8]) -> Option<String> {
    std::str::from_utf8(bytes).ok().map(str::to_owned)
}

fn name(bytes: &[u8]) -> Option<Name> {
    std::str::from_utf8(bytes).ok().map(Name::new)
}

/// A packed list of `int64`s (prost keeps each varint's 64 bits).
fn int64s(packed: &[u8]) -> Option<Subscripts> {
    let mut values = Subscripts::new();
    let mut pos = 0;
    while pos < packed.len() {
        values.push(crate::wire::varint(packed, &mut pos)? as i64);
    }
    Some(values)
}

/// A bound's (lower, upper).
fn bound(body: &[u8]) -> Option<(f64, f64)> {
    let mut r = InOrder::new(body);
    let (mut lower, mut upper) = (0.0, 0.0);
    if r.next_is(tag(bound::LOWER, Fixed64)) {
        lower = r.double()?;
    }
    if r.next_is(tag(bound::UPPER, Fixed64)) {
        upper = r.double()?;
    }
    r.done().then_some((lower, upper))
}

/// The body of an `ommx.v1.DecisionVariable`, as prost decodes it, into
/// `v` (a default one): whether read. `v` is the caller's, so that its
/// fields are written where the caller builds from them, not moved there.
pub fn variable(body: &[u8], v: &mut VariableFields) -> bool {
    variable_fields(body, v).is_some()
}

fn variable_fields(body: &[u8], v: &mut VariableFields) -> Option<()> {
    let mut r = InOrder::new(body);
    if r.next_is(tag(variable::ID, Varint)) {
        v.id = r.varint()?;
    }
    if r.next_is(tag(variable::KIND, Varint)) {
        // An enum is an int32: prost keeps the low 32 bits.
        v.kind = r.varint()? as i32;
    }
    if r.next_is(tag(variable::BOUND, Len)) {
        v.bound = Some(bound(r.len()?)?);
    }
    if r.next_is(tag(variable::NAME, Len)) {
        v.name = Some(name(r.len()?)?);
    }
    if r.next_is(tag(variable::SUBSCRIPTS, Len)) {
        v.subscripts = int64s(r.len()?)?;
    }
    // Parameters are left to prost.
    if r.next_is(tag(variable::DESCRIPTION, Len)) {
        v.description = Some(string(r.len()?)?);
    }
    if r.next_is(tag(variable::SUBSTITUTED_VALUE, Fixed64)) {
        v.substituted_value = Some(r.double()?);
    }
    r.done().then_some(())
}

/// The body of an `ommx.v1.Constraint` as prost decodes it, but for its
/// function, into `c` (a default one, the caller's, as for [`variable`]);
/// when read, the function's encoding (`None`: no function field), for the
/// function's own reader.
pub fn constraint<'a>(body: &'a [u8], c: &mut ConstraintFields) -> Option<Option<&'a [u8]>> {
    let mut r = InOrder::new(body);
    let mut function = None;
    if r.next_is(tag(constraint::ID, Varint)) {
        c.id = r.varint()?;
    }
    if r.next_is(tag(constraint::EQUALITY, Varint)) {
        // An enum is an int32: prost keeps the low 32 bits.
        c.equality = r.varint()? as i32;
    }
    if r.next_is(tag(constraint::FUNCTION, Len)) {
        function = Some(r.len()?);
    }
    // Parameters are left to prost.
    if r.next_is(tag(constraint::NAME, Len)) {
        c.name = Some(name(r.len()?)?);
    }
    if r.next_is(tag(constraint::DESCRIPTION, Len)) {
        c.description = Some(string(r.len()?)?);
    }
    if r.next_is(tag(constraint::SUBSCRIPTS, Len)) {
        c.subscripts = int64s(r.len()?)?;
    }
    r.done().then_some(function)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64 as Rng;
    use crate::ommx_v1 as pb;
    use crate::pass::terms::decode_field;
    use prost::Message;
    use std::collections::BTreeMap;

    fn text(rng: &mut Rng) -> Option<String> {
        rng.chance(3).then(|| {
            let len = [0, 1, 5, 127, 128, 300][rng.below(6) as usize];
            "é".repeat(len / 2) + &"x".repeat(len % 2)
        })
    }

    fn value(rng: &mut Rng) -> f64 {
        [0.0, -0.0, 1.5, -2.0, f64::INFINITY, f64::NAN][rng.below(6) as usize]
    }

    fn subscripts(rng: &mut Rng) -> Vec<i64> {
        (0..[0, 1, 3, 70][rng.below(4) as usize])
            .map(|_| [0, 5, 1_000, -1, i64::MAX][rng.below(5) as usize])
            .collect()
    }

    fn parameters(rng: &mut Rng) -> BTreeMap<String, String> {
        match rng.chance(8) {
            true => [("a".to_owned(), "b".to_owned())].into(),
            false => BTreeMap::new(),
        }
    }

    fn random_variable(rng: &mut Rng) -> pb::DecisionVariable {
        pb::DecisionVariable {
            id: [0, 1, 127, 128, 99_999, u64::MAX][rng.below(6) as usize],
            kind: rng.below(7) as i32 - 1,
            bound: rng.chance(4).then_some(()).map(|()| pb::Bound {
                lower: value(rng),
                upper: value(rng),
            }),
            name: text(rng),
            subscripts: subscripts(rng),
            parameters: parameters(rng),
            description: text(rng),
            substituted_value: rng.chance(3).then(|| value(rng)),
        }
    }

    fn random_constraint(rng: &mut Rng) -> pb::Constraint {
        let term = |id| pb::LinearTerm {
            id,
            coefficient: 1.5,
        };
        pb::Constraint {
            id: [0, 1, 127, 128, 99_999, u64::MAX][rng.below(6) as usize],
            equality: rng.below(4) as i32 - 1,
            function: rng.chance(6).then_some(()).map(|()| pb::Function {
                function: Some(pb::function::Function::Linear(pb::Linear {
                    terms: (0..rng.below(4)).map(term).collect(),
                    constant: value(rng),
                })),
            }),
            parameters: parameters(rng),
            name: text(rng),
            description: text(rng),
            subscripts: subscripts(rng),
        }
    }

    /// The body as written, with a byte changed, cut short, or followed by
    /// another element's body (protobuf merges the two).
    fn damaged(rng: &mut Rng, mut body: Vec<u8>, other: Vec<u8>) -> Vec<u8> {
        match rng.below(5) {
            0 | 1 => {}
            2 if !body.is_empty() => {
                let at = rng.below(body.len() as u64) as usize;
                body[at] = rng.next() as u8;
            }
            3 if !body.is_empty() => body.truncate(rng.below(body.len() as u64) as usize),
            _ => body.extend(other),
        }
        body
    }

    /// Equal to the last bit of every number (NaNs and signed zeros too).
    fn same<M: Message + std::fmt::Debug>(a: &M, b: &M) -> bool {
        a.encode_to_vec() == b.encode_to_vec() && format!("{a:?}") == format!("{b:?}")
    }

    /// The fields read, equal to prost's to the last bit of every number.
    fn same_variable(held: &VariableFields, prost: pb::DecisionVariable) -> bool {
        let bits = |v: &VariableFields| {
            let bound = v.bound.map(|(l, u)| (l.to_bits(), u.to_bits()));
            (bound, v.substituted_value.map(f64::to_bits))
        };
        let prost = VariableFields::from(prost);
        format!("{held:?}") == format!("{prost:?}") && bits(held) == bits(&prost)
    }

    /// Whatever the reader answers for is what prost decodes; and it does
    /// answer for what prost writes without parameters.
    #[test]
    fn variables_read_as_prost_decodes_them() {
        let mut rng = Rng(11);
        let mut read = 0;
        for round in 0..20_000 {
            let v = random_variable(&mut rng);
            let written = v.encode_to_vec();
            let other = random_variable(&mut rng).encode_to_vec();
            let body = damaged(&mut rng, written.clone(), other);
            let prost = decode_field::<pb::DecisionVariable>(&body);
            let mut held = VariableFields::default();
            match variable(&body, &mut held).then_some(held) {
                Some(held) => {
                    read += 1;
                    let prost = prost.unwrap_or_else(|e| panic!("round {round}: {e}"));
                    let fields = VariableFields::from(prost.clone());
                    let same = same_variable(&held, prost);
                    assert!(same, "round {round}: {held:?} {fields:?}");
                }
                None => assert!(
                    body != written || !v.parameters.is_empty(),
                    "round {round}: {v:?}"
                ),
            }
        }
        assert!(read > 8_000, "{read}");
    }

    /// The same for a constraint, its function handed back as written.
    #[test]
    fn constraints_read_as_prost_decodes_them() {
        let mut rng = Rng(12);
        let mut read = 0;
        for round in 0..20_000 {
            let c = random_constraint(&mut rng);
            let written = c.encode_to_vec();
            let other = random_constraint(&mut rng).encode_to_vec();
            let body = damaged(&mut rng, written.clone(), other);
            let prost = decode_field::<pb::Constraint>(&body);
            let mut held = ConstraintFields::default();
            match constraint(&body, &mut held) {
                Some(function) => {
                    read += 1;
                    // The function is its own reader's to vouch for.
                    let decoded = function.map(pb::Function::decode);
                    let Ok(mut prost) = prost else {
                        assert!(matches!(decoded, Some(Err(_))), "round {round}");
                        continue;
                    };
                    let wire_function = prost.function.take();
                    let prost = ConstraintFields::from(prost);
                    assert_eq!(held, prost, "round {round}");
                    let function = decoded.map(|f| f.unwrap());
                    assert_eq!(function.is_some(), wire_function.is_some(), "round {round}");
                    if let (Some(a), Some(b)) = (&function, &wire_function) {
                        assert!(same(a, b), "round {round}");
                    }
                }
                None => assert!(
                    body != written || !c.parameters.is_empty(),
                    "round {round}: {c:?}"
                ),
            }
        }
        assert!(read > 8_000, "{read}");
    }
}
