//! One file per subcommand, each the same three steps: its arguments made
//! [`crate::api::Options`] and inputs, one call of the analysis API, and
//! the document it returns rendered to the output. This module dispatches.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::cli::{shell, Cli, Command};
use crate::output::{input_files, Output};

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
    crate::output::check_distinct(&cli.command.outputs())?;
    let trace = cli.trace.as_deref().map(|t| Output::from_arg(Some(t)));
    if let Some(file @ Output::File(path)) = &trace {
        let inputs = crate::api::expand(&cli.command.inputs())?;
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
    run_command(cli.command, &cli.words)?;
    if let Some(trace) = trace {
        trace.write_untimed(crate::trace::write_trace)?;
    }
    if cli.timings {
        crate::trace::write_timings(&mut std::io::stderr().lock())?;
    }
    Ok(())
}

fn run_command(command: Command, words: &[std::ffi::OsString]) -> Result<()> {
    match command {
        Command::Inspect(args) => inspect::run(args),
        Command::Flamegraph(args) => flamegraph::run(args),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
        Command::Diff(args) => diff::run(args),
        Command::Check(args) => check::run(args, words),
        Command::Top(args) => top::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Advise(args) => advise::run(args),
        Command::Ls(args) => ls::run(args),
        Command::Report(args) => report::run(args),
    }
}
