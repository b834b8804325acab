//! What the report page shows of an input (`report`): its profile, the wire
//! view included, and what the analyses that look at every entity found,
//! all riding on the one pass that reads it; and, for a comparison, the old
//! side, loaded as `diff` loads it.

use anyhow::{bail, Result};

use super::load::{compared, load};
use super::{Input, KindFilter, Options};
use crate::advise::{Advisors, LayerAdvice};
use crate::drill::stats::{StatsCollector, StatsLine};
use crate::drill::top::{Largest, TopEntity};
use crate::pass::Observers;
use crate::profiled::{Account, Loaded};

/// One input, and what the page's analyses found in it.
#[derive(Debug)]
pub struct Reported {
    /// The input (a comparison's new side), its wire view collected.
    pub loaded: Loaded,
    /// A comparison's old side: an instance or a baseline, in logical bytes.
    pub old: Option<Loaded>,
    /// What the analyses found; `None` for a saved baseline, which holds
    /// no entities to analyse.
    pub found: Option<Findings>,
}

/// What the analyses riding on the pass found.
#[derive(Debug)]
pub struct Findings {
    /// How many of the largest entities were asked for, and those found,
    /// largest first.
    pub n: usize,
    pub top: Vec<TopEntity>,
    /// Distributions per kind and per family (as `stats` gives them).
    pub kinds: Vec<StatsLine>,
    pub families: Vec<StatsLine>,
    /// One per instance layer.
    pub advice: Vec<LayerAdvice>,
}

/// Reads `input` once with the `n` largest entities, the distributions and
/// the advice riding on its pass, and `old` (when given) for comparison.
pub fn report(input: &Input, old: Option<&Input>, options: &Options, n: usize) -> Result<Reported> {
    if matches!((old, input), (Some(Input::Stdin), Input::Stdin)) {
        bail!("-: standard input can be read only once");
    }
    let old = match old {
        None => None,
        // The old side is compared in logical bytes, the one view a
        // baseline holds.
        Some(old) => Some(load(
            old,
            &Options {
                wire: false,
                ..options.clone()
            },
        )?),
    };
    let (loaded, found) = analysed(input, options, n)?;
    Ok(Reported {
        loaded,
        old,
        found: Some(found),
    })
}

/// [`report`] of a profile already loaded (a notebook's, from `input` with
/// `options`), compared with `old` when given, another one: an instance is
/// read again with the page's analyses riding on its pass; a saved
/// baseline is shown as it is, without them.
pub fn report_loaded(
    subject: &Loaded,
    input: &Input,
    old: Option<&Loaded>,
    options: &Options,
    n: usize,
) -> Result<Reported> {
    let (loaded, found) = match subject.baseline {
        Some(_) => (subject.clone(), None),
        None => {
            let (loaded, found) = analysed(input, options, n)?;
            (loaded, Some(found))
        }
    };
    Ok(Reported {
        loaded,
        old: old.cloned(),
        found,
    })
}

/// One pass over `input`, its wire view collected, with the page's
/// analyses riding on it.
fn analysed(input: &Input, options: &Options, n: usize) -> Result<(Loaded, Findings)> {
    let mut largest = Largest::new(n, KindFilter::All);
    let mut stats = StatsCollector::new(KindFilter::All);
    let mut advisors = Advisors::default();
    let reading = Options {
        wire: true,
        ..options.clone()
    };
    let mut profiled = compared(
        input,
        &reading,
        &mut Observers(vec![&mut largest, &mut stats, &mut advisors]),
        options.threads,
        !options.progress,
    )?;
    let migrations = super::drill::migrations(&mut profiled);
    let advice = advisors.advise(&profiled, migrations);
    let (kinds, families) = stats.report();
    let loaded = Loaded {
        profiled,
        account: Account::Memory,
        baseline: None,
    };
    let found = Findings {
        n,
        top: largest.into_sorted(),
        kinds,
        families,
        advice,
    };
    Ok((loaded, found))
}
