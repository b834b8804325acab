//! A function as the generator makes it: how prost decodes it, how OMMX
//! converts it into its table, which ids its check pushes, and how
//! `to_bytes` encodes it again.

use super::super::alloc::table;
use super::super::glibc::{Malloc, Ptr};
use super::super::ommx29::size;
use super::capacities;
use super::parts::{free_all, grown_table, Pushed};
use crate::model::function::Variant;

/// A linear function's table entry: the id and the coefficient.
const LINEAR_ENTRY: u64 = 24;
/// A quadratic function's: two ids and the coefficient.
const QUADRATIC_ENTRY: u64 = 32;

/// A function as the generator makes it: linear, or quadratic with its
/// pairs and its linear part (the pass counts the linear terms, which the
/// 2.9.3 profile counts with the pairs).
#[derive(Clone, Copy, Default)]
pub(super) struct Function {
    pub(super) quadratic: bool,
    /// Every monomial the table stores, a constant included.
    pub(super) terms: u64,
    /// A quadratic function's pairs and its linear part's stored terms (its
    /// table's), and of those the ones in its vector (not the constant).
    pub(super) pairs: u64,
    pub(super) linear: u64,
    pub(super) linear_terms: u64,
}

/// A function as prost decodes it (a quadratic one: columns, rows and
/// values, and its linear part's terms) or as `to_bytes` makes it again.
pub(super) enum Vectors {
    Linear(Pushed),
    /// Boxed: a load holds one of these per constraint, most of them linear.
    Quadratic(Box<([Pushed; 3], Pushed)>),
}

impl Vectors {
    pub(super) fn free(self, m: &mut Malloc) {
        match self {
            Vectors::Linear(v) => v.free(m),
            Vectors::Quadratic(parts) => {
                let (vs, linear) = *parts;
                vs.into_iter().for_each(|v| v.free(m));
                linear.free(m);
            }
        }
    }
}

impl Function {
    /// A function of `variant` storing `terms` monomials, of which a
    /// quadratic one's linear part stores `linear`, `constant` (0 or 1) of
    /// them its constant (a field of its own in the message, not a term).
    pub(super) fn of(variant: Variant, terms: u64, linear: u64, constant: u64) -> Function {
        if variant != Variant::Quadratic {
            return Function {
                terms,
                ..Function::default()
            };
        }
        let linear = linear.min(terms);
        Function {
            quadratic: true,
            terms,
            pairs: terms - linear,
            linear,
            linear_terms: linear.saturating_sub(constant),
        }
    }

    /// A table entry: the monomial and its coefficient.
    pub(super) fn entry(&self) -> u64 {
        if self.quadratic {
            QUADRATIC_ENTRY
        } else {
            LINEAR_ENTRY
        }
    }

    /// prost's decode: each packed field pushed in turn, then the linear
    /// part's terms.
    pub(super) fn decode(&self, m: &mut Malloc) -> Vectors {
        if self.quadratic {
            let pairs = std::array::from_fn(|_| Pushed::grown(m, self.pairs, 8));
            Vectors::Quadratic(Box::new((
                pairs,
                Pushed::grown(m, self.linear_terms, size::TERM),
            )))
        } else {
            Vectors::Linear(Pushed::grown(m, self.terms, size::TERM))
        }
    }

    /// `to_bytes`' message: the terms pushed from the table, a quadratic
    /// function's three vectors side by side and its linear terms among
    /// them (in the table's order: each vector grows when its share of the
    /// table has been read).
    pub(super) fn encode(&self, m: &mut Malloc) -> Vectors {
        if !self.quadratic {
            return Vectors::Linear(Pushed::grown(m, self.terms, size::TERM));
        }
        let mut vs: [Pushed; 3] = std::array::from_fn(|_| Pushed::new(8));
        let mut linear = Pushed::new(size::TERM);
        for (grows_pairs, cap) in growths(self.pairs, self.linear_terms) {
            if grows_pairs {
                vs.iter_mut().for_each(|v| v.push(m, cap));
            } else {
                linear.push(m, cap);
            }
        }
        Vectors::Quadratic(Box::new((vs, linear)))
    }

    /// OMMX's table of it, grown insert by insert; the vectors freed after.
    /// A quadratic function's linear part is made a linear function first
    /// (its own table, grown, then merged in and freed; traced).
    pub(super) fn convert(&self, m: &mut Malloc, decoded: Vectors) -> Option<Ptr> {
        let table = grown_table(m, self.terms, self.entry());
        match decoded {
            Vectors::Quadratic(parts) => {
                let (pairs, linear) = *parts;
                pairs.into_iter().for_each(|v| v.free(m));
                let part = grown_table(m, self.linear, LINEAR_ENTRY);
                linear.free(m);
                free_all(m, part);
            }
            linear => linear.free(m),
        }
        table
    }

    /// The table cloned.
    pub(super) fn clone_table(&self, m: &mut Malloc) -> Option<Ptr> {
        (self.terms > 0).then(|| m.malloc(table(self.terms, self.entry())))
    }

    /// Ids a check of it pushes (`less`: its constant, taken as stored).
    pub(super) fn ids(&self, less: u64) -> u64 {
        if self.quadratic {
            2 * self.pairs + self.linear.saturating_sub(less)
        } else {
            self.terms.saturating_sub(less)
        }
    }
}

/// The capacities two vectors filled together pass through, in the order
/// they are reached when `a` and `b` elements are interleaved evenly: each
/// `(true, cap)` is the first's growth to `cap`, `(false, cap)` the
/// second's. A growth to `cap` happens at the element after `cap / 2` (at
/// the first, for the first capacity).
fn growths(a: u64, b: u64) -> Vec<(bool, u64)> {
    let at = |cap: u64, n: u64| {
        let element = if cap == 4 { 1 } else { cap / 2 + 1 };
        element as f64 / n as f64
    };
    let mut all: Vec<(f64, bool, u64)> = capacities(a)
        .map(|c| (at(c, a), true, c))
        .chain(capacities(b).map(|c| (at(c, b), false, c)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    all.into_iter()
        .map(|(_, first, cap)| (first, cap))
        .collect()
}
