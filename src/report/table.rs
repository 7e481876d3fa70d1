//! Aligned text tables: text columns left-aligned, numbers right-aligned,
//! long names shortened to fit the width.

use super::fit::{Keep, shorten, shorten_apart, width};
use crate::figure_text::fixed;
use crate::text_safe::escape_controls;
use std::borrow::Cow;

/// Narrowest a shortened column gets (its header permitting).
const MIN_SHORTENED: usize = 12;

/// A table under construction.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    indent: usize,
    /// Per column: how it may be shortened (`None`: never).
    keep: Vec<Option<Keep>>,
    /// Per column: the narrowest it is shortened to (its header permitting).
    floor: Vec<usize>,
    /// A column that becomes a heading line above its rows when the table
    /// cannot fit otherwise.
    heading: Option<usize>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            indent: 2,
            keep: vec![None; header.len()],
            floor: vec![MIN_SHORTENED; header.len()],
            heading: None,
        }
    }

    /// As [`Table::shorten`], down to `floor` columns rather than the usual
    /// 12 (a host name whose first few letters tell hosts apart).
    pub fn shorten_to(mut self, col: usize, keep: Keep, floor: usize) -> Self {
        self.keep[col] = Some(keep);
        self.floor[col] = floor;
        self
    }

    /// When shortening cannot fit the table, column `col` (the first, whose
    /// rows come grouped by it) leaves the columns and is said once per
    /// group on a line of its own, the group's rows indented below it.
    pub fn heading_when_narrow(mut self, col: usize) -> Self {
        self.heading = Some(col);
        self
    }

    /// Lets column `col` (a name or path) be shortened when the table is
    /// too wide, keeping the part that tells values apart.
    pub fn shorten(mut self, col: usize, keep: Keep) -> Self {
        self.keep[col] = Some(keep);
        self
    }

    /// Adds a row; control characters in cells (names from the file) are
    /// escaped here, so column widths are those of the printed text.
    pub fn row(&mut self, cells: Vec<String>) {
        let cells = cells
            .into_iter()
            .map(|c| match escape_controls(&c) {
                // the last guard: a figure with nothing behind it reads `-`
                _ if matches!(c.as_str(), "NaN" | "inf" | "-inf") => "-".to_string(),
                Cow::Borrowed(_) => c,
                Cow::Owned(e) => e,
            })
            .collect();
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as lines; within `cols` columns (`None`: every cell
    /// whole). Name columns are shortened first (keeping what tells their
    /// values apart); a heading column leaves the columns when that spares
    /// a cut; then the gaps narrow and names go below their floor; a line
    /// still too wide ends in `…` where it was cut, so nothing spills
    /// unmarked.
    pub fn render(&self, cols: Option<usize>) -> String {
        if let (Some(g), Some(cols)) = (self.heading, cols)
            && self.total(&self.natural_widths()) > cols
        {
            return self.render_grouped(g, cols);
        }
        let ncol = self.header.len();
        let mut widths = self.natural_widths();
        let mut gap = 2;
        if let Some(cols) = cols {
            self.narrow(&mut widths, cols, gap, |c| self.floor(c));
            if self.total_with(&widths, gap) > cols {
                gap = 1;
                self.narrow(&mut widths, cols, gap, |c| self.floor(c));
            }
            if self.total_with(&widths, gap) > cols {
                self.narrow(&mut widths, cols, gap, |_| LAST_FLOOR);
            }
        }
        let mut numeric = vec![true; ncol];
        for row in &self.rows {
            for (c, cell) in row.iter().enumerate().take(ncol) {
                if !looks_numeric(cell) {
                    numeric[c] = false;
                }
            }
        }
        let (shown, numbered) = self.shown_cells(&widths);
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&shown) {
            let mut line = " ".repeat(self.indent);
            for (c, cell) in row.iter().enumerate().take(ncol) {
                let pad = widths[c].saturating_sub(width(cell));
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
                    line.push_str(&" ".repeat(gap));
                }
            }
            let line = line.trim_end();
            match cols {
                Some(cols) if width(line) > cols => {
                    out += &shorten(line, cols, Keep::Start);
                }
                _ => out += line,
            }
            out.push('\n');
        }
        if numbered {
            out += &super::fit::wrap(
                "~k: names cut alike wherever they fit, told apart by number (--wide prints them whole)",
                &" ".repeat(self.indent),
                cols,
            );
        }
        out
    }
}

/// The narrowest a name column gets when nothing else fits.
const LAST_FLOOR: usize = 6;

impl Table {
    /// Each row's cells as shown in `widths`: shortenable columns cut so
    /// that distinct values stay distinct; and whether a cut was numbered.
    fn shown_cells(&self, widths: &[usize]) -> (Vec<Vec<String>>, bool) {
        let mut shown = self.rows.clone();
        let mut numbered = false;
        for (c, keep) in self.keep.iter().enumerate() {
            let Some(keep) = *keep else { continue };
            let cells: Vec<&str> = self
                .rows
                .iter()
                .map(|r| r.get(c).map_or("", String::as_str))
                .collect();
            if cells.iter().all(|s| width(s) <= widths[c]) {
                continue;
            }
            let (cuts, n) = shorten_apart(&cells, widths[c], keep);
            numbered |= n;
            for (row, cut) in shown.iter_mut().zip(cuts) {
                if let Some(cell) = row.get_mut(c) {
                    *cell = cut;
                }
            }
        }
        (shown, numbered)
    }

