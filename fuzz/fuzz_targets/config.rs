//! The files `diff` and `check` read besides instances: baseline JSON and
//! budget YAML, and the budget's rules applied to the baseline.
//!
//! An input is a budget and a baseline separated by the first NUL byte;
//! without one, the whole input is tried as each. Whatever parses must
//! hold together:
//! - a baseline rendered back to JSON reads back to the same profile;
//! - every rule of a budget is evaluated against the baseline, both alone
//!   and compared with itself (no growth anywhere), and a rule's verdict
//!   on a path agrees with its limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memprof::check::budget::Budget;
use memprof::check::{evaluate, LimitKind};
use memprof::input::baseline;
use memprof::input::Selection;
use memprof::diff::Diff;
use memprof::profile::Aggregate;
use memprof::render::{self, Account, Format, Profile, ProfileView, ViewOptions};

fuzz_target!(|data: &[u8]| {
    let (budget, baseline) = match data.iter().position(|&b| b == 0) {
        Some(split) => (&data[..split], &data[split + 1..]),
        None => (data, data),
    };
    let budget = std::str::from_utf8(budget).ok().and_then(|t| Budget::parse(t).ok());
    let Ok((profiled, _)) = baseline::parse(baseline, "fuzz".into(), Selection::All) else {
        return;
    };
    let profile = Profile::of(&profiled, Account::Memory);

    // Round trip: what memprof writes, memprof reads back unchanged.
    let mut rendered = Vec::new();
    render::write(&ProfileView::new(&profile, ViewOptions::default()), Format::Json, &mut rendered)
        .expect("rendering to memory");
    let (again, _) = baseline::parse(&rendered, "fuzz".into(), Selection::All)
        .unwrap_or_else(|e| panic!("a rendered baseline is refused: {e}"));
    let again = Profile::of(&again, Account::Memory);
    assert_eq!(profile.aggregate.folded_lines(), again.aggregate.folded_lines());

    let Some(budget) = budget else { return };
    let rules: Vec<_> = (1..).zip(budget.rules).collect();
    let summary = profile.summary();
    let itself = Diff::of(&profile, &profile);
    let (results, _) = evaluate(&itself, true, &summary, &rules);
    for result in &results {
        // Nothing grew, so no growth limit can fail.
        if result.limit == LimitKind::MaxGrowth {
            assert!(result.pass, "zero growth failed {}", result.limit_text);
        }
        for failure in &result.failures {
            assert_eq!(failure.old_bytes, Some(failure.new_bytes));
        }
    }
    let empty = Aggregate::new();
    let alone = Diff::new(&empty, &profile.aggregate);
    evaluate(&alone, false, &summary, &rules);
});
