//! ARCHITECTURE.md kept true: its floor table against every `crate::` path
//! of every source file (imports only run down), no import circle among
//! files, no outlier of a file, clap only in `cli/`, and the surfaces (the
//! commands, the Python wheel) naming nothing of the engine below the API.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lines a source file may have before its test module: an outlier cap, not
/// a target (files are cut where a step or a concept ends).
const MAX_LINES: usize = 1000;

/// Import circles that may stand, each as its files: the entry call from
/// `cli` into `commands` and back for the shell completions.
const ALLOWED_CIRCLES: &[&[&str]] = &[&["cli/mod.rs", "cli/shell.rs", "commands/mod.rs"]];

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
fn imports_run_down_the_floors_no_outlier_file_and_clap_stays_in_cli() {
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

/// A source file's module path (`pass/terms/mod.rs` is `pass::terms`).
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| ["mod", "lib", "main"].contains(&l.as_str()))
    {
        parts.pop();
    }
    parts
}

/// The module paths a file's code names through `crate::`, `super::` and
/// `self::` (`here` is the file's own module; `is_dir` whether it is a
/// `mod.rs`, whose `super` is its folder's parent), each member of a
/// `use ...::{a, b::c}` group included. Paths are as written: the caller
/// resolves each to the deepest module that exists.
fn module_references(code: &str, here: &[String], is_dir: bool) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let parent = if is_dir || here.is_empty() {
        here[..here.len().saturating_sub(1)].to_vec()
    } else {
        here[..here.len() - 1].to_vec()
    };
    let mut found = Vec::new();
    for (at, _) in code.match_indices("::") {
        let start = code[..at].rfind(|c: char| !ident(c)).map_or(0, |i| i + 1);
        let base = match &code[start..at] {
            "crate" => Vec::new(),
            "super" => parent.clone(),
            "self" => here.to_vec(),
            _ => continue,
        };
        if code[..start].ends_with("::") {
            continue; // `super::super::x`: read from its first `super`
        }
        let mut path = base;
        let mut rest = &code[at + 2..];
        loop {
            if let Some(more) = rest.strip_prefix("super::") {
                path.pop();
                rest = more;
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for member in group[..end].split(',') {
                    let mut p = path.clone();
                    p.extend(
                        member
                            .trim()
                            .split("::")
                            .map(|s| s.trim().trim_start_matches('{').to_string())
                            .take_while(|s| !s.is_empty() && s.chars().all(ident) && s != "self"),
                    );
                    found.push(p);
                }
                break;
            }
            let name: String = rest.chars().take_while(|&c| ident(c)).collect();
            if name.is_empty() {
                found.push(path);
                break;
            }
            rest = &rest[name.len()..];
            path.push(name);
            match rest.strip_prefix("::") {
                Some(more) => rest = more,
                None => {
                    found.push(path);
                    break;
                }
            }
        }
    }
    found
}

/// The import circles among the files of `src/` (strongly connected
/// components of the graph of files naming each other), each as its
/// files' paths, sorted.
fn import_circles() -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    rust_files(&root().join("src"), &mut paths);
    let src = root().join("src");
    let modules: BTreeMap<Vec<String>, String> = paths
        .iter()
        .map(|p| {
            let relative = p.strip_prefix(&src).unwrap();
            (module_of(relative), relative.display().to_string())
        })
        .collect();
    let resolve = |path: &[String]| {
        (1..=path.len())
            .rev()
            .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k.clone()))
    };
    let mut edges: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let code = before_tests(&text);
        let is_dir = ["mod.rs", "lib.rs", "main.rs"]
            .iter()
            .any(|n| file.ends_with(n));
        let targets = edges.entry(module).or_default();
        for path in module_references(code, module, is_dir) {
            if let Some(target) = resolve(&path).filter(|t| t != module) {
                targets.insert(target);
            }
        }
    }
    // Files that reach each other, both ways, are one circle.
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        modules.keys().map(|m| (m, reach(m))).collect();
    let mut circles = BTreeSet::new();
    for (m, from_m) in &reached {
        let circle: BTreeSet<String> = from_m
            .iter()
            .filter(|other| reached[other].contains(*m))
            .chain(std::iter::once(*m))
            .map(|other| modules[other].clone())
            .collect();
        if circle.len() > 1 {
            circles.insert(circle.into_iter().collect::<Vec<_>>());
        }
    }
    circles.into_iter().collect()
}

#[test]
fn no_import_circle_among_the_files_of_src() {
    let allowed: Vec<Vec<String>> = ALLOWED_CIRCLES
        .iter()
        .map(|c| c.iter().map(|f| f.to_string()).collect())
        .collect();
    let circles = import_circles();
    let new: Vec<String> = circles
        .iter()
        .filter(|c| !allowed.contains(c))
        .map(|c| c.join(", "))
        .collect();
    assert!(new.is_empty(), "import circles:\n{}", new.join("\n"));
    let gone: Vec<String> = allowed
        .iter()
        .filter(|c| !circles.contains(c))
        .map(|c| c.join(", "))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer a circle (drop it from ALLOWED_CIRCLES):\n{}",
        gone.join("\n")
    );
}

#[test]
fn the_checks_read_what_they_are_meant_to() {
    let here: Vec<String> = ["pass", "terms", "count"].map(String::from).to_vec();
    let named = |code: &str, is_dir: bool| -> Vec<String> {
        let here = if is_dir { &here[..2] } else { &here[..] };
        module_references(code, here, is_dir)
            .into_iter()
            .map(|p| p.join("::"))
            .collect()
    };
    assert_eq!(
        named(
            "use super::{split, polynomial::X};\nlet a = crate::model::alloc::table(1);",
            false
        ),
        [
            "pass::terms::split",
            "pass::terms::polynomial::X",
            "model::alloc::table"
        ]
    );
    assert_eq!(
        named(
            "use super::accounts::Accounts; use self::count::Held; super::super::x::y();",
            true
        ),
        [
            "pass::accounts::Accounts",
            "pass::terms::count::Held",
            "x::y"
        ]
    );
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
