//! Shell integration: `memprof completions SHELL` (clap_complete) and
//! `memprof man` (clap_mangen), both generated from the same clap
//! definition as `--help`, so they cannot drift from it.

use anyhow::{bail, Result};
use clap::{Args, CommandFactory};

use super::Cli;
use crate::output::Output;

#[derive(Debug, Args)]
#[command(after_help = super::help::COMPLETIONS)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for `args.shell` on stdout.
pub fn completions(args: CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    Output::Stdout.write_with(|out| {
        clap_complete::generate(args.shell, &mut command, "memprof", out);
        Ok(())
    })
}

#[derive(Debug, Args)]
#[command(after_help = super::help::MAN)]
pub struct ManArgs {
    /// Print the page of this subcommand (memprof-inspect(1), ...) instead of memprof(1).
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
}

/// Prints a roff man page on stdout: memprof(1), or memprof-SUBCOMMAND(1).
pub fn man(args: ManArgs) -> Result<()> {
    let mut command = Cli::command();
    command.build();
    let page = match &args.subcommand {
        None => command,
        Some(name) => {
            let Some(sub) = command.find_subcommand(name) else {
                let names: Vec<&str> = command.get_subcommands().map(|s| s.get_name()).collect();
                bail!(
                    "memprof has no subcommand {name:?} (it has {})",
                    names.join(", ")
                );
            };
            let full = format!("memprof-{name}");
            sub.clone()
                .name(full)
                .bin_name(format!("memprof {name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    Output::Stdout.write_with(|out| Ok(clap_mangen::Man::new(page).render(out)?))
}
