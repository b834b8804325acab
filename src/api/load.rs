//! Reading inputs into profiles: one input or several (in parallel, in
//! argument order), instances or the other kinds a call takes.

use anyhow::{bail, Result};

use super::batch::run_all;
use super::{Input, Options};
use crate::input::folded::FoldedLine;
use crate::input::sniff::{self, Accept, Content, Job};
use crate::input::{InputInfo, Selection};
use crate::pass::{EntityObserver, Pass};
use crate::profile::family::GroupBy;
use crate::profiled::files::{FileRun, FileSummary};
use crate::profiled::{Account, Loaded, Profile, ProfiledInput};

/// Reads one input with `observer` riding on the pass.
pub(super) fn read_one(
    input: &Input,
    options: &Options,
    accept: Accept,
    observer: &mut dyn EntityObserver,
    threads: Option<usize>,
    quiet: bool,
) -> Result<Content> {
    let pass = options.pass(observer, threads);
    read_with_pass(input, options, accept, pass, quiet)
}

/// [`read_one`] with the pass made.
pub(super) fn read_with_pass(
    input: &Input,
    options: &Options,
    accept: Accept,
    mut pass: Pass<'_>,
    quiet: bool,
) -> Result<Content> {
    let mut job = Job {
        selection: options.selection(),
        limits: options.limits,
        pass: &mut pass,
        quiet,
    };
    let input = super::resolve::resolve(input, options)?;
    let mut content = sniff::read(&input, accept, &mut job)?;
    if let Content::Instance(profiled) | Content::Baseline(profiled, _) = &mut content {
        let _span = crate::trace::span(crate::trace::Phase::Estimate);
        crate::real_memory::estimate_each(&mut profiled.instances, options.real_memory);
    }
    Ok(content)
}

/// The instances of one input, read with `observer` riding on the pass.
pub(super) fn observed(
    input: &Input,
    options: &Options,
    observer: &mut dyn EntityObserver,
    threads: Option<usize>,
    quiet: bool,
) -> Result<ProfiledInput> {
    instances(input, options, options.pass(observer, threads), quiet)
}

/// [`observed`], each v1 instance counted under OMMX 2.9.3's accounting
/// compared with 3.0's in the same pass (`ProfiledInstance::compared`): the
/// input is read once, a stream included.
pub(super) fn compared(
    input: &Input,
    options: &Options,
    observer: &mut dyn EntityObserver,
    threads: Option<usize>,
    quiet: bool,
) -> Result<ProfiledInput> {
    let mut pass = options.pass(observer, threads);
    // Advise reads 3.0's top-level totals only: no family frames.
    pass.reading.compare = Some(GroupBy::None);
    instances(input, options, pass, quiet)
}

/// The instances `pass` reads of one input (only instances accepted).
fn instances(
    input: &Input,
    options: &Options,
    pass: Pass<'_>,
    quiet: bool,
) -> Result<ProfiledInput> {
    match read_with_pass(input, options, Accept::default(), pass, quiet)? {
        Content::Instance(profiled) => Ok(profiled),
        other => unreachable!("only instances were accepted, not {other:?}"),
    }
}

/// Runs `work` on every input, several at once (each with its share of the
/// cores), under one bar counting the inputs when there are several; each
/// input's own bar only when it is alone (bars would fight).
pub(super) fn each<T: Send>(
    inputs: &[Input],
    options: &Options,
    work: impl Fn(&Input, Option<usize>, bool) -> Result<T> + Sync,
) -> Result<Vec<FileRun<T>>> {
    let several = inputs.len() > 1;
    let quiet = !options.progress;
    let progress = crate::progress::files(quiet || !several, inputs.len());
    let runs = run_all(inputs, Input::label, |input, threads| {
        let value = work(input, threads, quiet || several)?;
        progress.set_message(input.label());
        progress.inc(1);
        Ok(value)
    });
    progress.finish_and_clear();
    runs
}

/// The profile of one or several inputs, as `inspect` shows it.
#[derive(Debug)]
pub struct Profiled {
    runs: Vec<FileRun<ProfiledInput>>,
    /// Every instance of every input, when there are several: what the
    /// combined profile's summary counts.
    combined: Option<ProfiledInput>,
}

impl Profiled {
    fn new(runs: Vec<FileRun<ProfiledInput>>) -> Self {
        let combined = (runs.len() > 1).then(|| ProfiledInput {
            input: InputInfo {
                name: format!("{} files", runs.len()),
                file_bytes: runs.iter().map(|r| r.value.input.file_bytes).sum(),
                container: runs[0].value.input.container,
                gzip: false,
                layers: Vec::new(),
                raw_schema: None,
                registry: None,
            },
            instances: runs
                .iter()
                .flat_map(|r| r.value.instances.iter().cloned())
                .collect(),
        });
        Self { runs, combined }
    }

