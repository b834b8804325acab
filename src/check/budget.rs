//! The budget file (`memprof-budget.yaml`): a list of rules, each naming
//! paths and the limits they must hold. Sizes are [`crate::units::Size`]s, as
//! every surface reads them (`1.5 MiB`, `500MB`, a number alone is bytes),
//! growth is a percentage (`5%`), and unknown keys or units are errors
//! rather than silently ignored limits.
//!
//! Limits are exact decimals, compared with integer arithmetic, so a budget
//! passes exactly at its boundary and fails one byte past it.

use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::units::{Decimal, Size};

mod given;
mod text;
pub use given::BudgetValue;
use text::{flow_depth, rule_lines};

/// Longest accepted percentage, in digits: keeps every comparison within u128.
const MAX_DIGITS: usize = 15;

/// A growth limit in percent, exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Percent {
    value: Decimal,
    pub text: String,
}

impl Percent {
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let Some(number) = trimmed.strip_suffix('%') else {
            return Err(format!(
                "{text:?} is not a percentage: write it with a % sign, such as \"5%\""
            ));
        };
        let value = Decimal::parse(number.trim_end(), MAX_DIGITS).ok_or_else(|| {
            format!("{text:?} is not a percentage: expected a number such as \"5%\" or \"2.5%\"")
        })?;
        Ok(Self {
            value,
            text: trimmed.to_string(),
        })
    }

    /// Whether growing from `old` by `delta` bytes (`old` > 0) stays within
    /// this percentage.
    pub fn holds(&self, old: u64, delta: u64) -> bool {
        let lhs = u128::from(delta)
            .saturating_mul(100)
            .saturating_mul(10u128.pow(self.value.scale));
        lhs <= self.value.mantissa.saturating_mul(old.into())
    }

    pub fn zero() -> Self {
        Self {
            value: Decimal {
                mantissa: 0,
                scale: 0,
            },
            text: "0%".to_string(),
        }
    }

    pub fn as_f64(&self) -> f64 {
        self.value.mantissa as f64 / 10f64.powi(self.value.scale as i32)
    }
}

/// One frame of a path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FramePattern {
    /// `**`: any number of frames, none included.
    AnyDepth,
    /// A frame name, where each `*` stands for any run of characters.
    Name(String),
}

/// Which paths a rule is about: an exact path, `total`, or a pattern over
/// `;`-separated frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern {
    frames: Vec<FramePattern>,
    pub text: String,
}

impl PathPattern {
    pub fn parse(text: &str) -> Result<Self, String> {
        if text == "total" {
            return Ok(Self {
                frames: Vec::new(),
                text: text.to_string(),
            });
        }
        if text.is_empty() {
            return Err("the path is empty (write \"total\" for the whole profile)".into());
        }
        let mut frames = Vec::new();
        for frame in text.split(';') {
            if frame.is_empty() {
                return Err(format!("path {text:?} has an empty frame"));
            }
            if frame == "**" {
                if frames.last() != Some(&FramePattern::AnyDepth) {
                    frames.push(FramePattern::AnyDepth);
                }
            } else if frame.contains("**") {
                return Err(format!(
                    "path {text:?}: ** must be a whole frame (between ';')"
                ));
            } else {
                frames.push(FramePattern::Name(frame.to_string()));
            }
        }
        Ok(Self {
            frames,
            text: text.to_string(),
        })
    }

    /// Whether the pattern names one path only.
    pub fn is_exact(&self) -> bool {
        self.frames
            .iter()
            .all(|f| matches!(f, FramePattern::Name(n) if !n.contains('*')))
    }

    /// Whether the path with these frames (empty for the total) matches.
    pub fn matches(&self, frames: &[&str]) -> bool {
        matches_from(&self.frames, frames)
    }
}

