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

/// One folded line: the stack (frames joined by `;`) and its count.
pub type FoldedLine = (String, u64);

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
        .all(|l| parse_line(l).is_some())
}

/// The folded lines of `bytes` if the whole input is folded stacks (see the
/// module docs), else `None`.
pub fn parse(bytes: &[u8]) -> Option<Vec<FoldedLine>> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.chars().any(is_forbidden) {
        return None;
    }
    let lines: Option<Vec<FoldedLine>> = text
        .split('\n')
        .filter(|l| !l.trim_end_matches('\r').is_empty())
        .map(parse_line)
        .collect();
    lines.filter(|lines| !lines.is_empty())
}

fn is_forbidden(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\r' && c != '\t'
}

fn parse_line(line: &str) -> Option<FoldedLine> {
    let line = line.trim_end_matches('\r');
    let (stack, count) = line.rsplit_once(' ')?;
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if stack.is_empty() || stack.split(';').any(str::is_empty) {
        return None;
    }
    Some((stack.to_string(), count.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_text_parses_strictly() {
        let text = b"Instance.sense 1\nfile[0] (a b);Instance.constraints;Constraint.id 40\r\n\n";
        assert_eq!(
            parse(text).unwrap(),
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
            b"Instance.sense -1\n",
            b"a;;b 3\n",
            b"Instance.sense 1\ngarbage\n",
            b"Instance.sense 1\x00\n",
            b"\x0a\x03abc 1\n",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
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
    }
}
