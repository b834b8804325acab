//! The real memory of an instance: an estimate of what a Python process
//! loading it with OMMX holds afterwards (resident) and at most while loading
//! (load peak), beyond the interpreter. OMMX's logical profile counts `len`;
//! this counts what the allocations really are: vector and hash-table
//! capacities as they grow, `BTreeMap` nodes, glibc's chunks and mappings,
//! the transient messages of the load, the Python `bytes`.
//!
//! It is derived from how OMMX allocates (`ommx29`: ommx 2.9.3's source,
//! its debug information and allocation traces) and calibrated only where
//! that cannot say (upb's arena, the heap's fragmentation). For 2.9.3 the
//! resident and the load peak are, where the instance's shape allows,
//! OMMX's load made call by call (`load29`) and run through a model of
//! glibc's malloc (the workspace's `glibc-model` crate) rather than that
//! closed form; for 3.0.0b7 they are its load made the same way (`load30`,
//! a recipe on `load29`'s parts). Their
//! measured error is in `docs/real-memory.md`, against
//! `bench/real_memory.json`.
//!
//! An analysis over the pass's products, not part of the pass: `api` runs
//! it on each instance once the pass is done ([`estimate_each`]), from the
//! profile, the summary and what the pass gathered
//! ([`crate::profiled::Gathered`]). What it knows of OMMX's containers
//! (hashbrown, `Vec`, `BTreeMap`) is the model's (`model::alloc`,
//! `model::table_order`).

pub mod facts;
#[cfg(test)]
mod fixtures;
pub mod load29;
pub mod load30;
mod mem;
mod ommx29;
mod ommx30;

use crate::model::alloc;
use crate::profile::Aggregate;
use crate::profiled::real::{Held, RealMemory, Runtime};
use crate::profiled::{Accounting, Gathered, InstanceSummary, ProfiledInstance, Schema};

pub use facts::Facts;
use mem::Mem;

/// Resident and load-peak bytes, and the resident's part the instance's
/// own allocations take, by owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub resident: u64,
    pub load_peak: u64,
    pub held: Held,
}

/// One moment of a load: what is live at a phase's largest point, and
/// whether the heap it grows stays grown. A phase whose last allocation is
/// still on the heap when it ends pins what it grew; otherwise, once freed,
/// what it grew the heap by is given back when that reaches glibc's trim
/// threshold.
#[derive(Debug, Clone, Copy)]
struct Moment {
    live: Mem,
    pinned: bool,
}

/// The estimate from the moments of a load, in order, and what stays
/// (`held`): the heap grows to the largest moment's heap and keeps it (freed
/// chunks are reused, not given back) unless an unpinned moment's growth
/// reaches `trim`; `fragmentation_percent` more for the holes between live
/// chunks; mapped allocations come and go. The input `bytes` (mapped) is
/// there throughout the load and freed after.
fn settle(
    moments: &[Moment],
    held: Mem,
    by_owner: Held,
    input: u64,
    trim: u64,
    fragmentation_percent: u64,
) -> Estimate {
    let scaled = |heap: u64| heap + heap * fragmentation_percent / 100;
    let (mut extent, mut kept, mut peak) = (0, 0, 0);
    for moment in moments {
        extent = extent.max(moment.live.heap);
        peak = peak.max(scaled(extent) + moment.live.mapped);
        if moment.pinned || extent - kept < trim {
            kept = extent;
        } else {
            // Given back: the heap is as it was, for the moments after too.
            extent = kept;
        }
    }
    let resident = scaled(kept.max(held.heap)) + held.mapped;
    Estimate {
        resident,
        load_peak: input + peak.max(resident),
        held: by_owner,
    }
}

/// How much work the estimate may do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Effort {
    /// The resident and the load peak, for OMMX 2.9.3 and 3.0.0b7 alike,
    /// from the runtime's load simulated call by call through the model of
    /// glibc malloc (its recipe: `load29`, `load30`), where the recipe
    /// makes the instance's shape in at most [`SIMULATION_BUDGET`] calls;
    /// the closed form elsewhere.
    #[default]
    Simulate,
    /// The closed form only (for outputs that do not show the estimate).
    ClosedForm,
}

