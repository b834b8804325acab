//! Issue 45's smaller things, each as a reader meets it.

use super::{memprof, ok, oracle};

fn at_width(args: &[&str], columns: &str) -> String {
    let out = memprof()
        .args(args)
        .env("COLUMNS", columns)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_sentence_in_a_narrowed_table_wraps_and_keeps_its_start() {
    let (kitchen, moderate) = (oracle("kitchen_sink.pb"), oracle("moderate.pb"));
    let diff = ["diff", kitchen.as_str(), moderate.as_str(), "--top", "3"];
    let table = ["inspect", moderate.as_str(), "-f", "table", "--top", "3"];
    for (args, sentence) in [
        (
            &diff[..],
            "(93 smaller changes not shown; raise --top to see them)",
        ),
        (&diff[..], "(14 unchanged paths not shown)"),
        (
            &table[..],
            "(98 smaller paths not shown; raise --top to see them)",
        ),
    ] {
        assert!(ok(args).contains(sentence), "{args:?}");
        let mut narrowed = 0;
        for columns in ["100", "90", "80", "70"] {
            let text = at_width(args, columns);
            // Where the path column is cut behind "…", narrower than the
            // sentence, the sentence wraps there, every word whole.
            if !text.contains("│ …") {
                continue;
            }
            narrowed += 1;
            let cells: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("│ "))
                .map(|line| line.split(" ┆").next().unwrap().trim_end())
                .collect();
            let start = cells
                .iter()
                .position(|cell| sentence.starts_with(cell) && cell.starts_with('('))
                .unwrap_or_else(|| panic!("{columns}: {sentence} cut:\n{text}"));
            let mut joined = String::new();
            for cell in &cells[start..] {
                joined = if joined.is_empty() {
                    cell.to_string()
                } else {
                    format!("{joined} {cell}")
                };
                if joined.len() >= sentence.len() {
                    break;
                }
            }
            assert_eq!(joined, sentence, "{columns}:\n{text}");
        }
        assert!(narrowed > 0, "{args:?} never narrowed");
    }
}
