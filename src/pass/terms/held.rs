//! A held decision variable's fields, and a held constraint's other than
//! its function, read on the wire into prost's message, where prost's
//! decoding of every element cost the pass more than building the model.
//!
//! This reader vouches only for the encoding writers emit: each field at
//! most once, in increasing field order, with its schema's wire type (a
//! list of subscripts packed), strings valid UTF-8, nothing unknown. That
//! encoding has one reading, prost's, which this reader gives. Anything
//! else (a parameter map, a field repeated or out of order, an unknown
//! field, a wrong wire type, a malformed value) is `None`, and the caller
//! decodes the element with prost as before, for the same result or the
//! same error.

use super::{Fields, Value};
use crate::ommx_v1 as pb;
use crate::wire::fields::{bound, constraint, variable};

/// Walks the fields of `body` as writers emit them, showing each to
/// `field`; `None` when a field number does not increase (a field given
/// twice, or out of order), when `field` refuses one, or when the encoding
/// is not one [`Fields`] reads.
#[inline(always)]
fn in_order<'a>(body: &'a [u8], mut field: impl FnMut(u32, Value<'a>) -> Option<()>) -> Option<()> {
    let mut fields = Fields::new(body);
    let mut last = 0;
    while let Some((number, value)) = fields.next_field().ok()? {
        if number <= last {
            return None;
        }
        last = number;
        field(number, value)?;
    }
    Some(())
}

fn string(bytes: &[u8]) -> Option<String> {
    std::str::from_utf8(bytes).ok().map(str::to_owned)
}

/// A packed list of `int64`s (prost keeps each varint's 64 bits).
fn int64s(packed: &[u8]) -> Option<Vec<i64>> {
    let mut values = Vec::with_capacity(packed.len().min(16));
    let mut pos = 0;
    while pos < packed.len() {
        values.push(crate::wire::varint(packed, &mut pos)? as i64);
    }
    Some(values)
}

fn bound(body: &[u8]) -> Option<pb::Bound> {
    let mut b = pb::Bound::default();
    in_order(body, |number, value| {
        match (number, value) {
            (bound::LOWER, Value::Fixed64(bits, _)) => b.lower = f64::from_bits(bits),
            (bound::UPPER, Value::Fixed64(bits, _)) => b.upper = f64::from_bits(bits),
            _ => return None,
        }
        Some(())
    })?;
    Some(b)
}

/// The body of an `ommx.v1.DecisionVariable`, as prost decodes it.
pub fn variable(body: &[u8]) -> Option<pb::DecisionVariable> {
    let mut v = pb::DecisionVariable::default();
    in_order(body, |number, value| {
        match (number, value) {
            (variable::ID, Value::Varint(x, _)) => v.id = x,
            // An enum is an int32: prost keeps the low 32 bits.
            (variable::KIND, Value::Varint(x, _)) => v.kind = x as i32,
            (variable::BOUND, Value::Len(b)) => v.bound = Some(bound(b)?),
            (variable::NAME, Value::Len(s)) => v.name = Some(string(s)?),
            (variable::SUBSCRIPTS, Value::Len(packed)) => v.subscripts = int64s(packed)?,
            (variable::DESCRIPTION, Value::Len(s)) => v.description = Some(string(s)?),
            (variable::SUBSTITUTED_VALUE, Value::Fixed64(bits, _)) => {
                v.substituted_value = Some(f64::from_bits(bits))
            }
            // Parameters, unknown fields, wrong wire types.
            _ => return None,
        }
        Some(())
    })?;
    Some(v)
}

/// The body of an `ommx.v1.Constraint` as prost decodes it, but for its
/// function (left `None`), which is returned as its encoding (`None`: no
/// function field), for the function's own reader.
pub fn constraint(body: &[u8]) -> Option<(pb::Constraint, Option<&[u8]>)> {
    let mut c = pb::Constraint::default();
    let mut function = None;
    in_order(body, |number, value| {
        match (number, value) {
            (constraint::ID, Value::Varint(x, _)) => c.id = x,
            // An enum is an int32: prost keeps the low 32 bits.
            (constraint::EQUALITY, Value::Varint(x, _)) => c.equality = x as i32,
            (constraint::FUNCTION, Value::Len(f)) => function = Some(f),
            (constraint::NAME, Value::Len(s)) => c.name = Some(string(s)?),
            (constraint::DESCRIPTION, Value::Len(s)) => c.description = Some(string(s)?),
            (constraint::SUBSCRIPTS, Value::Len(packed)) => c.subscripts = int64s(packed)?,
            // Parameters, unknown fields, wrong wire types.
            _ => return None,
        }
        Some(())
    })?;
    Some((c, function))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64 as Rng;
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
            match variable(&body) {
                Some(held) => {
                    read += 1;
                    let prost = prost.unwrap_or_else(|e| panic!("round {round}: {e}"));
                    assert!(same(&held, &prost), "round {round}: {held:?} {prost:?}");
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
            match constraint(&body) {
                Some((held, function)) => {
                    read += 1;
                    // The function is its own reader's to vouch for.
                    let decoded = function.map(pb::Function::decode);
                    let Ok(mut prost) = prost else {
                        assert!(matches!(decoded, Some(Err(_))), "round {round}");
                        continue;
                    };
                    let wire_function = prost.function.take();
                    assert!(same(&held, &prost), "round {round}: {held:?} {prost:?}");
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
