//! The pass's threads. A regular file whose entities no analysis looks at
//! is framed, decoded and checked on every thread ([`super::ranges`]); a
//! stream (gzip, stdin, an archive's entry), or a regular file whose
//! entities an analysis looks at, is framed in batches taken in turn,
//! decoded in parallel and handed back in stream order to the checking
//! side, which hands each checked batch on to the observing side (a thread
//! of its own, or one per part of an observer made of parts) and that one
//! back to the thread that decoded it, to be freed; an instance on one
//! thread is all of that in turn.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::{mpsc, Arc, Mutex};

use super::accounts::Accounts;
use super::compare::Comparing;
use super::decode::decode_batch;
use super::finish::{finish_instance, Finish};
use super::framing::{frame_batch, LargeToken, Spooling};
use super::item::Batch;
use super::objective::Singulars;
use super::observe::Observing;
use super::observers::Observers;
use super::ranges::{self, FileAt, InFile};
use super::settings::Settings;
use super::validate::{check_stream, State};
use super::EntityObserver;
use crate::pages;
use crate::pass::InstanceError;
use crate::profile::family::GroupBy;
use crate::profile::Aggregate;
use crate::profiled::{Accounting, InstanceCounts};
use crate::trace::{self, Phase};
use crate::wire::FieldReader;

/// Instances smaller than this decode on the calling thread by default:
/// starting threads would cost more than they save (an archive of a
/// thousand small layers ran twice as long with them).
const SMALL_INSTANCE: u64 = 1 << 20;

/// The most threads one instance takes by default, however many cores the
/// machine has.
pub const MAX_THREADS: usize = 32;

/// How many threads decode: the settings' threads if set (1 = everything
/// on the calling thread), else the machine's parallelism (at most
/// [`MAX_THREADS`]) for instances that are not known to be small; never
/// more than the settings' cap.
fn decoding_threads(total: Option<u64>, settings: &Settings) -> usize {
    let threads = match settings.threads {
        Some(n) => n,
        None if total.is_some_and(|t| t < SMALL_INSTANCE) => 1,
        None => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
    };
    settings.cap.map_or(threads, |cap| threads.min(cap.max(1)))
}

/// Streams an instance from `reader` (of `total` bytes, when known), adds its
/// leaves to `accounts` and shows each accepted entity to `observer`.
///
/// With several threads, each takes the next batch of encoded elements in
/// turn, decodes, normalizes and visits it into an aggregate of its own; the
/// calling thread checks the entities in stream order (ids, references),
/// and another thread shows them to the observer in the same order, so the
/// result and the error reported are those of a sequential run. Leaf sums do not depend on the order they are
/// added in, and every output sorts, so merging the per-thread aggregates at
/// the end changes no output byte.
pub fn profile_instance<R: Read + Send, O: EntityObserver + ?Sized>(
    reader: R,
    total: Option<u64>,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let max_element = total.is_none().then_some(super::DEFAULT_MAX_ELEMENT);
    profile_instance_within(reader, total, max_element, None, accounts, observer)
}

/// [`profile_instance`] on at most `threads` threads, refusing any element (and the singular fields
/// together) longer than `max_element`. A stream of unknown length, or one
/// whose `total` is only a container's claim (a tar header inside gzip data),
/// needs the limit: nothing else bounds what one element may make memprof
/// hold. A file read as stored needs none: its elements are no larger than
/// the file.
pub fn profile_instance_within<R: Read + Send, O: EntityObserver + ?Sized>(
    reader: R,
    total: Option<u64>,
    max_element: Option<u64>,
    threads: Option<usize>,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let source = Source {
        reader,
        total,
        max_element,
        in_file: None,
    };
    let settings = Settings {
        cap: threads,
        ..Settings::default()
    };
    profile_source(source, settings, accounts, observer)
}

