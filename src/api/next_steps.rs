//! After a failed check, what to run next, said for the rule that failed:
//! a file over an absolute limit (`max`, `max_per_*`) is pointed at the
//! rule's line in the budget file and at `memprof advise`, which says what
//! would shrink it; a file that grew past a `max_growth` rule at the `memprof
//! diff` that shows which paths grew, and at the `--update-baseline` that
//! accepts the growth.
//!
//! An update is suggested only where it would do what it says: the same
//! check again (its budget and every other argument kept), writing each
//! file's profile where that file's own baseline is. It is withheld, with
//! the reason, when the baseline is another input's profile or an instance,
//! which it would overwrite; a diff is never suggested for an absolute
//! limit, against which an unchanged file would show nothing.

use std::path::Path;

use super::check::{rewritable, BaselineSource, CheckOutcome, CheckRequest, SharedBaseline};
use super::Input;
use crate::check::{FileVerdict, LimitKind, LimitResult};

/// Failed files given their own steps; the rest are counted.
const SHOWN: usize = 3;

impl CheckOutcome {
    /// What to run next after a failed check, one line each: for each of
    /// the first files that failed, the steps for its rules, then the
    /// update that accepts their growth. `update` is this check's command
    /// line with `--update-baseline`, as the user would type it again
    /// (after `memprof`).
    pub fn next_steps(&self, request: &CheckRequest, update: &[String]) -> Vec<String> {
        let failed: Vec<(&FileVerdict, Option<&String>)> = self
            .verdicts
            .files
            .iter()
            .zip(&self.saved_from)
            .filter(|(f, _)| !f.pass)
            .map(|(f, saved_from)| (f, saved_from.as_ref()))
            .collect();
        let mut steps = Vec::new();
        for &(file, saved_from) in failed.iter().take(SHOWN) {
            steps.extend(over_a_limit(file, saved_from, request));
            steps.extend(grown(file, request));
        }
        if failed.len() > SHOWN {
            steps.push(format!("(and {} more files)", failed.len() - SHOWN));
        }
        let grew: Vec<&FileVerdict> = failed
            .into_iter()
            .map(|(f, _)| f)
            .filter(|f| f.results.iter().any(is_growth_failure))
            .collect();
        if !grew.is_empty() {
            steps.extend(self.update(request, &grew, update));
        }
        steps
    }

    /// The update that accepts the growth of `grew`, or why there is none.
    fn update(
        &self,
        request: &CheckRequest,
        grew: &[&FileVerdict],
        update: &[String],
    ) -> Option<String> {
        let accept = || {
            let words: Vec<String> = update.iter().map(|w| shell_word(w)).collect();
            format!("if the growth is intended: memprof {}", words.join(" "))
        };
        let withheld = |why: String| format!("no --update-baseline suggested: {why}");
        match &request.baseline {
            Some(BaselineSource::Directory(_)) => Some(accept()),
            Some(BaselineSource::Shared(b @ Input::Path(path))) if rewritable(b) => {
                let shared = path.display().to_string();
                if request.files.len() > 1 {
                    return Some(withheld(format!(
                        "the {} files share the one baseline {shared}; to accept their \
                         growth, give each its own: --baseline DIR, one <file name>.json each",
                        request.files.len()
                    )));
                }
                match &self.shared {
                    Some(SharedBaseline::Instance) => Some(withheld(format!(
                        "{shared} is an instance, not a saved baseline, and would be \
                         overwritten"
                    ))),
                    Some(SharedBaseline::SavedFrom(input))
                        if !same_input(path, input, &grew[0].file) =>
                    {
                        Some(withheld(format!(
                            "{shared} is the baseline of {input}, not of {}, and would be \
                             overwritten",
                            grew[0].file
                        )))
                    }
                    _ => Some(accept()),
                }
            }
            // Standard input, a pipe or a FIFO: read once, nothing to write.
            _ => None,
        }
    }
}

fn is_growth_failure(result: &LimitResult) -> bool {
    !result.pass && result.limit == LimitKind::MaxGrowth
}

