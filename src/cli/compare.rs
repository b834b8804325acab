//! Arguments and wiring of `memprof diff` and `memprof check`: the commands
//! that compare profiles, each input an instance or a saved baseline.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{ArgGroup, Args};

use crate::check::budget::{Budget, Rule};
use crate::check::{self, BudgetExceeded, CheckReport};
use crate::output::{input_files, Output};
use crate::render::check::{self as check_render, CheckFormat};
use crate::render::diff::{self as diff_render, DiffFormat, DiffView, DiffViewOptions};
use crate::source::{self, ProfileOptions, Source};

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
}

impl CompareCommon {
    fn options(&self) -> Result<ProfileOptions> {
        Ok(ProfileOptions {
            layer: self.layer,
            quiet: self.quiet,
            limits: self.limits.limits(),
            group_by: self.profile.group_by,
            account: self
                .profile
                .single_account("diff and check (use memory or wire)")?,
            reading: self.profile.reading(),
        })
    }
}

#[derive(Debug, Args)]
#[command(after_help = "\
OLD and NEW are each an instance (.ommx archive, OCI directory, raw bytes, '-' for stdin) \
or a baseline saved with `memprof inspect FILE --format json`; the kind is detected from the \
content.\n\n\
--flamegraph out.svg writes two differential flamegraphs (red grew, blue shrank): out.svg with \
frames as wide as the new bytes (added paths show there) and out.old.svg, the negated graph with \
frames as wide as the old bytes (removed paths show there).")]
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
    #[arg(short, long, value_enum, default_value_t = DiffFormat::Table)]
    pub format: DiffFormat,
    /// Table and markdown: at most N changed paths (table default 25; markdown: as many as fit).
    #[arg(long, value_name = "N")]
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
#[command(after_help = "\
Exit status: 0 every budget holds, 1 at least one is exceeded, 2 any error (then no verdict).\n\n\
Each FILE is an instance or a baseline JSON; a FILE argument with *, ? or [ that names no \
existing file is expanded as a glob. With --baseline and no --budget the rule is: the total may \
not grow at all. --baseline DIR compares each FILE with DIR/<file name>.json.\n\n\
When GITHUB_STEP_SUMMARY is set, the markdown report is appended to that file.")]
pub struct CheckArgs {
    /// Instances or baselines to check (globs are expanded).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Baseline to compare with: a profile (instance or baseline JSON), or a directory holding <file name>.json per FILE.
    #[arg(long, value_name = "B")]
    pub baseline: Option<PathBuf>,
    /// Budget file (YAML `rules:`; see the README).
    #[arg(long, value_name = "FILE")]
    pub budget: Option<PathBuf>,
    #[command(flatten)]
    pub common: CompareCommon,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = CheckFormat::Table)]
    pub format: CheckFormat,
    /// Write the report to FILE instead of stdout ('-' is stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn one_stdin<'a>(args: impl IntoIterator<Item = &'a Path>) -> Result<()> {
    if args.into_iter().filter(|a| a.as_os_str() == "-").count() > 1 {
        bail!("-: standard input can be read only once");
    }
    Ok(())
}

pub fn run_diff(args: DiffArgs) -> Result<()> {
    let migration = args.common.profile.accounting == Some(super::AccountingArg::Both);
    let new_arg: &Path = match (&args.new, migration) {
        (Some(new), false) => new.as_path(),
        (None, true) => args.old.as_path(),
        (Some(_), true) => bail!(
            "--accounting 2.9,3.0 compares one input with itself (OMMX 2.9.3's count against OMMX 3.0's): give one file"
        ),
        (None, false) => bail!("diff needs OLD and NEW (or one file with --accounting 2.9,3.0)"),
    };
    if migration && args.old.as_os_str() == "-" {
        bail!("--accounting 2.9,3.0 reads its input twice: give a file, not standard input");
    }
    if !migration {
        one_stdin([args.old.as_path(), new_arg])?;
    }
    let inputs = input_files([args.old.as_path(), new_arg]);
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&inputs)?;
    let graphs = match &args.flamegraph {
        None => None,
        Some(path) if path.as_os_str() == "-" => {
            bail!("--flamegraph needs a file name: it writes two graphs (FILE and FILE.old.svg)")
        }
        Some(path) => {
            let old_path = diff_render::svg::old_graph_path(path);
            let new_graph = Output::File(path.clone());
            let old_graph = Output::File(old_path.clone());
            new_graph.check_not_input(&inputs)?;
            old_graph.check_not_input(&inputs)?;
            Some((new_graph, old_graph, old_path))
        }
    };
    let options = args.common.options()?;
    let (old, new) = if migration {
        let counted = |accounting| ProfileOptions {
            reading: crate::decode::Reading {
                accounting: Some(accounting),
                ..options.reading
            },
            ..options.clone()
        };
        use crate::decode::Accounting;
        (
            source::load(&args.old, &counted(Accounting::Ommx29))?,
            source::load(&args.old, &counted(Accounting::Ommx30))?,
        )
    } else {
        (
            source::load(&args.old, &options)?,
            source::load(new_arg, &options)?,
        )
    };
    let view = DiffView::new(&old, &new);
    let view_options = DiffViewOptions {
        top: args.top,
        depth: args.depth,
    };
    // Render the graphs before writing anything, so a failure leaves no file.
    let rendered = match &graphs {
        None => None,
        Some((_, _, old_path)) => {
            let new_name = args.flamegraph.as_ref().expect("set").display().to_string();
            let old_name = old_path.display().to_string();
            let mut new_svg = Vec::new();
            diff_render::svg::render(
                &view,
                diff_render::svg::Widths::New,
                &old_name,
                &mut new_svg,
            )?;
            let mut old_svg = Vec::new();
            diff_render::svg::render(
                &view,
                diff_render::svg::Widths::Old,
                &new_name,
                &mut old_svg,
            )?;
            Some((new_svg, old_svg))
        }
    };
    output.write_with(|out| {
        match args.format {
            DiffFormat::Table => diff_render::table::render(&view, &view_options, out)?,
            DiffFormat::Tree => diff_render::tree::render(&view, &view_options, out)?,
            DiffFormat::Json => diff_render::json::render(&view, out)?,
            DiffFormat::Markdown => diff_render::markdown::render(&view, &view_options, out)?,
            DiffFormat::Folded => diff_render::folded::render(&view, out)?,
        }
        Ok(())
    })?;
    if let (Some((new_graph, old_graph, _)), Some((new_svg, old_svg))) = (graphs, rendered) {
        new_graph.write_with(|out| Ok(out.write_all(&new_svg)?))?;
        old_graph.write_with(|out| Ok(out.write_all(&old_svg)?))?;
    }
    Ok(())
}