/// Matches frame by frame in O(pattern × frames) steps: `reach[j]` says
/// whether the pattern read so far can end just before frame `j`. (The
/// obvious backtracking is exponential in the number of `**` on a deep
/// path, and both come from files a user may not have written.)
fn matches_from(pattern: &[FramePattern], frames: &[&str]) -> bool {
    let mut reach = vec![false; frames.len() + 1];
    reach[0] = true;
    for part in pattern {
        match part {
            FramePattern::AnyDepth => {
                // Once a position is reached, every later one is too.
                if let Some(first) = reach.iter().position(|&r| r) {
                    reach[first..].iter_mut().for_each(|r| *r = true);
                }
            }
            FramePattern::Name(name) => {
                for j in (1..=frames.len()).rev() {
                    reach[j] = reach[j - 1] && wildcard(name, frames[j - 1]);
                }
                reach[0] = false;
            }
        }
    }
    reach[frames.len()]
}

/// `*` matches any run of characters (none included); everything else is
/// literal.
fn wildcard(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(pos) => rest = &rest[pos + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Most text a budget may hold once its YAML aliases are expanded. An alias
/// repeats what it names, so a small file can stand for a huge document
/// (a 1 MiB budget repeating a 400 KB message took 14 GB); every string
/// read is charged to this allowance, plus [`TEXT_OVERHEAD`] for the value
/// around it, which also bounds the number of rules.
const MAX_BUDGET_TEXT: usize = 4 << 20;

/// What each string is charged on top of its length.
const TEXT_OVERHEAD: usize = 64;

thread_local! {
    /// What is left of [`MAX_BUDGET_TEXT`] in the budget being parsed.
    static TEXT_LEFT: std::cell::Cell<usize> = const { std::cell::Cell::new(MAX_BUDGET_TEXT) };
}

fn spend_text(len: usize) -> Result<(), String> {
    TEXT_LEFT.with(|left| {
        let cost = len.saturating_add(TEXT_OVERHEAD);
        match left.get().checked_sub(cost) {
            Some(rest) => {
                left.set(rest);
                Ok(())
            }
            None => Err(format!(
                "its text adds up to more than {} MiB once YAML aliases are expanded",
                MAX_BUDGET_TEXT >> 20
            )),
        }
    })
}

/// A rule's message, charged to the text allowance (before it is copied)
/// like every other string.
fn message<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a message")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            spend_text(v.len()).map_err(E::custom)?;
            Ok(Some(v.to_string()))
        }
    }
    d.deserialize_str(V)
}

macro_rules! string_visitor {
    ($ty:ident, $expecting:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        spend_text(v.len()).map_err(E::custom)?;
                        $ty::parse(v).map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

string_visitor!(Size, "a size, such as \"200 B\" or \"50 MiB\"");
string_visitor!(Percent, "a percentage, such as \"5%\"");
string_visitor!(
    PathPattern,
    "a path such as \"Instance.constraints\" or a pattern such as \"Instance.constraints;**\""
);

/// What a rule's limits are about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The logical profile, path by path (OMMX's own count).
    #[default]
    Logical,
    /// The real-memory estimate's load peak: what loading the instance
    /// would need in its runtime (`path: total` only).
    Real,
}

/// One rule of the budget file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetRule {
    pub path: PathPattern,
    /// What `max` and `max_growth` compare: the logical bytes of each path
    /// (the default) or the estimated real load peak of the instance.
    #[serde(default)]
    pub measure: Measure,
    /// Most bytes a matched path may hold.
    #[serde(default)]
    pub max: Option<Size>,
    /// Most a matched path may grow against the baseline.
    #[serde(default)]
    pub max_growth: Option<Percent>,
    /// Growth smaller than this is never counted against `max_growth`.
    #[serde(default)]
    pub min_delta: Option<Size>,
    #[serde(default)]
    pub max_per_variable: Option<Size>,
    #[serde(default)]
    pub max_per_constraint: Option<Size>,
    #[serde(default)]
    pub max_per_term: Option<Size>,
    /// Shown when the rule fails.
    #[serde(default, deserialize_with = "message")]
    pub message: Option<String>,
    /// The line of the budget file where the rule starts (1-based), so a
    /// failed check can say where to raise a limit; `None` when the file
    /// is not laid out as a block list (see [`rule_lines`]).
    #[serde(skip)]
    pub line: Option<usize>,
}

