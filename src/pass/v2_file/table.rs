//! A table of an `ommx.v2` payload (a message of map fields) read a window
//! of whole fields at a time, on several threads. The windows are cut in
//! order, under a lock, by whichever thread takes the next one: a
//! positioned read and a walk of its field headers (a few bytes an entry),
//! so that the table is read once. Each window's fields are then read by
//! that thread alone, into a state of its own, which is merged as soon as
//! every window before it has been: in window order whatever the threads,
//! so what is merged does not depend on how many there were.
//!
//! Memory: a window a thread (more when one field is longer), and the
//! states of the windows done ahead of one still being read (a few a
//! thread), not one for every window of the table.

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::wire::file::read_exact_at;
use crate::wire::{key, varint, WireType};

/// Bytes a window holds at most, unless one field is longer (in tests,
/// a few entries, so that the fixtures span many windows).
const WINDOW: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// A table: `range` (payload offsets) of the payload at `start` in `file`.
#[derive(Clone, Copy)]
pub(super) struct Table<'f> {
    pub(super) file: &'f File,
    pub(super) start: u64,
    pub(super) range: (u64, u64),
}

/// Windows' states merged in window order as they come: those done ahead
/// of the next one wait.
struct InOrder<S, M> {
    next: usize,
    ahead: BTreeMap<usize, S>,
    merge: M,
}

impl<S, M: FnMut(S)> InOrder<S, M> {
    fn put(&mut self, index: usize, state: S) {
        if index != self.next {
            self.ahead.insert(index, state);
            return;
        }
        (self.merge)(state);
        self.next += 1;
        while let Some(state) = self.ahead.remove(&self.next) {
            (self.merge)(state);
            self.next += 1;
        }
    }
}

/// A field's header: its number, wire type, where its key ends and where
/// the field ends (a length-delimited field's length prefix and body lie
/// between the two), relative to where it starts.
struct Head {
    number: u32,
    wire_type: WireType,
    after_key: usize,
    end: usize,
}

/// The header of the field at the start of `bytes` (its end may lie past
/// them); `Ok(None)` when the header itself does not end within them;
/// `Err(())` for a group or bytes that are no field.
fn head(bytes: &[u8]) -> Result<Option<Head>, ()> {
    // A varint that does not end within the bytes: cut short if they end
    // within its ten bytes, else no varint.
    let short = |from: usize| match bytes.len() - from < 10 {
        true => Ok(None),
        false => Err(()),
    };
    let mut at = 0;
    let Some(k) = varint(bytes, &mut at) else {
        return short(0);
    };
    let (number, wire_type) = key(k).map_err(|_| ())?;
    let after_key = at;
    let end = match wire_type {
        WireType::Varint => match varint(bytes, &mut at) {
            Some(_) => at,
            None => return short(after_key),
        },
        WireType::Fixed64 => at + 8,
        WireType::Fixed32 => at + 4,
        WireType::Len => match varint(bytes, &mut at) {
            Some(len) => usize::try_from(len)
                .ok()
                .and_then(|len| at.checked_add(len))
                .ok_or(())?,
            None => return short(after_key),
        },
        WireType::StartGroup | WireType::EndGroup => return Err(()),
    };
    Ok(Some(Head {
        number,
        wire_type,
        after_key,
        end,
    }))
}

