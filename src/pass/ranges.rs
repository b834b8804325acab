//! An instance in a regular file, framed, decoded and checked on every
//! thread.
//!
//! The file is cut into chunks of [`CHUNK`] bytes, which the threads take
//! in order and read with positioned reads, all at once. Where a chunk's
//! first element starts is known only once the chunk before it has been
//! walked, so the walks form a chain, in order: each walks the field headers
//! of its chunk (bytes already read) from where the previous one ended,
//! and passes on where its last element ends. Top-level fields are
//! length-delimited, so a walk reads a few bytes per element; the reading,
//! framing, decoding, counting and checking around it run on all threads,
//! a batch of elements at a time, as a stream's batches are. The element
//! that crosses a chunk's end is completed by the thread that walked it
//! (on several threads when it is large), and an objective over
//! [`IN_PLACE_ABOVE`](super::objective::IN_PLACE_ABOVE) (a constraint over
//! the spool threshold) is not read here at all: it is counted where it
//! lies in the input file, a window at a time on every thread, with no
//! buffer of its size. The chunks such an element covers whole are skipped
//! ([`super::chain`]).
//!
//! The checks run on each thread against shared sets ([`super::shards`]),
//! and what needs the whole stream is settled once every chunk is checked.
//! Anything this reader does not vouch for (a malformed or truncated field,
//! an unknown one, an element that fails, a duplicate, a variable not
//! defined by the end) makes it give up, and the caller reads the instance
//! again from its start on one thread, which reports what is wrong exactly
//! as before.
//!
//! Memory: each thread holds its chunk, the element crossing its end and
//! one batch of decoded elements.
//!
//! A regular file whose entities an analysis looks at is read in turn
//! instead (`pipeline.rs`), but with positioned reads too ([`FileAt`]), a
//! long element on every thread.

use std::fs::File;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::ops::Range;

use prost::encoding;

use super::accounts::Accounts;
use super::chain::{Chain, StopOnPanic};
use super::decode::decode_batch;
use super::finish::{finish_instance, Finish};
use super::framing::{LargeToken, RawBatch, RawElement, Spooling, BATCH};
use super::objective::Part;
use super::shards::{settle, Layout, Recheck, Shard, Shared};
use super::terms::spooled::SpooledFunction;
use super::{EntityObserver, InstanceError};
use crate::profiled::InstanceCounts;
use crate::trace::{self, Phase};
use crate::wire::fields::function;
use crate::wire::fields::instance::*;
use crate::wire::file::{read_at, read_exact_at};
use crate::wire::{self, WireType};

/// An instance payload that is a range of a regular file, which the pass
/// may read with positioned reads on several threads.
#[derive(Clone, Copy)]
pub struct InFile<'a> {
    pub file: &'a File,
    /// Where the payload starts in the file.
    pub start: u64,
    /// Told of the bytes read, from any thread (a progress bar).
    pub progress: &'a (dyn Fn(u64) + Sync),
}

impl<'a> InFile<'a> {
    /// The whole of `file`.
    pub fn whole(file: &'a File, progress: &'a (dyn Fn(u64) + Sync)) -> Self {
        Self {
            file,
            start: 0,
            progress,
        }
    }
}

impl<'a> InFile<'a> {
    /// The payload's `total` bytes read in turn, as a stream, with
    /// positioned reads; a long run of them on `threads` threads
    /// ([`FileAt::ahead`]).
    pub(super) fn stream(self, total: u64, threads: usize) -> FileAt<'a> {
        FileAt {
            pos: self.start,
            end: self.start + total,
            threads,
            source: self,
        }
    }
}

/// A payload in a regular file read in turn ([`InFile::stream`]).
pub(super) struct FileAt<'a> {
    source: InFile<'a>,
    /// Where the next read starts, and where the payload ends, in the file.
    pos: u64,
    end: u64,
    threads: usize,
}

impl Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = usize::try_from(self.end - self.pos).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        let n = read_at(self.source.file, &mut buf[..want], self.pos)?;
        self.pos += n as u64;
        (self.source.progress)(n as u64);
        Ok(n)
    }
}

impl FileAt<'_> {
    /// [`crate::wire::stream::Ahead`]: the next `buf.len()` bytes, a share
    /// on each thread, which writes its share's pages first (no one thread
    /// faults them all in) and then reads into them.
    pub(super) fn ahead(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<bool> {
        let len = buf.len() as u64;
        if self.end - self.pos < len {
            return Ok(false);
        }
        let _span = trace::span(Phase::Read);
        read_spread(self.source.file, buf, self.pos, self.threads, read_fresh)?;
        self.pos += len;
        (self.source.progress)(len);
        Ok(true)
    }
}

