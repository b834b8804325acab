//! A heap written down and read back, so that a model can start from the
//! heap a real process had at some moment rather than from an empty one:
//! `bench/glibc_replay.rs --snapshot` writes the interpreter's heap as a
//! traced load begins, and the simulated load starts from it. Where the
//! interpreter left free chunks, and how much room its top chunk had,
//! decides where a load's first chunks go, and so where its trims stop.
//!
//! The text: a line of the thresholds, the top's size and the last
//! remainder; a line of the chunks from the heap's start to the top, each
//! `<size>u` (in use: a run of handed-out chunks, merged, since a load
//! frees none of them), `<size>c` (held by the tcache or a fast bin) or
//! `<size>f` (in a bin); then one line per list that holds chunks, in list
//! order: `bin N`, `tcache N` or `fast N` and the chunks' offsets.

use super::links::is_head;
use super::{Malloc, HEAP_BASE, NBINS};
use std::collections::HashMap;
use std::fmt::Write;

impl Malloc {
    /// Its heap, written down (its mappings are left out). The chunks it
    /// knows are the free ones and the cached ones; what lies between them
    /// is in use.
    pub fn snapshot(&self) -> String {
        let mut known: Vec<(u64, u64, char)> = self
            .binned()
            .map(|(at, size)| (at, size, 'f'))
            .chain(self.cached().map(|(at, size)| (at, size, 'c')))
            .filter(|&(at, _, _)| at < self.top)
            .collect();
        known.sort_unstable();
        let mut out = format!(
            "thresholds {} {} top {} last_remainder {}\n",
            self.mmap_threshold,
            self.trim_threshold,
            self.top_size,
            self.last_remainder.saturating_sub(HEAP_BASE)
        );
        let mut at = HEAP_BASE;
        for (chunk, size, kind) in known {
            if chunk > at {
                write!(out, "{}u ", chunk - at).unwrap();
            }
            write!(out, "{size}{kind} ").unwrap();
            at = chunk + size;
        }
        if self.top > at {
            write!(out, "{}u", self.top - at).unwrap();
        }
        out.push('\n');
        let mut list = |name: &str, n: usize, chunks: &mut dyn Iterator<Item = u64>| {
            let offsets: Vec<String> = chunks.map(|at| (at - HEAP_BASE).to_string()).collect();
            if !offsets.is_empty() {
                writeln!(out, "{name} {n} {}", offsets.join(" ")).unwrap();
            }
        };
        for bin in 0..NBINS {
            let mut slot = self.slots[bin].fd;
            list(
                "bin",
                bin,
                &mut std::iter::from_fn(|| {
                    (!is_head(slot)).then(|| {
                        let this = self.slot(slot);
                        slot = this.fd;
                        this.at
                    })
                }),
            );
        }
        for (n, t) in self.tcache.iter().enumerate() {
            list("tcache", n, &mut t.iter().copied());
        }
        for (n, f) in self.fast.iter().enumerate() {
            list("fast", n, &mut f.iter().copied());
        }
        out
    }

    /// A model whose heap is the one `text` writes down, every page below
    /// the top written, nothing mapped.
    pub fn from_snapshot(text: &str) -> Result<Malloc, String> {
        let bad = |what: &str| format!("a heap snapshot with {what}");
        let number = |s: Option<&str>, what: &str| -> Result<u64, String> {
            s.and_then(|s| s.parse().ok()).ok_or_else(|| bad(what))
        };
        let mut lines = text.lines();
        let head: Vec<&str> = lines
            .next()
            .ok_or_else(|| bad("no header"))?
            .split(' ')
            .collect();
        let field = |name: &str, at: usize| match head.get(at) {
            Some(&word) if word == name => number(head.get(at + 1).copied(), name),
            _ => Err(bad(&format!("no {name}"))),
        };
        let mmap_threshold = field("thresholds", 0)?;
        let trim_threshold = number(head.get(2).copied(), "a trim threshold")?;
        let top_size = field("top", 3)?;
        let last_remainder = field("last_remainder", 5)?;
        let mut m = Malloc::after_mapping(mmap_threshold);
        m.trim_threshold = trim_threshold;
        let mut at = HEAP_BASE;
        let mut sizes = HashMap::new();
        for token in lines
            .next()
            .ok_or_else(|| bad("no chunks"))?
            .split_whitespace()
        {
            let (size, kind) = token.split_at(token.len() - 1);
            let size = number(Some(size), "a chunk of no size")?;
            if size == 0 || size % 16 != 0 || !matches!(kind, "u" | "c" | "f") {
                return Err(bad(&format!("the chunk {token}")));
            }
            sizes.insert(at, size);
            at += size;
        }
        m.top = at;
        m.top_size = top_size;
        if last_remainder > 0 {
            m.last_remainder = HEAP_BASE + last_remainder;
        }
        for line in lines {
            let mut words = line.split_whitespace();
            let kind = words.next();
            let n = number(words.next(), "a list of no number")? as usize;
            let mut chunks = Vec::new();
            for w in words {
                let addr = HEAP_BASE + number(Some(w), "a list of no offsets")?;
                if !sizes.contains_key(&addr) {
                    return Err(bad(&format!("no chunk at {w}")));
                }
                chunks.push(addr);
            }
            match kind {
                Some("bin") if n < NBINS => {
                    for addr in chunks {
                        let tail = m.slots[n].bk;
                        let size = sizes[&addr];
                        let slot = m.link_after(n, tail, addr, size);
                        if n >= 64 {
                            m.sizes[n].entry(size).or_insert(slot);
                        }
                    }
                }
                Some("tcache") if n < m.tcache.len() => m.tcache[n] = chunks,
                Some("fast") if n < m.fast.len() => m.fast[n] = chunks,
                _ => return Err(bad(&format!("the list {line}"))),
            }
        }
        m.touch(HEAP_BASE, m.top + 16 - HEAP_BASE);
        Ok(m)
    }
}
