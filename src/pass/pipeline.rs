//! The pass's threads: batches framed in turn, decoded in parallel, handed
//! back in stream order to the checking side.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::mpsc;

use super::accounts::Accounts;
use super::framing::{decode_batch, frame_batch, Batch, LargeToken, RawBatch};
use super::validate::consume;
use super::EntityObserver;
use crate::pass::InstanceError;
use crate::profile::Aggregate;
use crate::report::InstanceSummary;
use crate::trace::{self, Phase};
use crate::wire::FieldReader;

/// Instances smaller than this decode on the calling thread by default:
/// starting threads would cost more than they save (an archive of a
/// thousand small layers ran twice as long with them).
const SMALL_INSTANCE: u64 = 1 << 20;

/// How many threads decode: `MEMPROF_THREADS` if set (1 = everything on the
/// calling thread), else the machine's parallelism for instances that are
/// not known to be small. Every setting gives the same output and the same
/// error; the switch exists to check that and to measure the difference.
fn decoding_threads(total: Option<u64>, cap: Option<usize>) -> usize {
    let threads = match std::env::var("MEMPROF_THREADS") {
        Ok(v) => v.trim().parse().unwrap_or(1).clamp(1, 64),
        Err(_) if total.is_some_and(|t| t < SMALL_INSTANCE) => 1,
        Err(_) => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
    };
    cap.map_or(threads, |cap| threads.min(cap.max(1)))
}

/// The framing side, shared by the decoding threads: whoever holds it reads
/// the next batch, so batches are framed in stream order and numbered.
struct Framer<R> {
    fields: FieldReader<R>,
    /// One ticket per batch that may be framed before the checking side has
    /// taken it, so memory stays bounded however uneven the batches are.
    tickets: mpsc::Receiver<()>,
    next: u64,
    done: bool,
}

/// Streams an instance from `reader` (of `total` bytes, when known), adds its
/// leaves to `aggregate` and shows each accepted entity to `observer`.
///
/// With several threads, each takes the next batch of encoded elements in
/// turn, decodes, normalizes and visits it into an aggregate of its own; the
/// calling thread checks the entities in stream order (ids, references) and
/// shows them to the observer, so the result and the error reported are
/// those of a sequential run. Leaf sums do not depend on the order they are
/// added in, and every output sorts, so merging the per-thread aggregates at
/// the end changes no output byte.
pub fn profile_instance<R: Read + Send, O: EntityObserver + ?Sized>(
    reader: R,
    total: Option<u64>,
    accounts: &mut Accounts,
    observer: &mut O,
) -> Result<InstanceSummary, InstanceError> {
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
) -> Result<InstanceSummary, InstanceError> {
    let threads = decoding_threads(total, threads);
    let group_by = accounts.group_by;
    accounts.count_when_unseen(observer.sees_entities());
    let mut fields = FieldReader::new(reader, total).with_max_len(max_element);
    // An objective only counted is read from a file, a window at a time:
    // memory does not hold a large one (the wire view reads its bytes). So
    // is a constraint, when constraints are counted.
    let spool_above =
        (observer.counts_only() && accounts.wire.is_none()).then_some(accounts.spool_above);
    let spool_constraints_above = spool_above.filter(|_| accounts.counting.is_some());
    let new_batch = || RawBatch::spooling_above(spool_above, spool_constraints_above);
    if threads == 1 {
        let mut raw = new_batch();
        // The previous batch has been checked when the next is asked for.
        let mut large: Option<LargeToken> = None;
        let batches = std::iter::from_fn(|| {
            drop(large.take());
            frame_batch(&mut fields, &mut raw);
            large = LargeToken::for_batch(&raw);
            Some(decode_batch(&mut raw, accounts))
        });
        // The borrow of `accounts` by the batches ends with `consume`'s
        // stream phase; the singular fields are visited into a second one.
        let mut singular = Aggregate::new();
        let summary = consume(batches, 1, max_element, group_by, &mut singular, observer)?;
        accounts.settle();
        accounts.memory.merge_under(&[], &singular);
        return Ok(summary);
    }
    let in_flight = 2 * threads + 2;
    let (ticket_tx, tickets) = mpsc::sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        ticket_tx
            .send(())
            .expect("the channel has room for every ticket");
    }
    let worker_accounts = &*accounts;
    let worker_accounts: Vec<_> = (0..threads).map(|_| worker_accounts.for_worker()).collect();
    let framer = std::sync::Mutex::new(Framer {
        fields,
        tickets,
        next: 0,
        done: false,
    });
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<(u64, Batch, Option<LargeToken>)>(in_flight);
        let workers: Vec<_> = worker_accounts
            .into_iter()
            .map(|mut local| {
                let tx = tx.clone();
                let framer = &framer;
                scope.spawn(move || {
                    let mut raw = new_batch();
                    loop {
                        let (seq, large) = {
                            let mut f = framer.lock().unwrap_or_else(|e| e.into_inner());
                            // No ticket: the checking side has stopped.
                            if f.done || f.tickets.recv().is_err() {
                                break;
                            }
                            frame_batch(&mut f.fields, &mut raw);
                            f.done = raw.last.is_some();
                            f.next += 1;
                            // Taken before the framer is let go, so that no
                            // other large element is framed meanwhile.
                            (f.next - 1, LargeToken::for_batch(&raw))
                        };
                        let batch = decode_batch(&mut raw, &mut local);
                        // A closed channel: the checking side stopped on an error.
                        if tx.send((seq, batch, large)).is_err() {
                            break;
                        }
                    }
                    local.settle();
                    local
                })
            })
            .collect();
        drop(tx);
        // Batches arrive in any order; hand them on in sequence.
        let mut pending = BTreeMap::new();
        let mut next = 0u64;
        let mut rx = rx.into_iter();
        // The previous batch has been checked when the next is asked for.
        let mut large: Option<LargeToken> = None;
        let in_order = std::iter::from_fn(move || loop {
            drop(large.take());
            if let Some((batch, token)) = pending.remove(&next) {
                next += 1;
                large = token;
                // Taken: another batch may be framed. (Sending fails only
                // once every worker has stopped.)
                let _ = ticket_tx.send(());
                return Some(batch);
            }
            let (seq, batch, token) = rx.next()?;
            pending.insert(seq, (batch, token));
        });
        let result = consume(
            in_order,
            threads,
            max_element,
            group_by,
            &mut accounts.memory,
            observer,
        );
        // On an error the receiver is gone by now, so no worker stays
        // blocked on a full channel; on success they have all finished.
        for worker in workers {
            let local = worker
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            if result.is_ok() {
                let _span = trace::span(Phase::Aggregate);
                accounts.merge(&local);
            }
        }
        result
    })
}
