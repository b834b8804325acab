//! Text formats people hand memprof instead of an instance: optimization
//! models in MPS, LP or QPLIB text, folded stacks, and any other text
//! (Markdown, YAML, CSV, ...), named by its shape. Recognised only to
//! explain a failed instance decode (see `looks_like` in the parent), so a
//! wrong guess costs a message, never a refused instance.
//!
//! Other text is named only when the first bytes are text: UTF-8 (a
//! character cut at the end allowed) with no control character but
//! whitespace. An instance's first bytes never are: its first field's
//! length is a control character below 32 bytes and not UTF-8 from 128.

use super::folded;

/// What `head` (an input's first bytes) looks like, with how to get an
/// instance from it, if it is one of these text formats.
pub fn describe(head: &[u8]) -> Option<&'static str> {
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
        Err(_) => return None,
    };
    let first_word = |comment: char| {
        let mut lines = text
            .lines()
            .map(str::trim)
            .filter(move |l| !l.is_empty() && !l.starts_with(comment));
        move || {
            lines
                .next()
                .and_then(|l| l.split_whitespace().next())
                .map(str::to_ascii_lowercase)
        }
    };
    let mut mps = first_word('*');
    if matches!(mps().as_deref(), Some("name" | "rows" | "objsense")) {
        return Some(
            "an MPS model (text); convert it with the ommx package: \
             ommx.v1.Instance.load_mps(\"model.mps\").to_bytes() gives instance bytes",
        );
    }
    let mut lp = first_word('\\');
    if matches!(
        lp().as_deref(),
        Some(
            "minimize"
                | "maximize"
                | "minimise"
                | "maximise"
                | "minimum"
                | "maximum"
                | "min"
                | "max"
        )
    ) {
        return Some(
            "an LP-format model (text); the ommx package reads MPS, not LP: write the model as \
             MPS (e.g. glpsol --lp model.lp --wfreemps model.mps, or your solver), then \
             ommx.v1.Instance.load_mps(\"model.mps\").to_bytes() gives instance bytes",
        );
    }
    let mut qplib = first_word('!');
    let (_name, code, sense) = (qplib(), qplib(), qplib());
    let is_code = code.as_deref().is_some_and(|c| {
        let c = c.as_bytes();
        c.len() == 3
            && b"lqcdg".contains(&c[0])
            && b"cnbmig".contains(&c[1])
            && b"nblqcdg".contains(&c[2])
    });
    if is_code && matches!(sense.as_deref(), Some("minimize" | "maximize")) {
        return Some(
            "a QPLIB model (text); convert it with the ommx package: \
             ommx.v1.Instance.load_qplib(\"model.qplib\").to_bytes() gives instance bytes",
        );
    }
    // Folded stacks need one whole line (`plausible` passes a line cut
    // short).
    if head.contains(&b'\n') && folded::plausible(head, false) {
        return Some(
            "folded stacks (text): memprof flamegraph draws them; the other commands need an \
             instance or archive",
        );
    }
    other_text(text)
}

/// What text of no format above looks like, if `text` is text at all.
/// Markdown's links, code fences, tables and underlined titles are told
/// first (YAML's values rarely hold them); its `# Title` and lists after
/// YAML and TOML, whose comments and lists look the same.
fn other_text(text: &str) -> Option<&'static str> {
    if text
        .chars()
        .any(|c| c.is_control() && !c.is_ascii_whitespace())
    {
        return None;
    }
    let mut raw: Vec<&str> = text.lines().map(str::trim_end).collect();
    if !text.ends_with('\n') && raw.len() > 1 {
        // The last line may be cut short.
        raw.pop();
    }
    let lines: Vec<&str> = raw.iter().copied().filter(|l| !l.is_empty()).collect();
    let markdown = markdown(&raw);
    Some(if lines.first().is_some_and(|l| l.starts_with("#!")) {
        "a script (text)"
    } else if markdown == Markdown::Marked {
        "Markdown text"
    } else if is_yaml(&lines) {
        "YAML text"
    } else if is_toml(&lines) {
        "TOML or INI text"
    } else if markdown == Markdown::Likely {
        "Markdown text"
    } else if let Some(kind) = delimited(&lines) {
        kind
    } else {
        "plain text"
    })
}

/// Every line a YAML comment, document marker, `key: value`, list item or
/// indented continuation, with at least one key (or a directive or `---`
/// first): a list alone is as much Markdown.
fn is_yaml(lines: &[&str]) -> bool {
    let opened = lines
        .first()
        .is_some_and(|l| *l == "---" || l.starts_with("%YAML"));
    let mut keys = 0;
    for line in lines {
        let item = line.trim_start();
        let item = item
            .strip_prefix("- ")
            .or(item.strip_prefix('-').filter(|rest| rest.is_empty()))
            .map(str::trim_start)
            .unwrap_or(item);
        let indented = line.starts_with([' ', '\t']) || item.len() < line.trim_start().len();
        if yaml_key(item) {
            keys += 1;
        } else if !(item.is_empty()
            || item.starts_with('#')
            || matches!(*line, "---" | "...")
            || line.starts_with('%')
            || indented)
        {
            return false;
        }
    }
    keys > 0 || opened
}

/// `key:` ending the line or followed by a blank, the key a plain or
/// quoted scalar.
fn yaml_key(item: &str) -> bool {
    let key = match item.split_once(": ") {
        Some((key, _)) => key,
        None => match item.strip_suffix(':') {
            Some(key) => key,
            None => return false,
        },
    };
    let quoted = |q: char| key.len() >= 2 && key.starts_with(q) && key.ends_with(q);
    !key.is_empty()
        && (quoted('"')
            || quoted('\'')
            || (!key.starts_with(['[', '{', '|', '>', '*', '&', '!', '%', '@', '`', '#', '-'])
                && !key.contains(['#', '{', '[', ']', '}'])))
}

