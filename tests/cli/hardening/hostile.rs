//! Catalogue cases for issue 14's hostile inputs: tiny files that claim or
//! provoke far more than they hold (huge length prefixes, references to
//! undefined variables repeated millions of times, pathological archives,
//! huge baselines and budgets). Each runs under the catalogue's peak-memory
//! bound, so a regression to memory proportional to the claim fails here.

use prost::Message;

use super::{file_case, varint, Case, Expect};
use crate::gzip;
use memprof::ommx_v1 as pb;

/// Field `field`, length-delimited, with `body`.
fn len_field(field: u32, body: &[u8]) -> Vec<u8> {
    let mut out = varint(u64::from(field) << 3 | 2);
    out.extend(varint(body.len() as u64));
    out.extend_from_slice(body);
    out
}

/// An objective that is the constant 1.
fn objective() -> Vec<u8> {
    pb::Instance {
        objective: Some(pb::Function {
            function: Some(pb::function::Function::Constant(1.0)),
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// A constraint `id` whose function is one monomial over `ids`.
fn monomial_constraint(id: u64, ids: Vec<u64>) -> Vec<u8> {
    let constraint = pb::Constraint {
        id,
        equality: 2,
        function: Some(pb::Function {
            function: Some(pb::function::Function::Polynomial(pb::Polynomial {
                terms: vec![pb::Monomial {
                    ids,
                    coefficient: 1.0,
                }],
            })),
        }),
        ..Default::default()
    };
    len_field(4, &constraint.encode_to_vec())
}

pub(super) fn cases() -> Vec<Case> {
    // 500 constraints, each x7^4000, x7 never defined: 2 million references
    // to one id (kept one by one, as they once were, they peaked near 200 MB).
    let repeated_references = {
        let mut bytes = objective();
        for id in 1..=500u64 {
            bytes.extend(monomial_constraint(id, vec![7; 4000]));
        }
        gzip(&bytes)
    };
    // More distinct undefined ids than the cap, in one monomial.
    let distinct_references = {
        let mut bytes = objective();
        bytes.extend(monomial_constraint(1, (1..=(1u64 << 18) + 1).collect()));
        gzip(&bytes)
    };
    // A variable whose length prefix claims 2 MiB, all present, under a
    // 1 MiB element limit; and one claiming a terabyte.
    let huge_variable = gzip(&len_field(2, &vec![b'a'; 2 << 20]));
    let terabyte_prefix = {
        let mut bytes = varint(2 << 3 | 2);
        bytes.extend(varint(1 << 40));
        bytes.extend([0u8; 4096]);
        bytes
    };
    vec![
        file_case(
            "rejected",
            "repeated-references.pb.gz",
            repeated_references,
            &[],
            Expect::Error("constraint 1 uses decision variable 7, which is not defined"),
        ),
        file_case(
            "too-many-pending",
            "distinct-references.pb.gz",
            distinct_references,
            &[],
            Expect::Error("more than 262144 distinct variable ids are used before they are defined"),
        ),
        file_case(
            "element-too-large",
            "huge-variable.pb.gz",
            huge_variable,
            &["--max-element", "1MiB"],
            Expect::Error(
                "a length-delimited field at byte 1 is 2097152 bytes, more than 1MiB, the --max-element limit",
            ),
        ),
        Case {
            kind: Some("wire-truncated"),
            name: "stdin ending inside a huge element",
            setup: Box::new(|_| super::inspect("-".into(), &[])),
            stdin: Some(terabyte_prefix),
            fsize_limit: None,
            expect: Expect::Error("truncated input: a length-delimited field at byte 1 runs past the end"),
        },
    ]
}
