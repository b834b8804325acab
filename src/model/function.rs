//! OMMX's normalized functions: which variant a wire `Function` becomes and
//! how many monomials it stores, decided exactly as ommx 2.9.3 decides them.
//!
//! Rules (measured against the package): the variant follows the oneof arm
//! (constant 0.0 is `Zero`); terms with a coefficient of exactly 0.0 are
//! dropped before anything else looks at them; terms on the same monomial are
//! summed in file order and removed when the sum is exactly 0.0 (no
//! tolerance); quadratic keys are unordered pairs; polynomial keys are sorted
//! id lists; a non-zero constant is one stored term.

use crate::ids::{distinct_in_table, table_len, IdSet, EMPTY_SLOT};
use crate::ommx_v1 as pb;
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Noun, Path, Rule};
use crate::profiled::{Terms, Unprofiled};

use super::ModelError;

/// A normalized function. Terms are merged (one per monomial, none zero);
/// quadratic and polynomial terms are sorted by monomial, and so are linear
/// terms, but for those of a linear function that names each variable once,
/// which stay in file order ([`merge_linear`]). Whatever asks for an order
/// of the variables gets the sorted one ([`Function::for_each_variable_first`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Function {
    Zero,
    Constant(f64),
    /// `(variable, coefficient)` terms plus the constant (0.0 when absent).
    Linear {
        terms: Vec<(u64, f64)>,
        constant: f64,
    },
    /// Degree-2 terms on `(min, max)` pairs, then the linear part.
    Quadratic {
        quadratic: Vec<((u64, u64), f64)>,
        linear: Vec<(u64, f64)>,
        constant: f64,
    },
    /// Monomials as sorted id lists; the empty list is the constant.
    Polynomial {
        terms: Vec<(Vec<u64>, f64)>,
    },
}

/// Stack size of OMMX's `PolynomialBase` and the bytes one stored term adds,
/// per variant.
pub const TERMS_STACK: usize = 32;
pub const LINEAR_TERM: usize = 24;
pub const QUADRATIC_TERM: usize = 32;
pub const POLYNOMIAL_TERM: usize = 48;
const CONSTANT_BYTES: usize = 40;

pub const ZERO_RULE: Rule = Rule::fixed(
    "a Zero function",
    Noun::new("function", "functions"),
    CONSTANT_BYTES,
);
pub const CONSTANT_RULE: Rule = Rule::fixed(
    "a Constant function",
    Noun::new("function", "functions"),
    CONSTANT_BYTES,
);
pub const LINEAR_RULE: Rule = Rule::per_unit(
    "a Linear function: PolynomialBase's stack part plus one entry per stored term",
    Noun::new("function", "functions"),
    TERMS_STACK,
    (LINEAR_TERM, Noun::new("term", "terms")),
);
pub const QUADRATIC_RULE: Rule = Rule::per_unit(
    "a Quadratic function: PolynomialBase's stack part plus one entry per stored term",
    Noun::new("function", "functions"),
    TERMS_STACK,
    (QUADRATIC_TERM, Noun::new("term", "terms")),
);
pub const POLYNOMIAL_RULE: Rule = Rule::per_unit(
    "a Polynomial function: PolynomialBase's stack part plus one entry per stored term",
    Noun::new("function", "functions"),
    TERMS_STACK,
    (POLYNOMIAL_TERM, Noun::new("term", "terms")),
);

fn finite(value: f64, what: &str) -> Result<f64, ModelError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(ModelError::NonFinite {
            what: what.to_string(),
            value,
        })
    }
}

/// Up to this many terms, a stable sort of the terms themselves beats
/// sorting them with their positions (16% faster at 50 terms, measured by
/// `cargo bench --bench pipeline -- normalize`).
const STABLE_SORT_MAX: usize = 1024;

/// A monomial's key, and how a list of terms is sorted by it: by key, terms
/// with the same key kept in file order, so that sums are formed in the
/// order OMMX forms them.
pub(crate) trait TermKey: Ord + Sized {
    fn sort_terms(terms: &mut Vec<(Self, f64)>) {
        sort_stable(terms);
    }
}

