//! The analyses that look at every entity: each reads its input once with
//! its observer riding on the pass, and returns the report it read with
//! what it found.

use std::collections::HashMap;

use anyhow::Result;

use super::load::{each, observed};
use super::{Effort, Input, KindFilter, Options};
use crate::advise::{Advisors, LayerAdvice, Migration};
use crate::drill::explain::{Explainer, Explanation};
use crate::drill::stats::{StatsCollector, StatsLine};
use crate::drill::top::{Largest, TopEntity};
use crate::report::files::FileRun;
use crate::report::{Accounting, Profile, Report};

/// The largest entities of one input (`top`).
#[derive(Debug)]
pub struct Top {
    pub report: Report,
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
        ties_left_out: largest.ties_left_out(),
        entities: largest.into_sorted(),
    })
}

/// Size distributions per entity kind and per family (`stats`).
#[derive(Debug)]
pub struct Stats {
    pub report: Report,
    pub kinds: Vec<StatsLine>,
    pub families: Vec<StatsLine>,
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
    // An explanation shows no real memory: the closed form is enough.
    let explaining = Options {
        wire: false,
        real_memory: Effort::ClosedForm,
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
        // Advice shows no real memory: the closed form is enough.
        let advising = Options {
            real_memory: Effort::ClosedForm,
            ..plain(options)
        };
        let report = observed(input, &advising, &mut advisors, threads, quiet)?;
        let migrations = migrations(input, options, &report, &advisors, threads);
        let layers = advisors.advise(&report, migrations);
        Ok(Advice { report, layers })
    })
}

/// The most instance layers read one at a time when OMMX 3.0 refuses one
/// of them.
const ALONE: usize = 16;

/// What OMMX 3.0 makes of each instance of `report`, for advise's
/// `ommx-3-layout`: the input read again with 3.0's accounting, as
/// `--accounting 3.0` (and the migration view) reads it. When 3.0 refuses
/// one instance of several (up to [`ALONE`]), each is read alone, for its
/// own verdict.
pub(super) fn migrations(
    input: &Input,
    options: &Options,
    report: &Report,
    advisors: &Advisors,
    threads: Option<usize>,
) -> Vec<Migration> {
    let compared = |i: &crate::report::ProfiledInstance| i.accounting == Accounting::Ommx29;
    if !report.instances.iter().any(compared) {
        return report.instances.iter().map(|_| Migration::None).collect();
    }
    if !input.rereadable() {
        let why = "a stream is read once, and the comparison with OMMX 3.0 reads the input \
                   again: give a file";
        return report
            .instances
            .iter()
            .map(|i| match compared(i) {
                true => Migration::Unread(why),
                false => Migration::None,
            })
            .collect();
    }
    let reading = |layer: Option<usize>| Options {
        accounting: Some(Accounting::Ommx30),
        layer: layer.or(options.layer),
        progress: false,
        ..plain(options)
    };
    let mut costs = advisors.entity_costs();
    let mut read = |layer| observed(input, &reading(layer), &mut costs, threads, true);
    let why = |e: anyhow::Error| Migration::Refused(e.root_cause().to_string());
    let mut read_ok: Vec<crate::report::ProfiledInstance> = Vec::new();
    let mut refused: HashMap<Option<usize>, Migration> = HashMap::new();
    match read(None) {
        Ok(v3) => read_ok.extend(v3.instances),
        Err(e) if report.instances.len() == 1 => {
            refused.insert(report.instances[0].instance_index, why(e));
        }
        // Reading each layer alone reads the archive again each time.
        Err(e) if report.instances.len() > ALONE => {
            let why = format!(
                "{} (OMMX 3.0.0b7 refuses one of this archive's {} instance layers, so none \
                 was compared; `--layer N` compares one)",
                e.root_cause(),
                report.instances.len()
            );
            for i in report.instances.iter().filter(|i| compared(i)) {
                refused.insert(i.instance_index, Migration::Refused(why.clone()));
            }
        }
        Err(_) => {
            for i in report.instances.iter().filter(|i| compared(i)) {
                match read(i.instance_index) {
                    Ok(v3) => read_ok.extend(v3.instances),
                    Err(e) => {
                        refused.insert(i.instance_index, why(e));
                    }
                }
            }
        }
    }
    let mut outcome = refused;
    for instance in read_ok {
        let index = instance.instance_index;
        let measured = Migration::Measured {
            costs: costs.found(instance.observed_as),
            instance: Box::new(instance),
        };
        outcome.insert(index, measured);
    }
    report
        .instances
        .iter()
        .map(|i| match compared(i) {
            false => Migration::None,
            true => outcome.remove(&i.instance_index).unwrap_or_else(|| {
                Migration::Refused("OMMX 3.0.0b7 read no such instance layer".into())
            }),
        })
        .collect()
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
