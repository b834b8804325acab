//! A function as the generator makes it: how prost decodes it, how OMMX
//! converts it into its table, which ids its check pushes, and how
//! `to_bytes` encodes it again.

use super::capacities;
use super::parts::{free_all, grown_table, Pushed};
use crate::model::alloc::table;
use crate::model::function::Variant;
use crate::profiled::{Growth, Unprofiled};
use crate::real_memory::ommx29::size;
use glibc_model::{Malloc, Ptr};

/// A linear function's table entry: the id and the coefficient.
const LINEAR_ENTRY: u64 = 24;
/// A quadratic function's: two ids and the coefficient.
const QUADRATIC_ENTRY: u64 = 32;
/// What the check of the ids makes for a pair, and for any other entry.
const PAIR_TRANSIENT: u64 = 32;
const LINEAR_TRANSIENT: u64 = 16;

/// A polynomial's: its monomial (ids inline up to 3, else on the heap) and
/// the coefficient.
const POLYNOMIAL_ENTRY: u64 = 48;

#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::real_memory) enum Kind {
    #[default]
    Linear,
    Quadratic,
    Polynomial,
}

/// A function as the generator makes it: linear; quadratic with its pairs
/// and its linear part; or polynomial, its monomials short (at most 3 ids,
/// which OMMX's key keeps inline) or long (kept on the heap), each group of
/// its mean length. The pass counts the linear part's terms and the ids,
/// which the 2.9.3 profile does not.
#[derive(Clone, Copy, Default)]
pub(in crate::real_memory) struct Function {
    pub(in crate::real_memory) kind: Kind,
    /// Every monomial the table stores, a constant included.
    pub(in crate::real_memory) terms: u64,
    /// A quadratic function's pairs and its linear part's stored terms (its
    /// table's); a linear function's terms, or a quadratic one's linear
    /// part's, in the message (its constant is a field of its own).
    pub(in crate::real_memory) pairs: u64,
    pub(in crate::real_memory) linear: u64,
    pub(in crate::real_memory) linear_terms: u64,
    /// A polynomial's long monomials, and the two groups' lengths.
    pub(in crate::real_memory) long: u64,
    pub(in crate::real_memory) long_len: u64,
    pub(in crate::real_memory) short_len: u64,
}

/// A function as prost decodes it (a quadratic one: columns, rows and
/// values, and its linear part's terms; a polynomial: its monomials and
/// each one's ids) or as `to_bytes` makes it again.
pub(in crate::real_memory) enum Vectors {
    Linear(Pushed),
    /// Boxed: a load holds one of these per constraint, most of them linear.
    Quadratic(Box<([Pushed; 3], Pushed)>),
    Polynomial(Box<(Pushed, Vec<Ptr>)>),
}

impl Vectors {
    /// Dropped: every vector freed, a monomial's ids before the monomials.
    pub(super) fn free(self, m: &mut Malloc) {
        match self {
            Vectors::Linear(v) => v.free(m),
            Vectors::Quadratic(parts) => {
                let (vs, linear) = *parts;
                vs.into_iter().for_each(|v| v.free(m));
                linear.free(m);
            }
            Vectors::Polynomial(parts) => {
                let (monomials, ids) = *parts;
                free_all(m, ids);
                monomials.free(m);
            }
        }
    }
}

/// A function's table as `to_bytes` clones it: the table and its long
/// monomials' ids, in the table's order.
pub(super) struct Cloned {
    pub(super) table: Option<Ptr>,
    keys: Vec<Ptr>,
}

impl Function {
    /// A function of `variant` storing `terms` monomials; `more` holds what
    /// the pass counted of it beyond them (for one function), `constant`
    /// (0 or 1) is whether a linear one, or a quadratic one's linear part,
    /// stores a constant (a field of its own in the message, not a term).
    pub(super) fn of(variant: Variant, terms: u64, more: &Unprofiled, constant: u64) -> Function {
        match variant {
            Variant::Quadratic => {
                let linear = more.quadratic_linear.min(terms);
                Function {
                    kind: Kind::Quadratic,
                    terms,
                    pairs: terms - linear,
                    linear,
                    linear_terms: linear.saturating_sub(constant),
                    ..Function::default()
                }
            }
            Variant::Polynomial => {
                let long = more.long_monomials.min(terms);
                let short_ids = more.monomial_ids.saturating_sub(more.long_monomial_ids);
                Function {
                    kind: Kind::Polynomial,
                    terms,
                    long,
                    long_len: more.long_monomial_ids.div_ceil(long.max(1)),
                    short_len: short_ids.div_ceil((terms - long).max(1)),
                    ..Function::default()
                }
            }
            _ => Function {
                terms,
                linear_terms: terms.saturating_sub(constant),
                ..Function::default()
            },
        }
    }