/// The most malloc calls a simulated load may make (half a second on one
/// core at most: a metadata-heavy instance of 100,000 variables predicts
/// 5.6 million and takes 0.46 s; `docs/real-memory.md`). Larger loads get
/// the closed form, which is closest on the largest instances.
pub const SIMULATION_BUDGET: u64 = 6_000_000;

/// The estimate from the facts: the closed form, its resident and load
/// peak replaced by the simulated load's where `effort` and the budget
/// allow.
pub fn estimate(facts: &Facts, accounting: Accounting, effort: Effort) -> Estimate {
    let closed = match accounting {
        Accounting::Ommx29 => ommx29::estimate(facts),
        Accounting::Ommx30 => ommx30::estimate(facts),
    };
    if effort == Effort::ClosedForm {
        return closed;
    }
    let simulated = match accounting {
        // A load that fits in the interpreter's free chunks grows nothing;
        // the input `bytes` is still held beside what it keeps (the closed
        // form's floor too).
        Accounting::Ommx29 => load29::simulate(facts, SIMULATION_BUDGET).map(|s| {
            let input = alloc::mapped(facts.payload);
            (s.resident, s.load_peak.max(input + s.resident))
        }),
        Accounting::Ommx30 => {
            load30::simulate(facts, SIMULATION_BUDGET).map(|s| (s.resident, s.load_peak))
        }
    };
    match simulated {
        Some((resident, load_peak)) => Estimate {
            resident,
            load_peak: load_peak.max(resident),
            held: closed.held.within(resident),
        },
        None => closed,
    }
}

/// Estimates the real memory of every instance the pass read (those with
/// what it gathered; a profile read back from JSON keeps the estimate it
/// was saved with), for the runtime whose accounting each follows.
pub fn estimate_each(instances: &mut [ProfiledInstance], effort: Effort) {
    for instance in instances {
        if let Some(gathered) = &instance.gathered {
            instance.real_memory = Some(real_memory(
                &instance.aggregate,
                &instance.summary,
                gathered,
                (instance.schema, instance.accounting),
                effort,
            ));
        }
    }
}

/// The estimate for the runtime whose accounting the profile follows, of a
/// payload of `schema`.
pub fn real_memory(
    aggregate: &Aggregate,
    summary: &InstanceSummary,
    gathered: &Gathered,
    (schema, accounting): (Schema, Accounting),
    effort: Effort,
) -> RealMemory {
    let facts = Facts {
        schema,
        ..Facts::of(aggregate, summary, gathered)
    };
    let runtime = match accounting {
        Accounting::Ommx29 => Runtime::Ommx29Python,
        Accounting::Ommx30 => Runtime::Ommx30Python,
    };
    let estimate = estimate(&facts, accounting, effort);
    RealMemory {
        runtime,
        resident_bytes: estimate.resident,
        load_peak_bytes: estimate.load_peak,
        held_bytes: estimate.held,
        first_load_extra_bytes: first_load_extra(runtime),
    }
}

