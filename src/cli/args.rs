//! The arguments of each subcommand (clap derive), converted once into the
//! library's plain options.

use std::io::{self, IsTerminal};
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use super::choices::{
    ADVISE_FORMATS, DATA_FORMATS, GROUP_BY, INSPECT_FORMATS, KINDS, LS_FORMATS, SEVERITIES,
    TOP_KINDS, VIEWS,
};
use crate::api::{
    parse_size, Account, Accounting, GroupBy, KindFilter, Limits, Options, Schema, Severity,
};
use crate::render::{Format, View};

#[derive(Debug, Args)]
#[command(after_help = super::help::STATS)]
pub struct StatsArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub reading: ReadingArgs,
    /// Which entities to describe.
    #[arg(long, value_parser = KINDS, default_value = "all")]
    pub kind: KindFilter,
    /// Table: number of family rows (largest total first).
    #[arg(short = 'n', long, value_name = "N", default_value_t = 25)]
    pub top: usize,
    #[arg(short, long, value_parser = DATA_FORMATS, default_value = "table")]
    pub format: Format,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = super::help::EXPLAIN)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub reading: ReadingArgs,
    /// Paths as `memprof inspect --format folded` prints them (frames joined
    /// by ';'), e.g. 'Instance.constraints;Constraint.function'.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<String>,
    /// Paths of a profile grouped by family (see inspect --group-by).
    #[arg(long, value_parser = GROUP_BY, value_name = "HOW", default_value = "none")]
    pub group_by: GroupBy,
    #[arg(short, long, value_parser = DATA_FORMATS, default_value = "table")]
    pub format: Format,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = super::help::TOP)]
pub struct TopArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub reading: ReadingArgs,
    /// How many entities to show (`--n` is the old spelling).
    #[arg(
        short = 'n',
        long = "top",
        alias = "n",
        value_name = "N",
        default_value_t = 10
    )]
    pub n: usize,
    /// Which entities to rank.
    #[arg(long, value_parser = TOP_KINDS, default_value = "all")]
    pub kind: KindFilter,
    #[arg(short, long, value_parser = DATA_FORMATS, default_value = "table")]
    pub format: Format,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The resource limits every input is read under.
#[derive(Debug, Clone, Copy, Args)]
pub struct LimitArgs {
    /// Most bytes read from one input (e.g. 512MiB, 64GiB): what gzip data decompresses
    /// to, what stdin or a pipe delivers, and the size of a baseline file.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4GiB")]
    pub max_decompressed: u64,
    /// Largest single element of an instance read from gzip data, stdin or a pipe
    /// (one variable, constraint or named function; the objective and other singular
    /// fields together), held whole while it is decoded.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "32MiB")]
    pub max_element: u64,
}

/// Where image names are found: `--registry`, on every command that reads
/// inputs.
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// The root of OMMX's local registry, where an input named by image
    /// reference (name:tag or name@sha256:...) that is not a file is read
    /// from, OMMX 2.9.3's and 3.0's layouts alike [default:
    /// $OMMX_LOCAL_REGISTRY_ROOT, else OMMX's: $XDG_DATA_HOME/ommx or
    /// ~/.local/share/ommx on Linux].
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
}

impl LimitArgs {
    pub fn limits(&self) -> Limits {
        Limits {
            max_decompressed: self.max_decompressed,
            max_element: self.max_element,
        }
    }
}

