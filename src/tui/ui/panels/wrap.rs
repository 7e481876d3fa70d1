//! Wrapping a styled line into rows of a panel's width, so a panel scrolls
//! and counts in rows. Breaks after a space when one is in the row's
//! second half, else mid-word (kernel names have no spaces). An indented
//! line (a row of a list) continues two columns past its indent, so a long
//! name reads as part of its row, not as the next one.

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
    let lead = cells.iter().take_while(|c| c.0 == " ").count();
    let hang = if lead > 0 && lead + 2 <= width / 2 {
        lead + 2
    } else {
        0
    };
    let mut rows = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let room = if rows.is_empty() { width } else { width - hang };
        let mut end = start;
        let mut used = 0;
        while end < cells.len() && used + cells[end].2 <= room.max(cells[end].2) {
            used += cells[end].2;
            end += 1;
            if used >= room {
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
        let mut line = row(&cells[start..end], base);
        if !rows.is_empty() && hang > 0 {
            line.spans.insert(0, Span::raw(" ".repeat(hang)));
        }
        rows.push(line);
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
    fn an_indented_row_continues_under_its_indent() {
        let rows = wrap(Line::from("  kernel ncclDevKernel_AllGather_RING_LL"), 20);
        assert!(rows.iter().all(|r| r.width() <= 20), "{:?}", texts(&rows));
        assert!(rows.len() > 1);
        for r in &rows[1..] {
            let t = r.to_string();
            assert!(
                t.starts_with("    ") && !t.starts_with("     "),
                "{:?}",
                texts(&rows)
            );
        }
        assert_eq!(
            texts(&rows).concat().split_whitespace().collect::<String>(),
            "kernelncclDevKernel_AllGather_RING_LL"
        );
        // A flush-left sentence wraps flush left.
        assert_eq!(
            texts(&wrap(Line::from("queued behind gemm"), 10))[1],
            "behind "
        );
    }

    #[test]
    fn wide_characters_are_never_split() {
        let rows = wrap(Line::from("µs→µs→"), 4);
        assert!(rows.iter().all(|r| r.width() <= 4), "{:?}", texts(&rows));
        assert_eq!(texts(&rows).concat(), "µs→µs→");
    }
}
