//! Several inputs in one run: shell-style patterns expanded (for shells and
//! CI configurations that pass them quoted), the files processed in parallel
//! by a bounded pool, results handed back in argument order.
//!
//! Parallelism is split, not multiplied: with P files in flight on a
//! machine of N cores, each instance decodes with N / P threads (at least
//! one), so the cores stay busy without oversubscribing them. The output
//! does not depend on the split: results are kept in argument order and the
//! first failing file (in that order) is the error reported.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// Expands each argument that is not an existing path but contains glob
/// characters (`*`, `?`, `[`) into the matching paths, sorted. A pattern
/// matching nothing is an error (a CI job silently checking no file would
/// pass forever). Only files and directories are taken: a FIFO, a socket or
/// a device a pattern happens to match would block or never end (one named
/// outright is read, as the user asked).
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in args {
        // A name that is not UTF-8 is taken as it is: glob patterns are text.
        let Some(arg) = path.to_str() else {
            out.push(path.clone());
            continue;
        };
        let is_pattern = arg.contains(['*', '?', '[']);
        if arg == "-" || !is_pattern || path.exists() {
            out.push(path.clone());
            continue;
        }
        glob::Pattern::new(arg).with_context(|| format!("{arg}: not a valid pattern"))?;
        let mut matched = Vec::new();
        for path in matching_paths(path)? {
            if std::fs::metadata(&path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
                continue;
            }
            matched.push(path);
        }
        if matched.is_empty() {
            bail!("{arg}: the pattern matches no file");
        }
        matched.sort();
        out.extend(matched);
    }
    if out.iter().filter(|a| a.as_os_str() == "-").count() > 1 {
        bail!("-: standard input can be read only once");
    }
    Ok(out)
}

/// The paths matching `pattern`, component by component as the glob crate
/// matches them (`*`, `?`, `[...]` within a name, `**` for any depth of
/// directories, names starting with `.` included), except that names that
/// are not UTF-8 are matched too (through their lossy text, where a `*` or
/// a `?` covers the undecodable bytes) rather than skipped.
fn matching_paths(pattern: &Path) -> Result<Vec<PathBuf>> {
    use std::path::Component;
    let is_pattern =
        |part: &std::ffi::OsStr| part.to_str().is_some_and(|p| p.contains(['*', '?', '[']));
    let mut current = vec![PathBuf::new()];
    for component in pattern.components() {
        match component {
            Component::Normal(part) if part == "**" => {
                // This directory and every directory below it (links to
                // directories are not followed, so no cycle).
                let mut all = Vec::new();
                let mut stack = current;
                while let Some(dir) = stack.pop() {
                    let read = if dir.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        &dir
                    };
                    if let Ok(entries) = std::fs::read_dir(read) {
                        for entry in entries.flatten() {
                            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                                stack.push(dir.join(entry.file_name()));
                            }
                        }
                    }
                    all.push(dir);
                }
                current = all;
            }
            Component::Normal(part) if is_pattern(part) => {
                let text = part.to_str().expect("patterns are UTF-8");
                let matcher = glob::Pattern::new(text)
                    .with_context(|| format!("{}: not a valid pattern", pattern.display()))?;
                let mut next = Vec::new();
                for dir in &current {
                    let read = if dir.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        dir
                    };
                    let Ok(entries) = std::fs::read_dir(read) else {
                        continue;
                    };
                    for entry in entries.flatten() {
                        let name = entry.file_name();
                        if matcher.matches(&name.to_string_lossy()) {
                            next.push(dir.join(name));
                        }
                    }
                }
                current = next;
            }
            other => {
                for path in &mut current {
                    path.push(other);
                }
            }
        }
    }
    current.retain(|p| !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_ok());
    current.sort();
    current.dedup();
    Ok(current)
}

use crate::profiled::files::FileRun;

/// How many inputs are processed at once: the pass's threads when set
/// (`MEMPROF_THREADS`), else the machine's parallelism, never more than the
/// inputs.
fn pool_size(inputs: usize) -> usize {
    let cores = crate::pass::Settings::from_environment()
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    cores.min(inputs).max(1)
}

/// Runs `work` on every input, several at a time, each given its share of
/// the cores as the most threads it may decode with (`None`: one input at a
/// time, no cap), and returns the results
/// in input order, or the error of the first input (in input order) that
/// failed.
pub fn run_all<I: Sync, T: Send>(
    inputs: &[I],
    label: impl Fn(&I) -> String + Sync,
    work: impl Fn(&I, Option<usize>) -> Result<T> + Sync,
) -> Result<Vec<FileRun<T>>> {
    let pool = pool_size(inputs.len());
    // Parallelism is split, not multiplied: each input's share of the cores.
    let threads = (pool > 1).then(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores / pool).max(1)
    });
    let timed = |input: &I| {
        let start = Instant::now();
        work(input, threads).map(|value| FileRun {
            name: label(input),
            value,
            elapsed: start.elapsed(),
        })
    };
    if pool == 1 {
        return inputs.iter().map(&timed).collect();
    }
    let next = AtomicUsize::new(0);
    // The lowest failing index so far: later inputs need not start.
    let failed = AtomicUsize::new(usize::MAX);
    let results: Mutex<Vec<Option<Result<FileRun<T>>>>> =
        Mutex::new((0..inputs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..pool {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= inputs.len() || i > failed.load(Ordering::Relaxed) {
                    break;
                }
                let result = timed(&inputs[i]);
                if result.is_err() {
                    failed.fetch_min(i, Ordering::Relaxed);
                }
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
            });
        }
    });
    let mut out = Vec::with_capacity(inputs.len());
    for result in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        match result {
            Some(run) => out.push(run?),
            None => unreachable!("inputs before the first failure all ran"),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_expand_sorted_and_must_match() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.pb", "a.pb", "c.txt"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let pattern = PathBuf::from(format!("{}/*.pb", dir.path().display()));
        let got = expand(std::slice::from_ref(&pattern)).unwrap();
        let want: Vec<PathBuf> = ["a.pb", "b.pb"]
            .iter()
            .map(|n| dir.path().join(n))
            .collect();
        assert_eq!(got, want);
        let none = format!("{}/*.ommx", dir.path().display());
        let err = expand(&[PathBuf::from(&none)]).unwrap_err().to_string();
        assert_eq!(err, format!("{none}: the pattern matches no file"));
        assert!(expand(&["-".into(), "-".into()]).is_err());
    }

    #[test]
    fn results_come_back_in_input_order_and_the_first_failure_wins() {
        let inputs: Vec<PathBuf> = (0..20).map(|i| PathBuf::from(i.to_string())).collect();
        let number = |s: &Path| s.to_str().unwrap_or_default().parse::<u32>();
        let label = |s: &PathBuf| s.display().to_string();
        let runs = run_all(&inputs, label, |s, _| Ok(number(s)? * 2)).unwrap();
        let values: Vec<u32> = runs.iter().map(|r| r.value).collect();
        assert_eq!(values, (0..20).map(|i| i * 2).collect::<Vec<_>>());
        let err = run_all(&inputs, label, |s, _| {
            let n: u32 = number(s)?;
            if n % 7 == 3 {
                bail!("input {n} failed");
            }
            Ok(n)
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "input 3 failed");
    }
}
