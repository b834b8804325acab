//! Replays an allocation trace (`bench/alloc_trace.c`; from the process's
//! start with `RM_TRACE_ALL`) through memprof's model of glibc malloc
//! (`glibc-model/`): every chunk the model places elsewhere than
//! glibc did, and every break after a free, a trim or a mark that differs,
//! is counted (the first few printed), and at each phase mark the break,
//! the heap's resident pages and the live mappings are printed.
//!
//! The last line is JSON: the counts, and `resident`: what the load left
//! resident by the model (heap pages and mappings at the last mark, less at
//! the first, mark 0), the figure `bench/real_memory.py measure` takes from
//! the kernel.
//!
//! Usage: glibc_replay TRACE [--show N] [--check] [--fresh THRESHOLD] [--around RECORD] [--floors]
//!   --check      exit 1 unless every chunk and every break matched
//!   --floors     at each mark, the three highest chunks in use (a trim of the
//!                top stops above them): where each was made, and whether it
//!                is a freed one the tcache or a fast bin holds
//!   --around I   print the model's top chunk before each free near record I
//!   --fresh T    start at mark 0 on an empty heap with mmap threshold T, as if
//!                nothing had been allocated before the load
//!   --snapshot P write the model's heap at the load's start (mark 0) to P, as
//!                `Malloc::from_snapshot` reads it
//!   --then LOAD  replay TRACE only up to the load's start (mark 0), then the
//!                load of LOAD, a generated one (`simulate --record`), on the
//!                heap the traced process had made by then; print the
//!                resident it leaves
//!
//! Built by `cargo test` (target/debug/examples/glibc_replay);
//! `bench/alloc_trace.py --replay` traces a load and runs it.

use glibc_model::record::{ALIGNED, CALLOC, FREE, IS_MAPPED, MALLOC, MARK, REALLOC, TRIM};
use glibc_model::{Malloc, Ptr};
use memprof::ids::BuildIdHasher;
use std::collections::HashMap;

/// The marks of `bench/alloc_trace.py`'s child: the load's start, the end.
const LOAD_START: u64 = 0;
const LOAD_END: u64 = 999;
/// glibc's chunk flag of another thread's arena, in the size field.
const NON_MAIN_ARENA: u64 = 4;
/// A free record of size 1 is a realloc's old chunk.
const REALLOC_OLD: u64 = 1;

struct Options {
    trace: String,
    show: usize,
    check: bool,
    fresh: Option<u64>,
    around: Option<u64>,
    floors: bool,
    then: Option<String>,
    snapshot: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut o = Options {
        trace: String::new(),
        show: 10,
        check: false,
        fresh: None,
        around: None,
        floors: false,
        then: None,
        snapshot: None,
    };
    while let Some(a) = args.next() {
        let mut number = |what: &str| -> Result<u64, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or(format!("{what} needs a number"))
        };
        match a.as_str() {
            "--show" => o.show = number("--show")? as usize,
            "--fresh" => o.fresh = Some(number("--fresh")?),
            "--around" => o.around = Some(number("--around")?),
            "--check" => o.check = true,
            "--floors" => o.floors = true,
            "--snapshot" => o.snapshot = Some(args.next().ok_or("--snapshot needs a path")?),
            "--then" => o.then = Some(args.next().ok_or("--then needs a trace")?),
            _ if o.trace.is_empty() => o.trace = a,
            _ => return Err(format!("unexpected argument {a}")),
        }
    }
    if o.trace.is_empty() {
        return Err(
            "usage: glibc_replay TRACE [--show N] [--check] [--fresh THRESHOLD] [--around RECORD]"
                .into(),
        );
    }
    Ok(o)
}

#[derive(Default)]
struct Counts {
    records: u64,
    placed: u64,
    misplaced: u64,
    breaks_wrong: u64,
    untraced_frees: u64,
    other_arenas: u64,
}

