//! The command line: clap's argument types (here and in [`args`],
//! [`compare`], [`shell`]), the parsing, and the exit status. What each
//! subcommand does is in [`crate::commands`].

pub mod args;
pub mod choices;
pub mod compare;
pub mod help;
pub mod report;
pub mod shell;

pub use args::*;

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::render;

#[derive(Debug, Parser)]
#[command(
    name = "memprof",
    version,
    about = "See where the memory of an OMMX optimization problem goes: ommx.v1 and ommx.v2 \
        instances (OMMX 2.x and 3.0), counted as OMMX counts them",
    long_about = "See where the memory of an OMMX optimization problem goes.\n\n\
        Reads .ommx artifact archives, extracted OCI layout directories, images of \
        OMMX's local registry by name (name:tag; 2.9.3's and 3.0's layouts) and raw \
        protobuf bytes of ommx.v1.Instance (OMMX 2.x) or ommx.v2.Instance (OMMX 3.0), any \
        of them gzip-compressed ('-' reads stdin; the kind is detected from the content), \
        and reports logical memory exactly as OMMX's Instance.logical_memory_profile() \
        counts it: OMMX 2.9.3's for ommx.v1, 3.0.0b7's for ommx.v2 (and for ommx.v1 with \
        --accounting 3.0).\n\n\
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
    /// The command line as given, after the program name: a hint that
    /// suggests running it again (`check --update-baseline`) starts from it.
    #[arg(skip)]
    pub words: Vec<OsString>,
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

/// What bare `memprof` prints (to stderr, exit status 2): what it is, the
/// commands most runs use, where the rest is.
const SHORT_USAGE: &str = "\
memprof: see where the memory of an OMMX optimization problem goes

Usage: memprof <COMMAND> [FILE]... [OPTIONS]

  memprof inspect problem.ommx                  the profile as a tree
  memprof flamegraph problem.ommx -o p.svg      a flamegraph
  memprof report problem.ommx -o p.html         an interactive page
  memprof advise problem.ommx                   what would make it smaller
  memprof check problem.ommx --baseline b.json  fail a CI job when it grows

Commands: inspect flamegraph report top stats explain advise diff check ls completions man
'memprof --help' lists them; 'memprof help <COMMAND>' shows one with its examples.
";

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
    /// List an archive's layers (media type, digest, size, annotations), or, given
    /// no input, the images of OMMX's local registry.
    Ls(LsArgs),
    /// Compare two profiles path by path (instances or saved baselines).
    Diff(compare::DiffArgs),
    /// Check profiles against budgets and/or a baseline: exit 1 when one is exceeded.
    Check(compare::CheckArgs),
    /// The largest single entities (the objective, constraints, variables, ...) by logical bytes.
    ///
    /// Every entity that owns bytes is ranked: the objective, constraints, removed constraints,
    /// decision variables, named functions and constraint hints (and OMMX 3.0's indicator,
    /// one-hot and SOS1 constraints). Entities of equal bytes are listed by id, smaller first
    /// (the objective, which has no id, ahead), then by kind.
    Top(TopArgs),
    /// How one path's bytes were computed: the rule, the counts, the arithmetic.
    Explain(ExplainArgs),
    /// Size distributions (count, min/p50/p90/p99/max bytes and terms) per
    /// entity kind and per family.
    Stats(StatsArgs),
    /// Recommend changes that would shrink the instance, with measured savings.
    Advise(AdviseArgs),
    /// Write one self-contained HTML page: the flamegraph to explore, the largest
    /// entities, families, statistics and advice (or a diff of two inputs).
    Report(report::ReportArgs),
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
            Command::Ls(a) => a.file.iter().cloned().collect(),
            Command::Top(a) => vec![a.common.file.clone()],
            Command::Explain(a) => vec![a.common.file.clone()],
            Command::Stats(a) => vec![a.common.file.clone()],
            Command::Report(a) => std::iter::once(a.file.clone())
                .chain(a.file2.clone())
                .collect(),
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
            Command::Report(a) => file(Some(&a.output)),
            Command::Completions(_) | Command::Man(_) => Vec::new(),
        }
    }
}

/// The whole `memprof` program on the command line `args` (program name
/// first): parse, run, report, and return the exit status: 0 success, 1 a
/// budget exceeded, 2 an error (printed on one line) or bad arguments
/// (clap's message, under the same `memprof: error:` prefix); a
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
        .try_get_matches_from(&args)
        .and_then(|matches| <Cli as clap::FromArgMatches>::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => Cli {
            words: args.iter().skip(1).cloned().collect(),
            ..cli
        },
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Bare `memprof`: a short usage, not the whole help.
            let _ = io::stderr().write_all(SHORT_USAGE.as_bytes());
            return 2;
        }
        Err(mut e) if e.use_stderr() => {
            suggest_inspect(&mut e, &args);
            let _ = io::stderr().write_all(usage_error(&e).as_bytes());
            return 2;
        }
        Err(e) => {
            // --help, --version: to stdout as clap writes them.
            let _ = e.print();
            return 0;
        }
    };
    render::style::enable(cli.color.enabled(!cli.command.outputs().is_empty()));
    match crate::commands::run(cli) {
        Ok(()) => 0,
        Err(err) if is_broken_pipe(&err) => 0,
        Err(err) => match err.downcast_ref::<crate::api::BudgetExceeded>() {
            Some(exceeded) => {
                // The verdict, then what to run next.
                let mut stderr = io::stderr();
                let _ = writeln!(stderr, "memprof: check failed: {exceeded}");
                for step in &exceeded.next_steps {
                    let _ = writeln!(stderr, "memprof: {}", render::escape_control(step));
                }
                1
            }
            None => {
                let _ = writeln!(io::stderr(), "memprof: error: {}", one_line(&err));
                2
            }
        },
    }
}

/// clap's message as clap prints it (several lines: the error, tips, the
/// usage), under memprof's `memprof: error:` prefix instead of its
/// `error:`, with control characters escaped line by line (the arguments
/// it quotes reach a terminal).
fn usage_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let text = match text.strip_prefix("error: ") {
        Some(rest) => format!("memprof: error: {rest}"),
        None => format!("memprof: error: {text}"),
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(&render::escape_control(line));
        out.push('\n');
    }
    out
}

/// `memprof FILE`: an unrecognized subcommand that names a file (or looks
/// like an instance's name) gets a tip to run `inspect` on it, with the
/// rest of the command line.
fn suggest_inspect(e: &mut clap::Error, args: &[OsString]) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::InvalidSubcommand {
        return;
    }
    let Some(ContextValue::String(word)) = e.get(ContextKind::InvalidSubcommand) else {
        return;
    };
    let path = std::path::Path::new(word);
    let named = path.extension().and_then(|x| x.to_str()).is_some_and(|x| {
        ["ommx", "pb", "gz", "tgz", "tar", "json"].contains(&x.to_ascii_lowercase().as_str())
    });
    if !(path.exists() || named || word.contains(std::path::MAIN_SEPARATOR)) {
        return;
    }
    let rest: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| shell_word(&a.to_string_lossy()))
        .collect();
    let tip = format!("to profile a file, run: memprof inspect {}", rest.join(" "));
    let mut tips = match e.get(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => tips.clone(),
        _ => Vec::new(),
    };
    tips.push(tip.into());
    e.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
}

/// `word` as a shell reads it back: as it is when it needs no quoting,
/// else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
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
    crate::api::one_line(err)
}
