//! A budget given as values rather than as a file: what a notebook's
//! `check(budget=...)` hands over. A size for the total (`"64 MiB"`, or a
//! number of bytes), or a mapping from path (an exact path, a pattern or
//! `total`) to a size or to a rule's limits (`{"max_growth": 5,
//! "min_delta": "1 MiB"}`). Where a limit is a size, a number is bytes (as
//! [`crate::units::Size`] reads a number alone; a whole one is spelled
//! `N B`); where it is a growth, a number is percent; every other value is
//! spelled as in the budget file.
//!
//! The values become the budget file's text and go through
//! [`Budget::parse`], so a budget given either way is held to the same
//! rules and refused with the same messages. The text is one line of JSON
//! (which YAML reads), spaced as `{"rules": [{"path": "total", ...}]}` and
//! ASCII only, so the line and column an error names are those the Python
//! package gave when it wrote the text itself.

use std::fmt::Write;

use super::{Budget, BudgetError};

/// A value of a budget given as data, as the caller's language holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum BudgetValue {
    Null,
    Bool(bool),
    /// A whole number, as written (of any size).
    Integer(String),
    /// A number with a fraction, and how the caller's language writes it
    /// (`2.5`, `5.0`, `1e-05`): a growth keeps that spelling (`5.0%`).
    Float {
        value: f64,
        text: String,
    },
    Text(String),
    List(Vec<BudgetValue>),
    /// Entries in the caller's order.
    Map(Vec<(BudgetValue, BudgetValue)>),
}

/// The limits of a rule whose values are byte sizes (a whole number is
/// bytes), and those that are percentages (a number is percent); a test
/// holds them to [`super::BudgetRule`]'s fields.
const SIZE_LIMITS: [&str; 5] = [
    "max",
    "min_delta",
    "max_per_variable",
    "max_per_constraint",
    "max_per_term",
];
const PERCENT_LIMITS: [&str; 1] = ["max_growth"];

impl Budget {
    /// The budget `value` gives: a size for the total, or a mapping from
    /// path to a size or to a rule's limits.
    pub fn given(value: &BudgetValue) -> Result<Self, BudgetError> {
        Self::parse(&text(value)?)
    }
}

/// One entry of a rule, in the file's spelling.
type Entry = (String, BudgetValue);

/// The budget file's text of `value`.
fn text(value: &BudgetValue) -> Result<String, BudgetError> {
    let rules = match value {
        BudgetValue::Map(paths) => paths
            .iter()
            .map(|(path, limits)| rule(path, limits))
            .collect::<Result<Vec<_>, _>>()?,
        total => vec![vec![
            ("path".to_string(), BudgetValue::Text("total".into())),
            ("max".to_string(), limit("max", total)),
        ]],
    };
    let mut out = String::from("{\"rules\": [");
    for (i, rule) in rules.iter().enumerate() {
        out.push_str(if i == 0 { "{" } else { ", {" });
        for (j, (key, value)) in rule.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            write_string(key, &mut out);
            out.push_str(": ");
            write_json(value, &mut out)?;
        }
        out.push('}');
    }
    out.push_str("]}");
    Ok(out)
}

/// The rule of `path`: a size is its `max`; a mapping, its limits.
fn rule(path: &BudgetValue, limits: &BudgetValue) -> Result<Vec<Entry>, BudgetError> {
    let mut entries: Vec<Entry> = vec![("path".into(), path.clone())];
    let BudgetValue::Map(limits) = limits else {
        entries.push(("max".into(), limit("max", limits)));
        return Ok(entries);
    };
    for (key, value) in limits {
        let key = key_text(key)?;
        let value = limit(&key, value);
        // A key given twice (`path` among the limits) keeps its place.
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => entries.push((key, value)),
        }
    }
    Ok(entries)
}

/// A limit's value in the file's spelling: a whole number of bytes for a
/// size, a number of percent for a growth.
fn limit(key: &str, value: &BudgetValue) -> BudgetValue {
    match value {
        BudgetValue::Integer(n) if SIZE_LIMITS.contains(&key) => {
            BudgetValue::Text(format!("{n} B"))
        }
        BudgetValue::Integer(n) | BudgetValue::Float { text: n, .. }
            if PERCENT_LIMITS.contains(&key) =>
        {
            BudgetValue::Text(format!("{n}%"))
        }
        other => other.clone(),
    }
}

/// A mapping's key as JSON names it.
fn key_text(key: &BudgetValue) -> Result<String, BudgetError> {
    match key {
        BudgetValue::Text(text) | BudgetValue::Integer(text) => Ok(text.clone()),
        BudgetValue::Float { value, text } => Ok(float_text(*value, text).to_string()),
        BudgetValue::Bool(b) => Ok(b.to_string()),
        BudgetValue::Null => Ok("null".into()),
        BudgetValue::List(_) | BudgetValue::Map(_) => Err(BudgetError::Rule(
            "a key must be text or a number, not a list or a mapping".into(),
        )),
    }
}

