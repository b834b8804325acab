//! Arguments of `memprof diff` and `memprof check`: the commands that
//! compare profiles, each input an instance or a saved baseline.

use std::path::PathBuf;

use anyhow::Result;
use clap::{ArgGroup, Args};

use super::choices::{CHECK_FORMATS, DIFF_FORMATS};
use crate::api::{Account, Options};
use crate::render::Format;

/// Options shared by the comparing commands; they shape every input alike.
#[derive(Debug, Args)]
pub struct CompareCommon {
    /// Profile only the N-th instance layer of every input (0-based), without a root frame.
    #[arg(long, value_name = "N")]
    pub layer: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub profile: super::ProfileArgs,
    #[command(flatten)]
    pub limits: super::LimitArgs,
    #[command(flatten)]
    pub registry: super::RegistryArgs,
}

impl CompareCommon {
    pub fn options(&self) -> Result<Options> {
        let account = self
            .profile
            .single_account("diff and check (use memory or wire)")?;
        let mut options = Options {
            layer: self.layer,
            progress: !self.quiet,
            limits: self.limits.limits(),
            registry: self.registry.registry.clone(),
            ..Options::default()
        };
        self.profile.apply(&mut options);
        options.wire = account == Account::Wire;
        Ok(options)
    }
}

#[derive(Debug, Args)]
#[command(after_help = super::help::DIFF)]
pub struct DiffArgs {
    /// The profile before: instance or baseline JSON.
    pub old: PathBuf,
    /// The profile after: instance or baseline JSON. Not given with
    /// `--accounting 2.9,3.0`, which compares OLD with itself as OMMX 3.0 counts it.
    #[arg(required_unless_present = "accounting")]
    pub new: Option<PathBuf>,
    #[command(flatten)]
    pub common: CompareCommon,
    /// Output format.
    #[arg(short, long, value_parser = DIFF_FORMATS, default_value = "table")]
    pub format: Format,
    /// Table and markdown: at most N changed paths (table default 25; markdown: as many as fit).
    #[arg(short = 'n', long, value_name = "N")]
    pub top: Option<usize>,
    /// Tree: show at most N levels.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Also write differential flamegraphs: FILE (new widths) and FILE.old.svg (old widths).
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("against").required(true).multiple(true).args(["baseline", "budget"])))]
#[command(after_help = super::help::CHECK)]
pub struct CheckArgs {
    /// Instances or baselines to check (globs are expanded).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Baseline to compare with: a profile (instance or baseline JSON), or a directory holding <file name>.json per FILE.
    #[arg(long, value_name = "B")]
    pub baseline: Option<PathBuf>,
    /// Budget file (YAML `rules:`; see docs/ci.md).
    #[arg(long, value_name = "FILE")]
    pub budget: Option<PathBuf>,
    #[command(flatten)]
    pub common: CompareCommon,
    /// Output format.
    #[arg(short, long, value_parser = CHECK_FORMATS, default_value = "table")]
    pub format: Format,
    /// Write the report to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Report exceeded budgets as a warning and exit 0 (the report is unchanged).
    #[arg(long)]
    pub warn_only: bool,
    /// After checking, save each FILE's profile as its baseline (the --baseline
    /// file, or DIR/<file name>.json; written atomically) and exit 0: the new
    /// profiles are accepted.
    #[arg(long, requires = "baseline")]
    pub update_baseline: bool,
}
