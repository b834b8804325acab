//! A polynomial read for its count: a monomial whose ids repeat often is
//! keyed by runs of one id (`(id, repeats)`), so it costs memory for its
//! distinct variables, not for its degree. A monomial of degree 10^6 over
//! one variable is one run, where its sorted id list would be 8 MB.
//!
//! Keys compare as the sorted id lists they stand for, which is OMMX's key,
//! so merging by them merges, sums and drops exactly as normalizing the
//! polynomial does.

use std::cmp::Ordering;

use super::windows::FieldWindows;
use super::{non_finite, walk_polynomial, Monomials, Wire};
use crate::model::function::{merge, polynomial_unprofiled, Shape, TermKey, Variant};
use crate::model::ModelError;

/// A monomial's key: its ids sorted ascending, held as they are or, when
/// ids repeat often, as runs `(id, repeats)` (ids strictly ascending,
/// repeats at least 1). Which form a monomial takes depends only on its
/// ids, and either compares as the sorted list it stands for.
#[derive(Debug, Clone)]
pub(super) enum Key {
    Sorted(Box<[u64]>),
    Runs(Box<[(u64, u64)]>),
}

impl Key {
    /// Its distinct ids, ascending.
    pub(super) fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs().map(|(id, _)| id)
    }

    /// How many ids it has, repeats included (OMMX's key's length).
    pub(super) fn len(&self) -> usize {
        match self {
            Key::Sorted(ids) => ids.len(),
            Key::Runs(runs) => runs.iter().map(|&(_, n)| n as usize).sum(),
        }
    }

    /// Its runs of one id, in order.
    fn runs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let (sorted, runs) = match self {
            Key::Sorted(ids) => (&ids[..], &[][..]),
            Key::Runs(runs) => (&[][..], &runs[..]),
        };
        let grouped = sorted
            .chunk_by(|a, b| a == b)
            .map(|g| (g[0], g.len() as u64));
        grouped.chain(runs.iter().copied())
    }
}

