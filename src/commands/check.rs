//! `memprof check`: profiles against budgets and baselines, a verdict per
//! rule and file, the exit status CI reads.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::diff::one_stdin;
use crate::check::budget::{Budget, BudgetRule};
use crate::check::{self, BudgetExceeded, CheckReport};
use crate::cli::compare::CheckArgs;
use crate::input::source::{self, LoadOptions, Source};
use crate::output::{input_files, Output};
use crate::render::check as check_render;
use crate::report::{Account, Profile};

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
    fn for_file(&self, file: &Path, options: &LoadOptions) -> Result<BaselineFor> {
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

pub fn run(args: CheckArgs) -> Result<()> {
    let options = args.common.options()?;
    let rules: Vec<(usize, BudgetRule)> = match &args.budget {
        Some(path) => {
            let budget = Budget::load(path).with_context(|| path.display().to_string())?;
            budget
                .rules
                .into_iter()
                .enumerate()
                .map(|(i, r)| (i + 1, r))
                .collect()
        }
        None => vec![(0, BudgetRule::default_growth())],
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
    let without_baseline: Vec<(usize, BudgetRule)> = rules
        .iter()
        .filter(|(_, r)| !r.needs_baseline())
        .cloned()
        .collect();
    // Files are checked in parallel, under one bar counting them (each
    // file's own bar would fight it); reports and warnings keep file order.
    let several = files.len() > 1;
    let progress = crate::progress::files(options.quiet || !several, files.len());
    let per_file = LoadOptions {
        quiet: options.quiet || several,
        ..options.clone()
    };
    let runs = crate::batch::run_all(&files, |file, threads| {
        let mut warnings = Vec::new();
        let per_file = LoadOptions {
            threads,
            ..per_file.clone()
        };
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
    output.write_with(|out| check_render::render(&report, args.format, out))?;
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
        let baseline = args
            .baseline
            .as_deref()
            .expect("--update-baseline requires --baseline");
        for (file, new) in &profiles {
            let target = baselines.target(Path::new(file), baseline)?;
            let profile = Profile::of(&new.report, Account::Memory);
            Output::File(target.clone())
                .write_with(|out| crate::render::json::render(&profile, None, false, out))?;
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