    /// A table entry: the monomial and its coefficient.
    pub(in crate::real_memory) fn entry(&self) -> u64 {
        match self.kind {
            Kind::Linear => LINEAR_ENTRY,
            Kind::Quadratic => QUADRATIC_ENTRY,
            Kind::Polynomial => POLYNOMIAL_ENTRY,
        }
    }

    /// The length of a polynomial's `i`-th monomial: the long ones spread
    /// evenly among the others (file order and table order alike).
    pub(super) fn monomial_len(&self, i: u64) -> u64 {
        if self.is_long(i) {
            self.long_len
        } else {
            self.short_len
        }
    }

    fn is_long(&self, i: u64) -> bool {
        (i + 1) * self.long / self.terms.max(1) > i * self.long / self.terms.max(1)
    }

    /// prost's decode: each packed field pushed in turn, then the linear
    /// part's terms; a polynomial's monomials pushed, each made first with
    /// its ids pushed.
    pub(in crate::real_memory) fn decode(&self, m: &mut Malloc) -> Vectors {
        match self.kind {
            Kind::Linear => Vectors::Linear(Pushed::grown(m, self.linear_terms, size::TERM)),
            Kind::Quadratic => {
                let pairs = std::array::from_fn(|_| Pushed::grown(m, self.pairs, 8));
                Vectors::Quadratic(Box::new((
                    pairs,
                    Pushed::grown(m, self.linear_terms, size::TERM),
                )))
            }
            Kind::Polynomial => {
                let mut monomials = Pushed::new(size::MONOMIAL);
                let mut ids = Vec::with_capacity(self.terms as usize);
                for i in 0..self.terms {
                    ids.extend(Pushed::grown(m, self.monomial_len(i), 8).into_ptr());
                    monomials.push(m, i + 1);
                }
                Vectors::Polynomial(Box::new((monomials, ids)))
            }
        }
    }

    /// `to_bytes`' message: the terms pushed from the table, a quadratic
    /// function's three vectors side by side and its linear terms among
    /// them, in the table's order (`order`, the pass's reading of it; else
    /// each vector grows when its share of the table has been read); a
    /// polynomial's monomials each with its ids pushed anew, a long one's
    /// cloned ids freed after.
    pub(super) fn encode(
        &self,
        m: &mut Malloc,
        cloned: &mut Cloned,
        order: Option<&[Growth]>,
    ) -> Vectors {
        match self.kind {
            Kind::Linear => Vectors::Linear(Pushed::grown(m, self.linear_terms, size::TERM)),
            Kind::Quadratic => {
                let mut vs: [Pushed; 3] = std::array::from_fn(|_| Pushed::new(8));
                let mut linear = Pushed::new(size::TERM);
                for (grows_pairs, cap) in self.growths(order) {
                    if grows_pairs {
                        vs.iter_mut().for_each(|v| v.push(m, cap));
                    } else {
                        linear.push(m, cap);
                    }
                }
                Vectors::Quadratic(Box::new((vs, linear)))
            }
            Kind::Polynomial => {
                let mut monomials = Pushed::new(size::MONOMIAL);
                let mut ids = Vec::with_capacity(self.terms as usize);
                let mut keys = std::mem::take(&mut cloned.keys).into_iter();
                for i in 0..self.terms {
                    // Traced: the vector grows before the monomial is made.
                    monomials.push(m, i + 1);
                    ids.extend(Pushed::grown(m, self.monomial_len(i), 8).into_ptr());
                    if self.is_long(i) {
                        free_all(m, keys.next());
                    }
                }
                Vectors::Polynomial(Box::new((monomials, ids)))
            }
        }
    }

    /// OMMX's table of it, grown insert by insert; the vectors freed after
    /// (a polynomial's monomials' ids are kept: they become its keys).
    /// A quadratic function's linear part is made a linear function first
    /// (its own table, grown, then merged in and freed; traced).
    pub(in crate::real_memory) fn convert(&self, m: &mut Malloc, decoded: Vectors) -> Option<Ptr> {
        let table = grown_table(m, self.terms, self.entry());
        match decoded {
            Vectors::Quadratic(parts) => {
                let (pairs, linear) = *parts;
                pairs.into_iter().for_each(|v| v.free(m));
                let part = grown_table(m, self.linear, LINEAR_ENTRY);
                linear.free(m);
                free_all(m, part);
            }
            Vectors::Polynomial(parts) => parts.0.free(m),
            linear => linear.free(m),
        }
        table
    }

