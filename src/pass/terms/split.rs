//! A large linear part (an objective's, most often) checked and counted on
//! several threads: cut into ranges of whole fields, each read on its own
//! thread.
//!
//! Where a term record starts cannot be told from the bytes alone, so a cut
//! is guessed (the first offset past the nominal one where a few records in
//! a row read as every writer writes them) and then proven by the reading
//! itself: each range is read as a message of its own, and when every range
//! is read whole without error, every cut was a field boundary (the first
//! range starts the message; a range read whole ends where a field ends, so
//! the next starts on a field), and the ranges' fields in order are the
//! message's. When a range is not read whole, the caller reads the whole
//! part on one thread, which gives its own answer, exactly.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use super::windows::FieldWindows;
use super::{linear, linear_walk, LinearCount};
use crate::ids::IdSet;
use crate::wire::term::common_term;
use crate::wire::Wire;

/// Parts shorter than this are read on one thread.
pub(super) const SPLIT_BYTES: u64 = if cfg!(test) { 64 } else { 1 << 20 };

/// Records in a row that make a guess.
const RECORDS: usize = 4;

/// Bytes searched for a cut past its nominal place.
const SEARCH: u64 = if cfg!(test) { 40 } else { 4096 };

/// Bytes a search reads: the searched ones and the records after them.
const NEAR: u64 = SEARCH + 32 * RECORDS as u64;

/// Cuts `range` into up to `parts` ranges starting at guessed record
/// starts; `near(r)` reads the bytes of `r` (fewer at the end).
pub(super) fn cut(
    range: Range<u64>,
    parts: usize,
    near: impl Fn(Range<u64>) -> Wire<Vec<u8>>,
) -> Wire<Vec<Range<u64>>> {
    let len = range.end - range.start;
    let mut starts = vec![range.start];
    for i in 1..parts as u64 {
        let nominal = range.start + len * i / parts as u64;
        if nominal < *starts.last().expect("one start") + SEARCH {
            continue;
        }
        let bytes = near(nominal..(nominal + NEAR).min(range.end))?;
        if let Some(at) = guess(&bytes) {
            starts.push(nominal + at as u64);
        }
    }
    starts.push(range.end);
    Ok(starts.windows(2).map(|w| w[0]..w[1]).collect())
}

/// The first offset in `bytes` (within [`SEARCH`]) where [`RECORDS`] term
/// records in a row read as every writer writes them.
fn guess(bytes: &[u8]) -> Option<usize> {
    (0..(SEARCH as usize).min(bytes.len())).find(|&at| {
        let mut pos = at;
        (0..RECORDS).all(|_| match common_term(bytes, pos) {
            Some(term) => {
                pos = term.end;
                true
            }
            None => false,
        })
    })
}

/// A linear part held as `pieces`, cut for `threads` threads: each range
/// a piece of its own (`None`: too short to cut, or one thread).
pub(super) fn held<'a>(pieces: &[&'a [u8]], threads: usize) -> Option<Vec<[&'a [u8]; 1]>> {
    let long = |p: &&[u8]| p.len() as u64 >= SPLIT_BYTES;
    if threads < 2 || !pieces.iter().any(long) {
        return None;
    }
    let mut ranges = Vec::new();
    for piece in pieces {
        let near = |r: Range<u64>| Ok(piece[r.start as usize..r.end as usize].to_vec());
        let parts = if long(piece) { threads } else { 1 };
        for r in cut(0..piece.len() as u64, parts, near).ok()? {
            ranges.push([&piece[r.start as usize..r.end as usize]]);
        }
    }
    Some(ranges)
}

