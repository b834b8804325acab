//! Families and frames built from user data.
//!
//! OMMX names an entity with a name plus integer subscripts: `flow[3,7]` is
//! name `flow`, subscripts `[3, 7]`, and everything named `flow` forms one
//! family. `--group-by name` inserts one frame per family under the
//! entity containers (`Instance.constraints;flow;Constraint.function;...`).
//!
//! A frame taken from user data must never break the folded format nor be
//! mistaken for one of memprof's own frames, so it is escaped:
//! - `%`, `;` and control characters are percent-encoded (`%25`, `%3B`, ...);
//! - a trailing ` <digits>` run gets its space encoded (`x 12` → `x%2012`), as
//!   a folded reader would take it for the count;
//! - a name that reads like a container frame (`BTreeMap[key]`, `Wire[tag]`,
//!   ...) or like a placeholder (`(unnamed)`) gets its first character
//!   encoded. Since `%` itself is always encoded, escaped names are distinct
//!   whenever the names are, and never equal a frame memprof makes up.

use super::Frame;

/// How entities are grouped into frames of their own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GroupBy {
    /// No family frames: OMMX's own paths.
    #[default]
    None,
    /// One frame per entity name (the family), under each entity container.
    Name,
}

impl crate::names::Named for GroupBy {
    const ALL: &'static [Self] = &[GroupBy::None, GroupBy::Name];
    fn name(self) -> &'static str {
        match self {
            GroupBy::None => "none",
            GroupBy::Name => "name",
        }
    }
}

/// The family frame of entities without a name.
pub const UNNAMED: &str = "(unnamed)";
/// The family frame of entities whose name is the empty string.
pub const EMPTY_NAME: &str = "(empty name)";

/// Container and overhead frames memprof emits; a user name never equals one.
const CONTAINER_TYPES: [&str; 7] = [
    "Vec",
    "BTreeMap",
    "BTreeSet",
    "FnvHashMap",
    "HashMap",
    "Option",
    "Wire",
];

/// The frame of the family of an entity named `name`.
pub fn family_frame(name: Option<&str>) -> Frame {
    match name {
        None => Frame::Borrowed(UNNAMED),
        Some("") => Frame::Borrowed(EMPTY_NAME),
        Some(name) => Frame::Owned(escape_user_frame(name)),
    }
}

/// True for names memprof uses for frames of its own at a family's level.
fn is_reserved(escaped: &str) -> bool {
    if escaped == UNNAMED || escaped == EMPTY_NAME {
        return true;
    }
    CONTAINER_TYPES.iter().any(|t| {
        escaped
            .strip_prefix(t)
            .is_some_and(|rest| rest.starts_with('[') && rest.ends_with(']'))
    })
}

/// Escapes a user name for use as a frame that sits among memprof's own
/// frames (see the module docs).
pub fn escape_user_frame(name: &str) -> String {
    let mut out = escape_frame(name);
    if is_reserved(&out) {
        encode_first(&mut out);
    }
    out
}

/// Percent-encodes the first character of a non-empty escaped name.
fn encode_first(out: &mut String) {
    let first = out.chars().next().expect("reserved names are not empty");
    let mut buf = [0u8; 4];
    let encoded: String = first
        .encode_utf8(&mut buf)
        .bytes()
        .map(|b| format!("%{b:02X}"))
        .collect();
    out.replace_range(..first.len_utf8(), &encoded);
}

/// [`family_frame`] for a container whose own frames `siblings` sit beside
/// the family frames (OMMX 3.0's tables: `DecisionVariableTable.labels`,
/// `context`, ...): a name that would read as one of them is escaped as a
/// reserved name is.
pub fn family_frame_among(name: Option<&str>, siblings: &[&str]) -> Frame {
    match family_frame(name) {
        Frame::Owned(mut s) if siblings.contains(&s.as_str()) => {
            encode_first(&mut s);
            Frame::Owned(s)
        }
        frame => frame,
    }
}

/// Escapes a name taken from user data for use as one folded-stack frame:
/// `%`, `;`, control characters and a trailing space-digits run (which a
/// folded reader would take for the count) are percent-encoded.
pub fn escape_frame(name: &str) -> String {
    let mut out = escape_frame_chars(name);
    // "x 12" at the end of a line would read as a count: encode the space.
    if let Some(pos) = out.rfind(' ') {
        if pos + 1 < out.len() && out[pos + 1..].bytes().all(|b| b.is_ascii_digit()) {
            out.replace_range(pos..pos + 1, "%20");
        }
    }
    out
}

/// Percent-encodes `%`, `;` and control characters, which would break a
/// folded line.
pub fn escape_frame_chars(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '%' | ';' => out.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_stay_one_frame_and_never_collide() {
        assert_eq!(family_frame(Some("flow")), "flow");
        assert_eq!(family_frame(None), UNNAMED);
        assert_eq!(family_frame(Some("")), EMPTY_NAME);
        assert_eq!(family_frame(Some("a;b")), "a%3Bb");
        assert_eq!(family_frame(Some("cap 12")), "cap%2012");
        assert_eq!(family_frame(Some("x[0]")), "x[0]");
        assert_eq!(family_frame(Some("line\nbreak")), "line%0Abreak");
        assert_eq!(family_frame(Some("100%")), "100%25");
        // Names that read like memprof's own frames.
        assert_eq!(family_frame(Some("(unnamed)")), "%28unnamed)");
        assert_eq!(family_frame(Some("(empty name)")), "%28empty name)");
        assert_eq!(family_frame(Some("BTreeMap[key]")), "%42TreeMap[key]");
        assert_eq!(family_frame(Some("BTreeMap[stack]")), "%42TreeMap[stack]");
        assert_eq!(family_frame(Some("Wire[tag]")), "%57ire[tag]");
        // The escape of a name is never the escape of another.
        assert_ne!(
            family_frame(Some("%42TreeMap[key]")),
            family_frame(Some("BTreeMap[key]"))
        );
    }
}
