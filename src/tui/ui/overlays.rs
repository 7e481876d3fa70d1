//! Popups: help (from the active keymap), legend, finder, the largest
//! start skews, the session's messages, and the go-to-time prompt.

use super::panels::wrap::wrap;
use super::popup::{centered, list_popup, popup};
use super::text::visible;
use super::theme::Theme;
use crate::text_safe::escape_controls;
use crate::tui::action::{Action, Mode};
use crate::tui::behind::{self, Tone};
use crate::tui::data::Loaded;
use crate::tui::finder;
use crate::tui::index::Cat;
use crate::tui::messages::Level;
use crate::tui::scroll::Scroll;
use crate::tui::state::{App, Overlay, Pick, Ruler};
use crate::tui::timescale::format_duration;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Draws the open overlay; a list records in its scroll what it showed.
pub fn draw(f: &mut Frame, area: Rect, app: &mut App, theme: &Theme) {
    let shown = match &app.chrome().overlay {
        Overlay::None => None,
        Overlay::Help(scroll, first) => Some(help(f, area, app, theme, *scroll, *first)),
        Overlay::Legend(scroll) => Some(legend(f, area, theme, *scroll)),
        Overlay::Finder { query, pick } => app
            .capture()
            .data
            .as_ref()
            .map(|l| finder_popup(f, area, app, l, theme, query, *pick)),
        Overlay::BigEvents(pick) => app
            .capture()
            .data
            .as_ref()
            .map(|l| big_events(f, area, app, l, theme, *pick)),
        Overlay::Behind(pick) => app
            .capture()
            .data
            .as_ref()
            .map(|l| behind_list(f, area, l, theme, *pick)),
        Overlay::Messages(scroll) => Some(messages(f, area, app, theme, *scroll)),
        Overlay::Stats(st) => app
            .capture()
            .data
            .as_ref()
            .map(|l| super::stats_view::draw(f, area, app, l, theme, st)),
        Overlay::Bookmarks(pick) => Some(super::bookmarks::list(f, area, app, theme, *pick)),
        Overlay::NvtxTree(pick) => app
            .capture()
            .data
            .as_ref()
            .map(|l| super::nvtx_view::draw(f, area, app, l, theme, *pick)),
        Overlay::BookmarkName { input } => {
            super::bookmarks::prompt(f, area, app, input);
            None
        }
        Overlay::GotoTime { input } => {
            let r = centered(area, 60, 3);
            let what = match app.chrome().ruler {
                Ruler::Relative => "seconds from the first event",
                Ruler::Capture => "seconds on the capture clock",
                Ruler::Utc => "UTC: 07:59:50.5, +02:00 for a zone, or ISO",
            };
            popup(
                f,
                r,
                &format!("go to time ({what})"),
                vec![Line::from(format!("> {input}█"))],
            );
            None
        }
    };
    if let Some(fitted) = shown {
        match &mut app.chrome_mut().overlay {
            Overlay::Help(s, _) | Overlay::Legend(s) | Overlay::Messages(s) => *s = fitted,
            Overlay::Finder { pick, .. } | Overlay::BigEvents(pick) | Overlay::Behind(pick) => {
                pick.scroll = fitted
            }
            Overlay::Stats(st) => st.pick.scroll = fitted,
            Overlay::Bookmarks(pick) | Overlay::NvtxTree(pick) => pick.scroll = fitted,
            _ => {}
        }
    }
}

/// The help from the active keymap, scrolled, the keys of `first` (the
/// view it was opened from) before every other view's; returns what it
/// showed.
fn help(
    f: &mut Frame,
    area: Rect,
    app: &App,
    theme: &Theme,
    scroll: Scroll,
    first: Mode,
) -> Scroll {
    // The keymap's path can be longer than the popup: wrapped, not cut.
    let mut lines = super::panels::wrap::wrap(
        Line::styled(
            format!("keymap: {}", app.session().keymap.source()),
            theme.dim(),
        ),
        70,
    );
    lines.push(Line::from(""));
    let others = Mode::ALL.into_iter().filter(|&m| m != first);
    for mode in std::iter::once(first).chain(others) {
        lines.extend(super::panels::wrap::wrap(
            Line::styled(help_heading(app, mode), theme.heading()),
            70,
        ));
        let rows = app.session().keymap.help(mode);
        let rows: Vec<(&str, &str)> = rows.iter().map(|(k, d)| (k.as_str(), d.as_str())).collect();
        lines.extend(
            super::glossary::term_rows(&rows, 19, 70)
                .into_iter()
                .map(Line::from),
        );
        lines.push(Line::from(""));
    }
    // Every term the screens use, after the keys.
    lines.push(Line::styled(
        "glossary: what the screens' labels and figures mean",
        theme.heading(),
    ));
    lines.extend(super::glossary::lines(70).into_iter().map(Line::from));
    let r = centered(area, 72, area.height.saturating_sub(2));
    scrolled_popup(
        f,
        r,
        " help — keys from the active keymap (↑/↓ PgUp/PgDn scroll, Esc close) ",
        lines,
        theme,
        scroll,
    )
}

