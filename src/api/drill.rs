//! The analyses that look at every entity: each reads its input once with
//! its observer riding on the pass, and returns the report it read with
//! what it found.

use anyhow::Result;

use super::load::{compared, each, observed};
use super::{Effort, Input, KindFilter, Options};
use crate::advise::{Advisors, LayerAdvice, Migration};
use crate::drill::explain::{Explainer, Explanation};
use crate::drill::stats::{StatsCollector, StatsLine};
use crate::drill::top::{Largest, TopEntity};
use crate::profiled::files::FileRun;
use crate::profiled::{Accounting, Compared, Profile, ProfiledInput, ProfiledInstance};

/// The largest entities of one input (`top`).
#[derive(Debug)]
pub struct Top {
    pub profiled: ProfiledInput,
    pub kind: KindFilter,
    pub n: usize,
    /// Largest first.
    pub entities: Vec<TopEntity>,
    /// Entities left out with the bytes of the last one listed: ties that
    /// the ranking's order (by id, then kind) decided at the cut.
    pub ties_left_out: u64,
}

impl Top {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.profiled)
    }
}

/// The `n` largest entities of the kinds `kind` admits.
pub fn top(input: &Input, options: &Options, n: usize, kind: KindFilter) -> Result<Top> {
    let mut largest = Largest::new(n, kind);
    let profiled = observed(
        input,
        &plain(options),
        &mut largest,
        options.threads,
        !options.progress,
    )?;
    Ok(Top {
        profiled,
        kind,
        n,
        ties_left_out: largest.ties_left_out(),
        entities: largest.into_sorted(),
    })
}

/// Size distributions per entity kind and per family (`stats`).
#[derive(Debug)]
pub struct Stats {
    pub profiled: ProfiledInput,
    pub kinds: Vec<StatsLine>,
    pub families: Vec<StatsLine>,
}

impl Stats {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.profiled)
    }
}

/// The distributions of the entities `kind` admits.
pub fn stats(input: &Input, options: &Options, kind: KindFilter) -> Result<Stats> {
    if kind == KindFilter::Only(crate::model::EntityKind::Objective) {
        anyhow::bail!("stats describes kinds of many entities; `memprof top --kind objective` shows the objective");
    }
    let mut collector = StatsCollector::new(kind);
    let profiled = observed(
        input,
        &plain(options),
        &mut collector,
        options.threads,
        !options.progress,
    )?;
    let (kinds, families) = collector.report();
    Ok(Stats {
        profiled,
        kinds,
        families,
    })
}

/// How paths' bytes were computed (`explain`).
#[derive(Debug)]
pub struct Explained {
    pub profiled: ProfiledInput,
    pub explanations: Vec<Explanation>,
}

impl Explained {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.profiled)
    }
}

/// Explains each of `paths` (frames joined by `;`, as folded output prints
/// them; `total` is the root) of the profile made with `options.group_by`,
/// each checked against the profile.
pub fn explain(input: &Input, options: &Options, paths: &[String]) -> Result<Explained> {
    let paths: Vec<String> = paths.iter().map(|p| p.trim().to_string()).collect();
    if paths.is_empty() {
        anyhow::bail!("explain needs at least one path");
    }
    let mut explainer = Explainer::new(&paths, options.group_by);
    // An explanation shows no real memory: the closed form is enough.
    let explaining = Options {
        wire: false,
        real_memory: Effort::ClosedForm,
        ..options.clone()
    };
    let profiled = observed(
        input,
        &explaining,
        &mut explainer,
        options.threads,
        !options.progress,
    )?;
    let explanations = explainer.checked_explanations(&Profile::new(&profiled), &input.label())?;
    Ok(Explained {
        profiled,
        explanations,
    })
}

/// Recommendations for one input, with their measured savings (`advise`).
#[derive(Debug)]
pub struct Advice {
    pub profiled: ProfiledInput,
    /// One per instance layer.
    pub layers: Vec<LayerAdvice>,
}

impl Advice {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.profiled)
    }
}

/// The advice for each input, in argument order (several read at once).
pub fn advise(inputs: &[Input], options: &Options) -> Result<Vec<FileRun<Advice>>> {
    each(inputs, options, |input, threads, quiet| {
        let mut advisors = Advisors::default();
        // Advice shows no real memory: the closed form is enough.
        let advising = Options {
            real_memory: Effort::ClosedForm,
            ..plain(options)
        };
        let mut profiled = compared(input, &advising, &mut advisors, threads, quiet)?;
        let migrations = migrations(&mut profiled);
        let layers = advisors.advise(&profiled, migrations);
        Ok(Advice { profiled, layers })
    })
}

/// What OMMX 3.0 makes of each instance of `report`, for advise's
/// `ommx-3-layout`: the comparison its pass made of each v1 instance counted
/// under 2.9.3's accounting (taken out of the report, which keeps 2.9.3's).
pub(super) fn migrations(profiled: &mut ProfiledInput) -> Vec<Migration> {
    let migration = |i: &mut ProfiledInstance| match (
        i.accounting,
        std::mem::take(&mut i.compared).into_iter().next(),
    ) {
        (Accounting::Ommx30, _) => Migration::None,
        (Accounting::Ommx29, Some(Compared::Measured(instance))) => {
            Migration::Measured { instance }
        }
        (Accounting::Ommx29, Some(Compared::Refused(why))) => Migration::Refused(why),
        (Accounting::Ommx29, None) => {
            Migration::Refused("OMMX 3.0.0b7 read no such instance layer".into())
        }
    };
    profiled.instances.iter_mut().map(migration).collect()
}

/// The options of an analysis of entities: OMMX's logical profile without
/// family frames or the wire view, which the analyses do not read (they see
/// the entities, and group as they need).
fn plain(options: &Options) -> Options {
    Options {
        group_by: Default::default(),
        wire: false,
        ..options.clone()
    }
}
