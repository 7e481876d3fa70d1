//! Text the views share: lines with file-derived names made visible
//! (control characters as escapes).

use crate::text_safe::escape_controls;
use ratatui::text::{Line, Span};
use std::borrow::Cow;
use unicode_width::UnicodeWidthChar;

/// The line with control characters (names from the file) shown as
/// visible escapes, styles kept. Applied where lines become widgets, so
/// wrapping measures the escaped text.
pub(super) fn visible(mut line: Line<'static>) -> Line<'static> {
    for span in &mut line.spans {
        let escaped = match escape_controls(&span.content) {
            Cow::Owned(e) => Some(e),
            Cow::Borrowed(_) => None,
        };
        if let Some(e) = escaped {
            span.content = e.into();
        }
    }
    line
}

/// The line in at most `width` columns: whole, or cut with `…` as its
/// last column so that the cut shows (styles kept up to the cut).
pub(super) fn cut_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let room = width.saturating_sub(1);
    let mut used = 0;
    let mut spans: Vec<Span<'static>> = Vec::new();
    for span in line.spans {
        let mut kept = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > room {
                break;
            }
            used += w;
            kept.push(c);
        }
        let whole = kept.len() == span.content.len();
        spans.push(Span::styled(kept, span.style));
        if !whole {
            break;
        }
    }
    if width > 0 {
        spans.push(Span::raw("…"));
    }
    Line::from(spans).style(line.style)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    #[test]
    fn a_cut_line_ends_in_an_ellipsis_and_keeps_its_styles() {
        let line = Line::from(vec![
            Span::raw("late D4 "),
            Span::styled("+8.7 ms", Style::new().red()),
        ]);
        assert_eq!(cut_line(line.clone(), 40), line);
        let cut = cut_line(line, 12);
        assert_eq!(cut.width(), 12);
        assert_eq!(cut.to_string(), "late D4 +8.…");
        assert_eq!(cut.spans[1].style, Style::new().red());
    }
}