/// Where an instance's bytes come from: a reader, and when they are a range
/// of a regular file (of `total` bytes), that file too.
pub(super) struct Source<'f, R> {
    pub(super) reader: R,
    pub(super) total: Option<u64>,
    pub(super) max_element: Option<u64>,
    pub(super) in_file: Option<InFile<'f>>,
}

/// [`profile_instance_within`] for any [`Source`]: a file on every thread
/// when nothing looks at the entities one by one, else the stream.
pub(super) fn profile_source<R: Read + Send, O: EntityObserver + ?Sized>(
    source: Source<'_, R>,
    settings: Settings,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let Source {
        reader,
        total,
        max_element,
        in_file,
    } = source;
    let threads = decoding_threads(total, &settings);
    accounts.count_when_unseen(observer.sees_entities());
    let spooling = Spooling::of(accounts, observer);
    // Entities shown to an observer go in stream order: the stream's way.
    let whole_file = in_file.zip(total).filter(|_| {
        let in_order = observer.sees_entities() || accounts.comparing;
        threads > 1 && max_element.is_none() && !in_order
    });
    if let Some((file, total)) = whole_file {
        // `None`: read again below, on one thread, for the exact error.
        let size = (total, settings.chunk_bytes);
        let in_file = spooling.in_file(accounts.in_place_above);
        if let Some(done) = ranges::profile_file(file, size, threads, in_file, accounts, observer) {
            return done;
        }
    }
    let in_file = in_file.zip(total).filter(|_| max_element.is_none());
    match (threads, in_file) {
        (1, _) => sequential(reader, total, max_element, spooling, accounts, observer),
        // A regular file: read in turn too, with positioned reads, so that
        // a long element is read on every thread.
        // A long objective is left in the file, as on every thread.
        (_, Some((file, total))) => pipelined(
            Framed::<R>::File(file.stream(total, threads)),
            Some(total),
            max_element,
            threads,
            spooling.in_file(accounts.in_place_above),
            accounts,
            observer,
        ),
        (_, None) => pipelined(
            Framed::Stream(reader),
            total,
            max_element,
            threads,
            spooling,
            accounts,
            observer,
        ),
    }
}

/// What [`pipelined`] frames: a stream, or a regular file read in turn.
enum Framed<'f, R> {
    Stream(R),
    File(FileAt<'f>),
}

impl<R: Read> Read for Framed<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Framed::Stream(r) => r.read(buf),
            Framed::File(f) => f.read(buf),
        }
    }
}

impl<R> Framed<'_, R> {
    /// [`crate::wire::stream::Ahead`]: a file's, on every thread; a stream
    /// reads in turn.
    fn ahead(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<bool> {
        match self {
            Framed::Stream(_) => Ok(false),
            Framed::File(f) => f.ahead(buf),
        }
    }

    /// [`crate::wire::stream::Leave`]: a file's; a stream reads every byte.
    fn leave(&mut self, behind: u64, len: u64) -> io::Result<Option<(File, Range<u64>)>> {
        match self {
            Framed::Stream(_) => Ok(None),
            Framed::File(f) => f.leave(behind, len),
        }
    }
}

/// Everything on the calling thread: a batch framed, decoded and checked,
/// then the next.
fn sequential<R: Read, O: EntityObserver + ?Sized>(
    reader: R,
    total: Option<u64>,
    max_element: Option<u64>,
    spooling: Spooling,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let mut fields = FieldReader::new(reader, total).with_max_len(max_element);
    let group_by = accounts.group_by;
    let finish = Finish::new(accounts, 1);
    let mut compare = accounts.compare.take();
    let mut raw = spooling.batch();
    // The previous batch has been checked when the next is asked for.
    let mut large: Option<LargeToken> = None;
    let batches = std::iter::from_fn(|| {
        drop(large.take());
        frame_batch(&mut fields, &mut raw);
        large = LargeToken::for_batch(&raw);
        Some((decode_batch(&mut raw, accounts), Home::here()))
    });
    // The borrow of `accounts` by the batches ends with `consume`'s
    // stream phase; the singular fields are visited into a second one.
    let mut singular = Aggregate::new();
    let summary = consume(
        batches,
        finish,
        (max_element, group_by),
        compare.as_deref_mut(),
        &mut singular,
        observer,
    );
    accounts.compare = compare;
    let summary = summary?;
    accounts.settle();
    accounts.memory.merge_under(&[], &singular);
    Ok(summary)
}