/// What a fresh process's first load holds beyond a later load's resident,
/// for `runtime`: measured, not derived (`bench/real_memory.py first-loads`
/// writes `first_load.json`: the median, over small instances and fresh
/// processes, of a first load's resident less a second's of the same
/// instance; the runtime's own set-up, the same whatever is loaded).
pub fn first_load_extra(runtime: Runtime) -> u64 {
    static MEASURED: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    let measured = MEASURED.get_or_init(|| {
        serde_json::from_str(include_str!("first_load.json"))
            .expect("first_load.json, as committed")
    });
    let name = match runtime {
        Runtime::Ommx29Python => "ommx 2.9.3",
        Runtime::Ommx30Python => "ommx 3.0.0b7",
    };
    measured[name]["first_load_extra_bytes"]
        .as_u64()
        .expect("a first load's extra for each runtime")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixtures::lp_10k;

    /// A load small enough to fit in the interpreter's free chunks takes
    /// no new pages; the part of the resident the instance is said to hold
    /// is then no more than that resident.
    #[test]
    fn the_instances_part_is_within_the_resident() {
        let f = Facts {
            variables: 3,
            functions: vec![facts::Functions {
                variant: crate::model::function::Variant::Linear,
                owner: facts::Owner::Objective,
                count: 1,
                terms: 3,
            }],
            payload: 123,
            ..Facts::default()
        };
        let closed = estimate(&f, Accounting::Ommx29, Effort::ClosedForm);
        let chosen = estimate(&f, Accounting::Ommx29, Effort::Simulate);
        assert!(
            closed.held.total() > chosen.resident,
            "{closed:?} {chosen:?}"
        );
        assert!(chosen.held.total() <= chosen.resident);
    }

    #[test]
    fn both_figures_are_the_simulated_loads_where_the_budget_allows() {
        let f = lp_10k();
        let closed = estimate(&f, Accounting::Ommx29, Effort::ClosedForm);
        let simulated = load29::simulate(&f, SIMULATION_BUDGET).expect("lp-10k is made");
        let chosen = estimate(&f, Accounting::Ommx29, Effort::Simulate);
        assert_ne!(closed.resident, simulated.resident);
        assert_eq!(chosen.resident, simulated.resident);
        // At least the input with what the load keeps, held until the input
        // is freed.
        let input = alloc::mapped(f.payload);
        assert_eq!(
            chosen.load_peak,
            simulated.load_peak.max(input + simulated.resident)
        );
        assert!(chosen.load_peak >= chosen.resident + input);
        assert_eq!(chosen.held, closed.held);
    }

    /// Under 3.0's accounting the resident and the load peak are the
    /// simulated load's, where its recipe makes the shape (of v1 input or
    /// v2); the closed form's elsewhere (v2 input with removed
    /// constraints).
    #[test]
    fn under_ommx30_both_figures_are_the_simulated_loads() {
        let mut f = lp_10k();
        f.label_maps = vec![
            facts::Group {
                count: 1,
                size: 10_000,
                owner: facts::Owner::Variables,
                field: facts::Field::Other,
            };
            2
        ];
        let simulated = load30::simulate(&f, SIMULATION_BUDGET).expect("lp-10k is made");
        let chosen = estimate(&f, Accounting::Ommx30, Effort::Simulate);
        assert_eq!(chosen.resident, simulated.resident);
        assert_eq!(chosen.load_peak, simulated.load_peak);
        assert!(chosen.held.total() <= chosen.resident);
        f.schema = Schema::V2;
        let simulated = load30::simulate(&f, SIMULATION_BUDGET).expect("lp-10k is made");
        let chosen = estimate(&f, Accounting::Ommx30, Effort::Simulate);
        assert_eq!(chosen.resident, simulated.resident);
        assert_eq!(chosen.load_peak, simulated.load_peak);
        f.removed = 1;
        assert_eq!(
            estimate(&f, Accounting::Ommx30, Effort::Simulate),
            estimate(&f, Accounting::Ommx30, Effort::ClosedForm)
        );
    }

    /// The figure each runtime's first load adds is the one the bench
    /// measured and wrote down.
    #[test]
    fn a_first_loads_extra_is_the_measured_one() {
        let written: serde_json::Value =
            serde_json::from_str(include_str!("first_load.json")).unwrap();
        for (runtime, name) in [
            (Runtime::Ommx29Python, "ommx 2.9.3"),
            (Runtime::Ommx30Python, "ommx 3.0.0b7"),
        ] {
            let extra = first_load_extra(runtime);
            assert_eq!(written[name]["first_load_extra_bytes"], extra);
            assert!(extra > 0 && extra < 64 << 20, "{name}: {extra}");
        }
    }

    #[test]
    fn a_load_over_the_budget_gets_the_closed_form() {
        // lp-10k scaled by 100: about 18 million calls.
        let mut f = lp_10k();
        f.variables *= 100;
        f.constraints *= 100;
        for g in &mut f.functions {
            g.count *= 100;
            g.terms *= 100;
        }
        for g in f.strings.iter_mut().chain(f.subscripts.iter_mut()) {
            g.count *= 100;
            g.size *= 100;
        }
        f.payload *= 100;
        let calls = load29::predicted_calls(&f).expect("an LP is made");
        assert!(calls > SIMULATION_BUDGET, "{calls}");
        assert_eq!(
            estimate(&f, Accounting::Ommx29, Effort::Simulate),
            estimate(&f, Accounting::Ommx29, Effort::ClosedForm)
        );
    }
}
