//! The bookmarks list (`'`) and the name prompt (`M`).

use super::labels::fit_name;
use super::popup::{centered, list_popup, popup};
use super::theme::Theme;
use crate::text_safe::escape_controls;
use crate::tui::action::{Action, Mode};
use crate::tui::scroll::Scroll;
use crate::tui::state::{App, Pick};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

/// The name prompt.
pub fn prompt(f: &mut Frame, area: Rect, app: &App, input: &str) {
    let keys = |a: Action| app.session().keymap.keys_for(Mode::Finder, a);
    popup(
        f,
        centered(area, 64, 4),
        "bookmark this place",
        vec![
            Line::from(format!("name> {}█", escape_controls(input))),
            Line::from(format!(
                "{} keeps it (empty: the instance or window), {} drops it",
                keys(Action::Accept),
                keys(Action::Cancel)
            )),
        ],
    );
}

/// The list, the cursor's row reversed; returns its scroll as shown.
pub fn list(f: &mut Frame, area: Rect, app: &App, theme: &Theme, pick: Pick) -> Scroll {
    let marks = app.capture().bookmarks.as_deref().unwrap_or(&[]);
    let width = area.width.min(100);
    let inner = usize::from(width.saturating_sub(2));
    // The name gives way first, so that the rest reads whole at 80.
    let nw = inner.saturating_sub(58).clamp(12, 28);
    let head = format!(
        "{:<nw$} {:<12} {:<23} created (UTC)",
        "name", "instance", "window s"
    );
    let mut lines = vec![Line::styled(
        fit_name(&head, inner).unwrap_or(head),
        theme.heading(),
    )];
    for (i, b) in marks.iter().enumerate() {
        let at = match (&b.group, b.instance) {
            (Some(g), Some(k)) => format!("{g}:{k}"),
            _ => "-".into(),
        };
        let [a, e] = b.window_ns;
        let name = fit_name(&escape_controls(&b.name), nw).unwrap_or_default();
        let text = format!(
            "{name:<nw$} {:<12} {:<23} {}",
            escape_controls(&at),
            format!("{:.3}–{:.3}", a as f64 / 1e9, e as f64 / 1e9),
            escape_controls(&b.created)
        );
        let style = if i == pick.selected {
            theme.cursor_label()
        } else {
            Style::default()
        };
        lines.push(Line::styled(fit_name(&text, inner).unwrap_or(text), style));
    }
    let height = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let r = centered(area, width, height);
    let mut scroll = pick.scroll;
    scroll.fit(lines.len() - 1, usize::from(height.saturating_sub(3)));
    scroll.show(pick.selected);
    let mut shown = vec![lines[0].clone()];
    shown.extend(lines.into_iter().skip(1 + scroll.top).take(scroll.visible));
    list_popup(
        f,
        r,
        &format!(" bookmarks ({}) ", marks.len()),
        shown,
        theme,
        scroll.more_below(),
    );
    scroll
}