    /// The narrowest column `c` is shortened to in the usual passes.
    fn floor(&self, c: usize) -> usize {
        width(&self.header[c]).max(self.floor[c])
    }

    fn natural_widths(&self) -> Vec<usize> {
        let mut widths = vec![0; self.header.len()];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (c, cell) in row.iter().enumerate().take(widths.len()) {
                widths[c] = widths[c].max(width(cell));
            }
        }
        widths
    }

    fn total(&self, widths: &[usize]) -> usize {
        self.total_with(widths, 2)
    }

    fn total_with(&self, widths: &[usize], gap: usize) -> usize {
        self.indent + widths.iter().sum::<usize>() + gap * widths.len().saturating_sub(1)
    }

    /// The table without column `g`, whose value heads each run of rows
    /// that share it (shortened only past the whole width).
    fn render_grouped(&self, g: usize, cols: usize) -> String {
        let rest = Table {
            header: without(&self.header, g),
            rows: self.rows.iter().map(|r| without(r, g)).collect(),
            indent: self.indent + 2,
            keep: without(&self.keep, g),
            floor: without(&self.floor, g),
            heading: None,
        };
        let lines = rest.render(Some(cols));
        let mut lines = lines.lines();
        let pad = " ".repeat(self.indent);
        let mut out = String::new();
        // The header names the heading's column before the others'.
        out += &format!("{pad}{}\n", self.header[g]);
        out += lines.next().unwrap_or_default();
        out.push('\n');
        let mut last: Option<&str> = None;
        for (row, line) in self.rows.iter().zip(lines) {
            let value = row.get(g).map_or("", String::as_str);
            if last != Some(value) {
                let room = cols.saturating_sub(self.indent);
                out += &format!("{pad}{}\n", shorten(value, room, Keep::Middle));
                last = Some(value);
            }
            out += line;
            out.push('\n');
        }
        out
    }

    /// Narrows the shortenable columns, widest first, until the table fits
    /// `cols` or they reach `floor`.
    fn narrow(
        &self,
        widths: &mut [usize],
        cols: usize,
        gap: usize,
        floor: impl Fn(usize) -> usize,
    ) {
        while self.total_with(widths, gap) > cols {
            let widest = (0..widths.len())
                .filter(|&c| self.keep[c].is_some() && widths[c] > floor(c))
                .max_by_key(|&c| (widths[c], std::cmp::Reverse(c)));
            match widest {
                Some(c) => widths[c] -= 1,
                None => break,
            }
        }
    }
}

/// `v` without its column `g`.
fn without<T: Clone>(v: &[T], g: usize) -> Vec<T> {
    v.iter()
        .enumerate()
        .filter(|&(c, _)| c != g)
        .map(|(_, x)| x.clone())
        .collect()
}

fn looks_numeric(s: &str) -> bool {
    s == "-" || s.trim_end_matches('%').parse::<f64>().is_ok()
}

/// Milliseconds for reading: 3 decimals.
pub fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// A percentage with one decimal (the header says `_%`), or `-`.
pub fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| fixed(v, 1))
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
            t.render(None),
            "  name       count\n  AllGather    135\n  AllReduce     10\n"
        );
    }

    #[test]
    fn escaped_cells_keep_columns_aligned() {
        let mut t = Table::new(&["name", "count"]);
        t.row(vec!["a\x1bb".into(), "1".into()]);
        t.row(vec!["plain".into(), "22".into()]);
        assert_eq!(
            t.render(None),
            "  name    count\n  a\\x1bb      1\n  plain      22\n"
        );
    }

    #[test]
    fn a_too_wide_table_shortens_its_name_column_only() {
        let long = format!("kernel_{}", "x".repeat(120));
        let mut t = Table::new(&["name", "ms"]).shorten(0, Keep::Start);
        t.row(vec![long.clone(), "1.000".into()]);
        let text = t.render(Some(40));
        assert!(text.lines().all(|l| width(l) <= 40), "{text}");
        assert!(text.contains("kernel_xxx") && text.contains('…') && text.contains("1.000"));
        assert!(t.render(None).contains(&long));
    }

    #[test]
    fn a_heading_column_leaves_the_columns_only_when_nothing_else_fits() {
        let mut t = Table::new(&["device", "op", "ms"])
            .shorten(0, Keep::Middle)
            .heading_when_narrow(0);
        t.row(vec![
            "host-a:0 r0".into(),
            "AllGather".into(),
            "1.000".into(),
        ]);
        t.row(vec![
            "host-a:0 r0".into(),
            "AllReduce".into(),
            "2.000".into(),
        ]);
        t.row(vec![
            "host-b:1 r1".into(),
            "AllGather".into(),
            "3.000".into(),
        ]);
        let flat = "  device       op            ms\n";
        assert!(t.render(Some(40)).starts_with(flat));
        assert_eq!(
            t.render(Some(24)),
            "  device\n    op            ms\n  host-a:0 r0\n    AllGather  1.000\n    \
             AllReduce  2.000\n  host-b:1 r1\n    AllGather  3.000\n"
        );
    }
}