impl FileAt<'_> {
    /// [`crate::wire::stream::Leave`]: the `len` bytes that start `behind`
    /// bytes before the next read, left in the file; `None` for bytes past
    /// the payload's end.
    pub(super) fn leave(
        &mut self,
        behind: u64,
        len: u64,
    ) -> io::Result<Option<(File, Range<u64>)>> {
        let start = self.pos - behind;
        if len > self.end - start {
            return Ok(None);
        }
        let file = self.source.file.try_clone()?;
        self.pos = start + len;
        (self.source.progress)(len - behind);
        Ok(Some((file, start..start + len)))
    }
}

/// Reads `buf` from `file` at `pos`, a share of it on each of `threads`
/// threads, each share with `read`.
fn read_spread<T: Send>(
    file: &File,
    buf: &mut [T],
    pos: u64,
    threads: usize,
    read: fn(&File, &mut [T], u64) -> io::Result<()>,
) -> io::Result<()> {
    let piece = buf.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let reads: Vec<_> = buf
            .chunks_mut(piece)
            .enumerate()
            .map(|(i, part)| {
                let at = pos + (i * piece) as u64;
                scope.spawn(move || read(file, part, at))
            })
            .collect();
        reads
            .into_iter()
            .try_for_each(|r| r.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })
}

/// [`read_exact_at`] into bytes not written yet: written first (the thread
/// reading faults their pages in), then read into.
fn read_fresh(file: &File, part: &mut [MaybeUninit<u8>], pos: u64) -> io::Result<()> {
    part.fill(MaybeUninit::new(0));
    // SAFETY: every byte of `part` was written just above.
    let part = unsafe { &mut *(part as *mut [MaybeUninit<u8>] as *mut [u8]) };
    read_exact_at(file, part, pos)
}

/// Bytes per chunk (`pass::Settings::chunk_bytes` moves it; tests set it low, so that small instances span many
/// chunks). What a thread holds of the file at a time: on sixteen threads
/// the 200 MB LP peaked at 79 MiB with chunks of 1 MiB, 52 MiB with these.
pub const CHUNK: u64 = 256 << 10;

/// An element's bytes past its chunk are read on several threads when
/// there are at least this many.
const PARALLEL_READ: usize = 4 << 20;

