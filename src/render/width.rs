//! How wide the human tables may be, and how a table that is too wide gives
//! way without ever splitting a word or a number.
//!
//! The width is `$COLUMNS` when set, else the terminal's width when stdout
//! is a terminal; unlimited otherwise (a pipe or a file keeps every table's
//! natural width, so scripts and snapshots see the same bytes on every
//! machine). Commands writing to a file (`-o`) turn fitting off
//! ([`set_fit`]).
//!
//! A [`Grid`] that does not fit first narrows the columns that may give way
//! ([`Give`]): a path loses its start behind an ellipsis (its last frames say
//! most), a name its end, prose wraps between words. When that is not
//! enough, each row is shown as `column: value` lines instead, which fit
//! any width.

use std::fmt;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};

static FIT: AtomicBool = AtomicBool::new(true);

/// Whether tables are fitted to the terminal (false while writing a file).
pub fn set_fit(fit: bool) {
    FIT.store(fit, Ordering::Relaxed);
}

/// The width the tables must fit in, if any.
pub fn limit() -> Option<u16> {
    if !FIT.load(Ordering::Relaxed) {
        return None;
    }
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0)
    {
        return Some(columns);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    console::Term::stdout()
        .size_checked()
        .map(|(_rows, columns)| columns)
}

/// Prose wrapped to [`limit`] between words, each line after the first
/// indented by `indent`; unchanged where there is no limit.
pub fn wrap(text: &str, indent: &str) -> String {
    match limit() {
        Some(width) => {
            let options = between_words(usize::from(width)).subsequent_indent(indent);
            textwrap::fill(text, options)
        }
        None => text.to_string(),
    }
}

/// Wrapping at spaces only: never inside a word, nor at its hyphens (a
/// path such as `/work/wt-cores/x.ommx` stays whole).
fn between_words(width: usize) -> textwrap::Options<'static> {
    textwrap::Options::new(width)
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
}

/// How a column gives way when its table is wider than the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Give {
    /// Never narrower than its content (numbers, verdicts, codes).
    None,
    /// Cut behind an ellipsis, keeping the end (paths).
    KeepEnd,
    /// Cut with an ellipsis, keeping the start (names, titles).
    KeepStart,
    /// Wrapped between words (prose).
    Wrap,
    /// A quantity with its exact figure, `2.3 KiB (2,336 B)`, stacked on
    /// two lines before the parenthesis; never narrower than either part.
    Stack,
}

/// One column's alignment and how it gives way.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    align: CellAlignment,
    give: Give,
}

impl Column {
    pub fn set_cell_alignment(&mut self, align: CellAlignment) -> &mut Self {
        self.align = align;
        self
    }

    pub fn give(&mut self, give: Give) -> &mut Self {
        self.give = give;
        self
    }
}

/// A table in memprof's style that fits [`limit`].
#[derive(Debug, Clone, Default)]
pub struct Grid {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Whether each row is a note ([`Grid::add_note`]).
    notes: Vec<bool>,
    columns: Vec<Column>,
}

/// A new [`Grid`].
pub fn table() -> Grid {
    Grid::default()
}

/// Columns narrower than this are not cut further.
const MIN_CUT: usize = 12;

fn text_width(text: &str) -> usize {
    text.lines()
        .map(console::measure_text_width)
        .max()
        .unwrap_or(0)
}

impl Grid {
    fn widen(&mut self, n: usize) {
        while self.columns.len() < n {
            self.columns.push(Column {
                align: CellAlignment::Left,
                give: Give::None,
            });
        }
    }

