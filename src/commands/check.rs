//! `memprof check`: profiles against budgets and baselines, a verdict per
//! rule and file, the exit status CI reads.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::api::{self, Account, BaselineSource, Budget, BudgetExceeded, CheckRequest, Profile};
use crate::cli::compare::CheckArgs;
use crate::output::{input_files, Output};
use crate::render::check as check_render;

pub fn run(args: CheckArgs) -> Result<()> {
    let options = args.common.options()?;
    let files = api::expand(&args.files)?;
    api::one_stdin(
        files
            .iter()
            .map(PathBuf::as_path)
            .chain(args.baseline.as_deref())
            .chain(args.budget.as_deref()),
    )?;
    let budget = match &args.budget {
        Some(path) => {
            let name = api::Input::from_path(path).display_name();
            let budget = Budget::load(path).with_context(|| name.clone())?;
            Some((name, budget))
        }
        None => None,
    };
    let output = Output::from_arg(args.output.as_deref());
    let mut inputs = input_files(files.iter().map(PathBuf::as_path));
    if let Some(b) = &args.baseline {
        inputs.push(b);
    }
    if let Some(b) = &args.budget {
        inputs.push(b);
    }
    output.check_not_input(&inputs)?;
    let request = CheckRequest {
        files: api::inputs(&files),
        baseline: args.baseline.as_deref().map(BaselineSource::from_path),
        budget,
        update_baseline: args.update_baseline,
    };
    let outcome = api::check(&request, &options)?;
    let report = &outcome.report;
    output.write_with(|out| check_render::render(report, args.format, out))?;
    append_job_summary(report)?;
    let mut stderr = std::io::stderr();
    for w in &outcome.warnings {
        let line = format!("memprof: warning: {w}");
        let _ = writeln!(stderr, "{}", crate::render::escape_control(&line));
    }
    if args.update_baseline {
        return save_baselines(&outcome, &request.files);
    }
    if !report.pass && args.warn_only {
        let _ = writeln!(
            stderr,
            "memprof: warning: {} (--warn-only: exit 0)",
            api::exceeding(report.failed_files(), report.files.len())
        );
        return Ok(());
    }
    if !report.pass {
        return Err(BudgetExceeded {
            failed: report.failed_files(),
            files: report.files.len(),
            next_steps: outcome.next_steps(&request),
        }
        .into());
    }
    Ok(())
}

/// With `GITHUB_STEP_SUMMARY` set (a GitHub Actions job), the markdown
/// report is appended to the job's summary.
fn append_job_summary(report: &api::CheckReport) -> Result<()> {
    let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) else {
        return Ok(());
    };
    let path = PathBuf::from(summary);
    let mut text = Vec::new();
    check_render::markdown::render(report, &mut text)?;
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
        })
}

/// `--update-baseline`: each file's profile saved (atomically) as its
/// baseline.
fn save_baselines(outcome: &api::CheckOutcome, files: &[api::Input]) -> Result<()> {
    for ((target, new), file) in outcome.updates.iter().zip(files) {
        let profile = Profile::of(&new.report, Account::Memory);
        Output::File(target.clone())
            .write_with(|out| crate::render::json::render(&profile, None, false, out))?;
        let _ = writeln!(
            std::io::stderr(),
            "memprof: {}: baseline of {} updated",
            target.display(),
            file.label()
        );
    }
    Ok(())
}
