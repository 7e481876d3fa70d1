//! Side panels: each file gives one panel's lines and where Enter goes from
//! each; this file lays them out and draws the frame of every panel once
//! (border, title, scroll position, `↓ more`).

mod details;
mod diff;
mod launch;
mod lines;
mod overlap;
mod range;
mod skew;
mod summary;
pub(super) mod wrap;

use super::text::visible;
use super::theme::Theme;
use crate::tui::action::{Action, Mode};
use crate::tui::data::Loaded;
use crate::tui::panel::{PanelArea, PanelKind, PanelTarget};
use crate::tui::state::App;
pub use lines::PanelLines;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};
use std::ops::Range;

/// The lines of panel `kind`, `width` columns wide.
pub fn lines(kind: PanelKind, app: &App, l: &Loaded, theme: &Theme, width: usize) -> PanelLines {
    match kind {
        PanelKind::Skew => skew::lines(app, l, theme, width),
        PanelKind::Launch => launch::lines(app, l, theme),
        PanelKind::Overlap => overlap::lines(app, l, theme),
        PanelKind::Summary => summary::lines(app, l, theme),
        PanelKind::Details => details::lines(app, l, theme),
        PanelKind::Diff => diff::lines(app, theme, width),
        PanelKind::Range => range::lines(app, l, theme),
    }
}

/// A panel's rows after wrapping to the width it is drawn at.
struct Rows {
    kind: PanelKind,
    rows: Vec<Line<'static>>,
    targets: Vec<Option<PanelTarget>>,
    /// The rows of each line.
    lines: Vec<Range<usize>>,
}

fn rows(kind: PanelKind, app: &App, l: &Loaded, theme: &Theme, width: usize) -> Rows {
    let content = lines(kind, app, l, theme, width);
    let mut out = Rows {
        kind,
        rows: Vec::new(),
        targets: Vec::new(),
        lines: Vec::new(),
    };
    for (line, target) in content.lines.into_iter().zip(content.targets) {
        let first = out.rows.len();
        for row in wrap::wrap(visible(line), width) {
            out.rows.push(row);
            out.targets.push(target.clone());
        }
        out.lines.push(first..out.rows.len());
    }
    out
}

/// Panels go to the right from this width, else below the timeline.
pub const SIDE_FROM: u16 = 120;
/// Timeline rows (ruler included) that panels below it always leave.
const TIMELINE_KEEPS: u16 = 8;
/// The shortest panel box below the timeline.
const MIN_BELOW: u16 = 6;

/// Splits `main` between the timeline and the open panels, and draws them.
/// Returns the timeline's area. Panels take the rows they need: below
/// the timeline up to all but [`TIMELINE_KEEPS`] rows, on the right the
/// full height shared by need.
pub fn layout_and_draw(
    f: &mut Frame,
    main: Rect,
    app: &mut App,
    l: &Loaded,
    theme: &Theme,
) -> Rect {
    let open = app.chrome().panels.open();
    app.chrome_mut().layout.panels.clear();
    if open.is_empty() {
        return main;
    }
    let side = main.width >= SIDE_FROM;
    if side {
        let w = (main.width * 2 / 5).max(44);
        let [t, p] = Layout::horizontal([Constraint::Min(40), Constraint::Length(w)]).areas(main);
        let inner_w = p.width.saturating_sub(2) as usize;
        let all: Vec<Rows> = open
            .iter()
            .map(|&k| rows(k, app, l, theme, inner_w))
            .collect();
        let need: Vec<u16> = all.iter().map(|r| r.rows.len() as u16 + 2).collect();
        let heights = share(&need, p.height);
        let mut y = p.y;
        for (r, h) in all.into_iter().zip(heights) {
            draw_one(f, Rect::new(p.x, y, p.width, h), app, r, theme);
            y += h;
        }
        t
    } else {
        // Side by side below the timeline, as tall as the tallest needs.
        let n = open.len() as u32;
        let cols = Layout::horizontal(open.iter().map(|_| Constraint::Ratio(1, n)))
            .split(Rect::new(main.x, 0, main.width, 1));
        let all: Vec<Rows> = open
            .iter()
            .zip(cols.iter())
            .map(|(&k, c)| rows(k, app, l, theme, c.width.saturating_sub(2) as usize))
            .collect();
        let tallest = all
            .iter()
            .map(|r| r.rows.len() as u16 + 2)
            .max()
            .unwrap_or(0);
        let most = main
            .height
            .saturating_sub(TIMELINE_KEEPS)
            .max(MIN_BELOW.min(main.height));
        let h = tallest.clamp(MIN_BELOW.min(most), most);
        let [t, p] = Layout::vertical([Constraint::Min(0), Constraint::Length(h)]).areas(main);
        for (r, c) in all.into_iter().zip(cols.iter()) {
            draw_one(f, Rect::new(c.x, p.y, c.width, p.height), app, r, theme);
        }
        t
    }
}

