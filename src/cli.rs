//! Command-line arguments (clap derive) and the one place that wires the
//! pipeline stages together for each subcommand.

pub mod compare;
mod flamegraph;
pub mod shell;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::advise::{Advisors, Severity};
use crate::batch::FileRun;
use crate::decode::{
    self, limits::parse_size, Accounting, EntityObserver, Input, Limits, Pass, ProfileOptions,
    Reading, Schema, Selection,
};
use crate::drill::{explain::Explainer, stats::StatsCollector, top::Top, KindFilter};
use crate::output::{input_files, Output};
use crate::profile::family::GroupBy;
use crate::render::advice::{AdviceFormat, AdviceView};
use crate::render::files::FileSummary;
use crate::render::{self, Account, DataFormat, Format, Profile, View, ViewOptions};

#[derive(Debug, Parser)]
#[command(
    name = "memprof",
    version,
    about = "See where the memory of an OMMX optimization problem goes",
    long_about = "See where the memory of an OMMX optimization problem goes.\n\n\
        Reads .ommx artifact archives, extracted OCI layout directories and raw \
        ommx.v1.Instance protobuf bytes (any of them gzip-compressed; '-' reads stdin; \
        the kind is detected from the content) and reports logical memory exactly as \
        OMMX 2.9.3's Instance.logical_memory_profile() counts it.\n\n\
        Exit status: 0 success, 1 a budget of `memprof check` is exceeded, \
        2 error (bad input, bad arguments, I/O).\n\n\
        Environment: MEMPROF_THREADS=1 decodes on a single thread (same output, for comparison)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// After the run, print time and memory per phase (read, decompress,
    /// decode, normalize, aggregate, check, render) to stderr.
    #[arg(long, global = true)]
    pub timings: bool,
    /// Write the run's phases as a Chrome trace-event JSON file (open it in
    /// chrome://tracing or ui.perfetto.dev). It may not be an input or the output.
    #[arg(long, global = true, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Colour the human formats (bold labels, green and red verdicts) and
    /// --help: auto does when stdout is a terminal, the output is not a file
    /// and NO_COLOR is not set.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// When to colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// `--color WHEN` as given on a command line not parsed yet (for clap's
    /// own help and errors), `auto` when absent or unreadable.
    fn scan(args: &[OsString]) -> Self {
        let mut value = None;
        for (i, arg) in args.iter().enumerate() {
            let arg = arg.to_string_lossy();
            if let Some(v) = arg.strip_prefix("--color=") {
                value = Some(v.to_string());
            } else if arg == "--color" {
                value = args.get(i + 1).map(|v| v.to_string_lossy().into_owned());
            }
        }
        match value.as_deref() {
            Some("always") => ColorChoice::Always,
            Some("never") => ColorChoice::Never,
            _ => ColorChoice::Auto,
        }
    }

    /// Whether output going to stdout (not to files: `writes_files`) is
    /// coloured.
    fn enabled(self, writes_files: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                !no_color() && !writes_files && std::io::IsTerminal::is_terminal(&io::stdout())
            }
        }
    }
}

/// NO_COLOR (no-color.org): set and not empty.
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Profile an instance and print it in one of several formats.
    Inspect(InspectArgs),
    /// Render the profile as an SVG flamegraph.
    Flamegraph(FlamegraphArgs),
    /// List an archive's layers (media type, digest, size, annotations).
    Ls(LsArgs),
    /// Compare two profiles path by path (instances or saved baselines).
    Diff(compare::DiffArgs),
    /// Check profiles against budgets and/or a baseline: exit 1 when one is exceeded.
    Check(compare::CheckArgs),
    /// The largest single entities (constraints, variables, ...) by logical bytes.
    Top(TopArgs),
    /// How one path's bytes were computed: the rule, the counts, the arithmetic.
    Explain(ExplainArgs),
    /// Size distributions (count, min/p50/p90/p99/max bytes and terms) per
    /// entity kind and per family.
    Stats(StatsArgs),
    /// Recommend changes that would shrink the instance, with measured savings.
    Advise(AdviseArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff) on stdout.
    Man(shell::ManArgs),
}