/// Any key: a stable sort of the terms, or on long lists an unstable sort on
/// (key, position), which is as stable on the key and faster (about 1.5×
/// at 100,000 terms).
fn sort_stable<K: Ord>(terms: &mut Vec<(K, f64)>) {
    if terms.len() <= STABLE_SORT_MAX {
        terms.sort_by(|a, b| a.0.cmp(&b.0));
    } else {
        let mut indexed: Vec<(K, usize, f64)> = std::mem::take(terms)
            .into_iter()
            .enumerate()
            .map(|(i, (k, c))| (k, i, c))
            .collect();
        indexed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        *terms = indexed.into_iter().map(|(k, _, c)| (k, c)).collect();
    }
}

/// Sorts `terms` through integers that pack each term's key above its
/// position (`pack(key, position)`; an unstable sort of distinct integers
/// orders by key, then by position: a stable sort by key), then gathers the
/// terms in that order. `position` recovers the position from an integer.
fn sort_packed<K: Copy, P: Ord + Copy>(
    terms: &mut Vec<(K, f64)>,
    pack: impl Fn(K, usize) -> P,
    position: impl Fn(P) -> usize,
) {
    let mut packed: Vec<P> = terms
        .iter()
        .enumerate()
        .map(|(i, &(k, _))| pack(k, i))
        .collect();
    packed.sort_unstable();
    *terms = packed.into_iter().map(|p| terms[position(p)]).collect();
}

/// [`sort_packed`] for keys that fit 64 bits (`bits`, ordered as the keys
/// are; `key` reads one back), the integers 128 bits wide: once sorted,
/// each one's position is replaced by its term's coefficient, and the
/// terms are written back from them in place, so that the terms are never
/// held twice over (a long quadratic objective's are tens of megabytes).
fn sort_wide<K: Copy>(terms: &mut [(K, f64)], bits: impl Fn(K) -> u64, key: impl Fn(u64) -> K) {
    let mut packed: Vec<u128> = terms
        .iter()
        .enumerate()
        .map(|(i, &(k, _))| u128::from(bits(k)) << 64 | i as u128)
        .collect();
    packed.sort_unstable();
    for p in packed.iter_mut() {
        let coefficient = terms[*p as u64 as usize].1;
        *p = *p >> 64 << 64 | u128::from(coefficient.to_bits());
    }
    for (term, &p) in terms.iter_mut().zip(&packed) {
        *term = (key((p >> 64) as u64), f64::from_bits(p as u64));
    }
}

/// Up to this many terms (a typical row), a stable insertion sort in place
/// beats sorting packed keys, which allocates twice.
const INSERTION_SORT_MAX: usize = 16;

/// A stable sort by key, in place: each term moves left past the larger
/// keys only, so terms of one key keep their file order.
fn insertion_sort<K: Copy + Ord>(terms: &mut [(K, f64)]) {
    for i in 1..terms.len() {
        let term = terms[i];
        let mut j = i;
        while j > 0 && terms[j - 1].0 > term.0 {
            terms[j] = terms[j - 1];
            j -= 1;
        }
        terms[j] = term;
    }
}

/// Linear keys: a variable id.
impl TermKey for u64 {
    fn sort_terms(terms: &mut Vec<(Self, f64)>) {
        if terms.len() <= INSERTION_SORT_MAX {
            return insertion_sort(terms);
        }
        let max = terms.iter().map(|t| t.0).max().unwrap_or(0);
        if terms.len() <= 1 << 16 && max < 1 << 48 {
            sort_packed(terms, |k, i| k << 16 | i as u64, |p| (p & 0xffff) as usize);
        } else {
            sort_wide(terms, |k| k, |k| k);
        }
    }
}

/// Quadratic keys: a pair of variable ids.
impl TermKey for (u64, u64) {
    fn sort_terms(terms: &mut Vec<(Self, f64)>) {
        if terms.len() <= INSERTION_SORT_MAX {
            return insertion_sort(terms);
        }
        let max = terms.iter().map(|t| t.0 .0.max(t.0 .1)).max().unwrap_or(0);
        if max < 1 << 32 {
            sort_wide(terms, |(a, b)| a << 32 | b, |k| (k >> 32, k & 0xffff_ffff));
        } else {
            sort_stable(terms);
        }
    }
}

/// Polynomial keys: sorted id lists.
impl TermKey for Vec<u64> {}