impl BudgetRule {
    /// Whether any limit needs a baseline.
    pub fn needs_baseline(&self) -> bool {
        self.max_growth.is_some()
    }

    /// The rule used with `--baseline` and no budget file.
    pub fn default_growth() -> Self {
        BudgetRule {
            path: PathPattern::parse("total").expect("valid"),
            measure: Measure::Logical,
            max: None,
            max_growth: Some(Percent::zero()),
            min_delta: None,
            max_per_variable: None,
            max_per_constraint: None,
            max_per_term: None,
            message: Some("the total may not grow (the default rule without --budget)".into()),
            line: None,
        }
    }
}

/// A parsed budget file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub rules: Vec<BudgetRule>,
}

/// Most rules a budget may have.
pub const MAX_RULES: usize = 10_000;

/// Largest budget file read: a budget is a few dozen rules, and what a
/// budget costs to apply and report grows with its rules.
pub const MAX_BUDGET_BYTES: u64 = 1 << 20;

/// Why a budget file was refused. Messages do not repeat the file name.
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("the budget file is larger than {} bytes, the limit", MAX_BUDGET_BYTES)]
    TooLarge,
    #[error("invalid budget: {0}")]
    Yaml(#[from] serde_yaml::Error),
    #[error("invalid budget: {0}")]
    Rule(String),
}

/// Deepest YAML flow nesting (`[` and `{`) a budget may have: the YAML
/// parser's time grows with the square of it (a 1 MiB budget nested 500,000
/// deep would not finish), and its own recursion limit, 128, is checked only
/// as it goes. A budget needs three levels.
pub const MAX_DEPTH: usize = 64;

impl Budget {
    pub fn parse(text: &str) -> Result<Self, BudgetError> {
        TEXT_LEFT.with(|left| left.set(MAX_BUDGET_TEXT));
        if flow_depth(text) > MAX_DEPTH {
            return Err(BudgetError::Rule(format!(
                "it nests [ ] or {{ }} more than {MAX_DEPTH} levels deep"
            )));
        }
        let mut budget: Budget = serde_yaml::from_str(text)?;
        let lines = rule_lines(text);
        if lines.len() == budget.rules.len() {
            for (rule, line) in budget.rules.iter_mut().zip(lines) {
                rule.line = Some(line);
            }
        }
        if budget.rules.is_empty() {
            return Err(BudgetError::Rule("it has no rules".into()));
        }
        if budget.rules.len() > MAX_RULES {
            return Err(BudgetError::Rule(format!(
                "it has {} rules, more than the {MAX_RULES} allowed",
                budget.rules.len()
            )));
        }
        for (i, rule) in budget.rules.iter().enumerate() {
            let name = format!("rule {} (path {:?})", i + 1, rule.path.text);
            if rule.max.is_none()
                && rule.max_growth.is_none()
                && rule.max_per_variable.is_none()
                && rule.max_per_constraint.is_none()
                && rule.max_per_term.is_none()
            {
                return Err(BudgetError::Rule(format!(
                    "{name} sets no limit (max, max_growth, max_per_variable, max_per_constraint or max_per_term)"
                )));
            }
            if rule.measure == Measure::Real {
                if rule.path.text != "total" {
                    return Err(BudgetError::Rule(format!(
                        "{name}: measure: real is the instance's whole load, so its path must be \"total\""
                    )));
                }
                if rule.max_per_variable.is_some()
                    || rule.max_per_constraint.is_some()
                    || rule.max_per_term.is_some()
                {
                    return Err(BudgetError::Rule(format!(
                        "{name}: measure: real takes max and max_growth only (the real memory is not split per entity)"
                    )));
                }
            }
            if rule.min_delta.is_some() && rule.max_growth.is_none() {
                return Err(BudgetError::Rule(format!(
                    "{name}: min_delta only qualifies max_growth, which the rule does not set"
                )));
            }
        }
        Ok(budget)
    }