    /// The profile in `account`: one input's alone, several each under a
    /// root frame `file[i] (name)`.
    pub fn profile(&self, account: Account) -> Profile<'_> {
        match (&self.runs[..], &self.combined) {
            ([one], _) => Profile::of(&one.value, account),
            (runs, Some(combined)) => {
                let named: Vec<(&str, &ProfiledInput)> =
                    runs.iter().map(|r| (r.name.as_str(), &r.value)).collect();
                Profile::of_files(&named, combined, account)
            }
            (_, None) => unreachable!("several inputs have a combined report"),
        }
    }

    /// One row per input, when there are several.
    pub fn files(&self) -> Option<Vec<FileSummary>> {
        self.combined
            .as_ref()
            .map(|_| self.runs.iter().map(FileSummary::of).collect())
    }

    /// Each input's report, in argument order.
    pub fn runs(&self) -> &[FileRun<ProfiledInput>] {
        &self.runs
    }
}

/// The logical profile (and, with `options.wire`, the wire view) of every
/// input: an instance profiled now, or a baseline saved earlier shown as
/// the profile it holds (`memprof inspect --format json` reads back).
pub fn profile(inputs: &[Input], options: &Options) -> Result<Profiled> {
    let runs = each(inputs, options, |input, threads, quiet| {
        let accept = Accept {
            baselines: true,
            ..Accept::default()
        };
        match read_one(input, options, accept, &mut (), threads, quiet)? {
            Content::Instance(profiled) | Content::Baseline(profiled, _) => Ok(profiled),
            Content::Folded(_) => unreachable!("folded stacks were not accepted"),
        }
    })?;
    Ok(Profiled::new(runs))
}

/// What a flamegraph is drawn from.
#[derive(Debug)]
pub enum Graph {
    Profile(Profiled),
    /// Folded stacks read as input (one input only), named as given.
    Folded {
        name: String,
        lines: Vec<FoldedLine>,
    },
}

/// [`profile`], except that a single input may be folded stacks
/// (`memprof inspect --format folded | memprof flamegraph`) too.
pub fn flamegraph(inputs: &[Input], options: &Options) -> Result<Graph> {
    // A flame graph shows no real memory: the closed form is enough.
    let options = &Options {
        real_memory: super::Effort::ClosedForm,
        ..options.clone()
    };
    let [input] = inputs else {
        return profile(inputs, options).map(Graph::Profile);
    };
    let accept = Accept {
        folded: true,
        baselines: true,
    };
    let start = std::time::Instant::now();
    match read_one(input, options, accept, &mut (), None, !options.progress)? {
        Content::Folded(lines) => {
            if options.group_by != Default::default() || options.wire {
                bail!(
                    "{}: holds folded stacks, which --group-by and --view cannot change",
                    input.display_name()
                );
            }
            Ok(Graph::Folded {
                name: input.display_name(),
                lines,
            })
        }
        Content::Instance(profiled) | Content::Baseline(profiled, _) => {
            Ok(Graph::Profile(Profiled::new(vec![FileRun {
                name: input.label(),
                value: profiled,
                elapsed: start.elapsed(),
            }])))
        }
    }
}

/// One input's profile for comparing (`diff`, `check`) or keeping (a
/// notebook's `Profile`): an instance profiled now, or a baseline JSON
/// saved earlier, decided by structure.
pub fn load(input: &Input, options: &Options) -> Result<Loaded> {
    load_within(input, options, options.threads)
}

pub(super) fn load_within(
    input: &Input,
    options: &Options,
    threads: Option<usize>,
) -> Result<Loaded> {
    let accept = Accept {
        baselines: true,
        ..Accept::default()
    };
    let quiet = !options.progress;
    let (profiled, baseline) = match read_one(input, options, accept, &mut (), threads, quiet)? {
        Content::Instance(profiled) => (profiled, None),
        Content::Baseline(profiled, info) => (profiled, Some(info)),
        Content::Folded(_) => unreachable!("folded stacks were not accepted"),
    };
    Ok(Loaded {
        profiled,
        account: options.account(),
        baseline,
    })
}

/// Two inputs to compare, old then new (instances or baselines).
pub fn diff(old: &Input, new: &Input, options: &Options) -> Result<(Loaded, Loaded)> {
    if matches!((old, new), (Input::Stdin, Input::Stdin)) {
        bail!("-: standard input can be read only once");
    }
    Ok((load(old, options)?, load(new, options)?))
}

/// The layers of an input without profiling them (`ls`): an archive's
/// manifest, or what raw bytes are.
pub fn layers(input: &Input, options: &Options) -> Result<InputInfo> {
    let listing = Options {
        layer: None,
        ..options.clone()
    };
    let mut nothing = ();
    let mut pass = listing.pass(&mut nothing, None);
    let mut job = Job {
        selection: Selection::ListOnly,
        limits: options.limits,
        pass: &mut pass,
        quiet: true,
    };
    let input = super::resolve::resolve(input, options)?;
    Ok(sniff::instance(&input, &mut job)?.input)
}