fn main() {
    let o = options().unwrap_or_else(|e| {
        eprintln!("glibc_replay: {e}");
        std::process::exit(2)
    });
    let data = std::fs::read(&o.trace).unwrap_or_else(|e| {
        eprintln!("glibc_replay: {}: {e}", o.trace);
        std::process::exit(2)
    });
    let mib = |b: u64| b as f64 / 1048576.0;
    let mut sim = Malloc::new();
    let mut live: HashMap<u64, Ptr, BuildIdHasher> = HashMap::default();
    let mut base: Option<u64> = None;
    let mut started = false;
    let mut c = Counts::default();
    let mut shown = 0;
    let mut realloc_old: Option<Option<Ptr>> = None;
    let mut at_start = None;
    let mut at_end = None;
    // Where each heap chunk of the model came from: its record, the phase
    // (the last mark before it) and the request.
    let mut origin: HashMap<u64, (usize, u64, u64), BuildIdHasher> = HashMap::default();
    let mut phase = u64::MAX;
    let mut note = |what: String| {
        if shown < o.show {
            shown += 1;
            println!("{what}");
        }
    };
    for (i, record) in data.chunks_exact(32).enumerate() {
        let field = |k: usize| u64::from_le_bytes(record[k * 8..k * 8 + 8].try_into().unwrap());
        let (op, alignment, ptr, size, aux) =
            (field(0) & 0xFF, field(0) >> 8, field(1), field(2), field(3));
        c.records += 1;
        let Some(heap) = base else {
            if op == MARK {
                match o.fresh {
                    None => base = Some(aux),
                    Some(threshold) if size == LOAD_START => {
                        sim = Malloc::after_mapping(threshold);
                        sim.init_tcache();
                        started = true;
                        base = Some(aux);
                        at_start = Some(sim.resident_heap() + sim.mapped_bytes());
                    }
                    Some(_) => {}
                }
            }
            continue;
        };
        let offset = |p: u64| p.wrapping_sub(16).wrapping_sub(heap);
        match op {
            MALLOC | CALLOC | ALIGNED | REALLOC => {
                let old = realloc_old.take();
                if aux & NON_MAIN_ARENA != 0 {
                    c.other_arenas += 1;
                    continue;
                }
                if ptr == 0 {
                    // realloc(p, 0) freed p.
                    if let Some(Some(p)) = old {
                        sim.free(p);
                    }
                    continue;
                }
                if !started {
                    sim.init_tcache();
                    started = true;
                }
                let p = match (op, old) {
                    (REALLOC, Some(Some(old))) => sim.realloc(old, size),
                    (CALLOC, _) => sim.calloc(size),
                    (ALIGNED, _) => sim.memalign(alignment, size),
                    _ => sim.malloc(size),
                };
                live.insert(ptr, p);
                if !p.is_mapped() {
                    origin.insert(p.offset(), (i, phase, size));
                }
                let glibc_mapped = aux & IS_MAPPED != 0;
                if glibc_mapped == p.is_mapped() && (glibc_mapped || p.offset() == offset(ptr)) {
                    c.placed += 1;
                } else {
                    c.misplaced += 1;
                    let at = |mapped: bool, o: u64| {
                        if mapped {
                            "a mapping".to_string()
                        } else {
                            format!("+{o}")
                        }
                    };
                    note(format!(
                        "#{i}: op {op} of {size} bytes (chunk {}): glibc at {}, the model at {}",
                        aux & !7,
                        at(glibc_mapped, offset(ptr)),
                        at(p.is_mapped(), if p.is_mapped() { 0 } else { p.offset() })
                    ));
                }
            }
            FREE => {
                let known = live.remove(&ptr);
                if size == REALLOC_OLD {
                    realloc_old = Some(known);
                    continue;
                }
                if aux & NON_MAIN_ARENA != 0 {
                    continue;
                }
                if o.around.is_some_and(|at| at.abs_diff(i as u64) < 6) {
                    println!(
                        "#{i} free +{} chunk {}: before top {:?} mmap threshold {}",
                        offset(ptr),
                        aux & !7,
                        sim.top(),
                        sim.mmap_threshold()
                    );
                }
                match known {
                    Some(p) => sim.free(p),
                    None => c.untraced_frees += 1,
                }
                if size.wrapping_sub(heap) != sim.brk() {
                    c.breaks_wrong += 1;
                    note(
                        format!(
                            "#{i}: after a free of a {}-byte chunk the break is +{} in glibc, +{} in the model",
                            aux & !7,
                            size.wrapping_sub(heap),
                            sim.brk()
                        ),
                    );
                }
            }
            TRIM => {
                sim.trim(size);
                println!(
                    "#{i}: malloc_trim({size}): the break +{:.2} MiB in glibc, +{:.2} in the model",
                    mib(aux - heap),
                    mib(sim.brk())
                );
                if aux - heap != sim.brk() {
                    c.breaks_wrong += 1;
                }
            }
            MARK => {
                if aux - heap != sim.brk() {
                    c.breaks_wrong += 1;
                }
                let now = sim.resident_heap() + sim.mapped_bytes();
                if o.floors && base.is_some() {
                    for (at, chunk) in sim.highest_in_use(live.values().copied(), 3) {
                        let (record, made_in, request) =
                            origin.get(&at).copied().unwrap_or((0, u64::MAX, 0));
                        let freed = !live.values().any(|p| !p.is_mapped() && p.offset() == at);
                        println!(
                            "    in use at +{:.2} MiB: chunk {chunk} (request {request}, record #{record}, made after mark {}){}",
                            mib(at),
                            made_in as i64,
                            if freed { ", freed: in the tcache or a fast bin" } else { "" }
                        );
                    }
                }
                phase = size;
                if let (LOAD_START, Some(path)) = (size, &o.snapshot) {
                    if let Err(e) = std::fs::write(path, sim.snapshot()) {
                        eprintln!("glibc_replay: {path}: {e}");
                        std::process::exit(2)
                    }
                }
                if let (LOAD_START, Some(load)) = (size, &o.then) {
                    generated_load(&mut sim, load, now);
                    return;
                }
                match size {
                    LOAD_START => at_start = Some(now),
                    LOAD_END => at_end = Some(now),
                    _ => {}
                }
                println!(
                    "mark {size:>4} (#{i}): the break +{:8.2} MiB in glibc, +{:8.2} in the model; \
                     the model's resident heap {:8.2} MiB, mappings {:8.2}, mmap threshold {}, \
                     top chunk {} bytes",
                    mib(aux - heap),
                    mib(sim.brk()),
                    mib(sim.resident_heap()),
                    mib(sim.mapped_bytes()),
                    sim.mmap_threshold(),
                    sim.top().1
                );
            }
            _ => {}
        }
    }
    let resident = match (at_start, at_end) {
        (Some(a), Some(b)) => format!("{}", b as i64 - a as i64),
        _ => "null".into(),
    };
    println!(
        "{{\"records\": {}, \"placed\": {}, \"misplaced\": {}, \"breaks_wrong\": {}, \
         \"untraced_frees\": {}, \"other_arenas\": {}, \"resident\": {resident}}}",
        c.records, c.placed, c.misplaced, c.breaks_wrong, c.untraced_frees, c.other_arenas
    );
    if o.check && (c.misplaced > 0 || c.breaks_wrong > 0) {
        std::process::exit(1);
    }
}