/// A float as JSON text: as written, or `NaN`, `Infinity`, `-Infinity`.
fn float_text(value: f64, text: &str) -> &str {
    match value {
        v if v.is_nan() => "NaN",
        f64::INFINITY => "Infinity",
        f64::NEG_INFINITY => "-Infinity",
        _ => text,
    }
}

fn write_json(value: &BudgetValue, out: &mut String) -> Result<(), BudgetError> {
    match value {
        BudgetValue::Null => out.push_str("null"),
        BudgetValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        BudgetValue::Integer(n) => out.push_str(n),
        BudgetValue::Float { value, text } => out.push_str(float_text(*value, text)),
        BudgetValue::Text(text) => write_string(text, out),
        BudgetValue::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(item, out)?;
            }
            out.push(']');
        }
        BudgetValue::Map(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(&key_text(key)?, out);
                out.push_str(": ");
                write_json(value, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A JSON string, every character outside printable ASCII escaped.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use BudgetValue::{Float, Integer, Map, Text};

    fn text_of(s: &str) -> BudgetValue {
        Text(s.into())
    }

    #[test]
    fn the_limit_tables_are_the_rule_s_limits() {
        // serde lists a rule's fields when it meets one it does not know.
        let err = Budget::parse("rules: [{path: total, nope: 1}]")
            .unwrap_err()
            .to_string();
        let fields: Vec<&str> = err
            .split("expected one of ")
            .nth(1)
            .unwrap()
            .split(" at line")
            .next()
            .unwrap()
            .split(", ")
            .map(|f| f.trim_matches('`'))
            .collect();
        let limits: Vec<&str> = fields
            .iter()
            .copied()
            .filter(|f| !["path", "measure", "message"].contains(f))
            .collect();
        let mut tabled: Vec<&str> = SIZE_LIMITS.iter().chain(&PERCENT_LIMITS).copied().collect();
        tabled.sort_unstable();
        let mut sorted = limits.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, tabled, "{err}");
        // Each is read as the table says: a size with a unit, a percentage.
        for key in SIZE_LIMITS {
            let rule = format!("rules: [{{path: total, max_growth: 1%, {key}: 1 B}}]");
            Budget::parse(&rule).unwrap();
        }
        let growth = "rules: [{path: total, max_growth: 1%}]";
        Budget::parse(growth).unwrap();
    }

    #[test]
    fn numbers_are_bytes_or_percent_by_limit() {
        let budget = Map(vec![
            (text_of("Instance.constraints"), text_of("32 MiB")),
            (
                text_of("Instance.decision_variables"),
                Integer("512".into()),
            ),
            (
                text_of("total"),
                Map(vec![
                    (
                        text_of("max_growth"),
                        Float {
                            value: 5.0,
                            text: "5.0".into(),
                        },
                    ),
                    (text_of("min_delta"), Integer("1024".into())),
                    (text_of("message"), Integer("7".into())),
                ]),
            ),
        ]);
        assert_eq!(
            text(&budget).unwrap(),
            "{\"rules\": [{\"path\": \"Instance.constraints\", \"max\": \"32 MiB\"}, \
             {\"path\": \"Instance.decision_variables\", \"max\": \"512 B\"}, \
             {\"path\": \"total\", \"max_growth\": \"5.0%\", \"min_delta\": \"1024 B\", \
             \"message\": 7}]}"
        );
        let rules = Budget::given(&budget).unwrap().rules;
        assert_eq!(rules[1].max.as_ref().unwrap().bytes(), 512);
        assert_eq!(rules[2].max_growth.as_ref().unwrap().text, "5.0%");
        assert_eq!(rules[2].min_delta.as_ref().unwrap().bytes(), 1024);
        let total = Budget::given(&Integer("4298".into())).unwrap().rules;
        assert_eq!(total[0].path.text, "total");
        assert_eq!(total[0].max.as_ref().unwrap().bytes(), 4298);
    }

    #[test]
    fn errors_name_the_place_in_the_text() {
        let err = Budget::given(&text_of("64 parsecs"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid budget: rules[0].max: unknown unit \"parsecs\"")
                && err.ends_with(" at line 1 column 37"),
            "{err}"
        );
        // A limit named twice keeps its first place.
        let given = Map(vec![(
            text_of("total"),
            Map(vec![(text_of("path"), text_of("Instance.sense"))]),
        )]);
        assert_eq!(
            text(&given).unwrap(),
            "{\"rules\": [{\"path\": \"Instance.sense\"}]}"
        );
    }

    #[test]
    fn strings_are_ascii_json() {
        let mut out = String::new();
        write_string("tötal\n\"\\\u{7f}\u{1f600}", &mut out);
        assert_eq!(out, "\"t\\u00f6tal\\n\\\"\\\\\\u007f\\ud83d\\ude00\"");
    }
}