impl Table<'_> {
    /// Hands each field of the table (its number, and its length prefix
    /// and body, as prost's map decoding takes an entry) to `each`, with
    /// the state `new` makes for its window; windows read on up to
    /// `threads` threads, and each window's state handed to `merge` in
    /// window order. `None` as soon as a field is no field or not
    /// length-delimited, or `each` says `None` (what was merged before is
    /// then to be thrown away).
    pub(super) fn read<S: Send>(
        &self,
        threads: usize,
        new: impl Fn() -> S + Sync,
        each: impl Fn(&mut S, u32, &[u8]) -> Option<()> + Sync,
        merge: impl FnMut(S) + Send,
    ) -> Option<()> {
        let each = |state: &mut S, number, _, field: &[u8], after_key| {
            each(state, number, &field[after_key..])
        };
        self.read_at(threads, new, each, merge)
    }

    /// [`Table::read`], each field given whole (key, length prefix and
    /// body), with where it starts in the payload and where its key ends
    /// in it.
    pub(super) fn read_at<S: Send>(
        &self,
        threads: usize,
        new: impl Fn() -> S + Sync,
        each: impl Fn(&mut S, u32, u64, &[u8], usize) -> Option<()> + Sync,
        merge: impl FnMut(S) + Send,
    ) -> Option<()> {
        let cursor = Mutex::new((self.range.0, 0));
        let failed = AtomicBool::new(false);
        let merged = Mutex::new(InOrder {
            next: 0,
            ahead: BTreeMap::new(),
            merge,
        });
        let work = || {
            let done = self.work(&cursor, &failed, &merged, &new, &each);
            if done.is_none() {
                failed.store(true, Ordering::Relaxed);
            }
            done
        };
        let threads = match self.range.1 - self.range.0 > WINDOW as u64 {
            true => threads.max(1),
            false => 1,
        };
        let done: Vec<Option<()>> = match threads {
            1 => vec![work()],
            _ => std::thread::scope(|scope| {
                let others: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
                let mut done = vec![work()];
                done.extend(
                    others
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
                );
                done
            }),
        };
        done.into_iter().collect::<Option<()>>()?;
        let merged = merged.into_inner().unwrap_or_else(|e| e.into_inner());
        // Every window taken was read and merged.
        merged.ahead.is_empty().then_some(())
    }

    /// One thread's share: windows taken in turn until the table ends.
    fn work<S>(
        &self,
        cursor: &Mutex<(u64, usize)>,
        failed: &AtomicBool,
        merged: &Mutex<InOrder<S, impl FnMut(S)>>,
        new: &impl Fn() -> S,
        each: &impl Fn(&mut S, u32, u64, &[u8], usize) -> Option<()>,
    ) -> Option<()> {
        let mut buf = Vec::new();
        while !failed.load(Ordering::Relaxed) {
            let (index, at, len) = {
                let mut next = cursor.lock().unwrap_or_else(|e| e.into_inner());
                if next.0 >= self.range.1 {
                    break;
                }
                let at = next.0;
                let len = self.cut(at, &mut buf)?;
                next.0 += len as u64;
                next.1 += 1;
                (next.1 - 1, at, len)
            };
            let mut state = new();
            let mut pos = 0;
            while pos < len {
                // Whole, as the cut found them.
                let fields = &buf[pos..len];
                let h = head(fields).ok()??;
                // Every field a table's schema knows is a map, which prost
                // reads as length-delimited whatever its key's wire type:
                // a field of another is left to the whole message's reading.
                if h.wire_type != WireType::Len {
                    return None;
                }
                let field = &fields[..h.end];
                each(&mut state, h.number, at + pos as u64, field, h.after_key)?;
                pos += h.end;
            }
            let mut merged = merged.lock().unwrap_or_else(|e| e.into_inner());
            merged.put(index, state);
        }
        Some(())
    }

    /// Reads the window at `pos` into `buf`: the length of its whole
    /// fields (at least one: a field longer than a window is read whole).
    fn cut(&self, pos: u64, buf: &mut Vec<u8>) -> Option<usize> {
        let left = self.range.1 - pos;
        let want = (WINDOW as u64).min(left) as usize;
        buf.resize(want, 0);
        read_exact_at(self.file, buf, self.start + pos).ok()?;
        let mut at = 0;
        while at < buf.len() {
            let Some(h) = head(&buf[at..]).ok()? else {
                break;
            };
            if at + h.end > buf.len() {
                if at == 0 {
                    (h.end as u64 <= left).then_some(())?;
                    buf.resize(h.end, 0);
                    read_exact_at(self.file, buf, self.start + pos).ok()?;
                    return Some(h.end);
                }
                break;
            }
            at += h.end;
        }
        // The table's last field cut short, or no header within a window.
        let cut_short = at < buf.len() && want as u64 == left;
        (at > 0 && !cut_short).then_some(at)
    }
}