    pub fn set_header<S: ToString>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.header = cells.into_iter().map(|c| c.to_string()).collect();
        self.widen(self.header.len());
        self
    }

    pub fn add_row<S: ToString>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        let row: Vec<String> = cells.into_iter().map(|c| c.to_string()).collect();
        self.widen(row.len());
        self.rows.push(row);
        self.notes.push(false);
        self
    }

    /// A sentence about the table (what was left out, why it is empty) in
    /// the first column, the others empty. Where the table must narrow, a
    /// note wraps between words, whatever its column does to its values: a
    /// sentence cut like a path would lose its start.
    pub fn add_note(&mut self, text: impl ToString) -> &mut Self {
        let mut row = vec![String::new(); self.columns.len().max(1)];
        row[0] = text.to_string();
        self.add_row(row);
        *self.notes.last_mut().expect("the row just added") = true;
        self
    }

    /// The rows that hold values, not notes.
    fn values(&self) -> impl Iterator<Item = &Vec<String>> {
        self.rows
            .iter()
            .zip(&self.notes)
            .filter(|(_, &note)| !note)
            .map(|(row, _)| row)
    }

    /// The longest word of the notes: the narrowest the first column may be.
    fn longest_note_word(&self) -> usize {
        self.rows
            .iter()
            .zip(&self.notes)
            .filter(|(_, &note)| note)
            .flat_map(|(row, _)| row[0].split_whitespace())
            .map(console::measure_text_width)
            .max()
            .unwrap_or(0)
    }

    pub fn column_mut(&mut self, index: usize) -> Option<&mut Column> {
        self.columns.get_mut(index)
    }

    /// Each column's widest line, header included.
    fn natural_widths(&self) -> Vec<usize> {
        (0..self.columns.len())
            .map(|i| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .filter_map(|row| row.get(i))
                    .map(|cell| text_width(cell))
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The narrowest each column may become (notes wrap, in any column).
    fn least_widths(&self) -> Vec<usize> {
        (0..self.columns.len())
            .map(|i| {
                let column = &self.columns[i];
                let width = self
                    .values()
                    .filter_map(|row| row.get(i))
                    .map(|cell| text_width(cell))
                    .max()
                    .unwrap_or(0);
                let header = self.header.get(i).map_or(0, |h| text_width(h));
                let least = match column.give {
                    Give::None => width,
                    Give::KeepEnd | Give::KeepStart => width.min(MIN_CUT),
                    Give::Wrap => self
                        .values()
                        .filter_map(|row| row.get(i))
                        .flat_map(|cell| cell.split_whitespace())
                        .map(console::measure_text_width)
                        .max()
                        .unwrap_or(0),
                    Give::Stack => self
                        .values()
                        .filter_map(|row| row.get(i))
                        .flat_map(|cell| cell.lines().flat_map(stacked))
                        .map(console::measure_text_width)
                        .max()
                        .unwrap_or(0),
                };
                let note = if i == 0 { self.longest_note_word() } else { 0 };
                least.max(header).max(note)
            })
            .collect()
    }

    /// Widths that fit `limit`, narrowing the widest columns that may give
    /// way first; `None` when even their least widths do not fit.
    fn fitted_widths(&self, limit: usize) -> Option<Vec<usize>> {
        let mut widths = self.natural_widths();
        let least = self.least_widths();
        // Each column takes its content plus a border and two spaces.
        let frame = 3 * widths.len() + 1;
        let mut total: usize = widths.iter().sum::<usize>() + frame;
        while total > limit {
            let widest = (0..widths.len())
                .filter(|&i| widths[i] > least[i])
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)))?;
            widths[widest] -= 1;
            total -= 1;
        }
        Some(widths)
    }

    /// The cell cut or wrapped to `width` as its column gives way.
    fn fit_cell(cell: &str, width: usize, give: Give) -> String {
        cell.lines()
            .map(|line| {
                if console::measure_text_width(line) <= width {
                    return line.to_string();
                }
                match give {
                    Give::None => line.to_string(),
                    Give::KeepStart => console::truncate_str(line, width, "…").into_owned(),
                    Give::KeepEnd => keep_end(line, width),
                    Give::Wrap => textwrap::fill(line, between_words(width)),
                    Give::Stack => stacked(line).collect::<Vec<_>>().join("\n"),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn comfy(&self, widths: Option<&[usize]>) -> Table {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED);
        table.set_content_arrangement(ContentArrangement::Disabled);
        let fit = |row: &Vec<String>, note: bool| -> Vec<String> {
            row.iter()
                .enumerate()
                .map(|(i, cell)| match widths {
                    Some(w) if note => Self::fit_cell(cell, w[i], Give::Wrap),
                    Some(w) => Self::fit_cell(cell, w[i], self.columns[i].give),
                    None => cell.clone(),
                })
                .collect()
        };
        if !self.header.is_empty() {
            table.set_header(self.header.clone());
        }
        for (row, &note) in self.rows.iter().zip(&self.notes) {
            table.add_row(fit(row, note));
        }
        for (i, column) in self.columns.iter().enumerate() {
            if let Some(c) = table.column_mut(i) {
                c.set_cell_alignment(column.align);
            }
        }
        table
    }

    /// Each row as `column: value` lines (values wrapped between words),
    /// rows apart by a blank line: what fits any width.
    fn as_records(&self, limit: usize) -> String {
        let key_width = self.header.iter().map(|h| text_width(h)).max().unwrap_or(0);
        let indent = " ".repeat(key_width + 2);
        let value_width = limit.saturating_sub(key_width + 2).max(MIN_CUT);
        let mut blocks = Vec::new();
        for (row, &note) in self.rows.iter().zip(&self.notes) {
            if note {
                // A sentence reads as itself, under no column's name.
                blocks.push(textwrap::fill(&row[0], between_words(limit)));
                continue;
            }
            let mut lines = Vec::new();
            for (i, cell) in row.iter().enumerate() {
                if cell.is_empty() {
                    continue;
                }
                let key = self.header.get(i).map_or("", String::as_str);
                let options = between_words(value_width);
                // A word longer than the line is cut as the column cuts,
                // keeping the start where the column would not cut at all.
                let give = match self.columns[i].give {
                    Give::KeepEnd => Give::KeepEnd,
                    _ => Give::KeepStart,
                };
                let value = textwrap::fill(&cell.replace('\n', " "), options)
                    .lines()
                    .map(|line| Self::fit_cell(line, value_width, give))
                    .collect::<Vec<_>>()
                    .join(&format!("\n{indent}"));
                let pad = key_width - text_width(key);
                lines.push(format!("{key}: {}{value}", " ".repeat(pad)));
            }
            blocks.push(lines.join("\n"));
        }
        blocks.join("\n\n")
    }
}

/// A quantity's parts as [`Give::Stack`] stacks them: before its first
/// ` (` and from it on (the whole line when it has none).
fn stacked(line: &str) -> impl Iterator<Item = &str> {
    match line.find(" (") {
        Some(at) => [&line[..at], &line[at + 1..]].into_iter().take(2),
        None => [line, ""].into_iter().take(1),
    }
}

/// `line` cut to `width` behind a leading ellipsis, keeping its end.
fn keep_end(line: &str, width: usize) -> String {
    let plain = console::strip_ansi_codes(line);
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in plain.chars().rev() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        kept.push(c);
    }
    kept.reverse();
    format!("…{}", kept.into_iter().collect::<String>())
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(limit) = limit().map(usize::from) else {
            return write!(f, "{}", self.comfy(None));
        };
        match self.fitted_widths(limit) {
            Some(widths) => write!(f, "{}", self.comfy(Some(&widths))),
            None => f.write_str(&self.as_records(limit)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        let mut grid = table();
        grid.set_header(["path", "bytes", "note"]);
        grid.add_row([
            "Instance.constraints;Constraint.function;Linear;PolynomialBase.terms",
            "12,345,678",
            "the terms of every linear constraint function together",
        ]);
        grid.add_row(["total", "99", ""]);
        grid.column_mut(0).unwrap().give(Give::KeepEnd);
        grid.column_mut(1)
            .unwrap()
            .set_cell_alignment(CellAlignment::Right);
        grid.column_mut(2).unwrap().give(Give::Wrap);
        grid
    }

    #[test]
    fn a_narrow_table_cuts_paths_and_wraps_prose_but_never_a_number_or_word() {
        let grid = grid();
        for limit in [80, 60, 50] {
            let widths = grid.fitted_widths(limit).expect("fits");
            let text = grid.comfy(Some(&widths)).to_string();
            for line in text.lines() {
                assert!(
                    console::measure_text_width(line) <= limit,
                    "{limit}: {line}"
                );
            }
            assert!(text.contains("12,345,678"), "{text}");
            assert!(
                text.contains("terms "),
                "the end of the path stays:\n{text}"
            );
            for word in ["terms", "linear", "constraint", "function", "together"] {
                assert!(text.contains(word), "{limit}: {word} split:\n{text}");
            }
        }
    }

    #[test]
    fn what_cannot_fit_becomes_column_value_lines() {
        let grid = grid();
        assert!(grid.fitted_widths(30).is_none());
        let text = grid.as_records(30);
        assert!(
            text.starts_with("path:  …r;PolynomialBase.terms\n"),
            "{text}"
        );
        assert!(text.contains("bytes: 12,345,678"), "{text}");
        assert!(text.contains("\n\npath:  total\nbytes: 99"), "{text}");
    }

    #[test]
    fn a_note_wraps_where_its_column_would_cut_a_path() {
        let mut grid = grid();
        grid.add_note("(12 smaller changes not shown; raise --top to see them)");
        for limit in [80, 60, 50] {
            let widths = grid.fitted_widths(limit).expect("fits");
            let text = grid.comfy(Some(&widths)).to_string();
            assert!(text.contains("…r;PolynomialBase.terms") || text.contains("terms "));
            for word in ["(12", "smaller", "changes", "shown;", "--top", "them)"] {
                assert!(
                    text.lines()
                        .any(|line| line.split_whitespace().any(|w| w == word)),
                    "{limit}: {word} cut:\n{text}"
                );
            }
            assert!(!text.contains("…er changes"), "{text}");
        }
        // As records, the note stands alone, not under the column's name.
        let text = grid.as_records(30);
        assert!(
            text.ends_with("\n\n(12 smaller changes not shown;\nraise --top to see them)"),
            "{text}"
        );
    }

    #[test]
    fn prose_wraps_at_spaces_not_at_hyphens() {
        let wrapped = Grid::fit_cell("under /work/wt-cores/b.json", 15, Give::Wrap);
        assert_eq!(wrapped, "under\n/work/wt-cores/b.json");
    }

    #[test]
    fn a_quantity_stacks_its_exact_figure_below_it_whole() {
        let mut grid = table();
        grid.set_header(["name", "bytes", "on disk"]);
        grid.add_row(["c[50]", "2.3 KiB (2,336 B)", "1.6 KiB (1,605 B)"]);
        grid.add_row(["c[51]", "535 B", "159 B"]);
        for c in [1, 2] {
            grid.column_mut(c).unwrap().give(Give::Stack);
        }
        // Natural: 5 + 17 + 17 + 3 × 3 + 1 = 49 columns.
        let widths = grid.fitted_widths(40).expect("fits once stacked");
        let text = grid.comfy(Some(&widths)).to_string();
        assert!(
            text.contains(" 2.3 KiB ") && text.contains(" (2,336 B) "),
            "{text}"
        );
        assert!(
            text.contains(" 1.6 KiB ") && text.contains(" (1,605 B) "),
            "{text}"
        );
        // Narrower than its widest part, it is not cut: the rows become records.
        assert!(grid.fitted_widths(30).is_none());
    }

    #[test]
    fn a_cut_keeps_the_end_or_the_start() {
        assert_eq!(keep_end("Instance.constraints;Linear", 10), "…ts;Linear");
        assert_eq!(
            Grid::fit_cell("a rather long name", 8, Give::KeepStart),
            "a rathe…"
        );
    }
}