/// Heights for boxes needing `need` rows in `total`: all they need when it
/// fits, else each at most an equal share, what the short ones leave going
/// to the tall ones (water-filling). Every box gets at least 3 rows while
/// they fit.
fn share(need: &[u16], total: u16) -> Vec<u16> {
    let mut got = vec![0u16; need.len()];
    let mut left = total;
    let mut waiting: Vec<usize> = (0..need.len()).collect();
    while !waiting.is_empty() {
        let fair = (left / waiting.len() as u16).max(1);
        let (fits, rest): (Vec<usize>, Vec<usize>) =
            waiting.iter().partition(|&&i| need[i] <= fair);
        if fits.is_empty() {
            // Everyone is cut: equal shares, the remainder to the first.
            let n = rest.len() as u16;
            let mut extra = left.saturating_sub(fair * n);
            for i in rest {
                let bonus = u16::from(extra > 0);
                extra -= bonus;
                got[i] = fair.min(left) + bonus;
                left = left.saturating_sub(got[i]);
            }
            break;
        }
        for i in fits {
            got[i] = need[i];
            left -= need[i];
        }
        waiting = rest;
    }
    got
}

/// One panel: border, title (marked when `{` `}` scroll it, or when it
/// has the keys), its rows from the scroll position (the cursor's line
/// highlighted while it has the keys), the position and `↓ more` when cut.
/// Records the geometry and clamps the scroll to what fits.
fn draw_one(f: &mut Frame, area: Rect, app: &mut App, mut r: Rows, theme: &Theme) {
    if area.height < 2 || area.width < 2 {
        return;
    }
    let inner = Rect::new(area.x + 1, area.y + 1, area.width - 2, area.height - 2);
    let (rows, visible) = (r.rows.len(), inner.height as usize);
    let mut scroll = app
        .chrome_mut()
        .panels
        .scroll_mut(r.kind)
        .fit(rows + tail_pad(&r.lines, rows, visible), visible);
    // A line wrapped over rows is never a fragment on the first row
    // (`l>)`), when it fits the panel at all: a stop inside it moves on
    // to its end going down, back to its start going up.
    if let Some(line) = wrapped_around(&r.lines, scroll.top, visible) {
        let down = scroll.top > app.chrome().panels.drawn_top(r.kind);
        let s = app.chrome_mut().panels.scroll_mut(r.kind);
        s.top = if down {
            line.end.min(s.max_top())
        } else {
            line.start
        };
        scroll = *s;
    }
    app.chrome_mut().panels.set_drawn_top(r.kind, scroll.top);
    let focused = app.chrome().panels.focused() == Some(r.kind);
    let target = app.chrome().panels.last_opened == Some(r.kind);
    if focused {
        let at = app.chrome().panels.cursor(r.kind);
        let line = r.lines.get(at).or(r.lines.last()).cloned().unwrap_or(0..0);
        for row in &mut r.rows[line] {
            *row = std::mem::take(row).patch_style(theme.cursor_label());
        }
    }
    let title = if focused {
        let keys = |a| app.session().keymap.keys_for(app.mode(), a);
        format!(
            " ▶{} · {} go · {} back ",
            r.kind.name(),
            keys(Action::Accept),
            keys(Action::Cancel)
        )
    } else if target {
        let keys = |a| app.session().keymap.keys_for(Mode::Timeline, a);
        format!(
            // "{}" alone reads as a placeholder: say what the keys do
            " ▸{} · {}/{} scroll ",
            r.kind.name(),
            keys(Action::PanelScrollUp),
            keys(Action::PanelScrollDown)
        )
    } else {
        format!(" {} ", r.kind.name())
    };
    let mut block = Block::default().borders(Borders::ALL).title(title);
    if focused {
        block = block.border_style(theme.heading());
    }
    if scroll.len > scroll.visible {
        block = block.title(
            Line::from(format!(
                " {}–{}/{} ",
                scroll.top + 1,
                (scroll.top + scroll.visible).min(rows),
                rows
            ))
            .right_aligned(),
        );
    }
    if scroll.more_below() {
        block = block.title_bottom(Line::styled(" ↓ more ", theme.heading()).right_aligned());
    }
    if scroll.more_above() {
        block = block.title_bottom(Line::styled(" ↑ ", theme.dim()).left_aligned());
    }
    let shown: Vec<Line> = r
        .rows
        .into_iter()
        .skip(scroll.top)
        .take(scroll.visible)
        .collect();
    f.render_widget(Paragraph::new(shown).block(block), area);
    app.chrome_mut().layout.panels.push(PanelArea {
        kind: Some(r.kind),
        inner,
        targets: r.targets,
        lines: r.lines,
    });
}

