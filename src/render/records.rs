//! Documents as rows of data, for a surface that hands tables to its users
//! (the Python package's `records()` and `to_pandas()`): each table a name
//! and its records, one level deep, a nested field named by its path
//! (`bytes.p50`, `largest.name`).
//!
//! A profile's rows are its paths, each with its own bytes (the lines of
//! the folded format). The rows of the other documents are the arrays their
//! JSON holds, read off the document the renderer wrote, so a table and
//! `--format json` cannot disagree; which arrays those are is said here,
//! once per document ([`TOP`], [`STATS`], ...).

use anyhow::{Context, Result};
use serde_json::Map;
pub use serde_json::Value;

use super::Profile;

/// One row: column name to value, in the document's order.
pub type Record = Map<String, Value>;

/// One table of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: &'static str,
    pub rows: Vec<Record>,
}

/// Where a table's rows are in a JSON document: the array `rows`, or in
/// each item of the array `within` (advice per layer, check results per
/// file), each row then led by columns taken from its item.
#[derive(Debug, Clone, Copy)]
pub struct TableAt {
    pub name: &'static str,
    rows: &'static str,
    within: Option<Within>,
}

#[derive(Debug, Clone, Copy)]
struct Within {
    items: &'static str,
    /// (column, the item's field): `null` where the item has none.
    lead: &'static [(&'static str, &'static str)],
}

impl TableAt {
    const fn at(rows: &'static str) -> Self {
        Self {
            name: rows,
            rows,
            within: None,
        }
    }
}

/// `top`: the entities, largest first.
pub const TOP: &[TableAt] = &[TableAt::at("entities")];
/// `stats`: the distributions per kind, then per family.
pub const STATS: &[TableAt] = &[TableAt::at("kinds"), TableAt::at("families")];
/// `advise`: the recommendations shown, each with its layer's index.
pub const ADVICE: &[TableAt] = &[TableAt {
    name: "recommendations",
    rows: "recommendations",
    within: Some(Within {
        items: "layers",
        lead: &[("layer", "index")],
    }),
}];
/// `explain`: one explanation per path asked.
pub const EXPLAIN: &[TableAt] = &[TableAt::at("explanations")];
/// `check`: every limit of every rule, with its file and baseline.
pub const CHECK: &[TableAt] = &[TableAt {
    name: "results",
    rows: "results",
    within: Some(Within {
        items: "files",
        lead: &[("file", "file"), ("baseline", "baseline")],
    }),
}];
/// `diff`: every path, largest change first.
pub const DIFF: &[TableAt] = &[TableAt::at("paths")];

/// The tables `at` says of `document`, a JSON document as rendered.
pub fn tables(document: &str, at: &[TableAt]) -> Result<Vec<Table>> {
    let document: Value =
        serde_json::from_str(document).context("a document is not JSON (a bug in memprof)")?;
    Ok(at.iter().map(|table| read(&document, table)).collect())
}

/// A profile's table: one row per path holding bytes (`path`, its frames
/// joined by `;`, and `bytes`, its own), as the folded format lists them.
pub fn profile(profile: &Profile<'_>) -> Table {
    let rows = profile
        .aggregate
        .folded_lines()
        .into_iter()
        .map(|(path, bytes)| {
            let mut row = Record::new();
            row.insert("path".into(), path.into());
            row.insert("bytes".into(), bytes.into());
            row
        })
        .collect();
    Table {
        name: "paths",
        rows,
    }
}

fn read(document: &Value, table: &TableAt) -> Table {
    let array = |value: &Value, key: &str| -> Vec<Value> {
        value
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut rows = Vec::new();
    match table.within {
        None => rows.extend(array(document, table.rows).iter().map(|r| flat(r, &[]))),
        Some(within) => {
            for item in array(document, within.items) {
                let lead: Vec<(&str, Value)> = within
                    .lead
                    .iter()
                    .map(|(column, field)| (*column, item.get(field).cloned().unwrap_or_default()))
                    .collect();
                rows.extend(array(&item, table.rows).iter().map(|r| flat(r, &lead)));
            }
        }
    }
    Table {
        name: table.name,
        rows,
    }
}

/// `row` one level deep after the `lead` columns; a field of the row named
/// like a lead column takes that column's place.
fn flat(row: &Value, lead: &[(&str, Value)]) -> Record {
    let mut record: Record = lead
        .iter()
        .map(|(column, value)| (column.to_string(), value.clone()))
        .collect();
    if let Value::Object(fields) = row {
        flatten_into(fields, "", &mut record);
    }
    record
}

fn flatten_into(fields: &Map<String, Value>, prefix: &str, record: &mut Record) {
    for (key, value) in fields {
        let name = format!("{prefix}{key}");
        match value {
            Value::Object(inner) => flatten_into(inner, &format!("{name}."), record),
            other => {
                record.insert(name, other.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(table: &Table) -> Value {
        Value::Array(table.rows.iter().cloned().map(Value::Object).collect())
    }

    #[test]
    fn nested_fields_are_named_by_their_path() {
        let doc = json!({"kinds": [{"kind": "variable", "bytes": {"p50": 1, "max": 2},
                                    "largest": {"id": 3, "ids": [1, 2]}}],
                         "families": []});
        let tables = tables(&doc.to_string(), STATS).unwrap();
        assert_eq!(
            tables.iter().map(|t| t.name).collect::<Vec<_>>(),
            ["kinds", "families"]
        );
        assert_eq!(
            rows(&tables[0]),
            json!([{"kind": "variable", "bytes.p50": 1, "bytes.max": 2,
                    "largest.id": 3, "largest.ids": [1, 2]}])
        );
        // Keys keep the document's order.
        let keys: Vec<&String> = tables[0].rows[0].keys().collect();
        assert_eq!(
            keys,
            [
                "kind",
                "bytes.p50",
                "bytes.max",
                "largest.id",
                "largest.ids"
            ]
        );
    }

    #[test]
    fn grouped_rows_lead_with_their_group() {
        let doc = json!({"files": [
            {"file": "a.pb", "baseline": null, "pass": true, "results": [{"rule": 1}, {"rule": 2}]},
            {"file": "b.pb", "pass": false, "results": [{"rule": 1, "file": "x"}]}]});
        let [table] = &tables(&doc.to_string(), CHECK).unwrap()[..] else {
            panic!("one table")
        };
        assert_eq!(
            rows(table),
            json!([{"file": "a.pb", "baseline": null, "rule": 1},
                   {"file": "a.pb", "baseline": null, "rule": 2},
                   {"file": "x", "baseline": null, "rule": 1}])
        );
        let keys: Vec<&String> = table.rows[2].keys().collect();
        assert_eq!(keys, ["file", "baseline", "rule"]);
        // A document without the array has no rows.
        assert!(tables("{}", ADVICE).unwrap()[0].rows.is_empty());
    }
}
