//! The README and every page of `docs/` run: every fenced block that starts
//! with `$ memprof ...` is run from the repository root and its output
//! (stdout, then stderr) must be the block's remaining lines, so the examples
//! cannot drift from the tool. Every relative link leads to a file that
//! exists, and every `#anchor` to a heading of its page.
//!
//! In the shown output a line `...` stands for any number of lines and
//! `...` inside a line for any text, which is how the README elides long or
//! run-dependent output (timings). `$ memprof A | memprof B` pipes A into B;
//! `> /dev/null` drops stdout. A block's command must succeed unless its
//! output shows a memprof error. Each `memprof ...` line of a `sh` block
//! (synopses, CI recipes) must at least parse as a memprof command line.
//!
//! `README_BLESS=1 cargo test --test cli readme` rewrites the output of
//! every block without elisions from the binary; review the diff.

use std::path::{Path, PathBuf};

use super::memprof;

struct Example {
    /// Line index of the `$ ` line in the README.
    line: usize,
    command: String,
    shown: Vec<String>,
}

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The README and the pages of `docs/`, as paths relative to the root.
fn documents() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| path.strip_prefix(ROOT).unwrap().to_path_buf())
        .collect();
    pages.sort();
    pages.insert(0, PathBuf::from("README.md"));
    assert!(
        pages.len() >= 10,
        "docs/ has only {} pages",
        pages.len() - 1
    );
    pages
}

fn read(document: &Path) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(document)).unwrap()
}

/// The fenced blocks: (language, index of the first content line, lines).
fn blocks(text: &str) -> Vec<(String, usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start();
        if let Some(rest) = fence.strip_prefix("```") {
            match open.take() {
                Some(block) => out.push(block),
                None => open = Some((rest.trim().to_string(), i + 1, Vec::new())),
            }
        } else if let Some((_, _, lines)) = &mut open {
            lines.push(line.to_string());
        }
    }
    assert!(open.is_none(), "a page ends inside a code block");
    out
}

fn examples(text: &str) -> Vec<Example> {
    blocks(text)
        .into_iter()
        .filter_map(|(_, start, lines)| {
            let command = lines.first()?.strip_prefix("$ memprof ")?.to_string();
            Some(Example {
                line: start,
                command: format!("memprof {command}"),
                shown: lines[1..].to_vec(),
            })
        })
        .collect()
}

/// Words as a POSIX shell splits them (quotes, no expansion).
pub(crate) fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref().take_while(|&c| c != '\'') {
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref().take_while(|&c| c != '"') {
                    w.push(c);
                }
            }
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// Runs a command line of memprof invocations joined by `|`; returns the
/// output as shown (stdout then stderr) and whether every stage succeeded.
fn run(command: &str) -> (String, bool) {
    let mut input: Option<Vec<u8>> = None;
    let mut shown = String::new();
    let mut ok = true;
    for stage in command.split(" | ") {
        let mut args = words(stage);
        assert_eq!(args.remove(0), "memprof", "{stage}");
        let quiet = args.ends_with(&[">".to_string(), "/dev/null".to_string()]);
        if quiet {
            args.truncate(args.len() - 2);
        }
        let mut cmd = memprof();
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("COLUMNS")
            .env_remove("NO_COLOR")
            .args(&args);
        // No piped input: empty stdin, as from `< /dev/null`.
        cmd.write_stdin(input.take().unwrap_or_default());
        let out = cmd.output().unwrap();
        ok &= out.status.success();
        shown.push_str(&String::from_utf8_lossy(&out.stderr));
        if quiet {
            continue;
        }
        input = Some(out.stdout);
    }
    let stdout = String::from_utf8(input.unwrap_or_default()).unwrap();
    (format!("{stdout}{shown}"), ok)
}

/// Whether `actual` matches the pattern `line` (`...` = any text).
fn line_matches(pattern: &str, actual: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    if parts.len() == 1 {
        return pattern == actual;
    }
    let mut rest = match actual.strip_prefix(parts[0]) {
        Some(rest) => rest,
        None => return false,
    };
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(parts[parts.len() - 1])
}