impl Command {
    /// The inputs as given (`-` for stdin, patterns unexpanded): every file
    /// the command reads.
    pub fn inputs(&self) -> Vec<PathBuf> {
        match self {
            Command::Inspect(a) => a.common.files.clone(),
            Command::Flamegraph(a) => a.common.files.clone(),
            Command::Advise(a) => a.common.files.clone(),
            Command::Ls(a) => vec![a.file.clone()],
            Command::Top(a) => vec![a.common.file.clone()],
            Command::Explain(a) => vec![a.common.file.clone()],
            Command::Stats(a) => vec![a.common.file.clone()],
            Command::Diff(a) => std::iter::once(a.old.clone())
                .chain(a.new.clone())
                .collect(),
            Command::Check(a) => {
                let mut files = a.files.clone();
                files.extend(a.baseline.clone());
                files.extend(a.budget.clone());
                files
            }
            Command::Completions(_) | Command::Man(_) => Vec::new(),
        }
    }

    /// The files the command writes (stdout aside).
    pub fn outputs(&self) -> Vec<PathBuf> {
        let file = |o: Option<&PathBuf>| -> Vec<PathBuf> {
            o.into_iter()
                .filter(|o| o.as_os_str() != "-")
                .cloned()
                .collect()
        };
        match self {
            Command::Inspect(a) => file(a.output.as_ref()),
            Command::Advise(a) => file(a.output.as_ref()),
            Command::Flamegraph(a) => file(Some(&a.output)),
            Command::Diff(a) => {
                let mut out = file(a.output.as_ref());
                if let Some(graph) = &a.flamegraph {
                    out.push(graph.clone());
                    out.push(render::diff::svg::old_graph_path(graph));
                }
                out
            }
            Command::Check(a) => file(a.output.as_ref()),
            Command::Ls(a) => file(a.output.as_ref()),
            Command::Top(a) => file(a.output.as_ref()),
            Command::Explain(a) => file(a.output.as_ref()),
            Command::Stats(a) => file(a.output.as_ref()),
            Command::Completions(_) | Command::Man(_) => Vec::new(),
        }
    }
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub common: Common,
    /// Which entities to describe.
    #[arg(long, value_enum, default_value_t = KindFilter::All)]
    pub kind: KindFilter,
    /// Table: number of family rows (largest total first).
    #[arg(short = 'n', long, value_name = "N", default_value_t = 25)]
    pub top: usize,
    #[arg(short, long, value_enum, default_value_t = DataFormat::Table)]
    pub format: DataFormat,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub common: Common,
    /// Paths as `memprof inspect --format folded` prints them (frames joined
    /// by ';'), e.g. 'Instance.constraints;Constraint.function'.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<String>,
    /// Paths of a profile grouped by family (see inspect --group-by).
    #[arg(long, value_enum, value_name = "HOW", default_value_t = GroupBy::None)]
    pub group_by: GroupBy,
    #[arg(short, long, value_enum, default_value_t = DataFormat::Table)]
    pub format: DataFormat,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub common: Common,
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
    #[arg(long, value_enum, default_value_t = KindFilter::All)]
    pub kind: KindFilter,
    #[arg(short, long, value_enum, default_value_t = DataFormat::Table)]
    pub format: DataFormat,
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

impl LimitArgs {
    pub fn limits(&self) -> Limits {
        decode::limits::set_max_element(self.max_element);
        Limits {
            max_decompressed: self.max_decompressed,
        }
    }
}

#[derive(Debug, Args)]
pub struct Common {
    /// Input: .ommx archive, OCI layout directory, raw instance bytes, or '-' for stdin.
    pub file: PathBuf,
    /// Profile only the N-th instance layer (0-based, manifest order), without a root frame.
    #[arg(long, value_name = "N")]
    pub layer: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The inputs of a command that takes several.
#[derive(Debug, Args)]
pub struct Inputs {
    /// Inputs: .ommx archives, OCI layout directories, raw instance bytes, or '-' for
    /// stdin (also when no input is given). Quoted patterns ('runs/*.ommx') are
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
}

impl Inputs {
    /// The inputs with patterns expanded; none given is standard input,
    /// unless it is a terminal (nobody types an instance).
    fn expand(&self) -> Result<Vec<PathBuf>> {
        if self.files.is_empty() {
            if io::stdin().is_terminal() {
                bail!("no input: name a FILE, or pipe one into standard input");
            }
            return Ok(vec![PathBuf::from("-")]);
        }
        crate::batch::expand(&self.files)
    }