/// `nvtx_tree keys: the NVTX tree (T on the timeline)`: which view the
/// keys below act on, and the key that opens it.
fn help_heading(app: &App, mode: Mode) -> String {
    let opener = mode
        .opened_by()
        .map(|a| app.session().keymap.keys_for(Mode::Timeline, a))
        .filter(|k| !k.is_empty());
    match (mode, opener) {
        (Mode::Timeline, _) => format!("{} keys", mode.name()),
        (_, Some(k)) => format!(
            "{} keys: {} ({k} on the timeline)",
            mode.name(),
            mode.view()
        ),
        (_, None) => format!("{} keys: {}", mode.name(), mode.view()),
    }
}

/// A popup of `lines` from the scroll's top, `↓ more` on its frame while
/// lines are below: what does not fit is a scroll away, never cut.
fn scrolled_popup(
    f: &mut Frame,
    r: Rect,
    title: &str,
    lines: Vec<Line<'static>>,
    theme: &Theme,
    scroll: Scroll,
) -> Scroll {
    let mut scroll = scroll;
    scroll.fit(lines.len(), r.height.saturating_sub(2) as usize);
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(scroll.top)
        .take(scroll.visible)
        .collect();
    list_popup(f, r, title, shown, theme, scroll.more_below());
    scroll
}