impl Ord for Key {
    /// As the id lists they stand for compare, element by element.
    fn cmp(&self, other: &Self) -> Ordering {
        if let (Key::Sorted(a), Key::Sorted(b)) = (self, other) {
            return a.cmp(b);
        }
        let (mut a, mut b) = (self.runs().peekable(), other.runs().peekable());
        loop {
            let ((id, m), (other_id, n)) = match (a.next(), b.next()) {
                (Some(x), Some(y)) => (x, y),
                (x, y) => return x.is_some().cmp(&y.is_some()),
            };
            if id != other_id {
                return id.cmp(&other_id);
            }
            // The list with the shorter run goes on with a larger id, or
            // ends there (and a list that ends first is the smaller).
            match m.cmp(&n) {
                Ordering::Equal => {}
                Ordering::Less if a.peek().is_some() => return Ordering::Greater,
                Ordering::Less => return Ordering::Less,
                Ordering::Greater if b.peek().is_some() => return Ordering::Less,
                Ordering::Greater => return Ordering::Greater,
            }
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl TermKey for Key {}

/// Ids waiting to be sorted into a monomial's runs: at most this many, or
/// as many as the runs so far (so gathering stays `n log n`). A monomial
/// of no more ids is kept as its sorted list.
const WAITING: usize = 1024;

/// Gathers one monomial's ids, in any order, into its key.
#[derive(Debug, Default)]
struct Gather {
    waiting: Vec<u64>,
    /// Ids gathered into `runs` so far.
    settled: u64,
    runs: Vec<(u64, u64)>,
    merged: Vec<(u64, u64)>,
}

impl Gather {
    fn push(&mut self, id: u64) {
        self.waiting.push(id);
        if self.waiting.len() >= WAITING.max(self.runs.len()) {
            self.settle();
        }
    }

    /// Sorts the waiting ids into the runs.
    fn settle(&mut self) {
        self.waiting.sort_unstable();
        self.merged.clear();
        let mut runs = self.runs.iter().copied().peekable();
        let mut waiting = self.waiting.iter().copied().peekable();
        while let Some(&next) = waiting.peek() {
            while let Some(run) = runs.next_if(|&(id, _)| id < next) {
                self.merged.push(run);
            }
            let mut repeats = 0;
            while waiting.next_if_eq(&next).is_some() {
                repeats += 1;
            }
            if let Some((_, before)) = runs.next_if(|&(id, _)| id == next) {
                repeats += before;
            }
            self.merged.push((next, repeats));
        }
        self.merged.extend(runs);
        std::mem::swap(&mut self.runs, &mut self.merged);
        self.settled += self.waiting.len() as u64;
        self.waiting.clear();
    }

    /// The monomial's key; ready for the next monomial.
    fn take(&mut self) -> Key {
        if self.settled == 0 && self.waiting.len() < WAITING {
            self.waiting.sort_unstable();
            let key = Key::Sorted(self.waiting.as_slice().into());
            self.waiting.clear();
            return key;
        }
        self.settle();
        let ids = std::mem::take(&mut self.settled);
        let runs = std::mem::take(&mut self.runs);
        if 2 * runs.len() as u64 > ids {
            // Few repeats: the list is no larger.
            let sorted = runs
                .iter()
                .flat_map(|&(id, n)| std::iter::repeat_n(id, n as usize));
            return Key::Sorted(sorted.collect());
        }
        Key::Runs(runs.into_boxed_slice())
    }
}

/// A polynomial's monomials as OMMX stores them, and how many the file
/// holds.
pub(super) struct Merged {
    pub(super) terms: Vec<(Key, f64)>,
    pub(super) in_file: u64,
}

/// The polynomial in `windows` as OMMX stores it: the keys of its monomials
/// with a non-zero coefficient, sorted, equal keys summed in file order
/// and sums of exactly zero dropped; or the first non-finite coefficient in
/// file order (once the whole encoding is checked, as prost decodes first).
pub(super) fn merged_monomials(windows: &mut dyn FieldWindows) -> Wire<Result<Merged, ModelError>> {
    #[derive(Default)]
    struct Terms {
        gather: Gather,
        terms: Vec<(Key, f64)>,
        in_file: u64,
        error: Option<ModelError>,
    }
    impl Monomials for Terms {
        fn id(&mut self, id: u64) {
            if self.error.is_none() {
                self.gather.push(id);
            }
        }
        fn end(&mut self, coefficient: f64) {
            self.in_file += 1;
            let key = self.gather.take();
            if self.error.is_some() {
            } else if !coefficient.is_finite() {
                self.error = Some(non_finite("polynomial coefficient", coefficient));
            } else if coefficient != 0.0 {
                self.terms.push((key, coefficient));
            }
        }
    }
    let mut terms = Terms::default();
    windows.each(&mut |pieces| walk_polynomial(pieces, &mut terms).map(|_| ()))?;
    Ok(match terms.error {
        Some(e) => Err(e),
        None => Ok(Merged {
            terms: merge(terms.terms),
            in_file: terms.in_file,
        }),
    })
}

/// The shape of a polynomial stored as `terms`.
pub(super) fn polynomial_shape(terms: &[(Key, f64)]) -> Shape {
    Shape {
        variant: Variant::Polynomial,
        stored_terms: terms.len(),
        unprofiled: polynomial_unprofiled(terms.iter().map(|(key, _)| key.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64;

    fn gathered(ids: &[u64]) -> Key {
        let mut gather = Gather::default();
        ids.iter().for_each(|&id| gather.push(id));
        gather.take()
    }

    /// The sorted list a key stands for.
    fn expanded(key: &Key) -> Vec<u64> {
        key.runs()
            .flat_map(|(id, n)| std::iter::repeat_n(id, n as usize))
            .collect()
    }

    /// Both forms of the key of a sorted list.
    fn forms(sorted: &[u64]) -> [Key; 2] {
        let runs = Key::Sorted(sorted.into()).runs().collect();
        [Key::Sorted(sorted.into()), Key::Runs(runs)]
    }

    #[test]
    fn keys_order_as_the_sorted_id_lists_in_either_form() {
        let mut rng = SplitMix64(42);
        let list = |rng: &mut SplitMix64| -> Vec<u64> {
            let n = rng.next() % 6;
            let mut ids: Vec<u64> = (0..n).map(|_| rng.next() % 4).collect();
            ids.sort_unstable();
            ids
        };
        for _ in 0..20_000 {
            let (a, b) = (list(&mut rng), list(&mut rng));
            for x in &forms(&a) {
                for y in &forms(&b) {
                    assert_eq!(x.cmp(y), a.cmp(&b), "{x:?} {y:?}");
                    assert_eq!(x == y, a == b, "{x:?} {y:?}");
                }
            }
        }
    }

    #[test]
    fn a_monomial_is_gathered_into_its_key() {
        let mut rng = SplitMix64(7);
        // Past the waiting list's length, in any order, ids repeated or not.
        for n in [0, 1, 5, WAITING - 1, WAITING, 3 * WAITING + 17, 20_000] {
            for spread in [n as u64 / 3 + 1, u64::MAX] {
                let ids: Vec<u64> = (0..n).map(|_| rng.next() % spread).collect();
                let mut sorted = ids.clone();
                sorted.sort_unstable();
                let key = gathered(&ids);
                assert_eq!(expanded(&key), sorted, "{n} ids");
                // Runs only where they are the smaller form.
                let runs = matches!(key, Key::Runs(_));
                assert_eq!(runs, n >= WAITING && spread < u64::MAX, "{n} ids");
            }
        }
        // One variable a million times: one run, and little memory.
        let mut gather = Gather::default();
        (0..1_000_000).for_each(|_| gather.push(9));
        assert!(gather.waiting.capacity() <= WAITING);
        assert!(matches!(gather.take(), Key::Runs(r) if *r == [(9, 1_000_000)]));
    }
}