/// Sorts `terms` by key (file order kept within a key, so sums are formed in
/// the order OMMX forms them), sums each run and drops sums that are exactly
/// zero.
pub(crate) fn merge<K: TermKey>(mut terms: Vec<(K, f64)>) -> Vec<(K, f64)> {
    let increasing = terms.windows(2).all(|w| w[0].0 < w[1].0);
    if !increasing {
        K::sort_terms(&mut terms);
    }
    // Every key once and no zero (a row as most writers give it): nothing
    // to sum or drop.
    let distinct = increasing || terms.windows(2).all(|w| w[0].0 != w[1].0);
    if distinct && terms.iter().all(|t| t.1 != 0.0) {
        return terms;
    }
    // In place: `kept` terms are merged so far, the rest not yet read.
    let mut kept = 0;
    for read in 0..terms.len() {
        if kept > 0 && terms[kept - 1].0 == terms[read].0 {
            let coefficient = terms[read].1;
            terms[kept - 1].1 += coefficient;
        } else {
            if kept > 0 && terms[kept - 1].1 == 0.0 {
                kept -= 1;
            }
            terms.swap(kept, read);
            kept += 1;
        }
    }
    terms.truncate(kept);
    if terms.last().is_some_and(|(_, sum)| *sum == 0.0) {
        terms.pop();
    }
    terms
}

/// Up to this many terms, a linear function that names each variable once
/// keeps its terms in file order.
const FILE_ORDER_MAX: usize = 256;

/// A linear function's terms (its non-zero ones, in file order) merged: as
/// they are when they name each variable once and are at most
/// [`FILE_ORDER_MAX`], else by [`merge`]. The order of a linear function's
/// terms changes no sum, no count and no byte OMMX reports; sorting them was
/// a tenth of `report`'s time on a 10M-term LP.
pub(crate) fn merge_linear(terms: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    debug_assert!(terms.iter().all(|t| t.1 != 0.0));
    let ids = terms.iter().map(|t| t.0);
    // A table on the stack: a small one for a row's few terms.
    let distinct = match terms.len() {
        0..=64 => distinct_in_table(ids, &mut [EMPTY_SLOT; table_len(64)]),
        65..=FILE_ORDER_MAX => distinct_in_table(ids, &mut [EMPTY_SLOT; table_len(FILE_ORDER_MAX)]),
        _ => false,
    };
    if distinct {
        terms
    } else {
        merge(terms)
    }
}

fn linear_terms(linear: &pb::Linear, out: &mut Vec<(u64, f64)>) -> Result<(), ModelError> {
    out.reserve(linear.terms.len());
    for term in &linear.terms {
        let c = finite(term.coefficient, "linear coefficient")?;
        if c != 0.0 {
            out.push((term.id, c));
        }
    }
    Ok(())
}

impl Function {
    /// Normalizes a wire function. `None` (no arm set) is rejected as 2.9.3 does.
    pub fn from_wire(function: &pb::Function) -> Result<Self, ModelError> {
        use pb::FunctionArm;
        let Some(arm) = &function.function else {
            return Err(ModelError::EmptyFunction);
        };
        Ok(match arm {
            // 2.9.3 decodes this arm (so a later arm on the wire replaces
            // it) but refuses a function that ends up with it.
            FunctionArm::Expression(_) => return Err(ModelError::ExpressionFunction),
            FunctionArm::Constant(c) => {
                let c = finite(*c, "constant")?;
                if c == 0.0 {
                    Function::Zero
                } else {
                    Function::Constant(c)
                }
            }
            FunctionArm::Linear(linear) => {
                let mut terms = Vec::new();
                linear_terms(linear, &mut terms)?;
                Function::Linear {
                    terms: merge_linear(terms),
                    constant: finite(linear.constant, "constant")?,
                }
            }
            FunctionArm::Quadratic(q) => {
                if q.rows.len() != q.columns.len() || q.rows.len() != q.values.len() {
                    return Err(ModelError::QuadraticLengths {
                        rows: q.rows.len(),
                        columns: q.columns.len(),
                        values: q.values.len(),
                    });
                }
                let mut quadratic = Vec::with_capacity(q.rows.len());
                for ((&r, &c), &v) in q.rows.iter().zip(&q.columns).zip(&q.values) {
                    let v = finite(v, "quadratic coefficient")?;
                    if v != 0.0 {
                        quadratic.push(((r.min(c), r.max(c)), v));
                    }
                }
                let mut linear = Vec::new();
                let mut constant = 0.0;
                if let Some(l) = &q.linear {
                    linear_terms(l, &mut linear)?;
                    constant = finite(l.constant, "constant")?;
                }
                Function::Quadratic {
                    quadratic: merge(quadratic),
                    linear: merge(linear),
                    constant,
                }
            }
            FunctionArm::Polynomial(p) => {
                let mut terms = Vec::with_capacity(p.terms.len());
                for monomial in &p.terms {
                    let c = finite(monomial.coefficient, "polynomial coefficient")?;
                    if c != 0.0 {
                        let mut ids = monomial.ids.clone();
                        ids.sort_unstable();
                        terms.push((ids, c));
                    }
                }
                Function::Polynomial {
                    terms: merge(terms),
                }
            }
        })
    }