/// `file`'s absolute limits exceeded: the first rule's place in the budget
/// file, and what would shrink the file (`advise` on the instance, the one
/// a saved baseline was saved from).
fn over_a_limit(
    file: &FileVerdict,
    saved_from: Option<&String>,
    request: &CheckRequest,
) -> Option<String> {
    let over: Vec<&LimitResult> = file
        .results
        .iter()
        .filter(|r| !r.pass && r.limit != LimitKind::MaxGrowth)
        .collect();
    let first = over.first()?;
    let advise = match saved_from {
        Some(instance) => format!(
            "memprof advise {} (the instance it was saved from)",
            shell_word(instance)
        ),
        None => format!("memprof advise {}", shell_word(&file.file)),
    };
    Some(format!(
        "{} is over {}{}: to see what would shrink it: {advise}; \
         if the size is intended, raise {} in the budget",
        file.file,
        rule_place(first, request),
        more(over.len() - 1),
        if over.len() == 1 {
            "that limit"
        } else {
            "those limits"
        },
    ))
}

/// `file`'s growth past its baseline: the first rule, and the diff that
/// shows which paths grew.
fn grown(file: &FileVerdict, request: &CheckRequest) -> Option<String> {
    let grew: Vec<&LimitResult> = file
        .results
        .iter()
        .filter(|r| is_growth_failure(r))
        .collect();
    let first = grew.first()?;
    let old = file.baseline.as_ref()?;
    // A baseline read from standard input is `-` again.
    let old = match request.baseline {
        Some(BaselineSource::Shared(Input::Stdin)) => "-".to_string(),
        _ => shell_word(old),
    };
    Some(format!(
        "{} grew past {}{}: to see why: memprof diff {old} {}",
        file.file,
        rule_place(first, request),
        more(grew.len() - 1),
        shell_word(&file.file)
    ))
}

/// ` and 2 more limits`, or nothing.
fn more(others: usize) -> String {
    match others {
        0 => String::new(),
        1 => " and 1 more limit".to_string(),
        n => format!(" and {n} more limits"),
    }
}

/// Where the limit of `result` is written: `rule 2 at budget.yaml:5 (total
/// max 200 MiB)` (no line when the budget's layout hid it), or `the default
/// rule (total max_growth 0%)`.
fn rule_place(result: &LimitResult, request: &CheckRequest) -> String {
    let limit = format!(
        "{} {} {}",
        result.path,
        result.limit.key(),
        result.limit_text
    );
    let Some((name, budget)) = request.budget.as_ref().filter(|_| result.rule > 0) else {
        return format!("the default rule ({limit})");
    };
    match budget.rules.get(result.rule - 1).and_then(|r| r.line) {
        Some(line) => format!("rule {} at {name}:{line} ({limit})", result.rule),
        None => format!("rule {} of {name} ({limit})", result.rule),
    }
}

/// Whether the baseline file `baseline`, saved from `made_from`, is
/// `file`'s own: it was saved from a file of that name, or it is named as a
/// baseline directory names it (`<file name>.json`).
fn same_input(baseline: &Path, made_from: &str, file: &str) -> bool {
    let name = |path: &str| Path::new(path).file_name().map(|n| n.to_os_string());
    let file_name = name(file);
    if file_name.is_some() && name(made_from) == file_name {
        return true;
    }
    file_name.is_some_and(|mut n| {
        n.push(".json");
        baseline.file_name() == Some(n.as_os_str())
    })
}

/// A word of a command line as a POSIX shell reads it back: quoted when it
/// holds anything but letters, digits and `-_./:,=@%+`.
pub(super) fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:,=@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_is_a_files_own_by_what_it_was_saved_from_or_its_name() {
        let saved = Path::new("baselines/model.json");
        assert!(same_input(saved, "out/model.ommx", "build/model.ommx"));
        assert!(!same_input(saved, "out/other.ommx", "model.ommx"));
        let named = Path::new("baselines/model.ommx.json");
        assert!(same_input(named, "out/other.ommx", "model.ommx"));
    }

    #[test]
    fn words_are_quoted_only_when_a_shell_would_split_them() {
        assert_eq!(shell_word("out/a-1.ommx"), "out/a-1.ommx");
        assert_eq!(shell_word("out/*.ommx"), "'out/*.ommx'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
