//! What a file spends on terms OMMX drops or merges on load: zero
//! coefficients, and terms on a monomial an earlier term already has.
//!
//! The bytes are those of the file as a protobuf writer (Python's, C++'s,
//! Go's) writes the `ommx.v1.Instance`, against the same instance written
//! with each function's terms normalized, the rest as it was: every set
//! field in number order, repeated scalars packed, a singular double written
//! whenever its bits are not zero (so `-0.0` is), a map entry with its key
//! and its value even when empty. (prost, which OMMX's own writer uses,
//! leaves out `-0.0` and empty map keys and values; OMMX never writes a term
//! it would drop.) The saving of a function is its field's bytes, the length
//! prefixes of the messages that hold it included, up to the instance's
//! element: exact for a file so written, whatever its nesting.

use crate::ommx_v1 as pb;
use pb::FunctionArm;

use super::fields::ConstraintFields;
use super::Function;

/// What normalization removed from one function, and the bytes it takes in
/// the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileWaste {
    pub zero_terms: u64,
    pub merged_terms: u64,
    /// Bytes a writer that drops zero terms and merges duplicates would not
    /// write: the function's, and the length prefixes of the messages
    /// holding it (as far as [`FileWaste::within`] was told of them).
    pub bytes: u64,
    /// The message holding the waste (the function, or the message
    /// [`FileWaste::within`] last named) as a field: its length prefix and
    /// body, as written, before the waste goes.
    pub written: u64,
}

impl FileWaste {
    /// Compares `wire` with its normalized form. Nothing is re-encoded unless
    /// normalization removed a term, which a term count shows in O(1). A
    /// function whose merged terms sum to a coefficient that is not finite
    /// has no waste: that sum cannot be written (OMMX refuses it).
    pub fn of(wire: &pb::Function, normalized: &Function) -> Self {
        // An expression (OMMX 3.0's, which may hold a single compact
        // function) is not normalized term by term: nothing to compare.
        if let Some(FunctionArm::Expression(_)) = &wire.function {
            return Self::default();
        }
        let nonzero = |c: f64| u64::from(c != 0.0);
        let in_file = match &wire.function {
            None | Some(FunctionArm::Constant(_) | FunctionArm::Expression(_)) => 0,
            Some(FunctionArm::Linear(l)) => l.terms.len() as u64 + nonzero(l.constant),
            Some(FunctionArm::Quadratic(q)) => {
                q.values.len() as u64
                    + q.linear
                        .as_ref()
                        .map_or(0, |l| l.terms.len() as u64 + nonzero(l.constant))
            }
            Some(FunctionArm::Polynomial(p)) => p.terms.len() as u64,
        };
        let stored = normalized.stored_terms() as u64;
        if in_file == stored || !finite(normalized) {
            return Self::default();
        }
        let zero = |c: &f64| *c == 0.0;
        let zero_terms = match &wire.function {
            None | Some(FunctionArm::Constant(_) | FunctionArm::Expression(_)) => 0,
            Some(FunctionArm::Linear(l)) => l.terms.iter().filter(|t| zero(&t.coefficient)).count(),
            Some(FunctionArm::Quadratic(q)) => {
                q.values.iter().filter(|v| zero(v)).count()
                    + q.linear.as_ref().map_or(0, |l| {
                        l.terms.iter().filter(|t| zero(&t.coefficient)).count()
                    })
            }
            Some(FunctionArm::Polynomial(p)) => {
                p.terms.iter().filter(|m| zero(&m.coefficient)).count()
            }
        } as u64;
        let before = field(function(wire));
        let after = field(function(&clean(normalized, wire)));
        Self {
            zero_terms,
            merged_terms: in_file - zero_terms - stored,
            bytes: before.saturating_sub(after),
            written: before,
        }
    }

    /// The same waste seen from the message that holds its message as a
    /// field (a 1-byte tag), whose other fields take `rest` bytes: that
    /// message's length prefix may shrink too.
    pub fn within(self, rest: u64) -> Self {
        if self.bytes == 0 {
            return self;
        }
        let body = rest + 1 + self.written;
        Self {
            bytes: self.bytes + varint(body) - varint(body - self.bytes),
            written: field(body),
            ..self
        }
    }
}

