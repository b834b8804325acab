//! Where a run's time and memory go: per-phase busy time and memory for
//! `--timings`, and the same spans as Chrome trace events for `--trace`.
//!
//! Off by default, when every probe costs one relaxed atomic load. Phases
//! overlap in time (several threads decode while another checks), so a
//! phase's figure is its busy time summed over threads, exclusive of the
//! phases nested in it (decompression happens inside reads). Decoding,
//! normalizing and aggregating alternate for every entity; they are timed
//! per entity with a lap clock and reported once per batch, so a trace holds
//! one event per phase and batch, not per entity.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The stages of a run, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Reading input bytes and framing the stream into elements.
    Read,
    /// Inflating gzip input (inside reads).
    Decompress,
    /// Protobuf decoding of elements.
    Decode,
    /// OMMX's normalization and per-entity checks.
    Normalize,
    /// Visiting leaves into the aggregate.
    Aggregate,
    /// Cross-entity checks in stream order, singular fields, merging.
    Check,
    /// The real-memory estimate, after the pass (OMMX's load simulated
    /// or its closed form).
    Estimate,
    /// Writing the output.
    Render,
}

impl Phase {
    pub const ALL: [Phase; 8] = [
        Phase::Read,
        Phase::Decompress,
        Phase::Decode,
        Phase::Normalize,
        Phase::Aggregate,
        Phase::Check,
        Phase::Estimate,
        Phase::Render,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "read",
            Phase::Decompress => "decompress",
            Phase::Decode => "decode",
            Phase::Normalize => "normalize",
            Phase::Aggregate => "aggregate",
            Phase::Check => "check",
            Phase::Estimate => "estimate",
            Phase::Render => "render",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static TRACING: AtomicBool = AtomicBool::new(false);

/// Memory of the process at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    /// Resident set size now.
    pub rss: u64,
    /// Largest resident set size so far.
    pub peak: u64,
}

impl Memory {
    /// The process's memory now (zeros where the platform does not say).
    pub fn now() -> Self {
        let page = 4096;
        let rss = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map_or(0, |pages| pages * page);
        let peak = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map_or(rss, |kib| kib * 1024);
        Self { rss, peak }
    }
}

/// Reading /proc costs some microseconds: spans ending within this long of
/// the last reading reuse it.
const MEMORY_EVERY: Duration = Duration::from_millis(2);

fn sampled_memory(rec: &Recorder) -> Memory {
    static LAST: Mutex<Option<(Duration, Memory)>> = Mutex::new(None);
    let now = rec.start.elapsed();
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    match *last {
        Some((at, memory)) if now.saturating_sub(at) < MEMORY_EVERY => memory,
        _ => {
            let memory = Memory::now();
            *last = Some((now, memory));
            memory
        }
    }
}

/// One span, as a Chrome "complete" event.
#[derive(Debug, Clone)]
struct Event {
    phase: Phase,
    thread: u64,
    start: Duration,
    duration: Duration,
    rss: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct PhaseTotals {
    busy: Duration,
    spans: u64,
    /// Memory when the phase's last span ended.
    end: Option<Memory>,
}

struct Recorder {
    start: Instant,
    totals: Mutex<[PhaseTotals; Phase::ALL.len()]>,
    events: Mutex<Vec<Event>>,
    threads: AtomicU64,
}

fn recorder() -> &'static Recorder {
    static RECORDER: OnceLock<Recorder> = OnceLock::new();
    RECORDER.get_or_init(|| Recorder {
        start: Instant::now(),
        totals: Mutex::new([PhaseTotals::default(); Phase::ALL.len()]),
        events: Mutex::new(Vec::new()),
        threads: AtomicU64::new(0),
    })
}

thread_local! {
    /// This thread's number in the trace, and the time spent in spans
    /// nested inside each open span (to make figures exclusive).
    static THREAD: RefCell<(Option<u64>, Vec<Duration>)> = const { RefCell::new((None, Vec::new())) };
}

fn thread_number() -> u64 {
    THREAD.with(|t| {
        let mut t = t.borrow_mut();
        *t.0.get_or_insert_with(|| recorder().threads.fetch_add(1, Ordering::Relaxed))
    })
}

/// Starts recording: `trace` also keeps every span for [`write_trace`].
/// The calling thread is thread 0 of the trace.
pub fn enable(trace: bool) {
    recorder();
    thread_number();
    TRACING.store(trace, Ordering::Relaxed);
    ENABLED.store(true, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Records `busy` time of `phase` (already exclusive) for a span that began
/// at `start`.
fn record(phase: Phase, start: Instant, wall: Duration, busy: Duration) {
    let rec = recorder();
    let memory = sampled_memory(rec);
    {
        let mut totals = rec.totals.lock().unwrap_or_else(|e| e.into_inner());
        let t = &mut totals[phase.index()];
        t.busy += busy;
        t.spans += 1;
        t.end = Some(memory);
    }
    if TRACING.load(Ordering::Relaxed) {
        let event = Event {
            phase,
            thread: thread_number(),
            start: start.saturating_duration_since(rec.start),
            duration: wall,
            rss: memory.rss,
        };
        rec.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }
}

/// Times the code until it is dropped as `phase`, minus nested spans.
#[must_use = "the span ends when dropped"]
pub struct Span {
    phase: Phase,
    start: Option<Instant>,
}

pub fn span(phase: Phase) -> Span {
    if !enabled() {
        return Span { phase, start: None };
    }
    THREAD.with(|t| t.borrow_mut().1.push(Duration::ZERO));
    Span {
        phase,
        start: Some(Instant::now()),
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        let Some(start) = self.start else { return };
        let wall = start.elapsed();
        let nested = THREAD.with(|t| {
            let mut t = t.borrow_mut();
            let nested = t.1.pop().unwrap_or_default();
            if let Some(parent) = t.1.last_mut() {
                *parent += wall;
            }
            nested
        });
        record(self.phase, start, wall, wall.saturating_sub(nested));
    }
}

/// Splits a stretch of work that alternates between phases many times (per
/// entity) into per-phase sums, reported as one span per phase at the end.
pub struct Laps {
    start: Option<Instant>,
    last: Option<Instant>,
    sums: [Duration; Phase::ALL.len()],
}

impl Laps {
    pub fn start() -> Self {
        let now = enabled().then(Instant::now);
        Self {
            start: now,
            last: now,
            sums: [Duration::ZERO; Phase::ALL.len()],
        }
    }

    /// The time since the previous lap was spent in `phase`.
    #[inline]
    pub fn lap(&mut self, phase: Phase) {
        if let Some(last) = self.last {
            let now = Instant::now();
            self.sums[phase.index()] += now - last;
            self.last = Some(now);
        }
    }

    /// Reports the sums as consecutive spans from the start.
    pub fn finish(self) {
        let Some(mut at) = self.start else { return };
        for phase in Phase::ALL {
            let busy = self.sums[phase.index()];
            if busy > Duration::ZERO {
                record(phase, at, busy, busy);
                at += busy;
            }
        }
    }
}

/// Per-phase figures for `--timings`.
#[derive(Debug, Clone)]
pub struct PhaseReport {
    pub phase: Phase,
    pub busy: Duration,
    pub spans: u64,
    pub end: Option<Memory>,
}

/// The figures so far, in pipeline order, and the wall time since start.
pub fn report() -> (Vec<PhaseReport>, Duration) {
    let rec = recorder();
    let totals = *rec.totals.lock().unwrap_or_else(|e| e.into_inner());
    let phases = Phase::ALL
        .iter()
        .map(|&phase| {
            let t = totals[phase.index()];
            PhaseReport {
                phase,
                busy: t.busy,
                spans: t.spans,
                end: t.end,
            }
        })
        .collect();
    (phases, rec.start.elapsed())
}

/// Writes the `--timings` table.
pub fn write_timings(out: &mut dyn Write) -> std::io::Result<()> {
    use crate::units::human;
    let (phases, wall) = report();
    let peak = Memory::now().peak;
    writeln!(
        out,
        "{:<11} {:>10} {:>7} {:>11} {:>11}",
        "phase", "busy", "spans", "RSS at end", "peak so far"
    )?;
    for p in &phases {
        let (rss, peak) = p.end.map_or(("-".to_string(), "-".to_string()), |m| {
            (human(m.rss), human(m.peak))
        });
        writeln!(
            out,
            "{:<11} {:>8.1}ms {:>7} {:>11} {:>11}",
            p.phase.name(),
            p.busy.as_secs_f64() * 1e3,
            p.spans,
            rss,
            peak
        )?;
    }
    writeln!(
        out,
        "wall {:.1} ms since start, peak RSS {} (busy time is summed over threads)",
        wall.as_secs_f64() * 1e3,
        human(peak)
    )
}

/// Writes every recorded span as a Chrome trace-event JSON document
/// (loadable in chrome://tracing and Perfetto).
pub fn write_trace(out: &mut dyn Write) -> anyhow::Result<()> {
    let rec = recorder();
    let mut events = rec.events.lock().unwrap_or_else(|e| e.into_inner()).clone();
    events.sort_by_key(|e| (e.start, e.thread));
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mut list = Vec::with_capacity(2 * events.len() + 8);
    list.push(serde_json::json!({
        "name": "process_name", "ph": "M", "pid": 1, "tid": 0,
        "args": { "name": "memprof" }
    }));
    let threads = rec.threads.load(Ordering::Relaxed);
    for tid in 0..threads {
        list.push(serde_json::json!({
            "name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
            "args": { "name": if tid == 0 { "main".to_string() } else { format!("worker {tid}") } }
        }));
    }
    for e in &events {
        list.push(serde_json::json!({
            "name": e.phase.name(), "cat": "memprof", "ph": "X", "pid": 1, "tid": e.thread,
            "ts": micros(e.start), "dur": micros(e.duration),
        }));
        list.push(serde_json::json!({
            "name": "memory", "ph": "C", "pid": 1, "tid": e.thread,
            "ts": micros(e.start + e.duration), "args": { "rss_bytes": e.rss },
        }));
    }
    serde_json::to_writer(
        &mut *out,
        &serde_json::json!({ "traceEvents": list, "displayTimeUnit": "ms" }),
    )?;
    writeln!(out)?;
    Ok(())
}

/// A reader whose reads are timed as `phase` (for gzip inflation).
pub struct TimedRead<R> {
    pub inner: R,
    pub phase: Phase,
}

impl<R: std::io::Read> std::io::Read for TimedRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let _span = span(self.phase);
        self.inner.read(buf)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for TimedRead<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let _span = span(self.phase);
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
    }
}
