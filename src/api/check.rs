//! Budgets and baselines: each file's profile against its rules, a verdict
//! per rule and file, and what `--update-baseline` would save where. What
//! to run after a failed check is `next_steps`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::load::{each, load_within};
use super::{Input, Loaded, Options};
use crate::check::budget::{Budget, BudgetRule};
use crate::check::{self, Verdicts};

/// What the files are compared with.
#[derive(Debug, Clone)]
pub enum BaselineSource {
    /// One profile (an instance or a baseline JSON) for every file.
    Shared(Input),
    /// A directory holding `<file name>.json` per file.
    Directory(PathBuf),
}

impl BaselineSource {
    /// A `--baseline` argument: a directory of baselines, or one profile.
    pub fn from_path(path: &Path) -> Self {
        if path.is_dir() {
            BaselineSource::Directory(path.to_path_buf())
        } else {
            BaselineSource::Shared(Input::from_path(path))
        }
    }
}

/// A check as asked.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub files: Vec<Input>,
    pub baseline: Option<BaselineSource>,
    /// The budget and how to name it in messages and reports (its file).
    pub budget: Option<(String, Budget)>,
    /// The files' profiles are to become their baselines.
    pub update_baseline: bool,
}

/// What a check found.
#[derive(Debug)]
pub struct CheckOutcome {
    pub verdicts: Verdicts,
    /// Rules that matched no path of a file, in file order.
    pub warnings: Vec<String>,
    /// With `update_baseline`: each file's profile and the baseline file it
    /// is saved to.
    pub updates: Vec<(PathBuf, Loaded)>,
    /// What the one baseline every file was compared with is, when there
    /// is one (the next steps withhold an update that would overwrite it).
    pub(super) shared: Option<SharedBaseline>,
    /// Per file of the report: the input it was saved from, when the file
    /// is a saved baseline rather than an instance (`advise` reads only
    /// instances).
    pub(super) saved_from: Vec<Option<String>>,
}

/// The one `--baseline` profile shared by every file.
#[derive(Debug, Clone)]
pub(super) enum SharedBaseline {
    /// An instance, profiled for the check.
    Instance,
    /// A saved baseline, and the input it was saved from.
    SavedFrom(String),
}

/// A file's baseline, if it has one.
enum BaselineFor {
    None,
    Found(Loaded),
    /// The baseline directory holds none for the file yet: it is new.
    Added,
}

/// The rules of `budget`, numbered from 1 as the file lists them; without
/// one, the rule of a bare `--baseline`: the total may not grow.
fn numbered(budget: Option<&Budget>) -> Vec<(usize, BudgetRule)> {
    match budget {
        Some(budget) => budget
            .rules
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, r)| (i + 1, r))
            .collect(),
        None => vec![(0, BudgetRule::default_growth())],
    }
}

/// `DIR/<file name>.json`, the baseline of `file` in a baseline directory.
fn baseline_path(dir: &Path, file: &Input) -> Result<PathBuf> {
    let Input::Path(path) = file else {
        bail!(
            "{}: has no file name to find its baseline by",
            file.display_name()
        );
    };
    let name = path.file_name().with_context(|| {
        format!(
            "{}: has no file name to find its baseline by",
            path.display()
        )
    })?;
    let mut json = name.to_os_string();
    json.push(".json");
    Ok(dir.join(json))
}