/// Runs `f` on each item, one thread each (the first on this one).
pub(super) fn each_on_a_thread<W: Send, T: Send>(
    items: &mut [W],
    f: impl Fn(&mut W) -> T + Sync,
) -> Vec<T> {
    let f = &f;
    std::thread::scope(|scope| {
        let mut items = items.iter_mut();
        let first = items.next();
        let others: Vec<_> = items.map(|w| scope.spawn(move || f(w))).collect();
        let mut out: Vec<T> = first.into_iter().map(f).collect();
        out.extend(
            others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        out
    })
}

/// Checks the ranges of a linear part on their threads, as [`check`] does
/// the whole; `None` when some range is not read whole.
pub(super) fn check_linear<W: FieldWindows + Send>(ranges: &mut [W]) -> Option<()> {
    let read = each_on_a_thread(ranges, |w| {
        w.each(&mut |pieces| linear(pieces, |_, _| {}).map(|_| ()))
    });
    read.into_iter().all(|r| r.is_ok()).then_some(())
}

/// What reading one range of a linear part found, as [`count_linear`]'s
/// walk finds it.
#[derive(Default)]
struct LinearScan {
    build: bool,
    sorted: bool,
    first: Option<u64>,
    last: Option<u64>,
    max: u64,
    nonzero: usize,
    zeros: usize,
    constant: Option<f64>,
}

/// [`count_linear`] on the ranges of a linear part, on their threads:
/// `None` when some range is not read whole.
pub(super) fn count_linear<W: FieldWindows + Send, D: Fn(u64) -> bool + Sync>(
    ranges: &mut [W],
    defined: &D,
) -> Option<Option<LinearCount>> {
    let scans = each_on_a_thread(ranges, |w| scan(w, defined));
    let scans: Vec<LinearScan> = scans.into_iter().collect::<Wire<_>>().ok()?;
    // The last constant set wins, as in one walk.
    let constant = scans.iter().rev().find_map(|s| s.constant).unwrap_or(0.0);
    if scans.iter().any(|s| s.build) || !constant.is_finite() {
        return Some(None);
    }
    let nonzero: usize = scans.iter().map(|s| s.nonzero).sum();
    let mut previous = None;
    let mut sorted = true;
    for s in &scans {
        sorted &= s.sorted && previous.is_none_or(|p| s.first.is_none_or(|f| p < f));
        previous = s.last.or(previous);
    }
    if !sorted {
        let max = scans.iter().map(|s| s.max).max().unwrap_or(0);
        let seen = IdSet::for_ids(max, nonzero);
        // Sparse ids: the one-thread count, with its hash set.
        let bits = seen.shared()?;
        let repeated = AtomicBool::new(false);
        let read = each_on_a_thread(ranges, |w| {
            w.each(&mut |pieces| {
                linear(pieces, |id, c| {
                    if c != 0.0 && !bits.insert(id) {
                        repeated.store(true, Ordering::Relaxed);
                    }
                })
                .map(|_| ())
            })
        });
        read.into_iter().collect::<Wire<()>>().ok()?;
        if repeated.into_inner() {
            return Some(None);
        }
    }
    Some(Some(LinearCount {
        terms: nonzero,
        constant: constant != 0.0,
        zeros: scans.iter().map(|s| s.zeros).sum(),
    }))
}

/// One range's reading for [`count_linear`].
fn scan<D: Fn(u64) -> bool>(windows: &mut dyn FieldWindows, defined: &D) -> Wire<LinearScan> {
    let mut s = LinearScan {
        sorted: true,
        ..LinearScan::default()
    };
    windows.each(&mut |pieces| {
        let (set, _) = linear_walk(pieces, |id, c| {
            if !c.is_finite() {
                s.build = true;
            } else if c != 0.0 {
                s.build |= !defined(id);
                s.sorted &= s.last.is_none_or(|last| last < id);
                s.first.get_or_insert(id);
                s.last = Some(id);
                s.max = s.max.max(id);
                s.nonzero += 1;
            } else {
                s.zeros += 1;
            }
        })?;
        s.constant = set.or(s.constant);
        Ok(())
    })?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::super::count;
    use super::super::windows::InMemory;
    use super::*;
    use crate::ommx_v1 as pb;
    use prost::Message;

    /// A linear part: `n` records of ids `i * step % modulo` (some of
    /// several bytes, repeated when the modulo is small), its constant
    /// given or not.
    fn part(n: u64, (step, modulo): (u64, u64), constant: Option<f64>) -> Vec<u8> {
        let mut l = pb::Linear {
            terms: (0..n)
                .map(|i| pb::LinearTerm {
                    id: (i * step) % modulo,
                    coefficient: 1.0 + i as f64,
                })
                .collect(),
            constant: 0.0,
        }
        .encode_to_vec();
        if let Some(c) = constant {
            l.push(0x11);
            l.extend_from_slice(&c.to_le_bytes());
        }
        l
    }

    #[test]
    fn a_part_cut_on_several_threads_counts_as_on_one() {
        let defined = |id: u64| id < 100_000;
        for (n, ids, constant) in [
            (5_000, (1, 100_003), None),
            (5_000, (7919, 100_003), Some(2.0)),
            (5_000, (1, 1_000), None),
            (3_000, (1, 100_003), Some(f64::NAN)),
            (4_000, (3, 200_003), Some(0.0)),
        ] {
            let bytes = part(n, ids, constant);
            let one = count::count_linear_arm(&mut InMemory(&[&bytes]), &defined).unwrap();
            let whole = 0..bytes.len() as u64;
            for parts in [2, 3, 16] {
                let near = |r: Range<u64>| Ok(bytes[r.start as usize..r.end as usize].to_vec());
                let ranges = cut(whole.clone(), parts, near).unwrap();
                assert!(ranges.len() > 1, "{n} {parts}");
                let slices: Vec<[&[u8]; 1]> = ranges
                    .iter()
                    .map(|r| [&bytes[r.start as usize..r.end as usize]])
                    .collect();
                let mut held: Vec<InMemory> = slices.iter().map(|s| InMemory(s)).collect();
                assert_eq!(check_linear(&mut held), Some(()));
                let many = count_linear(&mut held, &defined).map(|c| c.map(LinearCount::function));
                assert_eq!(many, Some(one), "{n} terms, ids {ids:?}, {parts} parts");
            }
        }
    }

    #[test]
    fn a_wrong_cut_is_found_by_the_reading() {
        // A cut one byte into a record: neither range is read whole.
        let bytes = part(2_000, (1, 100_003), None);
        let (a, b) = bytes.split_at(1);
        let (a, b) = ([a], [b]);
        let mut held = [InMemory(&a), InMemory(&b)];
        let defined = |_| true;
        let wrong =
            check_linear(&mut held).is_none() || count_linear(&mut held, &defined).is_none();
        assert!(wrong);
    }
}