    /// Number of monomials OMMX stores, a non-zero constant included.
    pub fn stored_terms(&self) -> usize {
        let constant_term = |c: &f64| usize::from(*c != 0.0);
        match self {
            Function::Zero | Function::Constant(_) => 0,
            Function::Linear { terms, constant } => terms.len() + constant_term(constant),
            Function::Quadratic {
                quadratic,
                linear,
                constant,
            } => quadratic.len() + linear.len() + constant_term(constant),
            Function::Polynomial { terms } => terms.len(),
        }
    }

    /// The name of the variant as OMMX's frames spell it.
    pub fn variant_name(&self) -> &'static str {
        match self {
            Function::Zero => "Zero",
            Function::Constant(_) => "Constant",
            Function::Linear { .. } => "Linear",
            Function::Quadratic { .. } => "Quadratic",
            Function::Polynomial { .. } => "Polynomial",
        }
    }

    /// Every variable id the function uses (with repeats).
    pub fn for_each_variable(&self, mut f: impl FnMut(u64)) {
        match self {
            Function::Zero | Function::Constant(_) => {}
            Function::Linear { terms, .. } => terms.iter().for_each(|&(id, _)| f(id)),
            Function::Quadratic {
                quadratic, linear, ..
            } => {
                for &((a, b), _) in quadratic {
                    f(a);
                    f(b);
                }
                linear.iter().for_each(|&(id, _)| f(id));
            }
            Function::Polynomial { terms } => {
                terms.iter().flat_map(|(ids, _)| ids).for_each(|&id| f(id))
            }
        }
    }

    /// [`Function::for_each_variable`] for a consumer to which an id given
    /// again is as nothing (the first id found): every id at least once, in
    /// the order OMMX's sorted terms first use them, some repeats left out
    /// (a quadratic term's first id once for a run of terms that share it,
    /// as a row of a sorted quadratic does). A linear function's terms kept
    /// in file order are sorted for it: for a set, call
    /// [`Function::for_each_variable`].
    pub fn for_each_variable_first(&self, mut f: impl FnMut(u64)) {
        let Function::Quadratic {
            quadratic, linear, ..
        } = self
        else {
            if let Function::Linear { terms, .. } = self {
                if !terms.windows(2).all(|w| w[0].0 < w[1].0) {
                    let mut ids: Vec<u64> = terms.iter().map(|t| t.0).collect();
                    ids.sort_unstable();
                    return ids.into_iter().for_each(f);
                }
            }
            return self.for_each_variable(f);
        };
        let mut row = None;
        for &((a, b), _) in quadratic {
            if row != Some(a) {
                f(a);
                row = Some(a);
            }
            f(b);
        }
        linear.iter().for_each(|&(id, _)| f(id));
    }

    /// The variables the function uses, each once; a large quadratic part
    /// gathered on up to `threads` threads.
    pub fn variables(&self, threads: usize) -> IdSet {
        /// Terms below which one thread gathers.
        const PARALLEL_TERMS: usize = 1 << 16;
        let mut set = IdSet::default();
        let Function::Quadratic {
            quadratic, linear, ..
        } = self
        else {
            self.for_each_variable(|id| _ = set.insert(id));
            return set;
        };
        // A sorted part's row id is inserted once for its run of terms.
        let gather = |terms: &[((u64, u64), f64)], set: &mut IdSet| {
            let mut row = None;
            for &((a, b), _) in terms {
                if row != Some(a) {
                    set.insert(a);
                    row = Some(a);
                }
                set.insert(b);
            }
        };
        if threads < 2 || quadratic.len() < PARALLEL_TERMS {
            gather(quadratic, &mut set);
        } else {
            let per = quadratic.len().div_ceil(threads);
            let parts: Vec<IdSet> = std::thread::scope(|scope| {
                let gathering: Vec<_> = quadratic
                    .chunks(per)
                    .map(|chunk| {
                        scope.spawn(move || {
                            let mut part = IdSet::default();
                            gather(chunk, &mut part);
                            part
                        })
                    })
                    .collect();
                gathering
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            for part in parts {
                set.absorb(part);
            }
        }
        linear.iter().for_each(|&(id, _)| _ = set.insert(id));
        set
    }

    /// The rule of its one leaf.
    pub fn rule(&self) -> &'static Rule {
        match self {
            Function::Zero => &ZERO_RULE,
            Function::Constant(_) => &CONSTANT_RULE,
            Function::Linear { .. } => &LINEAR_RULE,
            Function::Quadratic { .. } => &QUADRATIC_RULE,
            Function::Polynomial { .. } => &POLYNOMIAL_RULE,
        }
    }

    /// Logical bytes, as the leaf below reports them.
    pub fn bytes(&self) -> usize {
        self.rule().bytes([self.stored_terms(), 0])
    }

    /// The most variables one of its stored monomials multiplies (0 for a
    /// constant, 2 for a quadratic function that keeps a quadratic term).
    pub fn degree(&self) -> usize {
        let linear = |terms: &[(u64, f64)]| usize::from(!terms.is_empty());
        match self {
            Function::Zero | Function::Constant(_) => 0,
            Function::Linear { terms, .. } => linear(terms),
            Function::Quadratic {
                quadratic,
                linear: l,
                ..
            } => match quadratic.is_empty() {
                false => 2,
                true => linear(l),
            },
            Function::Polynomial { terms } => {
                terms.iter().map(|(ids, _)| ids.len()).max().unwrap_or(0)
            }
        }
    }
}

