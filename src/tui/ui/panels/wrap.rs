//! Wrapping a styled line into rows of a panel's width, so a panel scrolls
//! and counts in rows. Breaks after a space when one is in the row's
//! second half, else mid-word (kernel names have no spaces).

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// `line` as rows at most `width` cells wide (at least one row).
pub fn wrap(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    if width == 0 || line.width() <= width {
        return vec![line];
    }
    let base = line.style;
    let cells: Vec<(String, Style, usize)> = line
        .styled_graphemes(Style::default())
        .map(|g| {
            let w = Span::raw(g.symbol).width();
            (g.symbol.to_string(), g.style, w)
        })
        .collect();
    let mut rows = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let mut end = start;
        let mut used = 0;
        while end < cells.len() && used + cells[end].2 <= width.max(cells[end].2) {
            used += cells[end].2;
            end += 1;
            if used >= width {
                break;
            }
        }
        if end < cells.len()
            && let Some(space) = (start + (end - start) / 2..end)
                .rev()
                .find(|&i| cells[i].0 == " ")
        {
            end = space + 1;
        }
        rows.push(row(&cells[start..end], base));
        start = end;
    }
    rows
}

/// Cells back into spans, one per run of the same style.
fn row(cells: &[(String, Style, usize)], base: Style) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (s, style, _) in cells {
        match spans.last_mut() {
            Some(last) if last.style == *style => last.content.to_mut().push_str(s),
            _ => spans.push(Span::styled(s.clone(), *style)),
        }
    }
    Line::from(spans).style(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &[Line]) -> Vec<String> {
        rows.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn short_lines_stay_whole() {
        assert_eq!(texts(&wrap(Line::from("abc"), 5)), ["abc"]);
    }

    #[test]
    fn breaks_after_a_space_else_mid_word() {
        assert_eq!(
            texts(&wrap(Line::from("queued behind gemm"), 10)),
            ["queued ", "behind ", "gemm"]
        );
        assert_eq!(
            texts(&wrap(Line::from("ncclDevKernel_AllGather"), 10)),
            ["ncclDevKer", "nel_AllGat", "her"]
        );
    }

    #[test]
    fn styles_survive_the_break() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let rows = wrap(
            Line::from(vec![Span::raw("ab"), Span::styled("cdef", bold)]),
            3,
        );
        assert_eq!(texts(&rows), ["abc", "def"]);
        assert_eq!(rows[1].spans[0].style, bold);
    }

    #[test]
    fn wide_characters_are_never_split() {
        let rows = wrap(Line::from("µs→µs→"), 4);
        assert!(rows.iter().all(|r| r.width() <= 4), "{:?}", texts(&rows));
        assert_eq!(texts(&rows).concat(), "µs→µs→");
    }
}
