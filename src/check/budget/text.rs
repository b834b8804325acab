//! What a budget's text says that its YAML parser cannot: how deep its flow
//! nesting goes, counted before the parser sees it (whose time grows with
//! the square of it), and the line where each rule starts, which the parser
//! does not keep. Both read the text line by line or character by
//! character, and neither decides what the budget means: the parser does.

/// The deepest flow nesting of `text`, counted in one pass before the YAML
/// parser sees it (brackets inside quoted strings and comments aside;
/// brackets in plain scalars count, which can only overestimate).
pub(super) fn flow_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    let mut previous = '\n';
    while let Some(c) = chars.next() {
        match c {
            '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' => {
                // '' inside is an escaped quote: the string goes on.
                while let Some(c) = chars.next() {
                    if c == '\'' && chars.next_if_eq(&'\'').is_none() {
                        break;
                    }
                }
            }
            '#' if previous.is_whitespace() => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            _ => {}
        }
        previous = c;
    }
    deepest
}

/// The line (1-based) where each rule of `text` starts, when the rules are
/// a block list under a top-level `rules:` key, as the docs write them
/// (`- path: ...` items, one indentation). The YAML parser keeps no
/// positions, so this reads the lines itself; a budget laid out otherwise
/// (flow style, JSON) gives a count that differs from the rules', and the
/// caller then names no line rather than a wrong one.
pub(super) fn rule_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut in_rules = false;
    let mut item_indent = None;
    for (i, line) in text.lines().enumerate() {
        let content = line.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = line.len() - content.len();
        if !in_rules {
            if indent == 0 {
                let Some(rest) = content.strip_prefix("rules:") else {
                    continue;
                };
                let rest = rest.trim();
                if !(rest.is_empty() || rest.starts_with('#')) {
                    // `rules: [...]`: not a block list.
                    return Vec::new();
                }
                in_rules = true;
            }
            continue;
        }
        let item = content == "-" || content.starts_with("- ");
        let at = *item_indent.get_or_insert(indent);
        if indent < at || (indent == at && !item) {
            // Past the list: the next key (or a line the parser refused).
            break;
        }
        if indent == at {
            lines.push(i + 1);
        }
    }
    lines
}