/// Which variant a normalized function is, without its terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Zero,
    Constant,
    Linear,
    Quadratic,
    Polynomial,
}

/// All that the logical profile sees of a function: its variant and how
/// many terms it stores. A function counted on the wire without being built
/// (`decode::terms`) has only this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub variant: Variant,
    pub stored_terms: usize,
    /// What its load takes that the profile does not count: a quadratic
    /// function's linear terms, a polynomial's ids.
    pub unprofiled: Unprofiled,
}

impl Shape {
    /// What it adds to an instance's summary.
    pub fn terms(&self) -> Terms {
        Terms {
            stored: self.stored_terms as u64,
            unprofiled: self.unprofiled,
        }
    }

    /// The rule of its one leaf.
    pub fn rule(&self) -> &'static Rule {
        match self.variant {
            Variant::Zero => &ZERO_RULE,
            Variant::Constant => &CONSTANT_RULE,
            Variant::Linear => &LINEAR_RULE,
            Variant::Quadratic => &QUADRATIC_RULE,
            Variant::Polynomial => &POLYNOMIAL_RULE,
        }
    }

    pub fn variant_name(&self) -> &'static str {
        match self.variant {
            Variant::Zero => "Zero",
            Variant::Constant => "Constant",
            Variant::Linear => "Linear",
            Variant::Quadratic => "Quadratic",
            Variant::Polynomial => "Polynomial",
        }
    }

    /// Logical bytes, as the leaf below reports them.
    pub fn bytes(&self) -> usize {
        self.rule().bytes([self.stored_terms, 0])
    }
}

/// A function counted on the wire without being built: what the profile
/// sees of it, and what an analysis reads of it beyond the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountedFunction {
    pub shape: Shape,
    /// As [`Function::degree`] gives it for the function built.
    pub degree: usize,
    /// Terms the file holds, as `FileWaste::of` counts them: more than
    /// the stored ones when normalizing dropped zeros or merged repeats.
    pub in_file: u64,
}

impl CountedFunction {
    /// Whether normalizing removes nothing from the file (its
    /// `FileWaste` is zero).
    pub fn as_written(&self) -> bool {
        self.in_file == self.shape.stored_terms as u64
    }
}

