//! `memprof check`: profiles against budgets and baselines, a verdict per
//! rule and file, the exit status CI reads.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::api::{self, Account, BaselineSource, Budget, BudgetExceeded, CheckRequest, Profile};
use crate::cli::compare::CheckArgs;
use crate::output::{input_files, Output};
use crate::render::{self, Format, ProfileView, ViewOptions};

/// `words`: the command line as given (after the program name), from which
/// the update suggested after a failed check is made.
pub fn run(args: CheckArgs, words: &[OsString]) -> Result<()> {
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
    let verdicts = &outcome.verdicts;
    output.write_with(|out| render::write(verdicts, args.format, out))?;
    append_job_summary(verdicts)?;
    let mut stderr = std::io::stderr();
    for w in &outcome.warnings {
        let line = format!("memprof: warning: {w}");
        let _ = writeln!(stderr, "{}", crate::render::escape_control(&line));
    }
    if args.update_baseline {
        return save_baselines(&outcome, &request.files);
    }
    if !verdicts.pass && args.warn_only {
        let _ = writeln!(
            stderr,
            "memprof: warning: {} (--warn-only: exit 0)",
            api::exceeding(verdicts.failed_files(), verdicts.files.len())
        );
        return Ok(());
    }
    if !verdicts.pass {
        return Err(BudgetExceeded {
            failed: verdicts.failed_files(),
            files: verdicts.files.len(),
            next_steps: outcome.next_steps(&request, &update_command(words)),
        }
        .into());
    }
    Ok(())
}

/// This check's command line with `--update-baseline`: the same files (a
/// pattern still a pattern), baseline, budget and options, less where the
/// report goes and its format (`-o`, `-f`), which an update does not need
/// and which may name what exists only where the check ran (the GitHub
/// Action's report is a runner's temporary file).
fn update_command(words: &[OsString]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = words.iter().map(|w| w.to_string_lossy().into_owned());
    while let Some(word) = words.next() {
        if word == "--" {
            // What follows is files only: the flag goes before.
            out.push("--update-baseline".to_string());
            out.push(word);
            out.extend(words);
            return out;
        }
        match report_option(&word) {
            Some((kept, value_follows)) => {
                out.extend(kept);
                if value_follows {
                    words.next();
                }
            }
            None => out.push(word),
        }
    }
    out.push("--update-baseline".to_string());
    out
}

/// Whether `word` is `check`'s `-o`/`--output` or `-f`/`--format`: the
/// short flags before it in the same word, to keep (`-q` in `-qo`), and
/// whether its value is the next word.
fn report_option(word: &str) -> Option<(Option<String>, bool)> {
    if word == "--output" || word == "--format" {
        return Some((None, true));
    }
    if word.starts_with("--output=") || word.starts_with("--format=") {
        return Some((None, false));
    }
    let shorts = word.strip_prefix('-').filter(|s| !s.starts_with('-'))?;
    // -q is check's one short flag without a value.
    let from = shorts.trim_start_matches('q');
    let value = from.strip_prefix(['o', 'f'])?;
    let quiet = &shorts[..shorts.len() - from.len()];
    Some((
        (!quiet.is_empty()).then(|| format!("-{quiet}")),
        value.is_empty(),
    ))
}

/// With `GITHUB_STEP_SUMMARY` set (a GitHub Actions job), the markdown
/// report is appended to the job's summary.
fn append_job_summary(verdicts: &api::Verdicts) -> Result<()> {
    let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) else {
        return Ok(());
    };
    let path = PathBuf::from(summary);
    let mut text = Vec::new();
    render::write(verdicts, Format::Markdown, &mut text)?;
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
        let profile = Profile::of(&new.profiled, Account::Memory);
        Output::File(target.clone()).write_with(|out| {
            render::write(
                &ProfileView::new(&profile, ViewOptions::default()),
                Format::Json,
                out,
            )
        })?;
        let _ = writeln!(
            std::io::stderr(),
            "memprof: {}: baseline of {} updated",
            target.display(),
            file.label()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(line: &str) -> String {
        let words: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        update_command(&words).join(" ")
    }

    #[test]
    fn the_update_is_the_same_check_less_where_its_report_goes() {
        assert_eq!(
            update("check a.pb --baseline b --budget c.yaml --layer 0"),
            "check a.pb --baseline b --budget c.yaml --layer 0 --update-baseline"
        );
        assert_eq!(
            update("check a.pb --baseline b --format json -o out.json -q"),
            "check a.pb --baseline b -q --update-baseline"
        );
        assert_eq!(
            update("check a.pb --output=x -fjson -qo x --baseline b"),
            "check a.pb -q --baseline b --update-baseline"
        );
        assert_eq!(
            update("--color never check --baseline b -- -o.pb"),
            "--color never check --baseline b --update-baseline -- -o.pb"
        );
    }
}