/// Where each file's baseline comes from.
enum Baselines {
    None,
    /// One profile for every file.
    Shared(Box<Source>),
    /// `DIR/<file name>.json` per file.
    Directory(PathBuf),
}

impl Baselines {
    fn for_file(&self, file: &Path, options: &ProfileOptions) -> Result<Option<(Source, bool)>> {
        match self {
            Baselines::None => Ok(None),
            Baselines::Shared(source) => Ok(Some(((**source).clone(), true))),
            Baselines::Directory(dir) => {
                let name = file.file_name().with_context(|| {
                    format!(
                        "{}: has no file name to find its baseline by",
                        file.display()
                    )
                })?;
                let mut json = name.to_os_string();
                json.push(".json");
                let path = dir.join(json);
                if !path.is_file() {
                    bail!(
                        "{}: no baseline for {} (expected this file in the --baseline directory)",
                        path.display(),
                        file.display()
                    );
                }
                let source = source::load(&path, options)?;
                Ok(Some((source, true)))
            }
        }
    }
}

pub fn run_check(args: CheckArgs) -> Result<()> {
    let options = args.common.options()?;
    let rules: Vec<(usize, Rule)> = match &args.budget {
        Some(path) => {
            let budget = Budget::load(path).with_context(|| path.display().to_string())?;
            budget
                .rules
                .into_iter()
                .enumerate()
                .map(|(i, r)| (i + 1, r))
                .collect()
        }
        None => vec![(0, Rule::default_growth())],
    };
    if args.baseline.is_none() {
        if let Some(budget) = &args.budget {
            check::require_baseline(&rules, &budget.display().to_string())?;
        }
    }
    let files = crate::batch::expand(&args.files)?;
    one_stdin(
        files
            .iter()
            .map(PathBuf::as_path)
            .chain(args.baseline.as_deref()),
    )?;
    let output = Output::from_arg(args.output.as_deref());
    let mut inputs = input_files(files.iter().map(PathBuf::as_path));
    if let Some(b) = &args.baseline {
        inputs.push(b);
    }
    if let Some(b) = &args.budget {
        inputs.push(b);
    }
    output.check_not_input(&inputs)?;

    let baselines = match &args.baseline {
        None => Baselines::None,
        Some(b) if b.is_dir() => Baselines::Directory(b.clone()),
        Some(b) => Baselines::Shared(Box::new(source::load(b, &options)?)),
    };
    // Files are checked in parallel; reports and warnings keep file order.
    let runs = crate::batch::run_all(&files, |file| {
        let mut warnings = Vec::new();
        let new = source::load(file, &options)?;
        let baseline = baselines.for_file(file, &options)?;
        let name = file.display().to_string();
        let (report, unmatched) =
            check::check_file(&name, &new, baseline.as_ref().map(|(b, _)| b), &rules)?;
        for position in unmatched {
            let (n, rule) = &rules[position];
            warnings.push(format!(
                "memprof: warning: {}: rule {n} (path {:?}) matches no path",
                file.display(),
                rule.path.text
            ));
        }
        Ok((report, warnings))
    })?;
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    for run in runs {
        let (report, file_warnings) = run.value;
        reports.push(report);
        warnings.extend(file_warnings);
    }
    let report = CheckReport::new(
        args.budget.as_ref().map(|b| b.display().to_string()),
        reports,
    );
    output.write_with(|out| {
        match args.format {
            CheckFormat::Table => check_render::table::render(&report, out)?,
            CheckFormat::Json => check_render::json::render(&report, out)?,
            CheckFormat::Markdown => check_render::markdown::render(&report, out)?,
            CheckFormat::Junit => check_render::junit::render(&report, out)?,
        }
        Ok(())
    })?;
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        let path = PathBuf::from(summary);
        let mut text = Vec::new();
        check_render::markdown::render(&report, &mut text)?;
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(&text))
            .with_context(|| {
                format!(
                    "{}: cannot append the summary (GITHUB_STEP_SUMMARY)",
                    path.display()
                )
            })?;
    }
    let mut stderr = std::io::stderr();
    for w in warnings {
        let _ = writeln!(stderr, "{}", crate::render::escape_control(&w));
    }
    if !report.pass {
        return Err(BudgetExceeded {
            failed: report.failed_files(),
            files: report.files.len(),
        }
        .into());
    }
    Ok(())
}