/// Whether the lines `actual` match the shown lines (`...` alone = any lines).
fn matches(shown: &[String], actual: &[&str]) -> bool {
    match shown.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => match actual.split_first() {
            Some((a, more)) => line_matches(first, a) && matches(rest, more),
            None => false,
        },
    }
}

#[test]
fn every_example_prints_what_its_page_shows() {
    let bless = std::env::var_os("README_BLESS").is_some();
    let mut failures = Vec::new();
    let mut total = 0;
    for document in documents() {
        let text = read(&document);
        let examples = examples(&text);
        total += examples.len();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut blessed = false;
        // Last first, so blessing a block does not move the ones before it.
        for example in examples.iter().rev() {
            let (actual, ok) = run(&example.command);
            let shows_error = example.shown.iter().any(|l| {
                l.starts_with("memprof: error:") || l.starts_with("memprof: check failed")
            });
            assert!(
                ok || shows_error,
                "{} line {}: `{}` failed:\n{actual}",
                document.display(),
                example.line,
                example.command
            );
            let actual_lines: Vec<&str> = actual.lines().collect();
            if matches(&example.shown, &actual_lines) {
                continue;
            }
            let elided = example.shown.iter().any(|l| l.contains("..."));
            if bless && !elided {
                let start = example.line + 1;
                lines.splice(
                    start..start + example.shown.len(),
                    actual_lines.iter().map(|l| l.to_string()),
                );
                blessed = true;
            } else {
                failures.push(format!(
                    "{} line {}: `{}` prints\n{actual}",
                    document.display(),
                    example.line,
                    example.command
                ));
            }
        }
        if blessed {
            let mut new = lines.join("\n");
            new.push('\n');
            std::fs::write(Path::new(ROOT).join(&document), new).unwrap();
        }
    }
    assert!(total >= 20, "found only {total} examples");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped,
/// spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    let mut code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            code = !code;
        } else if !code && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_link_of_the_pages_leads_somewhere() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let text = read(&document);
        let base = document.parent().unwrap();
        for (i, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("](") {
                let rest = &line[at + 2..];
                let Some(end) = rest.find(')') else { continue };
                let target = &rest[..end];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
                let page = if file.is_empty() {
                    document.clone()
                } else {
                    base.join(file)
                };
                checked += 1;
                if !Path::new(ROOT).join(&page).exists() {
                    broken.push(format!(
                        "{}:{}: {target}: no such file",
                        document.display(),
                        i + 1
                    ));
                } else if !fragment.is_empty()
                    && !anchors(&read(&page)).iter().any(|a| a == fragment)
                {
                    broken.push(format!(
                        "{}:{}: {target}: no such heading",
                        document.display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(checked >= 30, "checked only {checked} links");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// Synopses and recipes (`sh` blocks) name real subcommands and options.
#[test]
fn every_memprof_line_of_the_readme_parses() {
    use clap::Parser;
    let mut checked = 0;
    for document in documents() {
        let text = read(&document);
        for (lang, start, lines) in blocks(&text) {
            if lang != "sh" && lang != "yaml" {
                continue;
            }
            for (i, line) in lines.iter().enumerate() {
                let Some(at) = line.find("memprof ") else {
                    continue;
                };
                let command = line[at..].split("  #").next().unwrap();
                let command = command.split(" | ").next().unwrap().trim_end_matches('\\');
                // A redirection of the output is the shell's business.
                let command = command.split(" >").next().unwrap();
                // Synopses with [optional] or a|b alternatives are documentation.
                if command.contains(['[', '|', '<', '$', '>', '('])
                    || command.contains("...")
                    || !line[..at]
                        .trim()
                        .trim_start_matches("run:")
                        .trim()
                        .is_empty()
                {
                    continue;
                }
                let args = words(command);
                if let Err(e) = memprof::cli::Cli::try_parse_from(&args) {
                    panic!(
                        "{} line {}: {command}\n{e}",
                        document.display(),
                        start + i + 1
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "checked only {checked} lines");
}