/// Profiles the instance of `total` bytes in `source`, cut into chunks of
/// `chunk` bytes, on up to `threads` threads, into `accounts`; `None` when
/// it must be read again on one thread (see the module's documentation).
pub(super) fn profile_file<O: EntityObserver + ?Sized>(
    source: InFile<'_>,
    (total, chunk): (u64, u64),
    threads: usize,
    spooling: Spooling,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Option<Result<InstanceCounts, InstanceError>> {
    let shared = Shared::new(accounts.accounting);
    let plan = Plan::new(source, (total, chunk), threads, spooling, shared);
    let group_by = accounts.group_by;
    let workers: Vec<_> = (0..plan.threads)
        .map(|_| (accounts.for_worker(), Shard::new(group_by)))
        .collect();
    let checked = std::thread::scope(|scope| {
        let plan = &plan;
        let mut workers = workers.into_iter();
        let first = workers.next().expect("at least one thread");
        let others: Vec<_> = workers
            .map(|worker| scope.spawn(move || plan.work(worker)))
            .collect();
        let mut done = vec![plan.work(first)];
        done.extend(
            others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        done.into_iter().collect::<Result<Vec<_>, Recheck>>()
    });
    let (locals, shards): (Vec<_>, Vec<_>) = checked.ok()?.into_iter().unzip();
    let Plan { shared, .. } = plan;
    let (state, rest, end) = settle(shards, shared, group_by).ok()?;
    for local in locals {
        let _span = trace::span(Phase::Aggregate);
        accounts.merge(&local);
    }
    let finish = Finish::new(accounts, threads);
    Some(finish_instance(
        state,
        rest,
        end,
        finish,
        None,
        &mut accounts.memory,
        observer,
    ))
}

/// What the threads share.
struct Plan<'a> {
    source: InFile<'a>,
    total: u64,
    chunk: u64,
    chunks: usize,
    threads: usize,
    spooling: Spooling,
    chain: Chain,
    shared: Shared,
}

/// One chunk's walk: where its elements start (from the chunk's start),
/// where the next chunk's first element starts (the end of its last), and
/// its layout.
struct Walk {
    starts: Vec<u32>,
    next: u64,
    layout: Layout,
}

/// A top-level field's header.
struct Header {
    field: u32,
    /// Bytes of its key, and of its key and length or value.
    key_bytes: u64,
    bytes: u64,
    /// Its length (length-delimited fields) or value (varints).
    value: u64,
}

impl<'a> Plan<'a> {
    fn new(
        source: InFile<'a>,
        (total, chunk): (u64, u64),
        threads: usize,
        spooling: Spooling,
        shared: Shared,
    ) -> Self {
        // Offsets within a chunk are held in 32 bits.
        let chunk = chunk.clamp(1, u32::MAX.into());
        let chunks = usize::try_from(total.div_ceil(chunk)).unwrap_or(usize::MAX);
        let threads = threads.clamp(1, chunks.max(1));
        Self {
            source,
            total,
            chunk,
            chunks,
            threads,
            spooling,
            chain: Chain::new(threads),
            shared,
        }
    }

    /// One thread's work: chunks taken in turn until none is left; its
    /// accounts and checks, or [`Recheck`] (the others then stop too).
    fn work(&self, worker: (Accounts, Shard)) -> Result<(Accounts, Shard), Recheck> {
        let (mut accounts, mut shard) = worker;
        let _unwinding = StopOnPanic(&self.chain);
        let done = self.each_chunk(&mut accounts, &mut shard);
        if done.is_err() {
            self.chain.stop();
        }
        accounts.settle();
        done.map(|()| (accounts, shard))
    }

    fn each_chunk(&self, accounts: &mut Accounts, shard: &mut Shard) -> Result<(), Recheck> {
        let mut raw = RawBatch::over(Vec::new());
        loop {
            if self.chain.stopped() {
                return Err(Recheck);
            }
            let k = self.chain.take();
            if k >= self.chunks {
                return Ok(());
            }
            let range = self.range(k);
            // Each chunk counted once, read or covered by an element.
            (self.source.progress)(range.end - range.start);
            // Read while the chunks before are walked, unless an element
            // before it is known to cover it whole.
            let read = self.chain.frontier() < range.end;
            if read {
                self.read_chunk(&range, raw.arena())?;
            }
            let start = self.chain.wait(k).ok_or(Recheck)?;
            if start >= range.end {
                self.chain.pass(k + 1, start);
                continue;
            }
            if !read {
                self.read_chunk(&range, raw.arena())?;
            }
            let walk = {
                let _span = trace::span(Phase::Read);
                self.walk(&range, start, raw.arena())?
            };
            let to = usize::try_from(walk.next / self.chunk).unwrap_or(usize::MAX);
            let skipped = self.chain.cover(k, to);
            if !skipped.is_empty() {
                let bytes = self.range(skipped.end - 1).end - self.range(skipped.start).start;
                (self.source.progress)(bytes);
            }
            self.chain.pass(k + 1, walk.next);
            let uses = self.decode_chunk(k, &range, &walk, &mut raw, accounts, shard)?;
            shard.chunk_done(walk.layout, uses);
        }
    }

    /// Reads chunk `range` into `arena` (over what it held, not zeroed
    /// first).
    fn read_chunk(&self, range: &Range<u64>, arena: &mut Vec<u8>) -> Result<(), Recheck> {
        let _span = trace::span(Phase::Read);
        let len = (range.end - range.start) as usize;
        arena.truncate(len);
        arena.resize(len, 0);
        let at = self.source.start + range.start;
        read_exact_at(self.source.file, arena, at).map_err(|_| Recheck)?;
        Ok(())
    }

    /// Frames, decodes and checks chunk `k` (`range`, its bytes in `raw`)
    /// as `walk` found it, a batch of up to [`BATCH`] elements at a time;
    /// the variable references its elements hold.
    fn decode_chunk(
        &self,
        k: usize,
        range: &Range<u64>,
        walk: &Walk,
        raw: &mut RawBatch,
        accounts: &mut Accounts,
        shard: &mut Shard,
    ) -> Result<u64, Recheck> {
        let mut uses = 0;
        let batches = walk.starts.len().div_ceil(BATCH);
        for (b, starts) in walk.starts.chunks(BATCH).enumerate() {
            {
                let _span = trace::span(Phase::Read);
                for &start in starts {
                    let at = range.start + u64::from(start);
                    let header = self.header(range.start, at, raw.arena())?;
                    self.element(raw, range, header, at)?;
                }
            }
            let last = b + 1 == batches && walk.next == self.total;
            raw.last = last.then_some(Ok(self.total));
            let large = LargeToken::for_batch(raw);
            let batch = decode_batch(raw, accounts);
            let _span = trace::span(Phase::Check);
            uses += shard.check(k, batch, &self.shared)?;
            drop(large);
        }
        Ok(uses)
    }

    /// Stream offsets of chunk `k`.
    fn range(&self, k: usize) -> Range<u64> {
        let start = k as u64 * self.chunk;
        start..(start + self.chunk).min(self.total)
    }

    /// Appends `len` bytes from stream offset `at` to `out`, on several
    /// threads when they are many.
    fn read_into(&self, out: &mut Vec<u8>, at: u64, len: usize) -> Result<(), Recheck> {
        let _span = trace::span(Phase::Read);
        let old = out.len();
        if len >= PARALLEL_READ && self.threads > 1 {
            // Allocated zeroed (fresh pages, not written here), so that the
            // threads reading fault its pages in, not this one.
            let mut grown = vec![0u8; old + len];
            grown[..old].copy_from_slice(out);
            *out = grown;
            let from = self.source.start + at;
            read_spread(
                self.source.file,
                &mut out[old..],
                from,
                self.threads,
                read_exact_at,
            )
            .map_err(|_| Recheck)?;
        } else {
            out.try_reserve_exact(len).map_err(|_| Recheck)?;
            out.resize(old + len, 0);
            read_exact_at(self.source.file, &mut out[old..], self.source.start + at)
                .map_err(|_| Recheck)?;
        }
        Ok(())
    }

    /// Walks the elements of chunk `range` (its bytes `arena`) from `start`
    /// to the first that ends past it, reading only their headers.
    fn walk(&self, range: &Range<u64>, start: u64, arena: &[u8]) -> Result<Walk, Recheck> {
        let mut walk = Walk {
            starts: Vec::new(),
            next: start,
            layout: Layout::default(),
        };
        while walk.next < range.end {
            let at = walk.next;
            walk.starts.push((at - range.start) as u32);
            let Header {
                field,
                bytes,
                value,
                ..
            } = self.header(range.start, at, arena)?;
            walk.next = match field {
                SENSE | FORMAT_VERSION => at + bytes,
                _ => (at + bytes)
                    .checked_add(value)
                    .filter(|&end| end <= self.total)
                    .ok_or(Recheck)?,
            };
            match field {
                DECISION_VARIABLES => walk.layout.last_definition = Some(walk.next),
                CONSTRAINTS | NAMED_FUNCTIONS => {
                    walk.layout.first_use.get_or_insert(walk.next);
                }
                _ => {}
            }
        }
        Ok(walk)
    }

    /// Frames the element at `at` (whose header the walk checked) into
    /// `raw`; the last element of a chunk is completed from the file.
    fn element(
        &self,
        raw: &mut RawBatch,
        range: &Range<u64>,
        header: Header,
        at: u64,
    ) -> Result<(), Recheck> {
        let Header {
            field,
            key_bytes,
            bytes,
            value,
        } = header;
        let body = at + bytes;
        if matches!(field, SENSE | FORMAT_VERSION) {
            let mut rest = Vec::with_capacity(12);
            encoding::encode_key(field, encoding::WireType::Varint, &mut rest);
            encoding::encode_varint(value, &mut rest);
            raw.push(RawElement::Rest {
                bytes: rest,
                field,
                value_start: None,
                tag_bytes: key_bytes,
                wire_bytes: bytes,
            });
            return Ok(());
        }
        let end = body + value;
        let (tag_bytes, wire_bytes) = (key_bytes, end - at);
        let past = end > range.end;
        let in_place = |above: Option<u64>| above.is_some_and(|above| value > above);
        match field {
            CONSTRAINTS if in_place(self.spooling.constraints) => {
                raw.push(RawElement::SpooledConstraint {
                    body: self.in_file(body..end)?,
                    offset: end,
                    tag_bytes,
                    wire_bytes,
                });
            }
            DECISION_VARIABLES | CONSTRAINTS | REMOVED_CONSTRAINTS | NAMED_FUNCTIONS => {
                if past {
                    // The chunk's bytes run on into the element's.
                    let len = usize::try_from(end - range.end).map_err(|_| Recheck)?;
                    self.read_into(raw.arena(), range.end, len)?;
                }
                raw.push(RawElement::Entity {
                    field,
                    start: (body - range.start) as usize,
                    end: (end - range.start) as usize,
                    offset: end,
                    tag_bytes,
                    wire_bytes,
                });
            }
            OBJECTIVE
                if in_place(self.spooling.objective)
                    || in_place(self.spooling.quadratic) && self.quadratic(range, body, raw)? =>
            {
                raw.push(RawElement::Spooled {
                    part: Part::Spooled(self.in_file(body..end)?),
                    tag_bytes,
                    wire_bytes,
                });
            }
            DESCRIPTION
            | OBJECTIVE
            | PARAMETERS
            | CONSTRAINT_HINTS
            | DECISION_VARIABLE_DEPENDENCY
            | ANNOTATIONS => {
                let len = usize::try_from(value).map_err(|_| Recheck)?;
                // The body's bytes in the chunk (none when its header
                // crosses the chunk's end).
                let held_end = end.min(range.end).max(body);
                let held = (held_end - body) as usize;
                let mut rest = Vec::with_capacity(15 + if past { held } else { len });
                encoding::encode_key(field, encoding::WireType::LengthDelimited, &mut rest);
                encoding::encode_varint(value, &mut rest);
                let value_start = rest.len();
                if held > 0 {
                    let from = (body - range.start) as usize;
                    rest.extend_from_slice(&raw.arena()[from..from + held]);
                }
                if past {
                    self.read_into(&mut rest, held_end, len - held)?;
                }
                raw.push(RawElement::Rest {
                    bytes: rest,
                    field,
                    value_start: Some(value_start),
                    tag_bytes,
                    wire_bytes,
                });
            }
            // The walk let no other field through.
            _ => return Err(Recheck),
        }
        Ok(())
    }

    /// The header of the field at stream offset `at`, read from the chunk
    /// (whose bytes `arena` start at `chunk_start`) or, where it crosses
    /// the chunk's end, from the file.
    fn header(&self, chunk_start: u64, at: u64, arena: &[u8]) -> Result<Header, Recheck> {
        // A key (at most five bytes) and a varint (at most ten).
        const MOST: usize = 15;
        let held = &arena[(at - chunk_start) as usize..];
        let mut copy = [0u8; MOST];
        let bytes = if held.len() >= MOST || chunk_start + arena.len() as u64 == self.total {
            held
        } else {
            let n = (self.total - at).min(MOST as u64) as usize;
            read_exact_at(self.source.file, &mut copy[..n], self.source.start + at)
                .map_err(|_| Recheck)?;
            &copy[..n]
        };
        let mut pos = 0;
        let key = wire::varint(bytes, &mut pos).ok_or(Recheck)?;
        let (field, wire_type) = wire::key(key).map_err(|_| Recheck)?;
        let key_bytes = pos as u64;
        let expected = match field {
            SENSE | FORMAT_VERSION => WireType::Varint,
            DESCRIPTION..=ANNOTATIONS => WireType::Len,
            // Fields OMMX does not know, skipped by the one-thread reader.
            _ => return Err(Recheck),
        };
        // A map's value is length-delimited whatever its key's wire type.
        if wire_type != expected && !MAPS.contains(&field) {
            return Err(Recheck);
        }
        let value = wire::varint(bytes, &mut pos).ok_or(Recheck)?;
        Ok(Header {
            field,
            key_bytes,
            bytes: pos as u64,
            value,
        })
    }

    /// Whether the function whose body starts at stream offset `body`
    /// starts with a quadratic part (its first byte in the chunk `range`,
    /// held in `raw`, or in the file).
    fn quadratic(
        &self,
        range: &Range<u64>,
        body: u64,
        raw: &mut RawBatch,
    ) -> Result<bool, Recheck> {
        let key = crate::wire::tag(function::QUADRATIC, WireType::Len);
        let mut first = [0];
        if body < range.end {
            first[0] = raw.arena()[(body - range.start) as usize];
        } else {
            read_exact_at(self.source.file, &mut first, self.source.start + body)
                .map_err(|_| Recheck)?;
        }
        Ok(first[0] == key)
    }

    /// The element body at stream offsets `range`, left in the input file.
    fn in_file(&self, range: Range<u64>) -> Result<SpooledFunction, Recheck> {
        let file = self.source.file.try_clone().map_err(|_| Recheck)?;
        let start = self.source.start;
        Ok(SpooledFunction::within(
            file,
            start + range.start..start + range.end,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64;
    use crate::pass::tests::{damage, instance, Rng, Run};
    use crate::pass::{profile_instance_within, ProfileOptions};

    /// A run of `bytes` with `options`, the objective (and counted
    /// constraints) spooled above `spool_above` bytes: on one thread, from a
    /// stream.
    fn run_with(bytes: &[u8], options: ProfileOptions, spool_above: u64) -> Run {
        let mut accounts = Accounts::new(options);
        accounts.spool_above = spool_above;
        let total = Some(bytes.len() as u64);
        let summary = profile_instance_within(bytes, total, None, Some(1), &mut accounts, &mut ())
            .map_err(|e| e.to_string())?;
        Ok((accounts.memory.own_lines(), format!("{summary:?}")))
    }

    /// [`run_with`] from `file` (holding `bytes`, a few bytes in), read in
    /// chunks of `chunk` bytes on `threads` threads; `None` when that reader
    /// gave up and the instance would be read again on one thread.
    fn run_in_file(
        (bytes, file): (&[u8], &std::fs::File),
        options: ProfileOptions,
        (spool_above, in_place_above): (u64, u64),
        (threads, chunk): (usize, u64),
    ) -> Option<Run> {
        let mut accounts = Accounts::new(options);
        accounts.spool_above = spool_above;
        accounts.count_when_unseen(false);
        let spooling = Spooling::of(&accounts, &()).in_file(in_place_above);
        let source = InFile {
            file,
            start: 3,
            progress: &|_| {},
        };
        let total = (bytes.len() as u64, chunk);
        let done = profile_file(source, total, threads, spooling, &mut accounts, &mut ());
        Some(
            done?
                .map_err(|e| e.to_string())
                .map(|summary| (accounts.memory.own_lines(), format!("{summary:?}"))),
        )
    }

    #[test]
    fn a_file_read_in_chunks_on_several_threads_gives_what_one_stream_gives() {
        use std::io::Write;
        let mut rng = Rng(SplitMix64(0x5eed_0031), false);
        let (mut parallel, mut again, mut refused, mut late) = (0, 0, 0, 0);
        for case in 0..3_000 {
            let mut bytes = instance(&mut rng);
            if rng.chance(8) {
                // No objective (the first element): refused after the stream.
                let len = usize::from(bytes[1]);
                assert!(bytes[0] == 0x1a && len < 0x80);
                bytes.drain(..2 + len);
            }
            let intact = bytes.clone();
            damage(&mut rng, &mut bytes);
            if bytes.is_empty() {
                continue;
            }
            let options = match case % 3 {
                0 => ProfileOptions::default(),
                1 => ProfileOptions {
                    wire: true,
                    ..ProfileOptions::default()
                },
                _ => ProfileOptions {
                    group_by: crate::profile::family::GroupBy::Name,
                    ..ProfileOptions::default()
                },
            };
            let spool_above = if rng.chance(3) { 0 } else { u64::MAX };
            // Now and then read in place, where one thread holds it.
            // (Not drawn from `rng`, whose draws make the cases.)
            let in_place = match case % 3 {
                0 => bytes.len() as u64 % 40,
                _ => u64::MAX,
            };
            let threads = 1 + rng.below(4) as usize;
            let chunk = [1, 2, 7, 16, 64, 1 << 20][rng.below(6) as usize];
            // Behind a few bytes that are not the instance's.
            let mut file = tempfile::tempfile().unwrap();
            file.write_all(b"xyz").unwrap();
            file.write_all(&bytes).unwrap();
            // With the wire view, against the objective held: spooled or
            // read in place, it is walked in its file.
            let held = if options.wire { u64::MAX } else { spool_above };
            let one = run_with(&bytes, options, held);
            let above = (spool_above, in_place);
            match run_in_file((&bytes, &file), options, above, (threads, chunk)) {
                Some(many) => {
                    assert_eq!(
                        many, one,
                        "{threads} threads, chunks of {chunk}: {bytes:02x?}"
                    );
                    parallel += 1;
                    late += usize::from(many.is_err());
                }
                None => {
                    // Given up only where one thread finds something wrong (or
                    // the damage made a field one thread skips).
                    assert!(one.is_err() || bytes != intact, "{bytes:02x?}");
                    again += 1;
                }
            }
            refused += usize::from(one.is_err());
        }
        // Accepted instances went the whole way on several threads, refused ones
        // too when what is wrong is found after the stream (`late`), and others
        // were read again.
        let accepted = parallel - late;
        assert!(accepted > 400 && late > 50, "{accepted} / {late}");
        assert!(
            again > 1_000 && refused == late + again,
            "{again} / {refused}"
        );
    }
}