/// The framing side of a stream, shared by the decoding threads: whoever
/// holds it reads the next batch, so batches are framed in stream order
/// and numbered.
struct Framer<'f, R> {
    fields: FieldReader<Framed<'f, R>>,
    /// One ticket per batch that may be framed before the checking side has
    /// taken it, so memory stays bounded however uneven the batches are.
    tickets: mpsc::Receiver<()>,
    next: u64,
    done: bool,
}

/// Where a batch goes once it has been checked and shown: back to the
/// decoding thread that made it, to be freed there (freeing another
/// thread's memory costs the allocator more, and the stream's checking and
/// showing threads are the pass's busiest), or, for a batch made where it
/// is checked, nowhere. A batch holding a large element is freed where it
/// is, before the right to decode another ([`LargeToken`]) is given up.
struct Home {
    back: Option<mpsc::Sender<Batch>>,
    large: Option<LargeToken>,
}

impl Home {
    /// A batch made on the thread that checks it.
    fn here() -> Self {
        Self {
            back: None,
            large: None,
        }
    }

    /// A batch made on the decoding thread that takes it back on `back`,
    /// holding the right to a large element when it has one.
    fn on(back: mpsc::Sender<Batch>, large: Option<LargeToken>) -> Self {
        Self {
            back: Some(back),
            large,
        }
    }

    /// Hands a batch back to be freed (here, when it is large or its
    /// thread has stopped).
    fn retire(self, batch: Batch) {
        match (self.back, self.large) {
            (Some(back), None) => drop(back.send(batch)),
            (_, large) => {
                drop(batch);
                drop(large);
            }
        }
    }
}

/// A decoded batch, its number in the stream, and where it goes once
/// checked and shown.
type Numbered = (u64, Batch, Home);

/// A stream on several threads: each frames the next batch in turn and
/// decodes it into accounts of its own; the calling thread checks the
/// batches in stream order.
fn pipelined<R: Read + Send, O: EntityObserver + ?Sized>(
    reader: Framed<'_, R>,
    total: Option<u64>,
    max_element: Option<u64>,
    threads: usize,
    spooling: Spooling,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let in_flight = 2 * threads + 2;
    let (ticket_tx, tickets) = mpsc::sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        ticket_tx
            .send(())
            .expect("the channel has room for every ticket");
    }
    let group_by = accounts.group_by;
    let builds = observer.sees_entities();
    let finish = Finish::new(accounts, threads);
    let worker_accounts: Vec<_> = (0..threads).map(|_| accounts.for_worker()).collect();
    let framer = Mutex::new(Framer {
        fields: FieldReader::new(reader, total)
            .with_max_len(max_element)
            .with_ahead(Framed::ahead)
            .with_leave(Framed::leave),
        tickets,
        next: 0,
        done: false,
    });
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<Numbered>(in_flight);
        let framer = &framer;
        let workers: Vec<_> = worker_accounts
            .into_iter()
            .map(|local| {
                let tx = tx.clone();
                let (home, back) = mpsc::channel::<Batch>();
                let decoder = Decoder { tx, home, back };
                spawn_named(scope, "decode", move || {
                    let decode = || frame_and_decode(framer, spooling, local, decoder);
                    // The entities built go round in an arena of their own.
                    if builds {
                        pages::entities_in_arena(decode)
                    } else {
                        decode()
                    }
                })
            })
            .collect();
        drop(tx);
        let in_order = InOrder {
            received: rx.into_iter(),
            pending: BTreeMap::new(),
            next: 0,
            tickets: ticket_tx,
        };
        let result = consume(
            in_order,
            finish,
            (max_element, group_by),
            accounts.compare.as_deref_mut(),
            &mut accounts.memory,
            observer,
        );
        // On an error the receiver is gone by now, so no worker stays
        // blocked on a full channel; on success they have all finished.
        for worker in workers {
            let local = join(worker);
            if result.is_ok() {
                let _span = trace::span(Phase::Aggregate);
                accounts.merge(&local);
            }
        }
        result
    })
}

