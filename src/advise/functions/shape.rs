//! A function's shape: its monomials, its pivot coefficient and the
//! fingerprint that finds functions equal up to a scalar factor.

use crate::advise::hash::finish128;
use crate::advise::hash::terms128;
use crate::model::elsewhere::CSR_COEFFICIENT;
use crate::model::elsewhere::CSR_ID;
use crate::model::elsewhere::CSR_ROW;
use crate::model::function::Shape;
use crate::model::function::Variant;
use crate::model::labels;
use crate::model::Function;

/// Every stored monomial as (sorted ids, coefficient), constant first.
fn for_each_monomial(f: &Function, mut visit: impl FnMut(&[u64], f64)) {
    match f {
        Function::Zero => {}
        Function::Constant(c) => visit(&[], *c),
        Function::Linear { terms, constant } => {
            if *constant != 0.0 {
                visit(&[], *constant);
            }
            for &(id, c) in terms {
                visit(&[id], c);
            }
        }
        Function::Quadratic {
            quadratic,
            linear,
            constant,
        } => {
            if *constant != 0.0 {
                visit(&[], *constant);
            }
            for &(id, c) in linear {
                visit(&[id], c);
            }
            for &((a, b), c) in quadratic {
                visit(&[a, b], c);
            }
        }
        Function::Polynomial { terms } => {
            for (ids, c) in terms {
                visit(ids, *c);
            }
        }
    }
}

/// The coefficient of the smallest monomial (by degree, then ids).
fn pivot(f: &Function) -> f64 {
    match f {
        Function::Zero => 1.0,
        Function::Constant(c) => *c,
        Function::Linear { terms, constant } => {
            if *constant != 0.0 {
                *constant
            } else {
                // Its terms may be in file order.
                terms.iter().min_by_key(|t| t.0).map_or(1.0, |t| t.1)
            }
        }
        Function::Quadratic {
            quadratic,
            linear,
            constant,
        } => {
            if *constant != 0.0 {
                *constant
            } else if let Some(t) = linear.first() {
                t.1
            } else {
                quadratic.first().map_or(1.0, |t| t.1)
            }
        }
        Function::Polynomial { terms } => terms
            .iter()
            .min_by(|a, b| a.0.len().cmp(&b.0.len()).then_with(|| a.0.cmp(&b.0)))
            .map_or(1.0, |t| t.1),
    }
}

/// Rounds to 32 significant bits, so quotients that differ only by
/// floating-point noise compare equal.
fn quantize(x: f64) -> u64 {
    const DROP: u32 = 20;
    (x.to_bits().wrapping_add(1 << (DROP - 1))) & !((1u64 << DROP) - 1)
}

/// What the rules need to know about one function.
#[derive(Debug, Clone, Copy)]
pub(super) struct FunctionTraits {
    pub(super) variant: VariantTraits,
    pub(super) csr: u64,
    pub(super) exact: u128,
    pub(super) scaled: u128,
    pub(super) pivot: f64,
}

/// What the variant rule needs to know about one function: its variant,
/// what it stores, and the cheapest variant that would hold the same.
#[derive(Debug, Clone, Copy)]
pub(super) struct VariantTraits {
    /// Its variant as OMMX's frames spell it.
    pub(super) name: &'static str,
    pub(super) bytes: u64,
    pub(super) terms: u64,
    pub(super) degree: usize,
    /// Bytes in the cheapest variant its degree allows.
    pub(super) minimal: u64,
    /// The variant the minimal bytes are for.
    pub(super) minimal_variant: &'static str,
}

impl VariantTraits {
    /// Of a function of `shape` whose monomials have at most `degree`
    /// variables (as [`Function::degree`] gives it): whether built or only
    /// counted, every stored term is a monomial, and a constant function
    /// holds one.
    pub(super) fn of(shape: Shape, degree: usize) -> Self {
        let bytes = shape.bytes() as u64;
        let monomials = match shape.variant {
            Variant::Constant => 1,
            _ => shape.stored_terms,
        };
        let name = shape.variant_name();
        let (minimal, minimal_variant) = cheapest(name, degree, monomials, bytes);
        Self {
            name,
            bytes,
            terms: shape.stored_terms as u64,
            degree,
            minimal,
            minimal_variant,
        }
    }

    pub(super) fn of_function(f: &Function) -> Self {
        Self::of(stored(f), f.degree())
    }
}

/// What `f` stores, for [`VariantTraits::of`] (its load's extras aside).
fn stored(f: &Function) -> Shape {
    Shape {
        variant: f.variant(),
        stored_terms: f.stored_terms(),
        unprofiled: Default::default(),
    }
}

pub(super) fn shape(f: &Function, fingerprint: bool) -> FunctionTraits {
    let pivot = pivot(f);
    let (mut exact, mut scaled) = (0u128, 0u128);
    let (mut degree, mut monomials, mut csr) = (0, 0u64, CSR_ROW);
    for_each_monomial(f, |ids, c| {
        degree = degree.max(ids.len());
        monomials += 1;
        csr += CSR_ID * ids.len() as u64 + CSR_COEFFICIENT;
        if fingerprint {
            let [e, s] = terms128(ids, [c.to_bits(), quantize(c / pivot)]);
            exact = exact.wrapping_add(e);
            scaled = scaled.wrapping_add(s);
        }
    });
    debug_assert_eq!(degree, f.degree());
    let variant = VariantTraits::of(stored(f), degree);
    FunctionTraits {
        variant,
        csr,
        exact: finish128(exact, monomials),
        scaled: finish128(scaled, monomials),
        pivot,
    }
}

/// The cheapest variant that holds `terms` monomials (a `Constant` holds
/// one, `Zero` none) of degree `degree`
/// (one constant as Constant, degree <= 1 as Linear, degree 2 as
/// Quadratic), with its bytes; its `own` when none is cheaper. OMMX keeps
/// the variant the file's `oneof` arm names, so each is a change a writer
/// can make.
fn cheapest(own: &'static str, degree: usize, terms: usize, bytes: u64) -> (u64, &'static str) {
    let variants: &[Variant] = match degree {
        0 if terms == 1 => &[Variant::Constant, Variant::Linear],
        0 | 1 => &[Variant::Linear],
        2 => &[Variant::Quadratic],
        _ => &[],
    };
    let mut best = (bytes, own);
    for &variant in variants {
        let shape = Shape {
            variant,
            stored_terms: terms,
            unprofiled: Default::default(),
        };
        let cost = labels::function(shape);
        if cost < best.0 {
            best = (cost, shape.variant_name());
        }
    }
    best
}