    /// The budget in the file at `path`, read once (a pipe, a FIFO or
    /// `<(...)` is read as it comes); `-` is standard input.
    pub fn load(path: &Path) -> Result<Self, BudgetError> {
        let mut text = String::new();
        let source: Box<dyn Read> = match path.as_os_str() == "-" {
            true => Box::new(std::io::stdin().lock()),
            false => Box::new(std::fs::File::open(path)?),
        };
        source
            .take(MAX_BUDGET_BYTES + 1)
            .read_to_string(&mut text)?;
        if text.len() as u64 > MAX_BUDGET_BYTES {
            return Err(BudgetError::TooLarge);
        }
        Self::parse(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_as_every_surface_reads_them() {
        let max = |text: &str| Budget::parse(text).unwrap().rules[0].max.clone().unwrap();
        assert_eq!(
            max("rules:\n  - {path: total, max: 1.5 MiB}\n").bytes(),
            3 << 19
        );
        assert_eq!(max("rules:\n  - {path: total, max: 5 kb}\n").bytes(), 5000);
        // A number alone is bytes, in YAML and in JSON (as the wheel writes ints).
        let five = max("rules:\n  - path: total\n    max: 5\n");
        assert_eq!((five.bytes(), five.text.as_str()), (5, "5 B"));
        assert_eq!(
            max("{\"rules\": [{\"path\": \"total\", \"max\": 5}]}"),
            five
        );
        let err = Budget::parse("rules:\n  - {path: total, max: 5 KiBs}\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown unit \"KiBs\" in \"5 KiBs\""),
            "{err}"
        );
    }

    #[test]
    fn each_rule_knows_its_line_when_the_rules_are_a_block_list() {
        let lines = |text: &str| -> Vec<Option<usize>> {
            Budget::parse(text)
                .unwrap()
                .rules
                .iter()
                .map(|r| r.line)
                .collect()
        };
        let docs = "# budget\nrules:\n  - path: total\n    max: 1 MiB\n\n  # growth\n  \
                    - path: \"**\"\n    max_growth: 5%\n    message: |\n      - not a rule\n  \
                    -\n    path: total\n    max: 2 MiB\n";
        assert_eq!(lines(docs), [Some(3), Some(7), Some(11)]);
        // Items at the key's own indentation, YAML's compact form.
        assert_eq!(
            lines("rules:\n- path: total\n  max: 1 MiB\n- {path: total, max: 2 MiB}\n"),
            [Some(2), Some(4)]
        );
        // Flow style and JSON: no line rather than a wrong one.
        assert_eq!(
            lines("rules: [{path: total, max: 1 MiB}, {path: total, max: 2 MiB}]"),
            [None, None]
        );
        assert_eq!(
            lines("{\"rules\": [\n  {\"path\": \"total\", \"max\": \"1 MiB\"}\n]}"),
            [None]
        );
        assert_eq!(
            lines(
                "rules:\n  [\n    {path: total, max: 1 MiB},\n    {path: total, max: 2 MiB}\n  ]\n"
            ),
            [None, None]
        );
    }

    #[test]
    fn percent_boundaries_are_exact() {
        let p = Percent::parse("5%").unwrap();
        assert!(p.holds(1000, 50) && !p.holds(1000, 51));
        let p = Percent::parse("2.5%").unwrap();
        assert!(p.holds(1000, 25) && !p.holds(1000, 26));
        assert!(Percent::parse("5").is_err());
        assert!(Percent::parse("x%").is_err());
    }

    #[test]
    fn patterns_match_frames() {
        let p = |t: &str| PathPattern::parse(t).unwrap();
        assert!(p("total").matches(&[]));
        assert!(!p("total").matches(&["A"]));
        assert!(p("A;**").matches(&["A"]));
        assert!(p("A;**").matches(&["A", "B", "C"]));
        assert!(!p("A;**").matches(&["B"]));
        assert!(p("A;*").matches(&["A", "B"]));
        assert!(!p("A;*").matches(&["A"]));
        assert!(!p("A;*").matches(&["A", "B", "C"]));
        assert!(p("**;Linear;**").matches(&["X", "Linear", "Y"]));
        assert!(p("layer[*;A").matches(&["layer[0] (t)", "A"]));
        assert!(p("*.constraints").matches(&["Instance.constraints"]));
        assert!(!p("*.constraints").matches(&["Instance.constraints_x"]));
        assert!(p("**;A;**;A").matches(&["A", "B", "A"]));
        assert!(!p("**;A;**;A").matches(&["A", "B"]));
        assert!(p("A;**;B").matches(&["A", "B"]));
        assert!(!p("A;**;B").matches(&["A", "B", "C"]));
        assert!(p("A").is_exact() && !p("A;*").is_exact());
        assert!(PathPattern::parse("A;;B").is_err());
        assert!(PathPattern::parse("A**").is_err());
    }

    #[test]
    fn aliases_cannot_blow_a_small_budget_up() {
        // 2,000 aliases of a 100 KB message: 200 MB once expanded.
        let mut text = format!(
            "rules:\n  - {{path: total, max: 1 MiB, message: &m \"{}\"}}\n",
            "x".repeat(100_000)
        );
        text.push_str(&"  - {path: total, max: 1 MiB, message: *m}\n".repeat(2_000));
        let err = Budget::parse(&text).unwrap_err().to_string();
        assert!(
            err.contains("more than 4 MiB once YAML aliases are expanded"),
            "{err}"
        );
        // The allowance starts afresh for the next budget.
        assert!(Budget::parse("rules:\n  - {path: total, max: 1 MiB}\n").is_ok());
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let deep = format!("rules: {}{}", "[".repeat(500_000), "]".repeat(500_000));
        let started = std::time::Instant::now();
        let err = Budget::parse(&deep).unwrap_err();
        assert!(err.to_string().contains("more than 64 levels"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        // Brackets in quoted strings and comments do not count.
        let open = "[{".repeat(50);
        let text = format!(
            "rules: # {open}\n  - {{path: \"a{open}\", max: 1 MiB, message: 'it''s {open}'}}\n"
        );
        assert_eq!(flow_depth(&text), 1);
        Budget::parse(&text).unwrap();
    }

    #[test]
    fn rules_are_capped() {
        let text = "rules:\n".to_string() + &"  - {path: total, max: 1 MiB}\n".repeat(MAX_RULES);
        assert_eq!(Budget::parse(&text).unwrap().rules.len(), MAX_RULES);
        let text = text + "  - {path: total, max: 1 MiB}\n";
        let err = Budget::parse(&text).unwrap_err().to_string();
        assert!(
            err.ends_with("it has 10001 rules, more than the 10000 allowed"),
            "{err}"
        );
    }

    #[test]
    fn many_any_depths_on_a_deep_path_stay_fast() {
        // Backtracking tries about C(63, 32) splits before it gives up on
        // this one; the test would not finish.
        let pattern = PathPattern::parse(&["**;x"; 32].join(";")).unwrap();
        let mut frames = vec!["x"; 63];
        frames.push("y");
        assert!(!pattern.matches(&frames));
        assert!(pattern.matches(&vec!["x"; 64]));
        assert!(!pattern.matches(&vec!["x"; 31]));
    }

    #[test]
    fn unknown_keys_and_empty_rules_are_refused() {
        let err = Budget::parse("rules:\n  - path: total\n    maxx: 5 B\n").unwrap_err();
        assert!(err.to_string().contains("unknown field `maxx`"), "{err}");
        let err = Budget::parse("rules:\n  - path: total\n").unwrap_err();
        assert!(err.to_string().contains("sets no limit"), "{err}");
        let err = Budget::parse("rules:\n  - path: total\n    max: 5 B B\n").unwrap_err();
        assert!(err.to_string().contains("unknown unit \"B B\""), "{err}");
        let err = Budget::parse("rules:\n  - path: total\n    max: 5 B\n    min_delta: 1 B\n")
            .unwrap_err();
        assert!(
            err.to_string().contains("min_delta only qualifies"),
            "{err}"
        );
    }
}