/// A decoding thread's ends of the channels: where its batches go, and
/// both ends of the one where they come back once checked, to be freed.
struct Decoder {
    tx: mpsc::SyncSender<Numbered>,
    home: mpsc::Sender<Batch>,
    back: mpsc::Receiver<Batch>,
}

/// One decoding thread of [`pipelined`]: frames the next batch while it
/// holds the framer, decodes it into `local` and sends it on, until the
/// stream ends or the checking side stops; `local`, settled. The batches
/// it gets back it frees before framing the next.
fn frame_and_decode<R: Read>(
    framer: &Mutex<Framer<R>>,
    spooling: Spooling,
    mut local: Accounts,
    decoder: Decoder,
) -> Accounts {
    let Decoder { tx, home, back } = decoder;
    let mut raw = spooling.batch();
    loop {
        back.try_iter().for_each(drop);
        let (seq, large) = {
            let mut f = framer.lock().unwrap_or_else(|e| e.into_inner());
            // No ticket: the checking side has stopped.
            if f.done || f.tickets.recv().is_err() {
                break;
            }
            frame_batch(&mut f.fields, &mut raw);
            f.done = raw.last.is_some();
            f.next += 1;
            // Taken before the framer is let go, so that no other large
            // element is framed meanwhile.
            (f.next - 1, LargeToken::for_batch(&raw))
        };
        let batch = decode_batch(&mut raw, &mut local);
        // A closed channel: the checking side stopped on an error.
        if tx
            .send((seq, batch, Home::on(home.clone(), large)))
            .is_err()
        {
            break;
        }
    }
    back.try_iter().for_each(drop);
    local.settle();
    local
}

/// The decoded batches, which arrive in any order, handed on in stream
/// order; each taken batch gives a ticket back, so another may be framed.
/// A batch's right to a large element goes on with it ([`Home`]), given up
/// once it is checked, shown and freed.
struct InOrder<I> {
    received: I,
    pending: BTreeMap<u64, (Batch, Home)>,
    next: u64,
    tickets: mpsc::SyncSender<()>,
}

impl<I: Iterator<Item = Numbered>> Iterator for InOrder<I> {
    type Item = (Batch, Home);

    fn next(&mut self) -> Option<(Batch, Home)> {
        loop {
            if let Some(taken) = self.pending.remove(&self.next) {
                self.next += 1;
                // Sending fails only once every worker has stopped.
                let _ = self.tickets.send(());
                return Some(taken);
            }
            let (seq, batch, home) = self.received.next()?;
            self.pending.insert(seq, (batch, home));
        }
    }
}

/// How many checked batches may wait for each observing thread. With 4
/// rather than 2, the checking thread waits less often on a slow part:
/// `report` on the 198 MB LP took 0.96 of the time, for 4 MiB more at its
/// peak.
const SHOWN_AHEAD: usize = 4;

/// A checked batch on its way to the observing threads.
type Shown = Arc<(Batch, Home)>;

/// One observing thread: shows each batch received, then retires it if no
/// other observing thread holds it still ([`Home::retire`]).
fn show<O: EntityObserver + ?Sized>(
    mut observing: Observing<'_, O>,
    received: mpsc::Receiver<Shown>,
) {
    for shown in received {
        observing.batch(&shown.0);
        if let Some((batch, home)) = Arc::into_inner(shown) {
            home.retire(batch);
        }
    }
}

