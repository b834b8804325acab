//! Arguments of `memprof report`: one input's page, or a diff's.

use std::path::PathBuf;

use clap::Args;

use super::choices::GROUP_BY;
use super::{LimitArgs, ReadingArgs};
use crate::api::{GroupBy, Options};

#[derive(Debug, Args)]
#[command(after_help = super::help::REPORT)]
pub struct ReportArgs {
    /// The input: .ommx archive, OCI layout directory, raw instance bytes, or '-' for stdin.
    /// With FILE2, the old side: an instance or a baseline JSON.
    pub file: PathBuf,
    /// The new side of a comparison: an instance.
    pub file2: Option<PathBuf>,
    /// Where to write the HTML page ('-' for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Profile only the N-th instance layer (0-based, manifest order) of each input,
    /// without a root frame.
    #[arg(long, value_name = "N")]
    pub layer: Option<usize>,
    /// Insert one frame per family (entity name) under the variables,
    /// constraints and removed constraints; unnamed entities go to "(unnamed)".
    #[arg(long, value_parser = GROUP_BY, value_name = "HOW", default_value = "none")]
    pub group_by: GroupBy,
    /// Rows of the largest-entities table.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 100)]
    pub top: usize,
    #[command(flatten)]
    pub reading: ReadingArgs,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub registry: super::RegistryArgs,
}

impl ReportArgs {
    /// The options every input is read with.
    pub fn options(&self) -> Options {
        let mut options = Options {
            group_by: self.group_by,
            layer: self.layer,
            progress: !self.quiet,
            limits: self.limits.limits(),
            registry: self.registry.registry.clone(),
            ..Options::default()
        };
        self.reading.apply(&mut options);
        options
    }
}