/// Every coefficient finite (duplicates summed may overflow).
fn finite(f: &Function) -> bool {
    let mut all = true;
    let mut check = |c: f64| all &= c.is_finite();
    match f {
        Function::Zero => {}
        Function::Constant(c) => check(*c),
        Function::Linear { terms, constant } => {
            terms.iter().for_each(|t| check(t.1));
            check(*constant);
        }
        Function::Quadratic {
            quadratic,
            linear,
            constant,
        } => {
            quadratic.iter().for_each(|t| check(t.1));
            linear.iter().for_each(|t| check(t.1));
            check(*constant);
        }
        Function::Polynomial { terms } => terms.iter().for_each(|t| check(t.1)),
    }
    all
}

/// The normalized function written in the arm `wire` used, with the constant
/// field (not a term) and a quadratic's linear part as `wire` had them: what
/// a writer that drops zero terms and merges duplicates would have written.
fn clean(f: &Function, wire: &pb::Function) -> pb::Function {
    let linear = |terms: &[(u64, f64)], constant: f64| pb::Linear {
        terms: terms
            .iter()
            .map(|&(id, coefficient)| pb::LinearTerm { id, coefficient })
            .collect(),
        constant,
    };
    let wire_linear = match &wire.function {
        Some(FunctionArm::Linear(l)) => Some(l),
        Some(FunctionArm::Quadratic(q)) => q.linear.as_ref(),
        _ => None,
    };
    let constant = wire_linear.map_or(0.0, |l| l.constant);
    let arm = match f {
        Function::Zero => FunctionArm::Constant(0.0),
        Function::Constant(c) => FunctionArm::Constant(*c),
        Function::Linear { terms, .. } => FunctionArm::Linear(linear(terms, constant)),
        Function::Quadratic {
            quadratic,
            linear: l,
            ..
        } => FunctionArm::Quadratic(pb::Quadratic {
            rows: quadratic.iter().map(|&((r, _), _)| r).collect(),
            columns: quadratic.iter().map(|&((_, c), _)| c).collect(),
            values: quadratic.iter().map(|&(_, v)| v).collect(),
            linear: wire_linear.map(|_| linear(l, constant)),
        }),
        Function::Polynomial { terms } => FunctionArm::Polynomial(pb::Polynomial {
            terms: terms
                .iter()
                .map(|(ids, coefficient)| pb::Monomial {
                    ids: ids.clone(),
                    coefficient: *coefficient,
                })
                .collect(),
        }),
    };
    pb::Function {
        function: Some(arm),
    }
}

fn varint(n: u64) -> u64 {
    prost::encoding::encoded_len_varint(n) as u64
}

/// A length-delimited body of `len` bytes with its length prefix.
fn field(len: u64) -> u64 {
    varint(len) + len
}

/// A field of a 1-byte tag holding a `len`-byte body.
fn tagged(len: u64) -> u64 {
    1 + field(len)
}

/// A singular double: written unless its bits are all zero.
fn double(x: f64) -> u64 {
    if x.to_bits() == 0 {
        0
    } else {
        9
    }
}

/// A singular integer: written unless zero.
fn integer(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        1 + varint(n)
    }
}

/// A packed repeated field of varints (`i64`s as their two's complement).
fn packed(values: impl Iterator<Item = u64>) -> u64 {
    let body: u64 = values.map(varint).sum();
    if body == 0 {
        0
    } else {
        tagged(body)
    }
}

fn string(s: &str) -> u64 {
    tagged(s.len() as u64)
}

fn string_map(map: &impl MapEntries) -> u64 {
    map.entries()
        .map(|(k, v)| tagged(string(k) + string(v)))
        .sum()
}

/// The entries of a string map, whatever map type prost gave it.
trait MapEntries {
    fn entries(&self) -> impl Iterator<Item = (&str, &str)>;
}

