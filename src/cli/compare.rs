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
    /// Report exceeded budgets as a warning and exit 0 (the report is unchanged).
    #[arg(long)]
    pub warn_only: bool,
    /// After checking, save each FILE's profile as its baseline (the --baseline
    /// file, or DIR/<file name>.json; written atomically) and exit 0: the new
    /// profiles are accepted.
    #[arg(long, requires = "baseline")]
    pub update_baseline: bool,
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
            DiffFormat::Yaml => diff_render::json::render_yaml(&view, out)?,
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

/// A file's baseline, if it has one.
enum BaselineFor {
    None,
    Found(Source),
    /// `--baseline DIR` holds no baseline for the file yet: it is new.
    Added,
}

impl Baselines {
    fn for_file(&self, file: &Path, options: &ProfileOptions) -> Result<BaselineFor> {
        match self {
            Baselines::None => Ok(BaselineFor::None),
            Baselines::Shared(source) => Ok(BaselineFor::Found((**source).clone())),
            Baselines::Directory(dir) => {
                let path = baseline_path(dir, file)?;
                if !path.exists() {
                    return Ok(BaselineFor::Added);
                }
                let source = source::load(&path, options)?;
                Ok(BaselineFor::Found(source))
            }
        }
    }

    /// Where `--update-baseline` saves `file`'s profile.
    fn target(&self, file: &Path, baseline: &Path) -> Result<PathBuf> {
        match self {
            Baselines::Directory(dir) => baseline_path(dir, file),
            _ => Ok(baseline.to_path_buf()),
        }
    }
}

/// `DIR/<file name>.json`, the baseline of `file` in a baseline directory.
fn baseline_path(dir: &Path, file: &Path) -> Result<PathBuf> {
    let name = file.file_name().with_context(|| {
        format!(
            "{}: has no file name to find its baseline by",
            file.display()
        )
    })?;
    let mut json = name.to_os_string();
    json.push(".json");
    Ok(dir.join(json))
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
        Some(b) if args.update_baseline && files.len() > 1 => bail!(
            "{}: --update-baseline with several files needs a --baseline directory \
             (one <file name>.json each), not one file",
            b.display()
        ),
        Some(b) if args.update_baseline && !b.exists() => Baselines::None,
        Some(b) => Baselines::Shared(Box::new(source::load(b, &options)?)),
    };
    // Rules that compare with a baseline do not apply to a file without one.
    let without_baseline: Vec<(usize, Rule)> = rules
        .iter()
        .filter(|(_, r)| !r.needs_baseline())
        .cloned()
        .collect();
    // Files are checked in parallel, under one bar counting them (each
    // file's own bar would fight it); reports and warnings keep file order.
    let several = files.len() > 1;
    let progress = crate::progress::files(options.quiet || !several, files.len());
    let per_file = ProfileOptions {
        quiet: options.quiet || several,
        ..options.clone()
    };
    let runs = crate::batch::run_all(&files, |file| {
        let mut warnings = Vec::new();
        let new = source::load(file, &per_file)?;
        let baseline = baselines.for_file(file, &per_file)?;
        let name = file.display().to_string();
        let (rules, baseline) = match &baseline {
            BaselineFor::Found(b) => (&rules, Some(b)),
            BaselineFor::Added => (&without_baseline, None),
            // --update-baseline creating the baseline file.
            BaselineFor::None if args.baseline.is_some() => (&without_baseline, None),
            BaselineFor::None => (&rules, None),
        };
        let (mut report, unmatched) = check::check_file(&name, &new, baseline, rules)?;
        report.added = args.baseline.is_some() && baseline.is_none();
        for position in unmatched {
            let (n, rule) = &rules[position];
            warnings.push(format!(
                "memprof: warning: {}: rule {n} (path {:?}) matches no path",
                file.display(),
                rule.path.text
            ));
        }
        progress.set_message(name);
        progress.inc(1);
        Ok((report, warnings, new))
    })?;
    progress.finish_and_clear();
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    let mut profiles = Vec::new();
    for run in runs {
        let (report, file_warnings, new) = run.value;
        reports.push(report);
        warnings.extend(file_warnings);
        profiles.push((run.name, new));
    }
    let report = CheckReport::new(
        args.budget.as_ref().map(|b| b.display().to_string()),
        reports,
    );
    output.write_with(|out| {
        match args.format {
            CheckFormat::Table => check_render::table::render(&report, out)?,
            CheckFormat::Json => check_render::json::render(&report, out)?,
            CheckFormat::Yaml => check_render::json::render_yaml(&report, out)?,
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
    if args.update_baseline {
        let baseline = args.baseline.as_deref().expect("clap requires --baseline");
        for (file, new) in &profiles {
            let target = baselines.target(Path::new(file), baseline)?;
            let profile = crate::render::Profile::of(&new.report, crate::render::Account::Memory);
            let document = crate::render::json::document(&profile);
            Output::File(target.clone())
                .write_with(|out| crate::render::json::write_json(&document, out))?;
            let _ = writeln!(
                stderr,
                "memprof: {}: baseline of {file} updated",
                target.display()
            );
        }
        return Ok(());
    }
    if !report.pass && args.warn_only {
        let _ = writeln!(
            stderr,
            "memprof: warning: {} of {} file(s) exceed a budget (--warn-only: exit 0)",
            report.failed_files(),
            report.files.len()
        );
        return Ok(());
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