    /// The table cloned, then each long monomial's ids (exact; a short
    /// one's are inline).
    pub(super) fn clone_table(&self, m: &mut Malloc) -> Cloned {
        let table = (self.terms > 0).then(|| m.malloc(table(self.terms, self.entry())));
        let keys = (0..self.long)
            .map(|_| m.malloc(8 * self.long_len))
            .collect();
        Cloned { table, keys }
    }

    /// A quadratic function's growths in its table's order: `order` as the
    /// pass read it, else each vector's spread ([`growths`]).
    fn growths(&self, order: Option<&[Growth]>) -> Vec<(bool, u64)> {
        match order {
            Some(o) => in_order(o, self.pairs, self.linear_terms),
            None => growths(self.pairs, self.linear_terms),
        }
    }

    /// The small values OMMX's check of the ids makes for each table entry
    /// (a pair's 32 bytes, a linear term's 16) and frees before the next,
    /// each of a size made first where the first entry of its kind comes:
    /// (request, ids pushed before it). Each is then taken from the
    /// tcache's bin of its size and given back to it, the same chunk each
    /// time, so it is made once. Where an entry comes is known to within
    /// its vectors' growths (traced on sparse_qubo and
    /// quadratic_constraints: the check reads the table in its order).
    pub(super) fn transients(&self, order: Option<&[Growth]>) -> Vec<(u64, u64)> {
        if self.kind != Kind::Quadratic {
            return vec![(LINEAR_TRANSIENT, 0)];
        }
        // The entries of one kind read before the first of the other: at
        // least one more than half the capacity its last growth before
        // that reached.
        let growths = self.growths(order);
        let before_first = |other: bool| {
            let last = growths
                .iter()
                .take_while(|&&(pairs, _)| pairs != other)
                .last();
            last.map_or(0, |&(_, cap)| if cap == 4 { 1 } else { cap / 2 + 1 })
        };
        let mut made = Vec::new();
        if self.pairs > 0 {
            made.push((PAIR_TRANSIENT, before_first(true)));
        }
        if self.linear_terms > 0 {
            made.push((LINEAR_TRANSIENT, 2 * before_first(false)));
        }
        made.sort_by_key(|&(_, at)| at);
        made
    }

    /// Whether `order` could be this function's table order: a quadratic
    /// one's, as many growths of each kind as its pairs and linear terms
    /// take.
    pub(super) fn agrees(&self, order: &[Growth]) -> bool {
        let of = |g: Growth| order.iter().filter(|&&o| o == g).count();
        self.kind == Kind::Quadratic
            && of(Growth::Pairs) == capacities(self.pairs).count()
            && of(Growth::Linear) == capacities(self.linear_terms).count()
    }

    /// Ids a check of it pushes (`less`: its constant, taken as stored).
    pub(in crate::real_memory) fn ids(&self, less: u64) -> u64 {
        match self.kind {
            Kind::Linear => self.terms.saturating_sub(less),
            Kind::Quadratic => 2 * self.pairs + self.linear.saturating_sub(less),
            Kind::Polynomial => {
                self.long * self.long_len + (self.terms - self.long) * self.short_len
            }
        }
    }
}

/// The growths of [`growths`] in the table's order as the pass read it.
fn in_order(order: &[Growth], a: u64, b: u64) -> Vec<(bool, u64)> {
    let (mut pairs, mut linear) = (capacities(a), capacities(b));
    order
        .iter()
        .filter_map(|g| match g {
            Growth::Pairs => pairs.next().map(|c| (true, c)),
            Growth::Linear => linear.next().map(|c| (false, c)),
        })
        .collect()
}

/// The capacities two vectors filled together pass through, in the order
/// they are reached when `a` and `b` elements are spread evenly among each
/// other: each `(true, cap)` is the first's growth to `cap`, `(false, cap)`
/// the second's. A growth to `cap` happens at the element after `cap / 2`
/// (at the first, for the first capacity). Where the pass did not read the
/// table's order (`Growth`), it stands for it: a table's order is its
/// hashes', which spread each kind of entry evenly at large.
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