/// Blank rows let past the end so that the last stop is a line's start:
/// when the last full page would start inside a wrapped line that fits
/// the panel, scrolling may go on to that line's end (else the wheel's
/// last stop is a fragment, `l>)`).
fn tail_pad(lines: &[std::ops::Range<usize>], rows: usize, visible: usize) -> usize {
    let Some(last_top) = rows.checked_sub(visible).filter(|&m| m > 0) else {
        return 0;
    };
    wrapped_around(lines, last_top, visible).map_or(0, |l| l.end - last_top)
}

/// The line wrapped over rows that `row` falls inside (not at its start),
/// when it is shorter than `visible`: a page starting there would show a
/// fragment of it.
fn wrapped_around(
    lines: &[std::ops::Range<usize>],
    row: usize,
    visible: usize,
) -> Option<std::ops::Range<usize>> {
    lines
        .iter()
        .find(|l| l.start < row && row < l.end && l.end - l.start < visible)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::{share, tail_pad};

    /// 25 rows in a 12-row panel: the last page would start at row 13,
    /// inside the line of rows 12–14, so two blank rows let it start at 15.
    #[test]
    fn the_last_page_starts_at_a_line() {
        let lines = [0..12, 12..15, 15..25];
        assert_eq!(tail_pad(&lines, 25, 12), 2);
        assert_eq!(tail_pad(&[0..13, 13..25], 25, 12), 0);
        // a line taller than the panel is cut anyway: no padding
        assert_eq!(tail_pad(&[0..10, 10..24, 24..25], 25, 12), 0);
        assert_eq!(tail_pad(&lines, 10, 12), 0);
    }

    #[test]
    fn boxes_that_fit_get_what_they_need() {
        assert_eq!(share(&[5, 7, 4], 46), [5, 7, 4]);
    }

    #[test]
    fn short_boxes_leave_their_rest_to_tall_ones() {
        // Fair share 15: the 5 fits, the others split 40.
        assert_eq!(share(&[5, 30, 30], 45), [5, 20, 20]);
        assert_eq!(share(&[5, 30, 12], 45), [5, 28, 12]);
    }

    #[test]
    fn every_row_is_used_when_all_are_cut() {
        let got = share(&[20, 20, 20, 20, 20], 46);
        assert_eq!(got.iter().sum::<u16>(), 46);
        assert!(got.iter().all(|&h| h >= 9));
    }
}