fn legend(f: &mut Frame, area: Rect, theme: &Theme, scroll: Scroll) -> Scroll {
    let mut lines = Vec::new();
    for cat in Cat::ALL {
        let (c, s) = theme.swatch(cat);
        lines.push(Line::from(vec![
            Span::styled(format!("{c}{c}{c}"), s),
            Span::raw(format!("  {}", cat.label())),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from("▁▂▃▄▅▆▇█ busy share of the time slice"));
    lines.push(Line::from(vec![
        Span::styled("┃first ┃last ┃end", theme.marker()),
        Span::raw(" markers of the selected collective"),
    ]));
    lines.push(Line::from(
        "▼ · the cursor column (· on the cursor's lane): Enter selects there",
    ));
    lines.push(Line::from(vec![
        Span::styled("◀", theme.late_label()),
        Span::raw(" the late rank's lane"),
    ]));
    lines.push(Line::from(vec![
        Span::styled("◇", theme.marker()),
        Span::raw(" the stream waits on an event here (stream-wait-event);"),
    ]));
    lines.push(Line::from(
        "  the launch panel's event-wait link (Enter) goes to the work it followed",
    ));
    lines.push(Line::from(
        "CPU rows per thread: OS (OS runtime calls), off-CPU (descheduled),",
    ));
    lines.push(Line::from(
        "  samples (density of CPU samples; the innermost frame when zoomed in)",
    ));
    lines.push(Line::from(""));
    lines.push(Line::styled("lane labels", theme.heading()));
    for l in [
        "D3 (node03:3 r4)  device 3 (of host node03, rank 4): busy share of all",
        "  S20 NCCL / compute  a CUDA stream; NCCL when its kernels are collectives",
        "  T4101 API  a thread's CUDA runtime calls; nvtx0 nvtx1 its NVTX depths,",
        "    nvtx± its start/end ranges; ▾ ▸ a row that folds (Space)",
        "? help lists every term; L or Esc closes this legend",
    ] {
        lines.push(Line::from(l));
    }
    let r = centered(area, 72, lines.len() as u16 + 2);
    scrolled_popup(
        f,
        r,
        " legend (↑/↓ scroll, L Esc close) ",
        lines,
        theme,
        scroll,
    )
}

/// The finder: the query, then the hits from the scroll's top, the one
/// under the cursor whole; returns what it showed.
fn finder_popup(
    f: &mut Frame,
    area: Rect,
    app: &App,
    l: &Loaded,
    theme: &Theme,
    query: &str,
    pick: Pick,
) -> Scroll {
    let selected = pick.selected;
    let r = centered(area, 90, area.height.saturating_sub(4).max(6));
    let room = r.height.saturating_sub(4) as usize;
    let names = app.capture().show.names;
    // Searched by the key that changed the query; searched here only when
    // nothing was (the first frame after `/`).
    let searched;
    let key = (std::ptr::from_ref(l) as usize, query.to_string(), names);
    let hits: &[usize] = match app.capture().finder.get(&key) {
        Some(h) => h,
        None => {
            searched = finder::search(&l.entries, query, finder::SHOWN, names);
            &searched
        }
    };
    let mut lines = vec![
        Line::from(format!("> {query}█")),
        Line::styled(
            format!(
                "{} {} · n× = times the name occurs in the capture",
                hits.len(),
                if hits.len() == 1 {
                    "name matches"
                } else {
                    "names match"
                }
            ),
            theme.dim(),
        ),
    ];
    let text = |e: usize| {
        let entry = &l.entries[e];
        visible(Line::from(format!("{:>7}× {}", entry.count, entry.label)))
    };
    // The selected name is shown whole, wrapped; the others end in `…`
    // where they meet the frame, keeping what they are (`(kernel)`).
    let width = r.width.saturating_sub(2) as usize;
    let fitted = |e: usize| {
        let entry = &l.entries[e];
        let count = format!("{:>7}× ", entry.count);
        let (name, kind) = match entry.label.rfind(" (") {
            Some(i) if entry.label.ends_with(')') => entry.label.split_at(i),
            _ => (entry.label.as_str(), ""),
        };
        let room = width.saturating_sub(count.chars().count() + kind.chars().count());
        let name = super::labels::fit_name(name, room).unwrap_or_default();
        visible(Line::from(format!("{count}{name}{kind}")))
    };
    let selected_rows = hits
        .get(selected)
        .map(|&e| wrap(text(e), width))
        .unwrap_or_default();
    let room = room.saturating_sub(selected_rows.len().saturating_sub(1));
    let mut scroll = pick.scroll;
    scroll.fit(hits.len(), room);
    scroll.show(selected);
    for (i, &e) in hits.iter().enumerate().skip(scroll.top).take(room) {
        if i == selected {
            for row in &selected_rows {
                lines.push(row.clone().style(theme.cursor_label()));
            }
        } else {
            lines.push(fitted(e));
        }
    }
    popup(
        f,
        r,
        "find: kernels, NVTX ranges, collective groups (Enter jumps, n/N next)",
        lines,
    );
    scroll
}

/// The largest start skews; returns what it showed.
fn big_events(
    f: &mut Frame,
    area: Rect,
    app: &App,
    l: &Loaded,
    theme: &Theme,
    pick: Pick,
) -> Scroll {
    let selected = pick.selected;
    let p = &l.profile;
    // The late column: a device, or a whole host (`node02 ×4`: a
    // node-level event is the host's, not its latest rank's).
    // A node event's rows carry ⚑ (as the straggler map's host rows): a
    // host whose ranks started late in one instance only is not one.
    let late_of = |r: &crate::tui::data::SkewRow| match r.late_host {
        Some(h) => format!(
            "{} ×{}{}",
            escape_controls(l.profile.host_label(h.host)),
            h.ranks,
            if h.node_event { " ⚑" } else { "" }
        ),
        None => escape_controls(&p.device_label(r.late).tag()).into_owned(),
    };
    let rows = app.big_list(l);
    let inner_w = usize::from(96.min(area.width).saturating_sub(2));
    let lw = rows
        .iter()
        .map(|r| late_of(r).chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let row = |mark: &str,
               group: &str,
               inst: &str,
               op: &str,
               skew: &str,
               late: &str,
               v: &str,
               cause: &str| {
        let text = format!(
            "{mark:<2}{group:<10} {inst:>5} {op:<13} {skew:>9} {late:<lw$} {v:<14} {cause}"
        );
        // Narrower than the list (80 columns): the cause gives way, marked.
        super::labels::fit_name(&text, inner_w).unwrap_or(text)
    };
    let mut lines = vec![Line::styled(
        row(
            "",
            "group",
            "inst",
            "op",
            "skew ms",
            "late",
            "verdict",
            "largest cause",
        ),
        theme.heading(),
    )];
    for (i, r) in rows.iter().enumerate() {
        let g = &l.analysis.matching.groups[r.group];
        let text = row(
            if r.big { "●" } else { "" },
            &escape_controls(&g.key).chars().take(10).collect::<String>(),
            &(r.instance + 1).to_string(),
            r.op.name(),
            // One unit for the column: `3.340` over `0.678`, not ms over µs.
            &format!(
                "{}{:.3}",
                if r.open { "≥" } else { "" },
                r.skew_ns as f64 / 1e6
            ),
            &late_of(r),
            if r.open { "hang" } else { r.verdict.name() },
            &escape_controls(&r.cause),
        );
        let style = if i == selected {
            theme.cursor_label()
        } else if r.big {
            theme.warning()
        } else {
            Style::default()
        };
        lines.push(Line::styled(text, style));
    }
    if rows.iter().any(|r| r.late_host.is_some()) {
        // Under the heading: the `HOST ×N` rows are read with it.
        let legend = if rows
            .iter()
            .any(|r| r.late_host.is_some_and(|h| h.node_event))
        {
            "HOST ×N: N ranks of the host started late; ⚑ a node event (its rows are one event)"
        } else {
            "HOST ×N: every rank of the host started late (a node-level event)"
        };
        lines.insert(1, Line::styled(legend, theme.dim()));
    }
    let threshold = l.analysis.skews.first().map_or(0, |gs| gs.big_threshold_ns);
    lines.push(Line::styled(
        format!(
            "● big: start skew above {} (--big-skew-ms); {} in the capture",
            format_duration(threshold),
            l.big_events.len()
        ),
        theme.dim(),
    ));
    let order = if app.chrome().big_list_by_time {
        "in time order"
    } else {
        "largest first"
    };
    let r = centered(area, 96, lines.len() as u16 + 2);
    // Scrolled to keep the cursor's row in view; what is below is a
    // scroll away (`↓ more`), not cut (80×24 lost its last rows).
    let head = lines.len() - rows.len() - 1;
    let mut scroll = pick.scroll;
    scroll.fit(lines.len(), r.height.saturating_sub(2) as usize);
    scroll.show(head + selected);
    if selected + 1 == rows.len() {
        scroll.show(lines.len() - 1);
    }
    scrolled_popup(
        f,
        r,
        &format!(
            " {} largest start skews, {order} ({} sorts, Enter jumps) ",
            l.top_skews.len(),
            app.session()
                .keymap
                .keys_for(Mode::BigEvents, Action::SortList)
        ),
        lines,
        theme,
        scroll,
    )
}

/// Who is behind (`W`): a row per finding, wrapped, the cursor row
/// reversed; returns what it showed.
fn behind_list(f: &mut Frame, area: Rect, l: &Loaded, theme: &Theme, pick: Pick) -> Scroll {
    let rows = behind::rows(&l.profile, &l.analysis.matching, &l.behind);
    let width = 100.min(area.width);
    let room = usize::from(width.saturating_sub(2)).max(8);
    let mut lines: Vec<Line> = Vec::new();
    // Line index of each row's first line, for the scroll.
    let mut first = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let style = match r.tone {
            _ if i == pick.selected => theme.cursor_label(),
            Tone::Hang => theme.warning(),
            Tone::Note => Style::default(),
            Tone::Quiet => theme.dim(),
        };
        first.push(lines.len());
        lines.extend(wrap(Line::styled(r.text.clone(), style), room));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let r = centered(area, width, height);
    let mut scroll = pick.scroll;
    let visible = usize::from(height.saturating_sub(2));
    scroll.fit(lines.len(), visible);
    if let Some(&at) = first.get(pick.selected) {
        scroll.show(at);
    }
    let shown: Vec<Line> = lines.into_iter().skip(scroll.top).take(visible).collect();
    popup(f, r, "who is behind", shown);
    scroll
}

/// The session's messages, wrapped under their level, scrolled; returns
/// what it showed.
fn messages(f: &mut Frame, area: Rect, app: &App, theme: &Theme, scroll: Scroll) -> Scroll {
    let width = 100.min(area.width);
    // Wrapped by hand under the level column (between words where one
    // ends in the row's second half), so that a long path reads whole and
    // the list knows its height.
    const LEVEL: usize = 10;
    // `16:25:03Z `: when it was said, in UTC.
    const AT: usize = 10;
    let room = usize::from(width.saturating_sub(2))
        .saturating_sub(LEVEL + AT)
        .max(8);
    let mut lines: Vec<Line> = Vec::new();
    if app.session().messages.is_empty() {
        lines.push(Line::styled(
            "no messages: every input loaded, no key said anything",
            theme.dim(),
        ));
    }
    for m in app.session().messages.all() {
        let style = match m.level {
            Level::Info => Style::default(),
            Level::Warn | Level::Error => theme.warning(),
        };
        let text = Line::raw(escape_controls(&m.text).into_owned());
        for (i, chunk) in wrap(text, room).into_iter().enumerate() {
            let head = if i == 0 {
                let c = crate::tui::wallclock::civil(m.at_epoch_ns);
                format!(
                    "{} {:<w$}{:02}:{:02}:{:02}Z ",
                    m.level.icon(),
                    m.level.name(),
                    c.hour,
                    c.minute,
                    c.second,
                    w = LEVEL - 2
                )
            } else {
                " ".repeat(LEVEL + AT)
            };
            let mut spans = vec![Span::styled(head, style)];
            spans.extend(chunk.spans);
            lines.push(Line::from(spans));
        }
    }
    let height = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let r = centered(area, width, height);
    let mut scroll = scroll;
    scroll.fit(lines.len(), r.height.saturating_sub(2) as usize);
    let title = format!(
        "messages ({}, UTC times) — {} close",
        app.session().messages.len(),
        app.session()
            .keymap
            .keys_for(Mode::Messages, Action::Cancel)
    );
    let shown = lines.into_iter().skip(scroll.top).collect();
    popup(f, r, &title, shown);
    scroll
}