    /// The single-input arguments for one of the inputs; with several in
    /// flight there are no progress bars (they would fight over the terminal).
    fn for_file(&self, file: &Path, several: bool) -> Common {
        Common {
            file: file.to_path_buf(),
            layer: self.layer,
            quiet: self.quiet || several,
            limits: self.limits,
        }
    }
}

/// What a profile counts and how it groups: shared by the commands that
/// show a profile (inspect, flamegraph; diff and check take the same).
#[derive(Debug, Clone, Copy, Args)]
pub struct ProfileArgs {
    /// Insert one frame per family (entity name) under the variables,
    /// constraints and removed constraints; unnamed entities go to "(unnamed)".
    #[arg(long, value_enum, value_name = "HOW", default_value_t = GroupBy::None)]
    pub group_by: GroupBy,
    /// memory: OMMX 2.9.3's in-memory bytes; wire: encoded protobuf bytes per
    /// path (tags, length prefixes and unknown fields as Wire[...] frames);
    /// both: the two side by side (table format only).
    #[arg(long, value_enum, default_value_t = View::Memory)]
    pub view: View,
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
    /// What the decoding pass must collect for these options.
    pub fn options(&self) -> ProfileOptions {
        ProfileOptions {
            group_by: self.group_by,
            wire: self.view != View::Memory,
        }
    }