#[derive(Debug, Args)]
pub struct Common {
    /// Input: .ommx archive, OCI layout directory, raw instance bytes, an image of OMMX's
    /// local registry (name:tag, name@sha256:...), or '-' for stdin.
    pub file: PathBuf,
    /// Profile only the N-th instance layer (0-based, manifest order), without a root frame.
    #[arg(long, value_name = "N")]
    pub layer: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

impl Common {
    /// The options of a single-input analysis reading as `reading` says.
    pub fn options(&self, reading: &ReadingArgs) -> Options {
        let mut options = Options {
            layer: self.layer,
            progress: !self.quiet,
            limits: self.limits.limits(),
            registry: self.registry.registry.clone(),
            ..Options::default()
        };
        reading.apply(&mut options);
        options
    }
}

/// The inputs of a command that takes several.
#[derive(Debug, Args)]
pub struct Inputs {
    /// Inputs: .ommx archives, OCI layout directories, raw instance bytes, images of
    /// OMMX's local registry (name:tag, name@sha256:...), or '-' for stdin (also when
    /// no input is given). Quoted patterns ('runs/*.ommx') are
    /// expanded. Several inputs are profiled in parallel, each under a root frame
    /// `file[i] (name)`.
    #[arg(value_name = "FILES")]
    pub files: Vec<PathBuf>,
    /// Profile only the N-th instance layer (0-based, manifest order) of each input.
    #[arg(long, value_name = "N")]
    pub layer: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

impl Inputs {
    /// The inputs with patterns expanded; none given is standard input,
    /// unless it is a terminal (nobody types an instance).
    pub fn expand(&self) -> Result<Vec<PathBuf>> {
        if self.files.is_empty() {
            if io::stdin().is_terminal() {
                bail!("no input: name a FILE, or pipe one into standard input");
            }
            return Ok(vec![PathBuf::from("-")]);
        }
        crate::api::expand(&self.files)
    }

    /// The options of these inputs, reading as `reading` says.
    pub fn options(&self, reading: &ReadingArgs) -> Options {
        let mut options = Options {
            layer: self.layer,
            progress: !self.quiet,
            limits: self.limits.limits(),
            registry: self.registry.registry.clone(),
            ..Options::default()
        };
        reading.apply(&mut options);
        options
    }
}

/// What a profile counts and how it groups: shared by the commands that
/// show a profile (inspect, flamegraph; diff and check take the same).
#[derive(Debug, Clone, Copy, Args)]
pub struct ProfileArgs {
    /// Insert one frame per family (entity name) under the variables,
    /// constraints and removed constraints; unnamed entities go to "(unnamed)".
    #[arg(long, value_parser = GROUP_BY, value_name = "HOW", default_value = "none")]
    pub group_by: GroupBy,
    /// memory: OMMX 2.9.3's in-memory bytes; wire: encoded protobuf bytes per
    /// path (tags, length prefixes and unknown fields as Wire[...] frames);
    /// both: the two side by side (table format only).
    #[arg(long, value_parser = VIEWS, default_value = "memory")]
    pub view: View,
    #[command(flatten)]
    pub reading: ReadingArgs,
}

/// Which schema raw input is and whose accounting counts ommx.v1 input:
/// shared by every command that profiles.
#[derive(Debug, Clone, Copy, Args)]
pub struct ReadingArgs {
    /// The schema of raw instance bytes: auto reads ommx.v1 and, when that fails,
    /// ommx.v2 (OMMX 3.0); v1 or v2 forces one. Archive layers name theirs.
    #[arg(long, value_enum, default_value_t = SchemaArg::Auto)]
    pub schema: SchemaArg,
    /// Whose accounting counts ommx.v1 input: 2.9 (OMMX 2.9.3, the default) or 3.0
    /// (as OMMX 3.0.0b7 holds it once converted by from_v1_bytes: the migration
    /// view). ommx.v2 input is counted as 3.0 only. `memprof diff --accounting
    /// 2.9,3.0 FILE` compares the two.
    #[arg(long, value_name = "VERSION", value_parser = parse_accounting)]
    pub accounting: Option<AccountingArg>,
}

/// `--schema`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum SchemaArg {
    #[default]
    Auto,
    V1,
    V2,
}

/// `--accounting`: one accounting, or (for diff) both side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountingArg {
    One(Accounting),
    /// `2.9,3.0`: diff's migration view.
    Both,
}

fn parse_accounting(s: &str) -> std::result::Result<AccountingArg, String> {
    match s.trim() {
        "2.9" | "2.9.3" => Ok(AccountingArg::One(Accounting::Ommx29)),
        "3.0" | "3.0.0b7" => Ok(AccountingArg::One(Accounting::Ommx30)),
        "2.9,3.0" => Ok(AccountingArg::Both),
        other => Err(format!(
            "{other:?} is not an accounting: use 2.9 (OMMX 2.9.3), 3.0 (OMMX 3.0.0b7), or 2.9,3.0 with diff"
        )),
    }
}