/// A thread of the pass's, named for what it does (as `perf` and
/// debuggers show it).
fn spawn_named<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    work: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(scope, work)
        .unwrap_or_else(|e| panic!("starting a thread: {e}"))
}

/// Joins a thread of the pass's, passing its panic on.
fn join<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Checks the batches of one instance in stream order, shows their
/// entities to the observer, and finishes the instance: the whole
/// sequential side of the pass. When the batches come from decoding
/// threads and something looks at the entities, showing them runs on a
/// thread of its own, behind the checks: one for each part of an observer
/// made of parts ([`EntityObserver::parts`]), the comparison with the
/// parts that take its costs.
fn consume<O: EntityObserver + ?Sized>(
    batches: impl Iterator<Item = (Batch, Home)>,
    finish: Finish,
    (max_element, group_by): (Option<u64>, GroupBy),
    mut compare: Option<&mut Comparing>,
    aggregate: &mut Aggregate,
    observer: &mut O,
) -> Result<InstanceCounts, InstanceError> {
    let accounting = finish.accounting;
    let apart = finish.threads > 1 && (observer.sees_entities() || compare.is_some());
    let checks = (max_element, group_by, accounting);
    let checked = if !apart {
        let mut observing = Observing::new(compare.as_deref_mut(), &mut *observer, group_by);
        check_stream(batches, max_element, group_by, accounting, |b, home| {
            observing.batch(&b);
            home.retire(b);
        })
    } else if observer.has_parts() {
        // The comparison goes with the parts that take its costs; every
        // other part is shown the stream on a thread of its own.
        let (taking, others): (Vec<_>, Vec<_>) = observer
            .parts()
            .into_iter()
            .partition(|part| part.takes_ommx30_costs());
        let mut taking = Observers(taking);
        let mut others: Vec<_> = others
            .into_iter()
            .map(|part| Observers(vec![part]))
            .collect();
        let mut observing = Vec::new();
        if !taking.0.is_empty() || compare.is_some() {
            observing.push(Observing::new(
                compare.as_deref_mut(),
                &mut taking,
                group_by,
            ));
        }
        for part in &mut others {
            observing.push(Observing::new(None, part, group_by));
        }
        checked_apart(batches, checks, observing)
    } else {
        let whole = Observing::new(compare.as_deref_mut(), &mut *observer, group_by);
        checked_apart(batches, checks, vec![whole])
    };
    let (state, rest, end) = checked?;
    finish_instance(state, rest, end, finish, compare, aggregate, observer)
}

/// [`check_stream`] with each `observing` on a thread of its own, shown
/// every checked batch in stream order.
fn checked_apart<O: EntityObserver + ?Sized>(
    batches: impl Iterator<Item = (Batch, Home)>,
    (max_element, group_by, accounting): (Option<u64>, GroupBy, Accounting),
    observing: Vec<Observing<'_, O>>,
) -> Result<(State, Singulars, u64), InstanceError> {
    std::thread::scope(|scope| {
        let (senders, showers): (Vec<_>, Vec<_>) = observing
            .into_iter()
            .enumerate()
            .map(|(i, observing)| {
                let (tx, rx) = mpsc::sync_channel::<Shown>(SHOWN_AHEAD);
                let name = format!("observe {i}");
                (tx, spawn_named(scope, &name, move || show(observing, rx)))
            })
            .unzip();
        let checked = check_stream(batches, max_element, group_by, accounting, |b, home| {
            let shown = Arc::new((b, home));
            for tx in &senders {
                // A closed channel: its thread panicked, which the join says.
                let _ = tx.send(Arc::clone(&shown));
            }
        });
        drop(senders);
        showers.into_iter().for_each(join);
        checked
    })
}