/// The load of a generated trace, from its mark 0 on, replayed on `sim`;
/// prints the resident it leaves beyond `before` (the input, made before
/// the mark in both traces, is the traced process's).
fn generated_load(sim: &mut Malloc, path: &str, before: u64) {
    let data = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("glibc_replay: {path}: {e}");
        std::process::exit(2)
    });
    let mut live: HashMap<u64, Ptr, BuildIdHasher> = HashMap::default();
    let mut started = false;
    let mut realloc_old = None;
    for record in data.chunks_exact(32) {
        let field = |k: usize| u64::from_le_bytes(record[k * 8..k * 8 + 8].try_into().unwrap());
        let (op, ptr, size) = (field(0) & 0xFF, field(1), field(2));
        if !started {
            started = op == MARK && size == LOAD_START;
            continue;
        }
        match op {
            MALLOC => {
                let p = match realloc_old.take() {
                    Some(old) => sim.realloc(old, size),
                    None => sim.malloc(size),
                };
                live.insert(ptr, p);
            }
            REALLOC => {
                let old = realloc_old.take().expect("a realloc's old chunk first");
                live.insert(ptr, sim.realloc(old, size));
            }
            FREE if size == REALLOC_OLD => realloc_old = live.remove(&ptr),
            FREE => {
                if let Some(p) = live.remove(&ptr) {
                    sim.free(p);
                }
            }
            TRIM => sim.trim(size),
            _ => {}
        }
    }
    let now = sim.resident_heap() + sim.mapped_bytes();
    println!(
        "the generated load on the traced heap: resident {:.2} MiB, the break +{:.2} MiB",
        (now as f64 - before as f64) / 1048576.0,
        sim.brk() as f64 / 1048576.0
    );
}