/// Checks every file of `request` (several at once), each against its
/// baseline and the budget's rules.
pub fn check(request: &CheckRequest, options: &Options) -> Result<CheckOutcome> {
    let rules = numbered(request.budget.as_ref().map(|(_, b)| b));
    if let (None, Some((name, _))) = (&request.baseline, &request.budget) {
        check::require_baseline(&rules, name)?;
    }
    if let (Some(BaselineSource::Shared(b)), true) = (&request.baseline, request.update_baseline) {
        if !rewritable(b) {
            bail!(
                "{}: --update-baseline needs a baseline file to write, not standard input, \
                 a pipe or a FIFO",
                b.display_name()
            );
        }
    }
    let shared = match &request.baseline {
        Some(BaselineSource::Shared(b)) if request.update_baseline && request.files.len() > 1 => {
            bail!(
                "{}: --update-baseline with several files needs a --baseline directory \
                 (one <file name>.json each), not one file",
                b.display_name()
            )
        }
        Some(BaselineSource::Shared(Input::Path(b))) if request.update_baseline && !b.exists() => {
            None
        }
        Some(BaselineSource::Shared(b)) => Some(load_within(b, options, None)?),
        _ => None,
    };
    // Rules that compare with a baseline do not apply to a file without one.
    let without_baseline: Vec<(usize, BudgetRule)> = rules
        .iter()
        .filter(|(_, r)| !r.needs_baseline())
        .cloned()
        .collect();
    let runs = each(&request.files, options, |file, threads, quiet| {
        let per_file = Options {
            progress: !quiet,
            ..options.clone()
        };
        let new = load_within(file, &per_file, threads)?;
        let baseline = match (&request.baseline, &shared) {
            (Some(BaselineSource::Directory(dir)), _) => {
                let path = baseline_path(dir, file)?;
                if path.exists() {
                    BaselineFor::Found(load_within(&Input::Path(path), &per_file, threads)?)
                } else {
                    BaselineFor::Added
                }
            }
            (_, Some(shared)) => BaselineFor::Found(shared.clone()),
            _ => BaselineFor::None,
        };
        let name = file.label();
        let (rules, baseline) = match &baseline {
            BaselineFor::Found(b) => (&rules, Some(b)),
            BaselineFor::Added => (&without_baseline, None),
            // --update-baseline creating the baseline file.
            BaselineFor::None if request.baseline.is_some() => (&without_baseline, None),
            BaselineFor::None => (&rules, None),
        };
        let (mut verdict, unmatched) = check::check_file(&name, &new, baseline, rules)?;
        verdict.added = request.baseline.is_some() && baseline.is_none();
        let warnings = unmatched
            .into_iter()
            .map(|position| unmatched_warning(&name, &rules[position]))
            .collect::<Vec<_>>();
        Ok((verdict, warnings, new))
    })?;
    let mut file_verdicts = Vec::new();
    let mut warnings = Vec::new();
    let mut updates = Vec::new();
    let mut saved_from = Vec::new();
    for (run, file) in runs.into_iter().zip(&request.files) {
        let (verdict, file_warnings, new) = run.value;
        file_verdicts.push(verdict);
        saved_from.push(new.baseline.as_ref().map(|b| b.input.clone()));
        warnings.extend(file_warnings);
        if request.update_baseline {
            let target = match &request.baseline {
                Some(BaselineSource::Directory(dir)) => baseline_path(dir, file)?,
                Some(BaselineSource::Shared(Input::Path(path))) => path.clone(),
                Some(BaselineSource::Shared(other)) => bail!(
                    "{}: --update-baseline needs a baseline file to write",
                    other.display_name()
                ),
                None => bail!("--update-baseline needs --baseline"),
            };
            updates.push((target, new));
        }
    }
    let verdicts = Verdicts::new(
        request.budget.as_ref().map(|(n, _)| n.clone()),
        file_verdicts,
    );
    Ok(CheckOutcome {
        verdicts,
        warnings,
        updates,
        shared: shared.map(|loaded| match loaded.baseline {
            Some(info) => SharedBaseline::SavedFrom(info.input),
            None => SharedBaseline::Instance,
        }),
        saved_from,
    })
}

/// Whether `--update-baseline` can write `baseline` back: a regular file,
/// or a path with nothing there yet (standard input, a pipe such as the
/// shell's `<(...)` and a FIFO were read once and cannot hold it).
pub(super) fn rewritable(baseline: &Input) -> bool {
    matches!(baseline, Input::Path(path) if path.is_file() || !path.exists())
}

fn unmatched_warning(file: &str, (n, rule): &(usize, BudgetRule)) -> String {
    format!(
        "{file}: rule {n} (path {:?}) matches no path",
        rule.path.text
    )
}

/// One profile checked against `budget` and/or `baseline` (a notebook's
/// `Profile.check`): without a budget, the total may not grow past the
/// baseline. `budget_file` names the budget's file, when it has one.
pub fn check_one(
    new: &Loaded,
    budget: Option<&Budget>,
    budget_file: Option<&str>,
    baseline: Option<&Loaded>,
) -> Result<CheckOutcome> {
    if budget.is_none() && baseline.is_none() {
        bail!("check needs a budget, a baseline or both");
    }
    let rules = numbered(budget);
    if baseline.is_none() {
        check::require_baseline(&rules, budget_file.unwrap_or("budget"))?;
    }
    let file = new.name().to_string();
    let (verdict, unmatched) = check::check_file(&file, new, baseline, &rules)?;
    let warnings = unmatched
        .into_iter()
        .map(|position| unmatched_warning(&file, &rules[position]))
        .collect();
    Ok(CheckOutcome {
        verdicts: Verdicts::new(budget_file.map(str::to_string), vec![verdict]),
        warnings,
        updates: Vec::new(),
        shared: None,
        saved_from: vec![new.baseline.as_ref().map(|b| b.input.clone())],
    })
}
