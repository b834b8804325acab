//! Text formats people hand memprof instead of an instance: optimization
//! models in MPS, LP or QPLIB text, and folded stacks. Recognised only to
//! explain a failed instance decode (see `looks_like` in the parent), so a
//! wrong guess costs a message, never a refused instance.

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
    if folded::plausible(head, false) {
        return Some(
            "folded stacks (text): memprof flamegraph draws them; the other commands need an \
             instance or archive",
        );
    }
    None
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
        assert_eq!(describe(b"hello world\n"), None);
        assert_eq!(describe(b"\x08\x01\x12"), None);
    }
}