/// Every line a comment, a `[table]` or `key = value` (or a continuation
/// of a value), with at least one of each or a key before any table.
fn is_toml(lines: &[&str]) -> bool {
    let bare = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | ' '))
    };
    let mut keys = 0;
    for line in lines {
        let table = line
            .strip_prefix("[[")
            .and_then(|l| l.strip_suffix("]]"))
            .or(line.strip_prefix('[').and_then(|l| l.strip_suffix(']')));
        let key = line.split_once('=').map(|(key, _)| key.trim());
        if table.is_some_and(bare) {
            continue;
        } else if key.is_some_and(bare) {
            keys += 1;
        } else if !(line.starts_with(['#', ';', ' ', '\t', ']', '}'])) {
            return false;
        }
    }
    keys > 0
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Markdown {
    /// A fenced code block, a link, a table row or an underlined title.
    Marked,
    /// A first line `# Title` and a blank line, or two list items, quotes
    /// or titles followed by a blank line.
    Likely,
    No,
}

/// How much `lines` (blank ones kept) look like Markdown.
fn markdown(lines: &[&str]) -> Markdown {
    let title = |i: usize| {
        let l = lines[i];
        let hashes = l.len() - l.trim_start_matches('#').len();
        (1..=6).contains(&hashes)
            && l[hashes..].starts_with(' ')
            && lines.get(i + 1).is_some_and(|next| next.is_empty())
    };
    let underline = |i: usize, c: char| {
        let l = lines[i];
        i > 0 && !lines[i - 1].is_empty() && l.len() >= 3 && l.chars().all(|x| x == c)
    };
    let marked = lines.iter().enumerate().any(|(i, l)| {
        l.starts_with("```")
            || l.starts_with("~~~")
            || l.contains("](")
            || (l.starts_with('|') && l.ends_with('|') && l.len() > 1)
            || underline(i, '=')
            || underline(i, '-')
    });
    let marks = (0..lines.len())
        .filter(|&i| {
            let l = lines[i].trim_start();
            title(i) || ["- ", "* ", "+ ", "> "].iter().any(|m| l.starts_with(m))
        })
        .count();
    let first = lines.iter().position(|l| !l.is_empty());
    if marked {
        Markdown::Marked
    } else if first.is_some_and(title) || marks >= 2 {
        Markdown::Likely
    } else {
        Markdown::No
    }
}

/// Two lines or more with the same number of commas, tabs or semicolons
/// (outside double quotes), at least one.
fn delimited(lines: &[&str]) -> Option<&'static str> {
    if lines.len() < 2 {
        return None;
    }
    let count = |line: &str, sep: char| {
        let mut quoted = false;
        line.chars()
            .filter(|&c| {
                quoted ^= c == '"';
                c == sep && !quoted
            })
            .count()
    };
    [
        (',', "CSV text"),
        ('\t', "tab-separated text"),
        (';', "CSV text (separated by ;)"),
    ]
    .into_iter()
    .find(|&(sep, _)| {
        let first = count(lines[0], sep);
        first > 0 && lines.iter().all(|l| count(l, sep) == first)
    })
    .map(|(_, kind)| kind)
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn text_models_are_named() {
        let mps = "* a comment\nNAME          TESTLP\nROWS\n N  COST\n";
        assert!(describe(mps.as_bytes())
            .unwrap()
            .starts_with("an MPS model"));
        let lp = "\\ Problem\nMaximize\n obj: x + y\nSubject To\n";
        assert!(describe(lp.as_bytes())
            .unwrap()
            .starts_with("an LP-format model"));
        let qplib = "! ----\nMIPBAND # problem name\nQML # type\nMinimize # sense\n3 # variables\n";
        assert!(describe(qplib.as_bytes())
            .unwrap()
            .starts_with("a QPLIB model"));
        let folded = "Instance.constraints;Constraint.id 40\nInstance.sense 1\n";
        assert!(describe(folded.as_bytes())
            .unwrap()
            .starts_with("folded stacks"));
        assert_eq!(describe(b"\x08\x01\x12"), None);
    }

    #[test]
    fn other_text_is_named_by_its_shape() {
        let cases: [(&str, &str); 12] = [
            ("# memprof\n\nSee where the memory goes.\n", "Markdown text"),
            ("Intro, with [a link](x.md).\n", "Markdown text"),
            ("Title\n=====\n\nText.\n", "Markdown text"),
            ("- one\n- two\n", "Markdown text"),
            (
                "# A budget\nrules:\n  - path: total\n    max: 1 KiB\n",
                "YAML text",
            ),
            ("---\n- a\n- b\n", "YAML text"),
            ("[package]\nname = \"x\"\n", "TOML or INI text"),
            ("id,name,bytes\n1,\"a, b\",3\n", "CSV text"),
            ("id\tbytes\n1\t3\n", "tab-separated text"),
            ("#!/bin/sh\necho hi\n", "a script (text)"),
            ("hello world\n", "plain text"),
            // The first bytes of a longer file: its last line is cut.
            ("Subject: hi\n\nbody text\nkey: val", "plain text"),
        ];
        for (text, kind) in cases {
            assert_eq!(describe(text.as_bytes()), Some(kind), "{text:?}");
        }
        // Control characters (a protobuf length) are not text; a character
        // cut at the end is.
        assert_eq!(describe(b"\n\x05hello"), None);
        assert_eq!(describe(b"caf\xc3"), Some("plain text"));
        assert_eq!(describe(b"caf\xc3("), None);
        assert_eq!(describe(b"a.b 40"), Some("plain text"));
    }
}
