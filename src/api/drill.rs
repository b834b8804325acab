//! The analyses that look at every entity: each reads its input once with
//! its observer riding on the pass, and returns the report it read with
//! what it found.

use anyhow::Result;

use super::load::{each, observed};
use super::{Input, KindFilter, Options};
use crate::advise::{Advisors, LayerAdvice};
use crate::drill::explain::{Explainer, Explanation};
use crate::drill::stats::{Stats as KindStats, StatsCollector};
use crate::drill::top::{Top as Largest, TopEntity};
use crate::report::files::FileRun;
use crate::report::{Profile, Report};

/// The largest entities of one input (`top`).
#[derive(Debug)]
pub struct Top {
    pub report: Report,
    pub kind: KindFilter,
    pub n: usize,
    /// Largest first.
    pub entities: Vec<TopEntity>,
}

impl Top {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.report)
    }
}

/// The `n` largest entities of the kinds `kind` admits.
pub fn top(input: &Input, options: &Options, n: usize, kind: KindFilter) -> Result<Top> {
    let mut largest = Largest::new(n, kind);
    let report = observed(
        input,
        &plain(options),
        &mut largest,
        options.threads,
        !options.progress,
    )?;
    Ok(Top {
        report,
        kind,
        n,
        entities: largest.into_sorted(),
    })
}

/// Size distributions per entity kind and per family (`stats`).
#[derive(Debug)]
pub struct Stats {
    pub report: Report,
    pub kinds: Vec<KindStats>,
    pub families: Vec<KindStats>,
}

impl Stats {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.report)
    }
}

/// The distributions of the entities `kind` admits.
pub fn stats(input: &Input, options: &Options, kind: KindFilter) -> Result<Stats> {
    if kind == KindFilter::Only(crate::model::EntityKind::Objective) {
        anyhow::bail!("stats describes kinds of many entities; `memprof top --kind objective` shows the objective");
    }
    let mut collector = StatsCollector::new(kind);
    let report = observed(
        input,
        &plain(options),
        &mut collector,
        options.threads,
        !options.progress,
    )?;
    let (kinds, families) = collector.report();
    Ok(Stats {
        report,
        kinds,
        families,
    })
}

/// How paths' bytes were computed (`explain`).
#[derive(Debug)]
pub struct Explained {
    pub report: Report,
    pub explanations: Vec<Explanation>,
}

impl Explained {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.report)
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
    let explaining = Options {
        wire: false,
        ..options.clone()
    };
    let report = observed(
        input,
        &explaining,
        &mut explainer,
        options.threads,
        !options.progress,
    )?;
    let explanations = explainer.checked_explanations(&Profile::new(&report), &input.label())?;
    Ok(Explained {
        report,
        explanations,
    })
}

/// Recommendations for one input, with their measured savings (`advise`).
#[derive(Debug)]
pub struct Advice {
    pub report: Report,
    /// One per instance layer.
    pub layers: Vec<LayerAdvice>,
}

impl Advice {
    pub fn profile(&self) -> Profile<'_> {
        Profile::new(&self.report)
    }
}

/// The advice for each input, in argument order (several read at once).
pub fn advise(inputs: &[Input], options: &Options) -> Result<Vec<FileRun<Advice>>> {
    each(inputs, options, |input, threads, quiet| {
        let mut advisors = Advisors::default();
        let report = observed(input, &plain(options), &mut advisors, threads, quiet)?;
        let layers = advisors.advise(&report);
        Ok(Advice { report, layers })
    })
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