/// OMMX keeps a monomial of at most this many ids inline, and a longer
/// one's on the heap (a `SmallVec<[u64; 3]>`).
pub const INLINE_IDS: u64 = 3;

/// What a polynomial's load holds beyond its stored monomials, from their
/// lengths: every id, and the monomials longer than OMMX keeps inline.
pub fn polynomial_unprofiled(lengths: impl IntoIterator<Item = usize>) -> Unprofiled {
    let mut u = Unprofiled::default();
    for len in lengths {
        let len = len as u64;
        u.monomial_ids += len;
        if len > INLINE_IDS {
            u.long_monomials += 1;
            u.long_monomial_ids += len;
        }
    }
    u
}

impl Function {
    pub fn variant(&self) -> Variant {
        match self {
            Function::Zero => Variant::Zero,
            Function::Constant(_) => Variant::Constant,
            Function::Linear { .. } => Variant::Linear,
            Function::Quadratic { .. } => Variant::Quadratic,
            Function::Polynomial { .. } => Variant::Polynomial,
        }
    }

    pub fn shape(&self) -> Shape {
        let variant = self.variant();
        let unprofiled = match self {
            Function::Quadratic {
                linear, constant, ..
            } => Unprofiled {
                quadratic_linear: (linear.len() + usize::from(*constant != 0.0)) as u64,
                ..Unprofiled::default()
            },
            Function::Polynomial { terms } => {
                polynomial_unprofiled(terms.iter().map(|(ids, _)| ids.len()))
            }
            _ => Unprofiled::default(),
        };
        Shape {
            variant,
            stored_terms: self.stored_terms(),
            unprofiled,
        }
    }
}

impl LogicalMemoryProfile for Shape {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let mut variant = path.with(self.variant_name());
        let counts = [self.stored_terms, 0];
        match self.variant {
            Variant::Zero | Variant::Constant => visitor.visit_rule(&variant, self.rule(), counts),
            _ => visitor.visit_rule(&variant.with("PolynomialBase.terms"), self.rule(), counts),
        }
    }
}