    /// Which schema raw input is and whose accounting counts v1 input; the
    /// side-by-side `2.9,3.0` is diff's and reads as the default here.
    pub fn reading(&self) -> Reading {
        Reading {
            raw_schema: match self.schema {
                SchemaArg::Auto => None,
                SchemaArg::V1 => Some(Schema::V1),
                SchemaArg::V2 => Some(Schema::V2),
            },
            accounting: match self.accounting {
                Some(AccountingArg::One(a)) => Some(a),
                Some(AccountingArg::Both) | None => None,
            },
        }
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

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub common: Inputs,
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Output format [default: tree; table with --view both].
    #[arg(short, long, value_enum)]
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

/// The tree's default cut: levels shown, and the share under which siblings
/// fold into "(N others)".
const DEFAULT_DEPTH: usize = 3;
const DEFAULT_MIN_PERCENT: f64 = 2.0;

#[derive(Debug, Args)]
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
    /// Icicle graph: roots at the top.
    #[arg(long)]
    pub inverted: bool,
    /// Omit frames narrower than this many pixels of the 1180-pixel frame area
    /// [default: 0.1, inferno's; 0 keeps every frame].
    #[arg(long, value_name = "PIXELS")]
    pub min_width: Option<f64>,
}

#[derive(Debug, Args)]
pub struct AdviseArgs {
    #[command(flatten)]
    pub common: Inputs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = AdviceFormat::Table)]
    pub format: AdviceFormat,
    /// Show only recommendations of this severity or above (the summary still counts all).
    #[arg(long, value_enum, value_name = "LEVEL", default_value_t = Severity::Info)]
    pub min_severity: Severity,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LsFormat {
    Table,
    Json,
    Yaml,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    /// Input: .ommx archive, OCI layout directory, raw instance bytes, or '-' for stdin.
    pub file: PathBuf,
    #[arg(short, long, value_enum, default_value_t = LsFormat::Table)]
    pub format: LsFormat,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn selection(layer: Option<usize>) -> Selection {
    layer.map_or(Selection::All, Selection::Layer)
}

fn read(common: &Common, selection: Selection) -> Result<decode::Report> {
    let mut nothing = ();
    read_observed(common, selection, ProfileOptions::default(), &mut nothing)
}

/// Reads `common.file` with `options`, showing every entity to `observer`.
fn read_observed(
    common: &Common,
    selection: Selection,
    options: ProfileOptions,
    observer: &mut dyn EntityObserver,
) -> Result<decode::Report> {
    let input = Input::from_path(&common.file);
    let bar = crate::progress::labelled(common.quiet, &input.display_name());
    let limits = common.limits.limits();
    let mut pass = Pass { options, observer };
    let report = decode::read_with(&input, selection, &limits, &mut pass, &bar)
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
) -> Result<Vec<FileRun<decode::Report>>> {
    let selection = selection(inputs.layer);
    let several = files.len() > 1;
    let progress = crate::progress::files(inputs.quiet || !several, files.len());
    let runs = crate::batch::run_all(files, |file| {
        let common = inputs.for_file(file, several);
        let report = read_observed(&common, selection, options, &mut reading.with(&mut ()));
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
    runs: &'a [FileRun<decode::Report>],
    combined: &'a mut Option<decode::Report>,
    account: Account,
) -> (Profile<'a>, Option<Vec<FileSummary>>) {
    if let [one] = runs {
        return (Profile::of(&one.value, account), None);
    }
    let files: Vec<FileSummary> = runs.iter().map(FileSummary::of).collect();
    let report = combined.insert(decode::Report {
        document: decode::Document {
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
    let named: Vec<(&str, &decode::Report)> =
        runs.iter().map(|r| (r.name.as_str(), &r.value)).collect();
    (Profile::of_files(&named, report, account), Some(files))
}

/// The whole `memprof` program on the command line `args` (program name
/// first): parse, run, report, and return the exit status: 0 success, 1 a
/// budget exceeded, 2 an error (printed on one line) or bad arguments; a
/// closed stdout pipe ends quietly with 0. The binary and the Python
/// package's `memprof` command are this function.
pub fn main<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let help_color = match ColorChoice::scan(&args) {
        ColorChoice::Always => clap::ColorChoice::Always,
        ColorChoice::Never => clap::ColorChoice::Never,
        ColorChoice::Auto if no_color() => clap::ColorChoice::Never,
        ColorChoice::Auto => clap::ColorChoice::Auto,
    };
    let parsed = <Cli as clap::CommandFactory>::command()
        .color(help_color)
        .try_get_matches_from(args)
        .and_then(|matches| <Cli as clap::FromArgMatches>::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // clap's usage error, on one line like every other error (its
            // usage and tip lines joined), with control characters escaped.
            let text = e.render().to_string();
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let _ = writeln!(
                io::stderr(),
                "{}",
                render::escape_control(&parts.join("; "))
            );
            return 2;
        }
        Err(e) => {
            // --help, --version: to stdout as clap writes them.
            let _ = e.print();
            return 0;
        }
    };
    render::style::enable(cli.color.enabled(!cli.command.outputs().is_empty()));
    match run(cli) {
        Ok(()) => 0,
        Err(err) if is_broken_pipe(&err) => 0,
        Err(err) if err.is::<crate::check::BudgetExceeded>() => {
            let _ = writeln!(io::stderr(), "memprof: check failed: {err}");
            1
        }
        Err(err) => {
            let _ = writeln!(io::stderr(), "memprof: error: {}", one_line(&err));
            2
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// The error and its causes on one line, as `memprof: error: ...` prints
/// it, control characters escaped.
pub fn one_line(err: &anyhow::Error) -> String {
    // Names from archives and file names may hold control characters: the
    // line reaches a terminal, so they are escaped.
    let line = crate::errors::joined(err).replace(['\n', '\r'], " ");
    render::escape_control(&line).into_owned()
}

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
        Command::Inspect(args) => {
            let output = Output::from_arg(args.output.as_deref());
            let files = args.common.expand()?;
            output.check_not_input(&input_files(files.iter().map(PathBuf::as_path)))?;
            let view = ViewOptions {
                // A screenful by default (about 60 lines for the bundled fixtures).
                depth: args.depth.or((!args.all).then_some(DEFAULT_DEPTH)),
                min_percent: args.min_percent.unwrap_or(if args.all {
                    0.0
                } else {
                    DEFAULT_MIN_PERCENT
                }),
                top: args.top,
            };
            let both = args.profile.view == View::Both;
            let format = args
                .format
                .unwrap_or(if both { Format::Table } else { Format::Tree });
            let account = if both && format == Format::Table {
                Account::Memory
            } else {
                let name = format!("{format:?}").to_lowercase();
                args.profile.single_account(&format!("--format {name}"))?
            };
            let runs = read_inputs(
                &args.common,
                &files,
                args.profile.options(),
                args.profile.reading(),
            )?;
            let mut combined = None;
            let (profile, per_file) = profile_inputs(&runs, &mut combined, account);
            if both {
                let mut combined = None;
                let (wire, _) = profile_inputs(&runs, &mut combined, Account::Wire);
                return output.write_with(|out| {
                    render::side_by_side::render(&profile, &wire, &view, out)?;
                    if let Some(files) = &per_file {
                        writeln!(out)?;
                        render::files::render_table(files, out)?;
                    }
                    Ok(())
                });
            }
            output.write_with(|out| {
                match format {
                    Format::Folded => render::folded::render(&profile, out)?,
                    Format::Tree => render::tree::render(&profile, &view, out)?,
                    Format::Table => {
                        render::table::render(&profile, &view, out)?;
                        if let Some(files) = &per_file {
                            writeln!(out)?;
                            render::files::render_table(files, out)?;
                        }
                    }
                    Format::Json | Format::Yaml => {
                        let document = match &per_file {
                            Some(files) => render::json::document_of_files(&profile, files),
                            None => render::json::document(&profile),
                        };
                        if format == Format::Json {
                            render::json::write_json(&document, out)?;
                        } else {
                            render::json::write_yaml(&document, out)?;
                        }
                    }
                }
                Ok(())
            })
        }
        Command::Flamegraph(args) => flamegraph::run(args),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
        Command::Diff(args) => compare::run_diff(args),
        Command::Check(args) => compare::run_check(args),
        Command::Top(args) => {
            let output = Output::from_arg(args.output.as_deref());
            output.check_not_input(&input_files([args.common.file.as_path()]))?;
            let mut top = Top::new(args.n, args.kind);
            let report = read_observed(
                &args.common,
                selection(args.common.layer),
                ProfileOptions::default(),
                &mut top,
            )?;
            let profile = Profile::new(&report);
            let entities = top.into_sorted();
            let kind = args.kind.to_possible_value().expect("no skipped variants");
            let top_report = render::top::TopReport {
                profile: &profile,
                kind: kind.get_name(),
                n: args.n,
                entities: &entities,
            };
            output.write_with(|out| render::top::render(&top_report, args.format, out))
        }
        Command::Stats(args) => {
            let output = Output::from_arg(args.output.as_deref());
            output.check_not_input(&input_files([args.common.file.as_path()]))?;
            let mut stats = StatsCollector::new(args.kind);
            let report = read_observed(
                &args.common,
                selection(args.common.layer),
                ProfileOptions::default(),
                &mut stats,
            )?;
            let profile = Profile::new(&report);
            let (kinds, families) = stats.report();
            output.write_with(|out| {
                render::stats::render(&profile, &kinds, &families, args.top, args.format, out)
            })
        }
        Command::Explain(args) => {
            let output = Output::from_arg(args.output.as_deref());
            output.check_not_input(&input_files([args.common.file.as_path()]))?;
            let paths: Vec<String> = args.paths.iter().map(|p| p.trim().to_string()).collect();
            let mut explainer = Explainer::new(&paths, args.group_by);
            let options = ProfileOptions {
                group_by: args.group_by,
                wire: false,
            };
            let report = read_observed(
                &args.common,
                selection(args.common.layer),
                options,
                &mut explainer,
            )?;
            let profile = Profile::new(&report);
            let explanations = explainer
                .checked_explanations(&profile, &args.common.file.display().to_string())?;
            output.write_with(|out| {
                render::explain::render(&profile, &explanations, args.format, out)
            })
        }
        Command::Advise(args) => {
            let output = Output::from_arg(args.output.as_deref());
            let files = args.common.expand()?;
            output.check_not_input(&input_files(files.iter().map(PathBuf::as_path)))?;
            // Each input is read with its own advisors, several at a time,
            // under one bar counting the files.
            let several = files.len() > 1;
            let progress = crate::progress::files(args.common.quiet || !several, files.len());
            let runs = crate::batch::run_all(&files, |file| {
                let common = args.common.for_file(file, several);
                let mut advisors = Advisors::default();
                let report = read_observed(
                    &common,
                    selection(common.layer),
                    ProfileOptions::default(),
                    &mut advisors,
                )?;
                let layers = advisors.advise(&report);
                progress.set_message(file.display().to_string());
                progress.inc(1);
                Ok((report, layers))
            })?;
            progress.finish_and_clear();
            let profiles: Vec<Profile<'_>> =
                runs.iter().map(|r| Profile::new(&r.value.0)).collect();
            let views: Vec<AdviceView<'_>> = profiles
                .iter()
                .zip(&runs)
                .map(|(profile, run)| AdviceView {
                    profile,
                    layers: &run.value.1,
                    min_severity: args.min_severity,
                })
                .collect();
            output.write_with(|out| render::advice::render_many(&views, args.format, out))
        }
        Command::Ls(args) => {
            let output = Output::from_arg(args.output.as_deref());
            output.check_not_input(&input_files([args.file.as_path()]))?;
            let common = Common {
                file: args.file,
                layer: None,
                quiet: true,
                limits: args.limits,
            };
            let report = read(&common, Selection::ListOnly)?;
            output.write_with(|out| match args.format {
                LsFormat::Table => render::layers::render_table(&report.document, out),
                LsFormat::Json => render::layers::render_json(&report.document, out),
                LsFormat::Yaml => render::layers::render_yaml(&report.document, out),
            })
        }
    }
}