impl MapEntries for std::collections::HashMap<String, String> {
    fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl MapEntries for std::collections::BTreeMap<String, String> {
    fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

fn linear(l: &pb::Linear) -> u64 {
    let terms: u64 = l
        .terms
        .iter()
        .map(|t| tagged(integer(t.id) + double(t.coefficient)))
        .sum();
    terms + double(l.constant)
}

/// A function's body, as written.
fn function(f: &pb::Function) -> u64 {
    match &f.function {
        None => 0,
        Some(FunctionArm::Constant(_)) => 9,
        Some(FunctionArm::Linear(l)) => tagged(linear(l)),
        Some(FunctionArm::Quadratic(q)) => tagged(
            packed(q.rows.iter().copied())
                + packed(q.columns.iter().copied())
                + if q.values.is_empty() {
                    0
                } else {
                    tagged(8 * q.values.len() as u64)
                }
                + q.linear.as_ref().map_or(0, |l| tagged(linear(l))),
        ),
        Some(FunctionArm::Polynomial(p)) => tagged(
            p.terms
                .iter()
                .map(|m| tagged(packed(m.ids.iter().copied()) + double(m.coefficient)))
                .sum(),
        ),
        // 2.9.3 refuses expressions before any waste is measured.
        Some(FunctionArm::Expression(e)) => {
            use prost::Message;
            tagged(e.encoded_len() as u64)
        }
    }
}

/// A label's fields (name, subscripts, parameters, description), as written.
fn labels(
    name: Option<&str>,
    subscripts: &[i64],
    parameters: &impl MapEntries,
    description: &Option<String>,
) -> u64 {
    name.map_or(0, string)
        + packed(subscripts.iter().map(|&s| s as u64))
        + string_map(parameters)
        + description.as_deref().map_or(0, string)
}

/// A constraint's fields other than its function, as written.
pub fn constraint_rest(c: &ConstraintFields) -> u64 {
    let ConstraintFields {
        id,
        equality,
        name,
        subscripts,
        parameters,
        description,
    } = c;
    let name = name.as_deref();
    integer(*id) + integer(*equality as u64) + labels(name, subscripts, parameters, description)
}

/// A removed constraint's fields other than its constraint, as written.
pub fn removed_rest(r: &pb::RemovedConstraint) -> u64 {
    let pb::RemovedConstraint {
        constraint: _,
        removed_reason,
        removed_reason_parameters,
    } = r;
    let reason = if removed_reason.is_empty() {
        0
    } else {
        string(removed_reason)
    };
    reason + string_map(removed_reason_parameters)
}

/// A named function's fields other than its function, as written.
pub fn named_rest(n: &pb::NamedFunction) -> u64 {
    let pb::NamedFunction {
        id,
        function: _,
        subscripts,
        parameters,
        name,
        description,
    } = n;
    integer(*id) + labels(name.as_deref(), subscripts, parameters, description)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn rest_of(c: &pb::Constraint) -> u64 {
        constraint_rest(&c.clone().into())
    }

    fn linear_fn(terms: &[(u64, f64)], constant: f64) -> pb::Function {
        pb::Function {
            function: Some(FunctionArm::Linear(pb::Linear {
                terms: terms
                    .iter()
                    .map(|&(id, coefficient)| pb::LinearTerm { id, coefficient })
                    .collect(),
                constant,
            })),
        }
    }

    #[test]
    fn an_expression_has_no_file_waste_whatever_it_holds() {
        // OMMX 3.0 may read an expression as one compact function: its
        // terms are not the file's (corpus: issue43_expression_objective_waste).
        let wire = pb::Function {
            function: Some(FunctionArm::Expression(Default::default())),
        };
        let held = Function::from_wire(&linear_fn(&[(1, 1.0), (2, 2.0)], 0.0)).unwrap();
        assert_eq!(FileWaste::of(&wire, &held), FileWaste::default());
    }

    #[test]
    fn file_waste_counts_dropped_and_merged_terms_and_their_bytes() {
        let clean = linear_fn(&[(1, 1.0), (2, 2.0)], 0.0);
        let f = Function::from_wire(&clean).unwrap();
        assert_eq!(FileWaste::of(&clean, &f), FileWaste::default());
        // Terms: (1, 1.0) is 0a 0b 08 01 11 + 8 bytes = 13; (2, 0.0) is
        // 0a 02 08 02 = 4 (proto3 omits the zero coefficient). Written clean,
        // (1, 3.0) alone: 13. The Linear message shrinks from 30 to 13 bytes,
        // the Function from 32 to 15, and the field's 1-byte length prefix
        // stays 1 byte: 17 bytes go.
        let wire = linear_fn(&[(1, 1.0), (2, 0.0), (1, 2.0)], 0.0);
        let f = Function::from_wire(&wire).unwrap();
        let waste = FileWaste::of(&wire, &f);
        assert_eq!(
            waste,
            FileWaste {
                zero_terms: 1,
                merged_terms: 1,
                bytes: 17,
                written: 33,
            }
        );
        // A cancelling pair goes entirely: both are merged away.
        let wire = linear_fn(&[(1, 1.0), (1, -1.0)], 5.0);
        let f = Function::from_wire(&wire).unwrap();
        let waste = FileWaste::of(&wire, &f);
        assert_eq!(
            (waste.zero_terms, waste.merged_terms, waste.bytes),
            (0, 2, 26)
        );
    }

    #[test]
    fn lengths_are_prosts_where_prost_writes_the_same() {
        let q = pb::Function {
            function: Some(FunctionArm::Quadratic(pb::Quadratic {
                rows: vec![1, 300],
                columns: vec![2, 1],
                values: vec![1.0, 2.0],
                linear: Some(pb::Linear::default()),
            })),
        };
        let p = pb::Function {
            function: Some(FunctionArm::Polynomial(pb::Polynomial {
                terms: vec![pb::Monomial {
                    ids: vec![1, 2, 1 << 40],
                    coefficient: 0.5,
                }],
            })),
        };
        for f in [linear_fn(&[(1, 1.0), (0, 2.0), (200, 3.0)], 4.0), q, p] {
            assert_eq!(function(&f), f.encoded_len() as u64, "{f:?}");
        }
        let c = pb::Constraint {
            id: 3,
            equality: 2,
            function: None,
            subscripts: vec![-1, 5],
            parameters: [("k".to_string(), "v".to_string())].into(),
            name: Some(String::new()),
            description: Some("d".into()),
        };
        assert_eq!(rest_of(&c), c.encoded_len() as u64);
    }

    #[test]
    fn negative_zero_and_empty_map_parts_are_written() {
        // prost leaves both out; protobuf's other writers do not.
        let f = linear_fn(&[(1, -0.0)], -0.0);
        assert_eq!(f.encoded_len(), 6);
        assert_eq!(function(&f), 6 + 9 + 9);
        let c = pb::Constraint {
            parameters: [(String::new(), String::new())].into(),
            ..Default::default()
        };
        assert_eq!(rest_of(&c), 2 + 4);
    }

    #[test]
    fn waste_reaches_the_element_through_its_prefixes() {
        // x1 - x1 + x2 with a -0.0 zero term: 13 + 13 + 13 + 13 bytes of
        // terms; clean, x2 alone: 13. The function field shrinks by 39.
        let wire = linear_fn(&[(1, 1.0), (1, -1.0), (3, -0.0), (2, 1.0)], 0.0);
        let f = Function::from_wire(&wire).unwrap();
        let w = FileWaste::of(&wire, &f);
        assert_eq!((w.zero_terms, w.merged_terms, w.bytes), (1, 2, 39));
        assert_eq!(w.written, 1 + 1 + 1 + 52);
        // In a constraint whose other fields take 75 bytes: its body goes
        // from 131 bytes (a 2-byte length prefix) to 92 (1 byte).
        let w = w.within(75);
        assert_eq!((w.bytes, w.written), (40, 2 + 131));
        // A merged sum that is not finite cannot be written: no waste.
        let wire = linear_fn(&[(1, f64::MAX), (1, f64::MAX)], 0.0);
        let f = Function::from_wire(&wire).unwrap();
        assert_eq!(FileWaste::of(&wire, &f), FileWaste::default());
    }
}
