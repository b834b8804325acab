//! ARCHITECTURE.md kept true: its floor table against every `crate::` path
//! of every source file (imports only run down), files short enough to
//! read before their tests, clap only in `cli/`, and the surfaces (the
//! commands, the Python wheel) naming nothing of the engine below the API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lines a source file may have before its test module.
const MAX_LINES: usize = 600;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The floor of each top-level module of `src/`, from the table's rows
/// `| N name | modules |` (bottom floor 0).
fn floors() -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut floors = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let Some(floor) = cells
            .first()
            .and_then(|c| c.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        for cell in &cells[1..] {
            for name in cell.split('`').filter(|s| !s.trim().is_empty()) {
                let name = name.trim().trim_end_matches('/').trim_end_matches(".rs");
                let is_module = root().join("src").join(name).is_dir()
                    || root().join("src").join(format!("{name}.rs")).is_file();
                if is_module && !name.is_empty() {
                    floors.entry(name.to_string()).or_insert(floor);
                }
            }
        }
    }
    floors
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's text before its test module: the first `#[cfg(test)]` that an
/// inline `mod NAME {` follows (neither a `#[cfg(test)] use ...` nor a
/// `#[cfg(test)] mod tests;` declaration ends the code).
fn before_tests(text: &str) -> &str {
    let mut offset = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            let item = next
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if item.starts_with("mod ") && item.ends_with('{') {
                return &text[..offset];
            }
        }
        offset += line.len();
    }
    text
}

/// Every module named by a `crate::` path, including each member of a
/// `crate::{a, b::c}` group.
fn crate_references(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut member = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    let name: String = member
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        names.push(name);
                    }
                    member.clear();
                    if depth == 0 {
                        break;
                    }
                } else if depth == 1 {
                    member.push(c);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
        }
    }
    names
}

#[test]
fn imports_run_down_the_floors_files_stay_short_and_clap_stays_in_cli() {
    let floors = floors();
    for required in ["profile", "model", "pass", "input", "api", "render", "cli"] {
        assert!(
            floors.contains_key(required),
            "the floor table lacks {required}"
        );
    }
    assert!(floors["profile"] < floors["model"] && floors["model"] < floors["pass"]);
    assert!(floors["pass"] < floors["input"] && floors["input"] < floors["api"]);
    assert!(floors["api"] < floors["render"] && floors["render"] < floors["cli"]);
    let top = floors.values().max().unwrap() + 1;
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut problems = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(root().join("src")).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let here = match module.as_str() {
            "main" | "lib" => top,
            _ => match floors.get(&module) {
                Some(&floor) => floor,
                None => {
                    problems.push(format!("{module} is in no floor of ARCHITECTURE.md"));
                    continue;
                }
            },
        };
        let text = std::fs::read_to_string(path).unwrap();
        let code = before_tests(&text);
        let lines = code.lines().count();
        if lines > MAX_LINES {
            problems.push(format!(
                "{} has {lines} lines before its tests",
                relative.display()
            ));
        }
        if module != "cli"
            && module != "main"
            && (code.contains("clap::") || code.contains("ValueEnum"))
        {
            problems.push(format!("{} uses clap outside cli/", relative.display()));
        }
        for name in crate_references(code) {
            if floors.get(&name).is_some_and(|&floor| floor > here) {
                problems.push(format!(
                    "{} imports {name} from a floor above",
                    relative.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The commands and the Python wheel are surfaces: arguments in, one call
/// of the analysis API, a rendered document out. They name nothing of the
/// engine below it.
#[test]
fn the_surfaces_call_the_api_only() {
    let allowed = ["api", "cli", "render", "output", "trace", "commands"];
    let mut files = Vec::new();
    rust_files(&root().join("src/commands"), &mut files);
    rust_files(&root().join("python/src"), &mut files);
    let mut problems = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let code = before_tests(&text);
        let mut names = crate_references(code);
        names.extend(crate_references(&code.replace("memprof::", "crate::")));
        for name in names {
            if !allowed.contains(&name.as_str()) {
                problems.push(format!("{} names {name}", path.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checks_read_what_they_are_meant_to() {
    assert_eq!(
        crate_references("use crate::{api::{self, Input}, render::x};\nlet y = crate::pass::Pass;"),
        ["api", "render", "pass"]
    );
    let text = "fn a() {}\n#[cfg(test)]\nuse x;\n#[cfg(test)]\nmod tests;\nfn b() {}\n#[cfg(test)]\nmod tests {\n}\n";
    assert_eq!(
        before_tests(text),
        "fn a() {}\n#[cfg(test)]\nuse x;\n#[cfg(test)]\nmod tests;\nfn b() {}\n"
    );
}
