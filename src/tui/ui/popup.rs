//! The frame every popup shares: placed in the middle, cleared under it,
//! names from the file made visible, `↓ more` when rows are below.

use super::text::visible;
use super::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// A `w`×`h` rectangle in the middle of `area` (no larger than it).
pub(super) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// A framed popup of `lines`, cleared under it.
pub(super) fn popup(f: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>) {
    f.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {title} "));
    let lines: Vec<Line> = lines.into_iter().map(visible).collect();
    f.render_widget(Paragraph::new(lines).block(block), area);
}

/// A popup of `lines` as they are, `↓ more` on its frame when `more`.
pub(super) fn list_popup(
    f: &mut Frame,
    r: Rect,
    title: &str,
    lines: Vec<Line<'static>>,
    theme: &Theme,
    more: bool,
) {
    let shown: Vec<Line> = lines.into_iter().map(visible).collect();
    let mut block = Block::default()
        .borders(Borders::ALL)
        .title(title.to_string());
    if more {
        block = block.title_bottom(Line::styled(" ↓ more ", theme.heading()).right_aligned());
    }
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(shown).block(block), r);
}
