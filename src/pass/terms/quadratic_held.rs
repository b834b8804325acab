//! A large quadratic part held (built as OMMX builds it) on several
//! threads, for an objective an analysis looks at: its arrays cut at
//! element boundaries as counting cuts them, each chunk's terms read into
//! its own stretch of one vector, and the merge skipped when the chunks
//! together are already strictly ascending, as a writer that sorts its
//! terms leaves them.

use super::count::{chunk_iter, parallel, split};
use super::{finite, QuadraticWire};
use crate::model::ModelError;

/// Elements below which a quadratic part is read on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 16;

/// A quadratic part's non-zero terms, each key `(low id, high id)`, in file
/// order, and whether they are strictly ascending (then normalizing leaves
/// them as they are: no key repeats and no coefficient is zero).
pub(super) struct HeldTerms {
    pub(super) terms: Vec<((u64, u64), f64)>,
    pub(super) ascending: bool,
}

/// What reading one chunk into its stretch gave.
struct ChunkRead {
    /// Terms written, from the stretch's start.
    len: usize,
    ascending: bool,
    first: Option<(u64, u64)>,
    last: Option<(u64, u64)>,
}

/// The terms of `q` (checked, of one length: `q.n_values`) read on up to
/// `threads` threads; `None` when it is too small for that or its arrays
/// come in several pieces (the caller reads it on one thread). The error
/// is the first non-finite coefficient in file order, as one thread finds.
pub(super) fn quadratic_terms(
    q: &QuadraticWire<'_>,
    threads: usize,
) -> Option<Result<HeldTerms, ModelError>> {
    let n = q.n_values;
    let single = q.rows.len() == 1 && q.columns.len() == 1 && q.values.len() == 1;
    if threads < 2 || !single || n < PARALLEL_ELEMENTS {
        return None;
    }
    let chunks = split(q.rows[0], q.columns[0], n, threads);
    // Zeroed memory comes from the allocator as it is: no pass over it,
    // so huge pages can still back it (24 bytes a term).
    let mut terms = vec![((0u64, 0u64), 0.0f64); n];
    crate::pages::prefer_huge(&terms);
    let mut work = Vec::with_capacity(chunks.len());
    let mut rest = terms.as_mut_slice();
    for chunk in &chunks {
        let (stretch, after) = rest.split_at_mut(chunk.elements);
        work.push((chunk, stretch));
        rest = after;
    }
    let reads = parallel(work, |(chunk, stretch)| {
        read_chunk(chunk_iter(q, chunk), stretch)
    });
    let mut kept = 0;
    let mut start = 0;
    let mut ascending = true;
    let mut last: Option<(u64, u64)> = None;
    for (chunk, read) in chunks.iter().zip(reads) {
        let read = match read {
            Ok(read) => read,
            Err(e) => return Some(Err(e)),
        };
        if kept != start {
            terms.copy_within(start..start + read.len, kept);
        }
        kept += read.len;
        start += chunk.elements;
        ascending &= read.ascending;
        if let (Some(before), Some(first)) = (last, read.first) {
            ascending &= before < first;
        }
        last = read.last.or(last);
    }
    terms.truncate(kept);
    Some(Ok(HeldTerms { terms, ascending }))
}

/// Reads one chunk's triples into `stretch` (as long as the chunk),
/// dropping zero coefficients; stops at the first non-finite one.
fn read_chunk(
    triples: impl Iterator<Item = ((u64, u64), f64)>,
    stretch: &mut [((u64, u64), f64)],
) -> Result<ChunkRead, ModelError> {
    let mut len = 0;
    let mut ascending = true;
    let mut first = None;
    let mut last: Option<(u64, u64)> = None;
    for ((r, c), v) in triples {
        let v = finite(v, "quadratic coefficient")?;
        if v == 0.0 {
            continue;
        }
        let key = (r.min(c), r.max(c));
        match last {
            Some(before) => ascending &= before < key,
            None => first = Some(key),
        }
        last = Some(key);
        stretch[len] = (key, v);
        len += 1;
    }
    Ok(ChunkRead {
        len,
        ascending,
        first,
        last,
    })
}
