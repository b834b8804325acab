//! A packed varint array in a file (a quadratic part's rows or columns,
//! read where it lies), counted on several threads a block at a time, so
//! that any run of its elements can then be read in a window of its own:
//! the threads that count a function's terms each read their own windows,
//! and nothing holds the array.

use std::fs::File;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::file::read_window;
use super::packed::{count_ends_after, nth_end};
use super::slice::{Unsupported, Wire};

/// Bytes per block: an element is found by reading at most the block it
/// starts in before it.
const BLOCK: usize = if cfg!(test) { 4 } else { 16 << 10 };

/// Bytes a thread reads at a time while counting (whole blocks).
const READ: usize = if cfg!(test) { 3 * BLOCK } else { 16 * BLOCK };

/// Where the elements of a packed varint array in a file are, by block.
pub struct VarintIndex {
    range: Range<u64>,
    /// The varints that end before each block, then their number.
    ends_before: Vec<usize>,
    /// Whether the count alone checked the array: no run of nine or more
    /// bytes that continue a varint (the only way one can be malformed,
    /// besides the last being cut short), and none cut short at its end.
    checked: bool,
}

/// What counting one read found.
struct Counted {
    /// Where the read starts in its array.
    at: usize,
    /// Varints ending in each block.
    ends: Vec<usize>,
    /// Bytes continuing a varint at its start and at its end; `None` when
    /// a run of nine is inside it.
    runs: Option<(u32, u32)>,
    len: usize,
}

impl VarintIndex {
    /// Counts the varints of each of `arrays`, ranges of `file`, on up to
    /// `threads` threads (all arrays in one pass: the threads take the
    /// reads of any of them in turn).
    pub fn new<const N: usize>(
        file: &File,
        arrays: [Range<u64>; N],
        threads: usize,
    ) -> Wire<[Self; N]> {
        // Each read: its array, and where it starts in it.
        let mut reads = Vec::new();
        for (a, array) in arrays.iter().enumerate() {
            let len = usize::try_from(array.end - array.start).map_err(|_| Unsupported)?;
            reads.extend((0..len.div_ceil(READ)).map(|i| (a, i * READ)));
        }
        let next = AtomicUsize::new(0);
        let work = || -> Wire<Vec<(usize, Counted)>> {
            let mut buf = Vec::new();
            let mut done = Vec::new();
            while let Some(&(a, at)) = reads.get(next.fetch_add(1, Ordering::Relaxed)) {
                let array = &arrays[a];
                let start = array.start + at as u64;
                let window = start..(start + READ as u64).min(array.end);
                done.push((a, count(at, read_window(file, &mut buf, window)?)));
            }
            Ok(done)
        };
        let mut counted: Vec<(usize, Counted)> = std::thread::scope(|scope| {
            let work = &work;
            let others: Vec<_> = (1..threads.min(reads.len()))
                .map(|_| scope.spawn(work))
                .collect();
            let mut all = work();
            for other in others {
                let theirs = other
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
                all = all.and_then(|mut all| {
                    all.extend(theirs?);
                    Ok(all)
                });
            }
            all
        })?;
        // In order: by array, then by where in it (the sort is stable).
        counted.sort_by_key(|&(a, ref c)| (a, c.at));
        let mut counted = counted.into_iter().peekable();
        let mut a = 0;
        Ok(arrays.map(|array| {
            let mine = std::iter::from_fn(|| counted.next_if(|(b, _)| *b == a));
            let index = Self::of(array, mine.map(|(_, c)| c));
            a += 1;
            index
        }))
    }

    /// The index of the reads `counted`, in order.
    fn of(range: Range<u64>, counted: impl Iterator<Item = Counted>) -> Self {
        let mut ends_before = vec![0];
        let mut checked = true;
        // Bytes continuing a varint at the end of what came before.
        let mut run = 0u32;
        for c in counted {
            for ends in c.ends {
                ends_before.push(ends_before.last().expect("one") + ends);
            }
            match c.runs {
                Some((lead, _)) if lead as usize == c.len => run += lead,
                Some((lead, trail)) => {
                    checked &= run + lead < 9;
                    run = trail;
                }
                None => checked = false,
            }
            checked &= run < 9;
        }
        Self {
            range,
            ends_before,
            checked: checked && run == 0,
        }
    }