impl ProfileArgs {
    /// Sets what the profile collects (family frames, the wire view) and how
    /// input is read.
    pub fn apply(&self, options: &mut Options) {
        options.group_by = self.group_by;
        options.wire = self.view != View::Memory;
        self.reading.apply(options);
    }

    /// The single account shown, for outputs that show one.
    pub(crate) fn single_account(&self, what: &str) -> Result<Account> {
        Ok(match self.view {
            View::Memory => Account::Memory,
            View::Wire => Account::Wire,
            View::Both => bail!("--view both is only available with --format table, not {what}"),
        })
    }
}

impl ReadingArgs {
    /// Sets which schema raw input is and whose accounting counts v1 input;
    /// the side-by-side `2.9,3.0` is diff's and reads as the default here.
    pub fn apply(&self, options: &mut Options) {
        options.schema = match self.schema {
            SchemaArg::Auto => None,
            SchemaArg::V1 => Some(Schema::V1),
            SchemaArg::V2 => Some(Schema::V2),
        };
        options.accounting = match self.accounting {
            Some(AccountingArg::One(a)) => Some(a),
            Some(AccountingArg::Both) | None => None,
        };
    }
}

#[derive(Debug, Args)]
#[command(after_help = super::help::INSPECT)]
pub struct InspectArgs {
    #[command(flatten)]
    pub common: Inputs,
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Output format [default: tree; table with --view both].
    #[arg(short, long, value_parser = INSPECT_FORMATS)]
    pub format: Option<Format>,
    /// Tree: show at most N levels; deeper ones are folded into their parent
    /// [default: 3, unless --all].
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Tree: fold children smaller than P percent of the total into an "(N others)" row
    /// [default: 2, unless --all].
    #[arg(long, value_name = "P")]
    pub min_percent: Option<f64>,
    /// Tree: every level and every path, however small (--depth and --min-percent still apply).
    #[arg(long)]
    pub all: bool,
    /// Table: number of path rows.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 25)]
    pub top: usize,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = super::help::FLAMEGRAPH)]
pub struct FlamegraphArgs {
    #[command(flatten)]
    pub common: Inputs,
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Where to write the SVG ('-' for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Title of the graph (default: memprof, the file and the layer).
    #[arg(long)]
    pub title: Option<String>,
    /// Icicle graph: the graph upside down, its root at the top; each path
    /// still runs from the root to its leaf (unlike --reverse).
    #[arg(long)]
    pub inverted: bool,
    /// Leaves first: every path turned around, the frames holding bytes at
    /// the root and their callers above them (inferno's --reverse; unlike
    /// --inverted, it changes what the graph shows, and the two combine).
    #[arg(long)]
    pub reverse: bool,
    /// Omit frames narrower than this many pixels of the 1180-pixel frame area
    /// [default: 0.1, inferno's; 0 keeps every frame].
    #[arg(long, value_name = "PIXELS")]
    pub min_width: Option<f64>,
}

#[derive(Debug, Args)]
#[command(after_help = super::help::ADVISE)]
pub struct AdviseArgs {
    #[command(flatten)]
    pub common: Inputs,
    #[command(flatten)]
    pub reading: ReadingArgs,
    /// Output format.
    #[arg(short, long, value_parser = ADVISE_FORMATS, default_value = "table")]
    pub format: Format,
    /// Show only recommendations of this severity or above (the summary still counts all).
    #[arg(long, value_parser = SEVERITIES, value_name = "LEVEL", default_value = "info")]
    pub min_severity: Severity,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = super::help::LS)]
pub struct LsArgs {
    /// Input: .ommx archive, OCI layout directory, raw instance bytes, an image of OMMX's
    /// local registry (name:tag), or '-' for stdin. None: the local registry's images.
    pub file: Option<PathBuf>,
    #[arg(short, long, value_parser = LS_FORMATS, default_value = "table")]
    pub format: Format,
    /// Listing the local registry: profile every instance layer too, for its logical
    /// bytes (each blob is read and checked against its digest).
    #[arg(long, conflicts_with = "file")]
    pub logical: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
