//! Packed repeated fields (varints, doubles), counted, cut and read
//! whether whole or given as the pieces of a message written in several.

use super::slice::{varint, Wire};

/// Counts the varints of a packed body, checking each.
pub fn count_varints(body: &[u8]) -> Wire<usize> {
    // Each varint ends with the one byte below 0x80 it has. Unless a run of
    // nine continuation bytes (a varint of ten bytes or more) needs the
    // tenth byte checked, counting those bytes is the whole check.
    if body.last().is_none_or(|&b| b < 0x80) {
        if let Some(ends) = count_ends(body) {
            return Ok(ends);
        }
    }
    let mut pos = 0;
    let mut n = 0;
    while pos < body.len() {
        varint(body, &mut pos)?;
        n += 1;
    }
    Ok(n)
}

/// The bytes below 0x80 in `bytes`, unless nine or more others run
/// together. Eight bytes at a time: a mask of their high bits says how
/// many end a varint, and how long the runs of others at either edge are
/// (one inside a word that is not all of them is at most six long).
#[inline]
pub fn count_ends(bytes: &[u8]) -> Option<usize> {
    count_ends_after(bytes, &mut 0)
}

/// [`count_ends`] of bytes that follow a run of `run` others, leaving in
/// `run` the run they end with.
#[inline]
pub fn count_ends_after(bytes: &[u8], run: &mut u32) -> Option<usize> {
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let mut ends = 0usize;
    for word in words {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        // Bit i: byte i continues a varint.
        let mask =
            (((word >> 7) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8;
        *run += mask.trailing_ones();
        if *run >= 9 {
            return None;
        }
        if mask != u8::MAX {
            *run = mask.leading_ones();
        }
        ends += 8 - mask.count_ones() as usize;
    }
    for &b in tail {
        let more = u32::from(b >> 7);
        *run = (*run + more) * more;
        if *run >= 9 {
            return None;
        }
        ends += (1 - more) as usize;
    }
    (*run < 9).then_some(ends)
}

/// Arrays shorter than this are read on one thread.
const PARALLEL_BYTES: usize = if cfg!(test) { 16 } else { 1 << 20 };

/// Runs `f` on `bytes` cut into up to `threads` ranges that end where
/// `ends_here(byte)` allows, one thread each (the first on this one); the
/// results in order.
fn on_ranges<T: Send>(
    bytes: &[u8],
    threads: usize,
    ends_here: impl Fn(u8) -> bool,
    f: impl Fn(&[u8]) -> T + Sync,
) -> Vec<T> {
    let mut cuts = vec![0];
    for t in 1..threads {
        let nominal = (bytes.len() * t / threads).max(*cuts.last().expect("one cut"));
        if let Some(i) = bytes[nominal..].iter().position(|&b| ends_here(b)) {
            cuts.push(nominal + i + 1);
        }
    }
    cuts.push(bytes.len());
    cuts.dedup();
    let f = &f;
    std::thread::scope(|scope| {
        let mut ranges = cuts.windows(2).map(|w| &bytes[w[0]..w[1]]);
        let first = ranges.next().unwrap_or_default();
        let others: Vec<_> = ranges.map(|r| scope.spawn(move || f(r))).collect();
        let mut out = vec![f(first)];
        out.extend(
            others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        out
    })
}

/// [`count_varints`] on up to `threads` threads: the body cut right after
/// bytes that end a varint, so each range holds whole varints, the same
/// ones.
pub fn count_varints_on(body: &[u8], threads: usize) -> Wire<usize> {
    if threads < 2 || body.len() < PARALLEL_BYTES {
        return count_varints(body);
    }
    on_ranges(body, threads, |b| b < 0x80, count_varints)
        .into_iter()
        .sum()
}

/// The varints of a checked packed body, on up to `threads` threads.
pub fn count_checked_on(body: &[u8], threads: usize) -> usize {
    let count = |r: &[u8]| r.iter().filter(|&&b| b < 0x80).count();
    if threads < 2 || body.len() < PARALLEL_BYTES {
        return count(body);
    }
    on_ranges(body, threads, |_| true, count).into_iter().sum()
}

/// [`varint_offset`] of each of `ks` (ascending) in a checked packed
/// array, on up to `threads` threads: the ends counted per range first,
/// then each offset found within its range.
pub fn varint_offsets(packed: &[u8], ks: &[usize], threads: usize) -> Vec<usize> {
    if threads < 2 || packed.len() < PARALLEL_BYTES {
        return ks.iter().map(|&k| varint_offset(packed, k)).collect();
    }
    let block = packed.len().div_ceil(threads);
    let blocks: Vec<&[u8]> = packed.chunks(block).collect();
    let ends: Vec<usize> = std::thread::scope(|scope| {
        let counts: Vec<_> = blocks
            .iter()
            .map(|b| scope.spawn(move || b.iter().filter(|&&x| x < 0x80).count()))
            .collect();
        counts
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    // Element k ends in the first block whose ends, with those before it,
    // reach k; found there on a thread of its own.
    let mut before = 0;
    let starts: Vec<usize> = ends
        .iter()
        .map(|&e| {
            before += e;
            before - e
        })
        .collect();
    std::thread::scope(|scope| {
        let found: Vec<_> = ks
            .iter()
            .map(|&k| {
                let (blocks, starts, ends) = (&blocks, &starts, &ends);
                scope.spawn(move || {
                    if k == 0 {
                        return 0;
                    }
                    let i = (0..blocks.len()).find(|&i| starts[i] + ends[i] >= k);
                    match i {
                        Some(i) => {
                            let within = nth_end(blocks[i], k - starts[i]).expect("counted");
                            i * block + within
                        }
                        None => packed.len(),
                    }
                })
            })
            .collect();
        found
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Byte offset of element `k` of a packed varint array (checked).
pub fn varint_offset(packed: &[u8], k: usize) -> usize {
    nth_end(packed, k).unwrap_or(packed.len())
}

/// Byte offset just past the `k`th varint of a packed array (checked), if
/// it has that many.
pub fn nth_end(packed: &[u8], k: usize) -> Option<usize> {
    if k == 0 {
        return Some(0);
    }
    let mut seen = 0;
    // Whole words first: count the bytes that end a varint.
    let mut at = 0;
    for word in packed.chunks_exact(8) {
        let ends = word.iter().filter(|&&b| b < 0x80).count();
        if seen + ends >= k {
            break;
        }
        seen += ends;
        at += 8;
    }
    for (i, &b) in packed[at..].iter().enumerate() {
        if b < 0x80 {
            seen += 1;
            if seen == k {
                return Some(at + i + 1);
            }
        }
    }
    None
}

/// The elements of an array given as pieces of encoded varints.
pub struct Varints<'a> {
    pieces: std::slice::Iter<'a, &'a [u8]>,
    current: &'a [u8],
    pos: usize,
}

impl<'a> Varints<'a> {
    pub fn new(pieces: &'a [&'a [u8]]) -> Self {
        Self {
            pieces: pieces.iter(),
            current: &[],
            pos: 0,
        }
    }

    /// The elements of one piece from byte `pos` (an element's start) on.
    pub fn at(piece: &'a [u8], pos: usize) -> Self {
        Self {
            pieces: [].iter(),
            current: piece,
            pos,
        }
    }
}

impl Iterator for Varints<'_> {
    type Item = u64;
    #[inline]
    fn next(&mut self) -> Option<u64> {
        while self.pos == self.current.len() {
            self.current = self.pieces.next()?;
            self.pos = 0;
        }
        // Checked when the pieces were collected.
        Some(varint(self.current, &mut self.pos).unwrap_or(0))
    }
}

/// The elements of an array given as pieces of encoded doubles.
pub fn doubles<'a>(pieces: &'a [&'a [u8]]) -> impl Iterator<Item = f64> + 'a {
    pieces.iter().flat_map(|p| {
        p.chunks_exact(8)
            .map(|c| f64::from_bits(u64::from_le_bytes(c.try_into().expect("8 bytes"))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_counted_a_word_at_a_time_as_byte_by_byte() {
        let mut rng = crate::ids::SplitMix64(0x00c0_0417);
        for _ in 0..20_000 {
            // Runs of continuation bytes of every length, across words.
            let bytes: Vec<u8> = (0..rng.below(40))
                .map(|_| match rng.below(3) {
                    0 => rng.below(0x80) as u8,
                    _ => 0x80 | rng.below(0x80) as u8,
                })
                .collect();
            let mut run = 0;
            let mut longest = 0;
            for &b in &bytes {
                run = if b >= 0x80 { run + 1 } else { 0 };
                longest = longest.max(run);
            }
            let ends = bytes.iter().filter(|&&b| b < 0x80).count();
            let expected = (longest < 9).then_some(ends);
            assert_eq!(count_ends(&bytes), expected, "{bytes:02x?}");
        }
    }

    #[test]
    fn arrays_read_on_several_threads_read_as_on_one() {
        let mut rng = crate::ids::SplitMix64(0x00c0_0031);
        for case in 0..3_000 {
            // Varints of one to ten bytes, now and then a bad one (too long).
            let mut packed = Vec::new();
            for _ in 0..rng.below(300) {
                let v = rng.next() >> rng.below(64);
                prost::encoding::encode_varint(v, &mut packed);
                if rng.chance(500) {
                    packed.extend([0xff; 10]);
                }
            }
            if case % 7 == 0 {
                packed.push(0x80); // cut short
            }
            let threads = 1 + rng.below(6) as usize;
            assert_eq!(
                count_varints_on(&packed, threads).ok(),
                count_varints(&packed).ok(),
                "{packed:02x?}"
            );
            let Ok(n) = count_varints(&packed) else {
                continue;
            };
            assert_eq!(count_checked_on(&packed, threads), n);
            let mut ks: Vec<usize> = (0..threads)
                .map(|_| rng.below(n as u64 + 2) as usize)
                .collect();
            ks.sort_unstable();
            let one: Vec<usize> = ks.iter().map(|&k| varint_offset(&packed, k)).collect();
            assert_eq!(
                varint_offsets(&packed, &ks, threads),
                one,
                "{packed:02x?} {ks:?}"
            );
        }
    }

    #[test]
    fn varint_offsets_find_element_boundaries() {
        let values = [
            1u64,
            300,
            0,
            1 << 40,
            5,
            127,
            128,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            9,
            10,
            11,
        ];
        let mut packed = Vec::new();
        let mut offsets = Vec::new();
        for v in values {
            offsets.push(packed.len());
            prost::encoding::encode_varint(v, &mut packed);
        }
        for (k, &at) in offsets.iter().enumerate() {
            assert_eq!(varint_offset(&packed, k), at);
        }
    }
}
