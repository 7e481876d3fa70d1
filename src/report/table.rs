//! Aligned text tables: text columns left-aligned, numbers right-aligned.

use crate::text_safe::escape_controls;
use std::borrow::Cow;

/// A table under construction.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    indent: usize,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            indent: 2,
        }
    }

    /// Adds a row; control characters in cells (names from the file) are
    /// escaped here, so column widths are those of the printed text.
    pub fn row(&mut self, cells: Vec<String>) {
        let cells = cells
            .into_iter()
            .map(|c| match escape_controls(&c) {
                Cow::Borrowed(_) => c,
                Cow::Owned(e) => e,
            })
            .collect();
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn render(&self) -> String {
        let ncol = self.header.len();
        let mut width = vec![0; ncol];
        let mut numeric = vec![true; ncol];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (c, cell) in row.iter().enumerate().take(ncol) {
                width[c] = width[c].max(cell.chars().count());
            }
        }
        for row in &self.rows {
            for (c, cell) in row.iter().enumerate().take(ncol) {
                if !looks_numeric(cell) {
                    numeric[c] = false;
                }
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = " ".repeat(self.indent);
            for (c, cell) in row.iter().enumerate().take(ncol) {
                let pad = width[c] - cell.chars().count();
                if numeric[c] {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    if c + 1 < ncol {
                        line.push_str(&" ".repeat(pad));
                    }
                }
                if c + 1 < ncol {
                    line.push_str("  ");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

fn looks_numeric(s: &str) -> bool {
    s == "-" || s.trim_end_matches('%').parse::<f64>().is_ok()
}

/// Milliseconds for reading: 3 decimals.
pub fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// A percentage with one decimal, or `-`.
pub fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.1}%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_left_numbers_right() {
        let mut t = Table::new(&["name", "count"]);
        t.row(vec!["AllGather".into(), "135".into()]);
        t.row(vec!["AllReduce".into(), "10".into()]);
        assert_eq!(
            t.render(),
            "  name       count\n  AllGather    135\n  AllReduce     10\n"
        );
    }

    #[test]
    fn escaped_cells_keep_columns_aligned() {
        let mut t = Table::new(&["name", "count"]);
        t.row(vec!["a\x1bb".into(), "1".into()]);
        t.row(vec!["plain".into(), "22".into()]);
        assert_eq!(
            t.render(),
            "  name    count\n  a\\x1bb      1\n  plain      22\n"
        );
    }
}
