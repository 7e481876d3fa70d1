//! The stats view (`S`): the `report stats` table over the timeline, the
//! sort column marked, the cursor row reversed; columns that do not fit
//! give way (said under the table), a name too long ends in `…`.

use super::labels::fit_name;
use super::panels::wrap::wrap;
use super::theme::Theme;
use crate::figure_text::fixed;
use crate::text_safe::escape_controls;
use crate::tui::action::{Action, Mode};
use crate::tui::data::Loaded;
use crate::tui::scroll::Scroll;
use crate::tui::state::App;
use crate::tui::stats_view::{COLUMNS, NAME, Scope, StatsState, order};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

/// Figure columns' widths, in `COLUMNS` order (the name takes the rest).
const WIDTHS: [usize; 8] = [6, 11, 8, 10, 10, 10, 10, 10];
/// Dropped first when the name would have less than this.
const NAME_ROOM: usize = 28;
/// In the order they give way.
const GIVE_WAY: [usize; 4] = [7, 5, 6, 4];

/// The figure columns shown in `inner` columns.
fn columns(inner: usize) -> Vec<usize> {
    let mut cols: Vec<usize> = (0..8).collect();
    let used = |cols: &[usize]| cols.iter().map(|&c| WIDTHS[c] + 1).sum::<usize>() + 2;
    for c in GIVE_WAY {
        if inner.saturating_sub(used(&cols)) >= NAME_ROOM {
            break;
        }
        cols.retain(|&x| x != c);
    }
    cols
}

/// Draws the view; returns the rows' scroll as shown.
pub fn draw(
    f: &mut Frame,
    area: Rect,
    app: &App,
    l: &Loaded,
    theme: &Theme,
    st: &StatsState,
) -> Scroll {
    let width = area.width.min(160);
    let inner = usize::from(width.saturating_sub(2));
    let Some(t) = app.stats_table() else {
        // Derived off the UI thread: said until it arrives.
        let r = super::popup::centered(area, width, 3);
        let wait = vec![Line::styled("computing the table…", theme.dim())];
        super::popup::list_popup(
            f,
            r,
            &format!(" stats: {} ", st.of.name()),
            wait,
            theme,
            false,
        );
        return st.pick.scroll;
    };
    let p = &l.profile;
    let shown = order(t, &p.strings, st);
    let cols = columns(inner);
    let arrow = if st.reverse == (st.sort == NAME) {
        "↓"
    } else {
        "↑"
    };
    let head = |c: usize| {
        if c == st.sort {
            format!("{}{arrow}", COLUMNS[c])
        } else {
            COLUMNS[c].to_string()
        }
    };
    let mut header = String::from("  ");
    for &c in &cols {
        header += &format!("{:>w$} ", head(c), w = WIDTHS[c]);
    }
    header += &head(NAME);
    let scope = match st.scope {
        Scope::Capture => "the whole capture".to_string(),
        Scope::Window => format!(
            "the window {} wide the timeline showed",
            crate::tui::timescale::format_duration(t.window.end.saturating_sub(t.window.start))
        ),
    };
    let mut lines: Vec<Line<'static>> = wrap(
        Line::styled(
            format!(
                "{} over {scope}: {} of {} names · durations summed over events, not wall time",
                t.of.described(t.names),
                shown.len(),
                t.rows.len()
            ),
            theme.dim(),
        ),
        inner,
    );
    let batched: Vec<String> = t
        .rows
        .iter()
        .filter(|r| r.batched())
        .map(|r| {
            format!(
                "{} {} in {}",
                escape_controls(&r.label(&p.strings)),
                r.copies,
                r.count
            )
        })
        .collect();
    if !batched.is_empty() {
        lines.extend(wrap(
            Line::styled(
                format!(
                    "batched copies (copyCount): count and times per record; copies in records: {}",
                    batched.join(", ")
                ),
                theme.dim(),
            ),
            inner,
        ));
    }
    if st.typing || !st.filter.is_empty() {
        let cursor = if st.typing { "█" } else { "" };
        lines.push(Line::from(format!(
            "filter: {}{cursor}",
            escape_controls(&st.filter)
        )));
    }
    lines.push(Line::styled(
        fit_name(&header, inner).unwrap_or(header),
        theme.heading(),
    ));
    let top = lines.len();
    for (i, &row) in shown.iter().enumerate() {
        let s = &t.rows[row];
        let cell = |c: usize| match c {
            0 => fixed(t.share(s), 1),
            1 => fixed(s.total_ns as f64 / 1e6, 3),
            2 => s.count.to_string(),
            3 => fixed(s.mean_ns / 1e6, 3),
            4 => fixed(s.median_ns / 1e6, 3),
            5 => fixed(s.min_ns as f64 / 1e6, 3),
            6 => fixed(s.max_ns as f64 / 1e6, 3),
            _ => fixed(s.stddev_ns / 1e6, 3),
        };
        let mut text = String::from("  ");
        for &c in &cols {
            text += &format!("{:>w$} ", cell(c), w = WIDTHS[c]);
        }
        let room = inner.saturating_sub(text.chars().count());
        let label = s.label(&p.strings);
        let name = escape_controls(&label);
        text += &fit_name(&name, room).unwrap_or_default();
        let style = if i == st.pick.selected {
            theme.cursor_label()
        } else {
            Style::default()
        };
        lines.push(Line::styled(text, style));
    }
    if shown.is_empty() {
        lines.push(Line::styled(
            if t.rows.is_empty() {
                "  none in the capture (or the window)"
            } else {
                "  no name holds the filter"
            },
            theme.dim(),
        ));
    }
    let mut foot = Vec::new();
    let left_out: Vec<&str> = (0..8)
        .filter(|c| !cols.contains(c))
        .map(|c| COLUMNS[c])
        .collect();
    if !left_out.is_empty() {
        foot.push(format!("{}: in a wider terminal", left_out.join(", ")));
    }
    let k = |a: Action| app.session().keymap.keys_for(Mode::Stats, a);
    foot.push(format!(
        "{} sort · {} reverse · {} next table · {} whole capture / window · {} filter · {} zoom to the longest, then n / N · {} close",
        [k(Action::SortPrev), k(Action::SortNext)].join(" "),
        k(Action::SortReverse),
        k(Action::NextTable),
        k(Action::ToggleScope),
        k(Action::Filter),
        k(Action::Accept),
        k(Action::Cancel),
    ));
    // As tall as the table, within the screen.
    let height = (lines.len() + foot.len() + 2).min(usize::from(area.height.saturating_sub(2)));
    let r = super::popup::centered(area, width, height as u16);
    let rows_room = usize::from(r.height.saturating_sub(2));
    let foot: Vec<Line<'static>> = foot
        .into_iter()
        .flat_map(|f| wrap(Line::styled(f, theme.dim()), inner))
        .collect();
    // The heading and the foot stay; the rows scroll between them.
    let fixed_lines = top + foot.len();
    let mut scroll = st.pick.scroll;
    scroll.fit(
        lines.len() - top,
        rows_room.saturating_sub(fixed_lines).max(1),
    );
    scroll.show(st.pick.selected);
    let mut out: Vec<Line<'static>> = lines[..top].to_vec();
    out.extend(
        lines[top..]
            .iter()
            .skip(scroll.top)
            .take(scroll.visible)
            .cloned(),
    );
    let more = scroll.more_below();
    out.extend(foot);
    super::popup::list_popup(f, r, &format!(" stats: {} ", t.of.name()), out, theme, more);
    scroll
}
