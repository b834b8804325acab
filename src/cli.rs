//! Command-line arguments (clap derive) and the one place that wires the
//! pipeline stages together for each subcommand.

use std::path::Path;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::decode::{self, limits::parse_size, Input, Limits, Selection};
use crate::output::Output;
use crate::render::{self, svg::SvgOptions, Format, Profile, ViewOptions};

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
        Exit status: 0 success, 2 error (bad input, bad arguments, I/O).\n\n\
        Environment: MEMPROF_THREADS=1 decodes on a single thread (same output, for comparison)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Profile an instance and print it in one of several formats.
    Inspect(InspectArgs),
    /// Render the profile as an SVG flamegraph.
    Flamegraph(FlamegraphArgs),
    /// List an archive's layers (media type, digest, size, annotations).
    Ls(LsArgs),
}

#[derive(Debug, Args)]
pub struct Common {
    /// Input: .ommx archive, OCI layout directory, raw instance bytes, or '-' for stdin.
    pub file: String,
    /// Profile only the N-th instance layer (0-based, manifest order), without a root frame.
    #[arg(long, value_name = "N")]
    pub layer: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// Refuse gzip input that decompresses to more than SIZE (e.g. 512MiB, 64GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4GiB")]
    pub max_decompressed: u64,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub common: Common,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Tree)]
    pub format: Format,
    /// Tree: show at most N levels; deeper ones are folded into their parent.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Tree: fold children smaller than P percent of the total into an "(N others)" row.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub min_percent: f64,
    /// Table: number of path rows.
    #[arg(long, value_name = "N", default_value_t = 25)]
    pub top: usize,
    /// Write to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<String>,
}

#[derive(Debug, Args)]
pub struct FlamegraphArgs {
    #[command(flatten)]
    pub common: Common,
    /// Where to write the SVG ('-' for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: String,
    /// Title of the graph (default: memprof, the file and the layer).
    #[arg(long)]
    pub title: Option<String>,
    /// Icicle graph: roots at the top.
    #[arg(long)]
    pub inverted: bool,
    /// Omit frames narrower than this many pixels.
    #[arg(long, value_name = "PIXELS")]
    pub min_width: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LsFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    /// Input: .ommx archive, OCI layout directory, raw instance bytes, or '-' for stdin.
    pub file: String,
    #[arg(short, long, value_enum, default_value_t = LsFormat::Table)]
    pub format: LsFormat,
    /// Refuse gzip input that decompresses to more than SIZE (e.g. 512MiB, 64GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4GiB")]
    pub max_decompressed: u64,
}

fn selection(layer: Option<usize>) -> Selection {
    layer.map_or(Selection::All, Selection::Layer)
}

fn read(common: &Common, selection: Selection) -> Result<decode::Report> {
    let input = Input::from_arg(&common.file);
    let bar = crate::progress::bar(common.quiet);
    let limits = Limits {
        max_decompressed: common.max_decompressed,
    };
    let report =
        decode::read_with(&input, selection, &limits, &bar).with_context(|| input.display_name());
    bar.finish_and_clear();
    report
}

fn input_paths(file: &str) -> Vec<&Path> {
    if file == "-" {
        Vec::new()
    } else {
        vec![Path::new(file)]
    }
}

/// Runs one command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Inspect(args) => {
            let output = Output::from_arg(args.output.as_deref());
            output.check_not_input(&input_paths(&args.common.file))?;
            let report = read(&args.common, selection(args.common.layer))?;
            let profile = Profile::new(&report);
            let view = ViewOptions {
                depth: args.depth,
                min_percent: args.min_percent,
                top: args.top,
            };
            output.write_with(|out| {
                match args.format {
                    Format::Folded => render::folded::render(&profile, out)?,
                    Format::Tree => render::tree::render(&profile, &view, out)?,
                    Format::Table => render::table::render(&profile, &view, out)?,
                    Format::Json => render::json::render_json(&profile, out)?,
                    Format::Yaml => render::json::render_yaml(&profile, out)?,
                }
                Ok(())
            })
        }
        Command::Flamegraph(args) => {
            let output = Output::from_arg(Some(&args.output));
            output.check_not_input(&input_paths(&args.common.file))?;
            let report = read(&args.common, selection(args.common.layer))?;
            let profile = Profile::new(&report);
            let options = SvgOptions {
                title: args.title,
                inverted: args.inverted,
                min_width: args.min_width,
            };
            output.write_with(|out| render::svg::render(&profile, &options, out))
        }
        Command::Ls(args) => {
            let common = Common {
                file: args.file,
                layer: None,
                quiet: true,
                max_decompressed: args.max_decompressed,
            };
            let report = read(&common, Selection::ListOnly)?;
            Output::Stdout.write_with(|out| match args.format {
                LsFormat::Table => render::layers::render_table(&report.document, out),
                LsFormat::Json => render::layers::render_json(&report.document, out),
            })
        }
    }
}