    /// The number of varints (whole or not, if not [`VarintIndex::checked`]).
    pub fn len(&self) -> usize {
        *self.ends_before.last().expect("one")
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether counting checked the array; else only a varint-by-varint
    /// reading can tell (a ten-byte varint, or a malformed array).
    pub fn checked(&self) -> bool {
        self.checked
    }

    pub fn range(&self) -> Range<u64> {
        self.range.clone()
    }

    /// Reads elements `k..k + n` (`n` > 0, `k + n` at most
    /// [`VarintIndex::len`]) of the checked array into `buf`: their bytes.
    pub fn read<'b>(
        &self,
        file: &File,
        buf: &'b mut Vec<u8>,
        (k, n): (usize, usize),
    ) -> Wire<&'b [u8]> {
        // The blocks where varints k - 1 and k + n - 1 end.
        let block = |k: usize| self.ends_before.partition_point(|&e| e < k) - 1;
        let first = if k == 0 { 0 } else { block(k) };
        let last = block(k + n);
        let start = self.range.start + (first * BLOCK) as u64;
        let end = (self.range.start + ((last + 1) * BLOCK) as u64).min(self.range.end);
        let bytes = read_window(file, buf, start..end)?;
        // Each end found within its block.
        let within = |block: usize, k: usize| {
            let at = (block - first) * BLOCK;
            let end = nth_end(&bytes[at..], k - self.ends_before[block]);
            end.map(|end| at + end).ok_or(Unsupported)
        };
        Ok(&bytes[within(first, k)?..within(last, k + n)?])
    }
}

/// Counts the varint ends of one read, block by block.
fn count(at: usize, bytes: &[u8]) -> Counted {
    let mut run = 0;
    let mut runs = Some(bytes.iter().take_while(|&&b| b >= 0x80).count() as u32);
    let ends = bytes
        .chunks(BLOCK)
        .map(|block| match count_ends_after(block, &mut run) {
            Some(ends) => ends,
            None => {
                runs = None;
                block.iter().filter(|&&b| b < 0x80).count()
            }
        })
        .collect();
    Counted {
        at,
        ends,
        runs: runs.map(|lead| (lead.min(9), run)),
        len: bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64;
    use crate::wire::packed::count_varints;
    use std::io::Write;

    #[test]
    fn finds_every_run_of_elements_as_a_walk_does() {
        let mut rng = SplitMix64(0x1d3);
        for case in 0..400 {
            let mut bytes = Vec::new();
            let n = rng.below(40) as usize;
            for _ in 0..n {
                let v = match rng.below(4) {
                    0 => rng.below(128),
                    1 => rng.below(1 << 20),
                    2 => rng.next() >> rng.below(64),
                    _ => u64::MAX,
                };
                prost::encoding::encode_varint(v, &mut bytes);
            }
            if rng.chance(6) && !bytes.is_empty() {
                // Damage: a byte set or cleared, or the end cut.
                let i = rng.below(bytes.len() as u64) as usize;
                match rng.below(3) {
                    0 => bytes[i] |= 0x80,
                    1 => bytes[i] &= 0x7f,
                    _ => bytes.truncate(i),
                }
            }
            let mut file = tempfile::tempfile().unwrap();
            file.write_all(b"ab").unwrap();
            file.write_all(&bytes).unwrap();
            file.write_all(&[0x80; 5]).unwrap();
            let range = 2..2 + bytes.len() as u64;
            // Beside an array of other bytes, indexed in the same pass.
            let [index, _] = VarintIndex::new(&file, [range, 0..2], 1 + case % 3).unwrap();
            let walked = count_varints(&bytes);
            let ends = bytes.iter().filter(|&&b| b < 0x80).count();
            assert_eq!(index.len(), ends, "{bytes:02x?}");
            if index.checked() {
                assert_eq!(walked, Ok(ends), "{bytes:02x?}");
            }
            // Every prefix and window of a checked array's elements.
            if walked.is_err() {
                continue;
            }
            let starts: Vec<usize> = (0..=ends).map(|k| nth_end(&bytes, k).unwrap()).collect();
            let mut buf = Vec::new();
            for k in 0..ends {
                let n = 1 + rng.below((ends - k) as u64) as usize;
                let read = index.read(&file, &mut buf, (k, n)).unwrap();
                assert_eq!(
                    read,
                    &bytes[starts[k]..starts[k + n]],
                    "{bytes:02x?} {k} {n}"
                );
            }
        }
    }
}
