//! Folded stacks as input (`frame;frame;... COUNT` per line), so that
//! `memprof inspect x.ommx --format folded | memprof flamegraph -o out.svg`
//! works as inferno users expect.
//!
//! How folded text is told apart from an instance: by a strict parse of the
//! whole text, tried before the instance decode. A protobuf may start with
//! any byte, and text such as `Instance.constraints 12` can decode as a
//! (nonsensical) instance with unknown fields, so "decode first" would
//! mistake folded stacks for an instance. The other way round cannot happen
//! in practice: text is folded only if it is valid UTF-8 without control
//! characters, has at least one line, and *every* non-empty line is
//! non-empty frames joined by `;`, one space and a decimal count; real
//! instances hold binary floats, varints and length prefixes. A cheap check
//! of the first bytes ([`plausible`]) decides whether the whole input is
//! worth reading as text at all.
//!
//! A count is the line's last word; one shaped like a number that is no
//! byte count (`-5`, `2^64` or more, a million digits), or counts that add
//! up past `u64`, keep the text folded stacks, with an error naming the
//! line ([`FoldedError`]), reported when the bytes are no instance either.

/// One folded line: the stack (frames joined by `;`) and its count.
pub type FoldedLine = (String, u64);

/// Folded stacks whose counts memprof cannot draw.
#[derive(Debug, thiserror::Error)]
pub enum FoldedError {
    #[error(
        "folded stacks, line {line}: count {count} is not a byte count (a whole number from 0 to {})",
        u64::MAX
    )]
    BadCount { line: usize, count: String },
    #[error(
        "folded stacks, line {line}: the counts add up to more than {} bytes",
        u64::MAX
    )]
    Overflow { line: usize },
}

/// What [`parse`] made of an input.
#[derive(Debug)]
pub enum Parsed {
    Lines(Vec<FoldedLine>),
    /// Folded stacks with counts memprof cannot take.
    Bad(FoldedError),
    /// Not folded stacks.
    NotFolded,
}

/// Whether `head`, the first bytes of an input (possibly cut anywhere), can
/// begin folded stacks: printable UTF-8 (a character cut at the end
/// allowed) whose complete lines each parse. `complete` says `head` is the
/// whole input, so its last line is complete too.
pub fn plausible(head: &[u8], complete: bool) -> bool {
    if head.is_empty() {
        return false;
    }
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) if e.error_len().is_none() && !complete => {
            std::str::from_utf8(&head[..e.valid_up_to()]).expect("valid up to here")
        }
        Err(_) => return false,
    };
    if text.chars().any(is_forbidden) {
        return false;
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    if !complete {
        // The last piece may be a line cut short.
        lines.pop();
    }
    lines
        .into_iter()
        .filter(|l| !l.trim_end_matches('\r').is_empty())
        .all(|l| shape(l).is_some())
}

/// The folded lines of `bytes` if the whole input is folded stacks (see the
/// module docs).
pub fn parse(bytes: &[u8]) -> Parsed {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Parsed::NotFolded;
    };
    if text.chars().any(is_forbidden) {
        return Parsed::NotFolded;
    }
    let mut lines = Vec::new();
    let mut first_error = None;
    let mut total: u64 = 0;
    for (i, line) in text.split('\n').enumerate() {
        if line.trim_end_matches('\r').is_empty() {
            continue;
        }
        let Some((stack, count)) = shape(line) else {
            return Parsed::NotFolded;
        };
        let line = i + 1;
        match count.parse::<u64>() {
            Ok(count) if first_error.is_none() => match total.checked_add(count) {
                Some(sum) => {
                    total = sum;
                    lines.push((stack.to_string(), count));
                }
                None => first_error = Some(FoldedError::Overflow { line }),
            },
            Ok(_) => {}
            Err(_) => {
                first_error.get_or_insert(FoldedError::BadCount {
                    line,
                    count: abbreviated(count),
                });
            }
        }
    }
    match first_error {
        // Every line is folded-shaped: the first bad count is what is wrong.
        Some(e) => Parsed::Bad(e),
        None if lines.is_empty() => Parsed::NotFolded,
        None => Parsed::Lines(lines),
    }
}

fn is_forbidden(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\r' && c != '\t'
}

/// A line's stack and count word, if it is shaped as a folded line:
/// non-empty frames joined by `;`, one space, and digits with an optional
/// sign.
fn shape(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_end_matches('\r');
    let (stack, count) = line.rsplit_once(' ')?;
    let digits = count.strip_prefix(['-', '+']).unwrap_or(count);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if stack.is_empty() || stack.split(';').any(str::is_empty) {
        return None;
    }
    Some((stack, count))
}

/// A count as an error shows it: a long one cut, with its length.
fn abbreviated(count: &str) -> String {
    const SHOWN: usize = 24;
    match count.len() {
        n if n <= SHOWN => count.to_string(),
        n => format!("{}... ({n} characters)", &count[..SHOWN]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8]) -> Option<Vec<FoldedLine>> {
        match parse(text) {
            Parsed::Lines(lines) => Some(lines),
            _ => None,
        }
    }

    #[test]
    fn folded_text_parses_strictly() {
        let text = b"Instance.sense 1\nfile[0] (a b);Instance.constraints;Constraint.id 40\r\n\n";
        assert_eq!(
            lines(text).unwrap(),
            vec![
                ("Instance.sense".to_string(), 1),
                (
                    "file[0] (a b);Instance.constraints;Constraint.id".to_string(),
                    40
                )
            ]
        );
        for bad in [
            &b""[..],
            b"\n\n",
            b"Instance.sense\n",
            b"Instance.sense 1.5\n",
            b"Instance.sense -\n",
            b"a;;b 3\n",
            b"Instance.sense 1\ngarbage\n",
            b"Instance.sense 1\x00\n",
            b"\x0a\x03abc 1\n",
        ] {
            assert!(
                matches!(parse(bad), Parsed::NotFolded),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn a_count_that_is_no_byte_count_names_its_line() {
        let error = |text: &[u8]| match parse(text) {
            Parsed::Bad(e) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            error(b"a 1\n\nInstance.sense -5\n"),
            "folded stacks, line 3: count -5 is not a byte count (a whole number from 0 to \
             18446744073709551615)"
        );
        assert!(
            error(b"a 18446744073709551616\n").contains("line 1: count 18446744073709551616 is")
        );
        let long = format!("a {}\n", "9".repeat(1_000_000));
        assert!(
            error(long.as_bytes())
                .contains("count 999999999999999999999999... (1000000 characters)"),
            "{}",
            error(long.as_bytes())
        );
        assert_eq!(
            error(b"a 18446744073709551615\nb 0\nc 1\nd -1\n"),
            "folded stacks, line 3: the counts add up to more than 18446744073709551615 bytes"
        );
        // A line that is not folded at all makes the text no folded stacks.
        assert!(matches!(parse(b"a -5\ngarbage\n"), Parsed::NotFolded));
    }

    #[test]
    fn a_head_cut_anywhere_is_plausible() {
        let text = "Instance.sense 1\nInstance.déscription 24\n".as_bytes();
        for cut in 1..text.len() {
            assert!(plausible(&text[..cut], false), "cut at {cut}");
        }
        assert!(plausible(text, true));
        assert!(!plausible(b"Instance.sense", true));
        assert!(!plausible(b"\x08\x01\x12\x03abc", false));
        // Counts that are no byte counts still look like folded stacks.
        assert!(plausible(b"a;b -5\nc 18446744073709551616\n", true));
    }
}
