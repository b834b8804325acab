//! Counting a function's stored terms without building it: the duplicate
//! check (sorted run, bitmap or hash set) and a large quadratic counted on
//! several threads, cut at element boundaries.

use std::collections::HashSet;

use super::windows::{FieldWindows, InMemory};
use super::{
    linear, linear_walk, polynomial, quadratic_read, split, Arm, LinearCount, QuadraticWire,
};
use crate::ids::BuildIdHasher;
use crate::ids::{IdSet, SharedBits, BITMAP_FLOOR};
use crate::model::function::{CountedFunction, Shape, Variant};
use crate::model::table_order::QuadraticTable;
use crate::profiled::{Growth, Unprofiled};
use crate::wire::packed::varint_offsets;
use crate::wire::packed::{doubles, Varints};
use crate::wire::Wire;

/// A quadratic part's three arrays (checked, of one length), a window of
/// whole elements at a time.
pub(super) trait PairWindows {
    /// The windows in order; `window` returns false to stop.
    fn each(&mut self, window: &mut dyn FnMut(&QuadraticWire<'_>) -> bool) -> Wire<()>;

    /// One pass of [`scan_window`] over every window, on as many threads
    /// as `seen` has slots: the scans of their chunks, in order, or of
    /// those scanned before one said the function must be built.
    fn scan<D: Fn(u64) -> bool + Sync>(
        &mut self,
        defined: &D,
        seen: &mut [Seen<'_>],
    ) -> Wire<Vec<ChunkScan>> {
        let mut scans = Vec::new();
        self.each(&mut |q| {
            scans.extend(scan_window(q, defined, seen));
            !scans.iter().any(|s| s.build)
        })?;
        Ok(scans)
    }
}

impl PairWindows for &QuadraticWire<'_> {
    fn each(&mut self, window: &mut dyn FnMut(&QuadraticWire<'_>) -> bool) -> Wire<()> {
        window(self);
        Ok(())
    }
}

/// Runs `scan` on windows `0..windows`, each read and scanned whole by
/// whichever thread takes it next (one per slot of `seen`, the first on
/// this one, each with buffers of its own): their scans in window order,
/// or those done before one said the function must be built.
pub(super) fn scan_windows_on<B: Default>(
    windows: usize,
    seen: &mut [Seen<'_>],
    scan: impl Fn(usize, &mut B, &mut Seen<'_>) -> Wire<ChunkScan> + Sync,
) -> Wire<Vec<ChunkScan>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let work = |seen: &mut Seen<'_>| -> Wire<Vec<(usize, ChunkScan)>> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut buffers = B::default();
        let mut done = Vec::new();
        while !stop.load(Relaxed) {
            let i = next.fetch_add(1, Relaxed);
            if i >= windows {
                break;
            }
            let s = scan(i, &mut buffers, seen).inspect_err(|_| stop.store(true, Relaxed))?;
            stop.fetch_or(s.build, Relaxed);
            done.push((i, s));
        }
        Ok(done)
    };
    let threads = seen.len().min(windows).max(1);
    let mut all: Vec<_> = parallel(seen[..threads].iter_mut().collect(), work)
        .into_iter()
        .collect::<Wire<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    all.sort_unstable_by_key(|&(i, _)| i);
    Ok(all.into_iter().map(|(_, s)| s).collect())
}

/// Counts what OMMX stores for the function whose final arm is `arm`,
/// which has passed [`check`], without building it. `defined` says whether a variable id is defined;
/// `threads` may count a large quadratic function in parallel.
///
/// `None` when the count alone cannot be exact and the function must be
/// built ([`normalize`]): a duplicate linear or quadratic term (which
/// merges, or cancels), a variable that is not defined (whose error names
/// the first one in OMMX's order), a non-finite value or lengths that
/// differ (whose error names the first). A polynomial is merged by its
/// keys ([`polynomial`]), on one thread.
pub fn count<D: Fn(u64) -> bool + Sync>(
    arm: Option<&Arm<'_>>,
    defined: &D,
    threads: usize,
) -> Wire<Option<CountedFunction>> {
    count_bounded(arm, defined, threads, None)
}

/// [`count`] where every id `defined` accepts is known to be at most
/// `max_id`: then the pairs of a quadratic function are recorded as they
/// are checked, and a function whose pairs are not sorted (OMMX 3.0 writes
/// them in its hash table's order) is read once, not twice.
pub fn count_bounded<D: Fn(u64) -> bool + Sync>(
    arm: Option<&Arm<'_>>,
    defined: &D,
    threads: usize,
    max_id: Option<u64>,
) -> Wire<Option<CountedFunction>> {
    let Some(arm) = arm else {
        return Ok(None);
    };
    match arm {
        Arm::Constant(c) => Ok(count_constant(*c)),
        Arm::Linear(pieces) => {
            if let Some(ranges) = split::held(pieces, threads) {
                let mut ranges: Vec<InMemory> = ranges.iter().map(|r| InMemory(r)).collect();
                if let Some(n) = split::count_linear(&mut ranges, defined) {
                    return Ok(n.map(LinearCount::function));
                }
            }
            count_linear_arm(&mut InMemory(pieces), defined)
        }
        Arm::Quadratic(pieces) => {
            let q = quadratic_read(pieces, true, threads)?;
            if q.n_rows != q.n_columns || q.n_rows != q.n_values {
                return Ok(None);
            }
            let linear = q.linear.as_deref().map(InMemory);
            count_quadratic_arm(&mut &q, linear, defined, threads, max_id)
        }
        Arm::Polynomial(pieces) => count_polynomial_arm(&mut InMemory(pieces), defined),
    }
}

/// [`count`] for a polynomial arm, merged by its keys on one thread.
pub(super) fn count_polynomial_arm<D: Fn(u64) -> bool>(
    windows: &mut dyn FieldWindows,
    defined: &D,
) -> Wire<Option<CountedFunction>> {
    Ok(match polynomial::merged_monomials(windows)? {
        Ok(polynomial::Merged { terms, in_file })
            if terms.iter().all(|(key, _)| key.ids().all(defined)) =>
        {
            Some(CountedFunction {
                shape: polynomial::polynomial_shape(&terms),
                degree: terms.iter().map(|(key, _)| key.len()).max().unwrap_or(0),
                in_file,
            })
        }
        _ => None,
    })
}

/// [`count`] for a constant arm.
pub(super) fn count_constant(c: f64) -> Option<CountedFunction> {
    let variant = match c {
        c if !c.is_finite() => return None,
        0.0 => Variant::Zero,
        _ => Variant::Constant,
    };
    Some(CountedFunction {
        shape: Shape {
            variant,
            stored_terms: 0,
            unprofiled: Unprofiled::default(),
        },
        degree: 0,
        in_file: 0,
    })
}

/// [`count`] for a linear arm.
pub(super) fn count_linear_arm<D: Fn(u64) -> bool + Sync>(
    pieces: &mut dyn FieldWindows,
    defined: &D,
) -> Wire<Option<CountedFunction>> {
    Ok(count_linear(pieces, defined)?.map(LinearCount::function))
}

/// [`count`] for a quadratic arm whose arrays have one length, with its
/// linear part, if any.
pub(super) fn count_quadratic_arm<D: Fn(u64) -> bool + Sync>(
    pairs: &mut impl PairWindows,
    linear: Option<impl FieldWindows>,
    defined: &D,
    threads: usize,
    max_id: Option<u64>,
) -> Wire<Option<CountedFunction>> {
    let linear = match linear {
        Some(mut l) => match count_linear(&mut l, defined)? {
            Some(n) => n,
            None => return Ok(None),
        },
        None => LinearCount::default(),
    };
    Ok(
        count_pairs(pairs, defined, threads, max_id)?.map(|pairs| CountedFunction {
            shape: Shape {
                variant: Variant::Quadratic,
                stored_terms: pairs.nonzero + linear.stored(),
                unprofiled: Unprofiled {
                    quadratic_linear: linear.stored() as u64,
                    ..Unprofiled::default()
                },
            },
            degree: if pairs.nonzero > 0 {
                2
            } else {
                linear.degree()
            },
            in_file: (pairs.nonzero + pairs.zeros) as u64 + linear.in_file(),
        }),
    )
}

/// The most stored terms of a quadratic objective whose table order
/// ([`growths`]) is made: 40 to 50 ns a term (qubo-500's 125,000 take
/// 5 ms), so at most about 12 ms. A larger table is left to the estimate's
/// even spread (`load29`), which is as close on the bench's: there each
/// growth's chunk is a smaller share of the heap.
pub const GROWTHS_UP_TO: usize = 1 << 18;

/// How `to_bytes` grows its vectors reading the table OMMX 2.9.3 makes of
/// the quadratic function whose final arm is `arm` (checked), of `stored`
/// terms: `None` for another arm, a larger table than [`GROWTHS_UP_TO`],
/// or one whose terms are not each stored once (repeated or cancelled:
/// the table's order is then not the one made here).
pub fn growths(arm: Option<&Arm<'_>>, stored: usize) -> Wire<Option<Vec<Growth>>> {
    match arm {
        Some(Arm::Quadratic(pieces)) if stored <= GROWTHS_UP_TO => {
            let q = quadratic_read(pieces, true, 1)?;
            let linear = q.linear.as_deref().map(InMemory);
            quadratic_growths(&mut &q, linear, stored)
        }
        _ => Ok(None),
    }
}

/// [`growths`]: the pairs, then the linear part, in the file's order.
pub(super) fn quadratic_growths(
    pairs: &mut impl PairWindows,
    linear: Option<impl FieldWindows>,
    stored: usize,
) -> Wire<Option<Vec<Growth>>> {
    let mut table = QuadraticTable::new();
    pairs.each(&mut |q| {
        let terms = Varints::new(&q.rows).zip(Varints::new(&q.columns));
        table.pairs(
            terms
                .zip(doubles(&q.values))
                .filter(|&(_, v)| v != 0.0)
                .map(|(pair, _)| pair),
        );
        true
    })?;
    let (mut ids, mut constant) = (Vec::new(), 0.0);
    if let Some(mut windows) = linear {
        windows.each(&mut |pieces| {
            let (set, _) = linear_walk(pieces, |id, c| {
                if c != 0.0 {
                    ids.push(id);
                }
            })?;
            constant = set.unwrap_or(constant);
            Ok(())
        })?;
    }
    table.linear_part(ids, constant != 0.0);
    Ok((table.len() == stored).then(|| table.growths()))
}

/// A linear part counted, `None` when it must be built.
fn count_linear<D: Fn(u64) -> bool + Sync>(
    windows: &mut dyn FieldWindows,
    defined: &D,
) -> Wire<Option<LinearCount>> {
    let mut ok = true;
    let mut sorted = true;
    let mut last = None;
    let mut max = 0;
    let mut nonzero = 0;
    let mut zeros = 0;
    let mut constant = 0.0;
    // The duplicate check, made on the way while every id is below
    // BITMAP_FLOOR (where the set is a bitmap), so that an unsorted
    // function needs no second walk.
    let mut bits = Some(IdSet::default());
    let mut repeated = false;
    windows.each(&mut |pieces| {
        let (set, _) = linear_walk(pieces, |id, c| {
            if !c.is_finite() {
                ok = false;
            } else if c != 0.0 {
                ok &= defined(id);
                sorted &= last.is_none_or(|last| last < id);
                last = Some(id);
                max = max.max(id);
                nonzero += 1;
                match &mut bits {
                    Some(seen) if id < BITMAP_FLOOR => repeated |= !seen.insert(id),
                    Some(_) => bits = None,
                    None => {}
                }
            } else {
                zeros += 1;
            }
        })?;
        constant = set.unwrap_or(constant);
        Ok(())
    })?;
    if !ok || !constant.is_finite() {
        return Ok(None);
    }
    if !sorted && bits.is_none() {
        // An id past the bitmap: a second walk for the duplicate check, in
        // a set sized by the first.
        let mut seen = IdSet::for_ids(max, nonzero);
        windows.each(&mut |pieces| {
            linear(pieces, |id, c| {
                if c != 0.0 && !repeated && !seen.insert(id) {
                    repeated = true;
                }
            })
            .map(|_| ())
        })?;
    }
    if repeated {
        return Ok(None);
    }
    Ok(Some(LinearCount {
        terms: nonzero,
        constant: constant != 0.0,
        zeros,
    }))
}

/// Index of an unordered pair `a <= b` in the triangle of pairs.
fn triangle(a: u64, b: u64) -> Option<u64> {
    b.checked_mul(b.checked_add(1)?)
        .map(|t| t / 2)?
        .checked_add(a)
}

/// One thread's share of a quadratic part: elements `range` of the three
/// arrays, each a single packed piece, starting at these byte offsets.
#[derive(Clone, Copy)]
pub(super) struct Chunk {
    pub(super) elements: usize,
    rows_at: usize,
    columns_at: usize,
    values_at: usize,
}

/// What a pass over a chunk found.
#[derive(Default)]
pub(super) struct ChunkScan {
    nonzero: usize,
    /// Pairs of value zero (counted in pass 1 only).
    zeros: usize,
    max: u64,
    first: Option<(u64, u64)>,
    last: Option<(u64, u64)>,
    sorted: bool,
    /// A non-finite value, an undefined variable or (with a bitmap) a
    /// repeated pair: the function must be built.
    pub(super) build: bool,
}

/// A quadratic part's pairs counted: those stored, and those of value zero
/// the file holds beside them.
#[derive(Debug, Clone, Copy)]
struct PairCount {
    nonzero: usize,
    zeros: usize,
}

/// The pairs counted, `None` when the function must be built; every id
/// `defined` accepts is at most `max_id`, when given.
fn count_pairs<D: Fn(u64) -> bool + Sync>(
    windows: &mut impl PairWindows,
    defined: &D,
    threads: usize,
    max_id: Option<u64>,
) -> Wire<Option<PairCount>> {
    // Pass 1: values, variables, order, the largest id; and, when every id
    // is known to be at most `max_id` and a bitmap of the triangle of pairs
    // up to it fits in OWN_BITMAPS on each thread, the pairs seen, so that
    // no pass 2 is needed.
    let recorded = max_id.and_then(|max| triangle(max, max)).filter(|&last| {
        last < BITMAP_FLOOR && threads as u64 * (last / 8 + 8) <= OWN_BITMAPS as u64
    });
    let mut first: Vec<Seen<'_>> = (0..threads)
        .map(|_| match recorded {
            Some(last) => Seen::Checked(IdSet::for_ids(last, 0)),
            None => Seen::None,
        })
        .collect();
    let scans = windows.scan(defined, &mut first)?;
    if scans.iter().any(|s| s.build) {
        return Ok(None);
    }
    let nonzero = scans.iter().map(|s| s.nonzero).sum();
    let counted = PairCount {
        nonzero,
        zeros: scans.iter().map(|s| s.zeros).sum(),
    };
    let sorted = scans.iter().all(|s| s.sorted)
        && scans.windows(2).all(|w| match (w[0].last, w[1].first) {
            (Some(a), Some(b)) => a < b,
            _ => true,
        });
    if recorded.is_some() {
        let mut repeated = false;
        let mut sets = first.into_iter().filter_map(|s| match s {
            Seen::Checked(set) => Some(set),
            _ => None,
        });
        if let Some(mut all) = sets.next() {
            for set in sets {
                repeated |= !all.absorb(set);
            }
        }
        return Ok((!repeated).then_some(counted));
    }
    if sorted {
        return Ok(Some(counted));
    }
    // Pass 2: a repeated pair, in a bitmap of the triangle of pairs when it
    // is small next to the terms (one per thread when they fit in
    // OWN_BITMAPS, merged at the end: threads setting bits in one shared
    // bitmap fight over its cache lines), else a hash set.
    let max = scans.iter().map(|s| s.max).max().unwrap_or(0);
    let mut repeated = false;
    let triangle_set = triangle(max, max).map(|last| IdSet::for_ids(last, nonzero));
    let own = triangle_set
        .as_ref()
        .filter(|set| set.shared().is_some() && threads * set.bytes() <= OWN_BITMAPS)
        .and(triangle(max, max));
    match (own, triangle_set.as_ref().and_then(IdSet::shared)) {
        (Some(last), _) => {
            let mut sets: Vec<Seen<'_>> = (0..threads)
                .map(|_| Seen::Own(IdSet::for_ids(last, nonzero)))
                .collect();
            repeated = windows.scan(defined, &mut sets)?.iter().any(|s| s.build);
            let mut sets = sets.into_iter().filter_map(|s| match s {
                Seen::Own(set) => Some(set),
                _ => None,
            });
            if let Some(mut all) = sets.next() {
                for set in sets {
                    repeated |= !all.absorb(set);
                }
            }
        }
        (None, Some(shared)) => {
            let mut sets = vec![Seen::Shared(shared); threads];
            repeated = windows.scan(defined, &mut sets)?.iter().any(|s| s.build);
        }
        (None, None) => {
            let mut seen: HashSet<(u64, u64), BuildIdHasher> =
                HashSet::with_capacity_and_hasher(nonzero, Default::default());
            windows.each(&mut |q| {
                let pairs = Varints::new(&q.rows).zip(Varints::new(&q.columns));
                repeated = pairs
                    .zip(doubles(&q.values))
                    .any(|((r, c), v)| v != 0.0 && !seen.insert((r.min(c), r.max(c))));
                !repeated
            })?;
        }
    }
    Ok((!repeated).then_some(counted))
}

/// Bytes the bitmaps of pass 2 may take together, one per thread.
const OWN_BITMAPS: usize = 32 << 20;

/// Where a pass over pairs records the ones it has seen: nowhere (pass 1),
/// a bitmap of the thread's own, or one all threads share (pass 2); or,
/// for a pass 1 that records them too, a bitmap of the thread's own.
pub(super) enum Seen<'a> {
    None,
    Own(IdSet),
    Shared(SharedBits<'a>),
    Checked(IdSet),
}

impl Clone for Seen<'_> {
    fn clone(&self) -> Self {
        match self {
            Seen::Shared(bits) => Seen::Shared(*bits),
            _ => Seen::None,
        }
    }
}

impl Seen<'_> {
    /// Notes the pair of triangle index `i`; false when it was seen.
    #[inline]
    fn insert(&mut self, i: u64) -> bool {
        match self {
            Seen::None => true,
            Seen::Own(set) | Seen::Checked(set) => set.insert(i),
            Seen::Shared(bits) => bits.insert(i),
        }
    }
}

/// One pass over one window, on as many threads as `seen` has slots when
/// it is large and its arrays are single pieces (chunk `t` recording its
/// pairs in `seen[t]`): the scans of its chunks, in order.
pub(super) fn scan_window<D: Fn(u64) -> bool + Sync>(
    q: &QuadraticWire<'_>,
    defined: &D,
    seen: &mut [Seen<'_>],
) -> Vec<ChunkScan> {
    let n = q.n_values;
    let threads = seen.len();
    let single = q.rows.len() == 1 && q.columns.len() == 1 && q.values.len() == 1;
    if single && threads > 1 && n >= 1 << 16 {
        let chunks = split(q.rows[0], q.columns[0], n, threads);
        let work: Vec<_> = chunks.iter().zip(seen.iter_mut()).collect();
        parallel(work, |(c, seen)| {
            scan_pairs(chunk_iter(q, c), defined, seen)
        })
    } else if single {
        let whole = Chunk {
            elements: n,
            rows_at: 0,
            columns_at: 0,
            values_at: 0,
        };
        vec![scan_pairs(chunk_iter(q, &whole), defined, &mut seen[0])]
    } else {
        let pairs = Varints::new(&q.rows).zip(Varints::new(&q.columns));
        vec![scan_pairs(
            pairs.zip(doubles(&q.values)),
            defined,
            &mut seen[0],
        )]
    }
}

/// Runs `f` on each item, one thread each (the first on this one).
pub(super) fn parallel<W: Send, T: Send>(items: Vec<W>, f: impl Fn(W) -> T + Sync) -> Vec<T> {
    std::thread::scope(|scope| {
        let f = &f;
        let mut items = items.into_iter();
        let first = items.next();
        let handles: Vec<_> = items.map(|w| scope.spawn(move || f(w))).collect();
        let mut out: Vec<T> = first.into_iter().map(f).collect();
        out.extend(
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        out
    })
}

/// The triples of one chunk of single-piece arrays (checked, of one
/// length).
pub(super) fn chunk_iter<'a>(q: &'a QuadraticWire<'a>, c: &Chunk) -> Triples<'a> {
    let values = &q.values[0][c.values_at..c.values_at + 8 * c.elements];
    Triples {
        rows: (q.rows[0], c.rows_at),
        columns: (q.columns[0], c.columns_at),
        values: values.chunks_exact(8),
    }
}

/// Triples read from single-piece arrays: a plain loop over the bytes
/// (the zipped iterators of pieces cost a call per element).
pub(super) struct Triples<'a> {
    rows: (&'a [u8], usize),
    columns: (&'a [u8], usize),
    values: std::slice::ChunksExact<'a, u8>,
}

impl Iterator for Triples<'_> {
    type Item = ((u64, u64), f64);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let value = self.values.next()?;
        let value = f64::from_le_bytes(value.try_into().expect("8 bytes"));
        // Checked, and as long as the values.
        let row = crate::wire::varint(self.rows.0, &mut self.rows.1).unwrap_or(0);
        let column = crate::wire::varint(self.columns.0, &mut self.columns.1).unwrap_or(0);
        Some(((row, column), value))
    }
}

/// Cuts `n` triples into `threads` chunks at element boundaries.
pub(super) fn split(rows: &[u8], columns: &[u8], n: usize, threads: usize) -> Vec<Chunk> {
    let per = n.div_ceil(threads);
    let starts: Vec<usize> = (0..threads)
        .map(|t| t * per)
        .take_while(|&start| start < n)
        .collect();
    let rows_at = varint_offsets(rows, &starts, threads);
    let columns_at = varint_offsets(columns, &starts, threads);
    starts
        .iter()
        .zip(rows_at.into_iter().zip(columns_at))
        .map(|(&start, (rows_at, columns_at))| Chunk {
            elements: per.min(n - start),
            rows_at,
            columns_at,
            values_at: 8 * start,
        })
        .collect()
}

fn scan_pairs<D: Fn(u64) -> bool + Sync>(
    triples: impl Iterator<Item = ((u64, u64), f64)>,
    defined: &D,
    seen: &mut Seen<'_>,
) -> ChunkScan {
    if let Seen::Checked(set) = seen {
        return scan_and_record_pairs(triples, defined, set);
    }
    let mut s = ChunkScan {
        sorted: true,
        ..ChunkScan::default()
    };
    let recording = !matches!(seen, Seen::None);
    for ((r, c), v) in triples {
        if v == 0.0 {
            s.zeros += 1;
            continue;
        }
        let key = (r.min(c), r.max(c));
        if recording {
            let fresh = triangle(key.0, key.1).is_some_and(|i| seen.insert(i));
            if !fresh {
                s.build = true;
                break;
            }
        } else {
            if !v.is_finite() || !defined(key.0) || !defined(key.1) {
                s.build = true;
                break;
            }
            s.nonzero += 1;
            s.max = s.max.max(key.1);
            if let Some(last) = s.last {
                s.sorted &= last < key;
            } else {
                s.first = Some(key);
            }
            s.last = Some(key);
        }
    }
    s
}

/// [`scan_pairs`] of a pass 1 that also records the pairs it has seen in
/// `set`: their values, variables and repeats checked, their order not
/// (the bitmaps answer for repeats).
fn scan_and_record_pairs<D: Fn(u64) -> bool + Sync>(
    triples: impl Iterator<Item = ((u64, u64), f64)>,
    defined: &D,
    set: &mut IdSet,
) -> ChunkScan {
    let mut s = ChunkScan::default();
    for ((r, c), v) in triples {
        if v == 0.0 {
            s.zeros += 1;
            continue;
        }
        let (a, b) = (r.min(c), r.max(c));
        if !v.is_finite()
            || !defined(a)
            || !defined(b)
            || !triangle(a, b).is_some_and(|i| set.insert(i))
        {
            s.build = true;
            break;
        }
        s.nonzero += 1;
    }
    s
}