impl LogicalMemoryProfile for Function {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        self.shape().visit_logical_memory(path, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::FunctionArm;

    #[test]
    fn variables_gathered_on_several_threads_are_every_id_once() {
        use crate::ids::SplitMix64;
        use std::collections::BTreeSet;
        let mut rng = SplitMix64(5);
        // Sorted rows as normalizing leaves them, ids dense and sparse.
        let mut quadratic: Vec<((u64, u64), f64)> = (0..90_000u64)
            .map(|i| {
                let a = i / 300;
                let b = if i % 5 == 0 {
                    1 << 40 | i
                } else {
                    a + rng.below(500)
                };
                ((a, b), 1.0)
            })
            .collect();
        quadratic.sort_by_key(|t| t.0);
        quadratic.dedup_by_key(|t| t.0);
        let f = Function::Quadratic {
            quadratic,
            linear: vec![(7, 1.0), (1 << 50, 2.0)],
            constant: 0.0,
        };
        let mut expected = BTreeSet::new();
        f.for_each_variable(|id| _ = expected.insert(id));
        for threads in [1, 2, 3, 8] {
            let set = f.variables(threads);
            let seen = std::sync::Mutex::new(BTreeSet::new());
            assert!(set.all(|id| seen.lock().unwrap().insert(id)), "{threads}");
            assert_eq!(seen.into_inner().unwrap(), expected, "{threads}");
            let missing = 1 << 40 | 5;
            assert!(!set.all(|id| id != missing), "{threads}");
        }
    }

    fn linear(terms: &[(u64, f64)], constant: f64) -> pb::Function {
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

    /// The ids in the order first used, for each variant; a quadratic's
    /// rows given once.
    #[test]
    fn first_uses_are_those_of_every_use() {
        let first = |ids: &mut dyn Iterator<Item = u64>| {
            let mut seen = std::collections::BTreeSet::new();
            ids.filter(|id| seen.insert(*id)).collect::<Vec<_>>()
        };
        let quadratic = Function::Quadratic {
            quadratic: vec![((1, 1), 1.0), ((1, 4), 2.0), ((2, 3), 1.0), ((2, 5), 1.0)],
            linear: vec![(0, 1.0), (6, 1.0)],
            constant: 0.0,
        };
        let linear = Function::Linear {
            terms: vec![(3, 1.0), (7, 2.0)],
            constant: 1.0,
        };
        for f in [quadratic, linear, Function::Zero] {
            let (mut all, mut some) = (Vec::new(), Vec::new());
            f.for_each_variable(|id| all.push(id));
            f.for_each_variable_first(|id| some.push(id));
            assert_eq!(
                first(&mut all.into_iter()),
                first(&mut some.clone().into_iter())
            );
            if matches!(f, Function::Quadratic { .. }) {
                assert_eq!(some, [1, 1, 4, 2, 3, 5, 0, 6]);
            }
        }
    }

    /// A linear function naming each variable once keeps the file's order
    /// (up to [`FILE_ORDER_MAX`] terms); anything else is merged, sorted.
    /// Either way, its variables come in OMMX's order where order counts.
    #[test]
    fn linear_terms_keep_file_order_only_when_each_variable_is_named_once() {
        let kept = [(9, 1.0), (2, -1.0), (5, 0.5), (EMPTY_SLOT - 1, 2.0)];
        assert_eq!(merge_linear(kept.to_vec()), kept);
        let repeated = [(9, 1.0), (2, -1.0), (9, 0.5)];
        assert_eq!(merge_linear(repeated.to_vec()), [(2, -1.0), (9, 1.5)]);
        // The table's empty mark is no variable it can tell apart.
        let marked = [(EMPTY_SLOT, 1.0), (2, 1.0)];
        assert_eq!(merge_linear(marked.to_vec()), [(2, 1.0), (EMPTY_SLOT, 1.0)]);
        // Each table size, at its largest and one past it.
        for n in [64, 65, FILE_ORDER_MAX, FILE_ORDER_MAX + 1] {
            let descending: Vec<(u64, f64)> = (0..n as u64).rev().map(|id| (id, 1.0)).collect();
            let merged = merge_linear(descending.clone());
            if n <= FILE_ORDER_MAX {
                assert_eq!(merged, descending);
            } else {
                assert!(merged.windows(2).all(|w| w[0].0 < w[1].0));
            }
            let mut twice = descending.clone();
            twice.push((3, 1.0));
            assert_eq!(merge_linear(twice.clone()), merged_by_map(&twice));
        }
        let f = Function::from_wire(&linear(&[(9, 1.0), (2, -1.0), (5, 0.5)], 0.0)).unwrap();
        let (mut any, mut ordered) = (Vec::new(), Vec::new());
        f.for_each_variable(|id| any.push(id));
        f.for_each_variable_first(|id| ordered.push(id));
        assert_eq!((any, ordered), (vec![9, 2, 5], vec![2, 5, 9]));
    }

    #[test]
    fn duplicate_terms_sum_and_exact_cancellations_vanish() {
        let f =
            Function::from_wire(&linear(&[(1, 1.0), (2, 0.5), (1, -1.0), (3, 0.0)], 0.0)).unwrap();
        assert_eq!(f.stored_terms(), 1);
        assert_eq!(f.bytes(), 56);
        // 0.1 + 0.2 - 0.3 is not exactly zero, so the term stays.
        let f = Function::from_wire(&linear(&[(1, 0.1), (1, 0.2), (1, -0.3)], 2.0)).unwrap();
        assert_eq!(f.stored_terms(), 2);
    }

    /// What the real-memory estimate needs beyond the stored terms: a
    /// polynomial's ids (after merging) and those of its monomials that
    /// OMMX cannot keep inline.
    #[test]
    fn a_polynomial_shape_counts_its_ids_and_long_monomials() {
        let monomial = |ids: &[u64], coefficient| pb::Monomial {
            ids: ids.to_vec(),
            coefficient,
        };
        let p = pb::Function {
            function: Some(FunctionArm::Polynomial(pb::Polynomial {
                terms: vec![
                    monomial(&[1, 2], 1.0),
                    monomial(&[4, 3, 2, 1], 1.0),
                    monomial(&[1, 2, 3, 4], 1.0),
                    monomial(&[5, 5, 5, 5, 5], 2.0),
                    monomial(&[7], 0.0),
                ],
            })),
        };
        let shape = Function::from_wire(&p).unwrap().shape();
        assert_eq!(shape.stored_terms, 3);
        assert_eq!(
            shape.unprofiled,
            Unprofiled {
                monomial_ids: 2 + 4 + 5,
                long_monomials: 2,
                long_monomial_ids: 9,
                ..Unprofiled::default()
            }
        );
    }

    #[test]
    fn constant_zero_is_zero_and_empty_linear_stays_linear() {
        let zero = pb::Function {
            function: Some(FunctionArm::Constant(0.0)),
        };
        assert_eq!(Function::from_wire(&zero).unwrap(), Function::Zero);
        let f = Function::from_wire(&linear(&[], 0.0)).unwrap();
        assert_eq!((f.variant_name(), f.bytes()), ("Linear", 32));
    }

    #[test]
    fn quadratic_pairs_are_unordered_and_polynomial_ids_sorted() {
        let q = pb::Function {
            function: Some(FunctionArm::Quadratic(pb::Quadratic {
                rows: vec![1, 2, 1],
                columns: vec![2, 1, 1],
                values: vec![1.0, 1.0, 3.0],
                linear: Some(pb::Linear {
                    terms: vec![pb::LinearTerm {
                        id: 1,
                        coefficient: 1.0,
                    }],
                    constant: 4.0,
                }),
            })),
        };
        let f = Function::from_wire(&q).unwrap();
        assert_eq!(f.stored_terms(), 4);
        let p = pb::Function {
            function: Some(FunctionArm::Polynomial(pb::Polynomial {
                terms: vec![
                    pb::Monomial {
                        ids: vec![3, 1, 1],
                        coefficient: 1.0,
                    },
                    pb::Monomial {
                        ids: vec![1, 3, 1],
                        coefficient: -1.0,
                    },
                    pb::Monomial {
                        ids: vec![],
                        coefficient: 2.0,
                    },
                ],
            })),
        };
        let f = Function::from_wire(&p).unwrap();
        assert_eq!((f.stored_terms(), f.bytes()), (1, 80));
    }

    #[test]
    fn non_finite_and_empty_functions_are_rejected() {
        assert!(Function::from_wire(&linear(&[(1, f64::NAN)], 0.0)).is_err());
        assert!(Function::from_wire(&linear(&[], f64::INFINITY)).is_err());
        assert!(Function::from_wire(&pb::Function { function: None }).is_err());
    }

    /// What merging must give: each key's terms summed in file order, the
    /// keys in order, sums of exactly zero dropped.
    fn merged_by_map<K: Ord + Clone>(terms: &[(K, f64)]) -> Vec<(K, f64)> {
        let mut sums = std::collections::BTreeMap::new();
        for (k, c) in terms {
            *sums.entry(k.clone()).or_insert(0.0) += c;
        }
        sums.into_iter().filter(|&(_, c)| c != 0.0).collect()
    }

    #[test]
    fn packed_sorts_merge_as_a_stable_sort_does() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Coefficients whose sums depend on their order (1e16 + 1 - 1e16).
        let coefficients = [1.0, -1.0, 1e16, -1e16, 0.5, 3.0, 0.0];
        // (terms, key range): small keys, keys past 2^48 (the u128 packing)
        // and a list past 2^16 terms (positions past 16 bits); short rows
        // (the insertion sort), their keys repeating or not.
        let sizes = [(50, 20), (300, 1 << 20), (40, u64::MAX), (70_000, 5_000)];
        let short = [
            (2, 2),
            (5, 4),
            (5, 1 << 20),
            (16, 6),
            (17, 6),
            (12, u64::MAX),
        ];
        let rounds = sizes.map(|s| (s, 3)).into_iter();
        for ((n, range), rounds) in rounds.chain(short.map(|s| (s, 50))) {
            for _ in 0..rounds {
                let linear: Vec<(u64, f64)> = (0..n)
                    .map(|_| {
                        let k = next() % range;
                        (k, coefficients[(next() % 7) as usize])
                    })
                    .collect();
                assert_eq!(merge(linear.clone()), merged_by_map(&linear));
                let pairs: Vec<((u64, u64), f64)> = linear
                    .iter()
                    .map(|&(k, c)| {
                        let b = next() % 4;
                        ((k.min(k ^ b), k.max(k ^ b)), c)
                    })
                    .collect();
                assert_eq!(merge(pairs.clone()), merged_by_map(&pairs));
            }
        }
    }
}
