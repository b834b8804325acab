//! One file per subcommand, each wiring its pipeline: read, pass, analysis,
//! render. This module dispatches and holds what several commands share.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::batch::FileRun;
use crate::cli::{shell, Cli, Command, Common, Inputs};
use crate::decode::{Input, Selection};
use crate::output::{input_files, Output};
use crate::pass::{self, Pass, ProfileOptions, Reading};
use crate::render::files::FileSummary;
use crate::render::{Account, Profile};
use crate::report::{Document, Report};

mod advise;
mod check;
mod diff;
mod explain;
mod flamegraph;
mod inspect;
mod ls;
mod report;
mod stats;
mod top;

/// Runs one command line, with `--timings` and `--trace` around it.
pub fn run(cli: Cli) -> Result<()> {
    if cli.trace.as_deref() == Some(Path::new("-")) {
        bail!("--trace -: standard output holds the command's report; name a file for the trace");
    }
    let trace = cli.trace.as_deref().map(|t| Output::from_arg(Some(t)));
    if let Some(file @ Output::File(path)) = &trace {
        let inputs = crate::batch::expand(&cli.command.inputs())?;
        file.check_not_input(&input_files(inputs.iter().map(PathBuf::as_path)))?;
        if let Some(out) = cli
            .command
            .outputs()
            .into_iter()
            .find(|out| crate::output::names_same_file(path, out))
        {
            bail!(
                "{}: --trace names the same file as the command's output {}",
                path.display(),
                out.display()
            );
        }
    }
    // Tables fit the terminal only when they go to it.
    crate::render::width::set_fit(cli.command.outputs().is_empty());
    if cli.timings || trace.is_some() {
        crate::trace::enable(trace.is_some());
    }
    run_command(cli.command)?;
    if let Some(trace) = trace {
        trace.write_untimed(crate::trace::write_trace)?;
    }
    if cli.timings {
        crate::trace::write_timings(&mut std::io::stderr().lock())?;
    }
    Ok(())
}

fn run_command(command: Command) -> Result<()> {
    match command {
        Command::Inspect(args) => inspect::run(args),
        Command::Flamegraph(args) => flamegraph::run(args),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
        Command::Diff(args) => diff::run(args),
        Command::Check(args) => check::run(args),
        Command::Top(args) => top::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Advise(args) => advise::run(args),
        Command::Ls(args) => ls::run(args),
        Command::Report(args) => report::run(args),
    }
}

fn selection(layer: Option<usize>) -> Selection {
    layer.map_or(Selection::All, Selection::Layer)
}

fn read(common: &Common, selection: Selection) -> Result<Report> {
    let mut nothing = ();
    read_with(common, selection, Pass::new(&mut nothing))
}

/// Reads `common.file` with `pass`.
fn read_with(common: &Common, selection: Selection, mut pass: Pass<'_>) -> Result<Report> {
    let input = Input::from_path(&common.file);
    let bar = crate::progress::labelled(common.quiet, &input.display_name());
    let limits = common.limits.limits();
    let report = pass::read(&input, selection, &limits, &mut pass, &bar)
        .with_context(|| input.display_name());
    bar.finish_and_clear();
    report
}

/// The reports of every input: one read with a progress bar, several in
/// parallel (without bars, which would fight over the terminal).
fn read_inputs(
    inputs: &Inputs,
    files: &[PathBuf],
    options: ProfileOptions,
    reading: Reading,
) -> Result<Vec<FileRun<Report>>> {
    let selection = selection(inputs.layer);
    let several = files.len() > 1;
    let progress = crate::progress::files(inputs.quiet || !several, files.len());
    let runs = crate::batch::run_all(files, |file, threads| {
        let common = inputs.for_file(file, several);
        let mut nothing = ();
        let pass = Pass {
            options,
            reading,
            threads,
            observer: &mut nothing,
        };
        let report = read_with(&common, selection, pass);
        progress.set_message(file.display().to_string());
        progress.inc(1);
        report
    });
    progress.finish_and_clear();
    runs
}

/// The profile of every input together, and the per-file rows when there
/// are several. `combined` receives what the profile borrows.
fn profile_inputs<'a>(
    runs: &'a [FileRun<Report>],
    combined: &'a mut Option<Report>,
    account: Account,
) -> (Profile<'a>, Option<Vec<FileSummary>>) {
    if let [one] = runs {
        return (Profile::of(&one.value, account), None);
    }
    let files: Vec<FileSummary> = runs.iter().map(FileSummary::of).collect();
    let report = combined.insert(Report {
        document: Document {
            name: format!("{} files", runs.len()),
            file_bytes: files.iter().map(|f| f.file_bytes).sum(),
            container: runs[0].value.document.container,
            gzip: false,
            layers: Vec::new(),
            raw_schema: None,
        },
        instances: runs
            .iter()
            .flat_map(|r| r.value.instances.iter().cloned())
            .collect(),
    });
    let named: Vec<(&str, &Report)> = runs.iter().map(|r| (r.name.as_str(), &r.value)).collect();
    (Profile::of_files(&named, report, account), Some(files))
}
