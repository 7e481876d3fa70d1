//! Popups: help (from the active keymap), legend, finder, big events, and
//! the go-to-time prompt.

use super::panels::wrap::wrap;
use super::theme::Theme;
use super::visible;
use crate::text_safe::escape_controls;
use crate::tui::action::Mode;
use crate::tui::data::Loaded;
use crate::tui::finder;
use crate::tui::index::Cat;
use crate::tui::scroll::Scroll;
use crate::tui::state::{App, Overlay};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn popup(f: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>) {
    f.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {title} "));
    let lines: Vec<Line> = lines.into_iter().map(visible).collect();
    f.render_widget(Paragraph::new(lines).block(block), area);
}

pub fn draw(f: &mut Frame, area: Rect, app: &mut App, theme: &Theme) {
    // Help records what it showed, for paging.
    if let Overlay::Help { scroll } = app.overlay {
        app.help_scroll = help(f, area, app, theme, scroll);
        return;
    }
    let app = &*app;
    match &app.overlay {
        Overlay::None | Overlay::Help { .. } => {}
        Overlay::Legend => legend(f, area, theme),
        Overlay::Finder { query, selected } => {
            if let Some(l) = &app.loaded {
                finder_popup(f, area, l, theme, query, *selected);
            }
        }
        Overlay::BigEvents { selected } => {
            if let Some(l) = &app.loaded {
                big_events(f, area, l, theme, *selected);
            }
        }
        Overlay::GotoTime { input } => {
            let r = centered(area, 60, 3);
            let what = if app.relative_time {
                "seconds from the first event"
            } else {
                "seconds on the capture clock"
            };
            popup(
                f,
                r,
                &format!("go to time ({what})"),
                vec![Line::from(format!("> {input}█"))],
            );
        }
    }
}

/// The help from the active keymap, from row `top`; returns its scroll.
fn help(f: &mut Frame, area: Rect, app: &App, theme: &Theme, top: usize) -> Scroll {
    let mut lines = Vec::new();
    for mode in Mode::ALL {
        lines.push(Line::styled(
            format!("{} keys", mode.name()),
            theme.heading(),
        ));
        for (keys, desc) in app.keymap.help(mode) {
            lines.push(Line::from(format!("  {keys:<18} {desc}")));
        }
        lines.push(Line::from(""));
    }
    let r = centered(area, 72, area.height.saturating_sub(2));
    let mut scroll = Scroll {
        top,
        ..Scroll::default()
    };
    scroll.fit(lines.len(), r.height.saturating_sub(2) as usize);
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(scroll.top)
        .take(scroll.visible)
        .map(visible)
        .collect();
    let mut block = Block::default()
        .borders(Borders::ALL)
        .title(" help — keys from the active keymap (↑/↓ PgUp/PgDn scroll, Esc close) ");
    if scroll.more_below() {
        block = block.title_bottom(Line::styled(" ↓ more ", theme.heading()).right_aligned());
    }
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(shown).block(block), r);
    scroll
}

fn legend(f: &mut Frame, area: Rect, theme: &Theme) {
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
    let r = centered(area, 72, lines.len() as u16 + 2);
    popup(f, r, "legend", lines);
}

fn finder_popup(
    f: &mut Frame,
    area: Rect,
    l: &Loaded,
    theme: &Theme,
    query: &str,
    selected: usize,
) {
    let r = centered(area, 90, area.height.saturating_sub(4).max(6));
    let room = r.height.saturating_sub(4) as usize;
    let hits = finder::search(&l.entries, query, 200);
    let mut lines = vec![
        Line::from(format!("> {query}█")),
        Line::styled(format!("{} matches", hits.len()), theme.dim()),
    ];
    let text = |e: usize| {
        let entry = &l.entries[e];
        visible(Line::from(format!("{:>7}× {}", entry.count, entry.label)))
    };
    // The selected name is shown whole, wrapped; the others cut at the edge.
    let width = r.width.saturating_sub(2) as usize;
    let selected_rows = hits
        .get(selected)
        .map(|&e| wrap(text(e), width))
        .unwrap_or_default();
    let room = room.saturating_sub(selected_rows.len().saturating_sub(1));
    let first = selected.saturating_sub(room.saturating_sub(1));
    for (i, &e) in hits.iter().enumerate().skip(first).take(room) {
        if i == selected {
            for row in &selected_rows {
                lines.push(row.clone().style(theme.cursor_label()));
            }
        } else {
            lines.push(text(e));
        }
    }
    popup(
        f,
        r,
        "find: kernels, NVTX ranges, collective groups (Enter jumps, n/N next)",
        lines,
    );
}

fn big_events(f: &mut Frame, area: Rect, l: &Loaded, theme: &Theme, selected: usize) {
    let p = &l.profile;
    let mut lines = vec![Line::styled(
        format!(
            "{:<16}{:>6} {:<14}{:>10} {:<8}{:>5}{:>11}",
            "group", "inst", "op", "skew ms", "late", "step", "offset ms"
        ),
        theme.heading(),
    )];
    for (i, &b) in l.top_big_events().iter().enumerate() {
        let e = &l.big_events[b];
        let g = &l.analysis.matching.groups[e.group];
        let inst = crate::analysis::skew::instance_skew(p, g, e.instance);
        let text = format!(
            "{:<16}{:>6} {:<14}{:>10.3} {:<8}{:>5}{:>11}",
            escape_controls(&g.key).chars().take(15).collect::<String>(),
            e.instance + 1,
            inst.op.name(),
            e.skew_ns as f64 / 1e6,
            format!(
                "D{}",
                escape_controls(&p.device_label(g.devices[inst.late]).to_string())
            ),
            e.step.map_or("-".into(), |s| s.to_string()),
            e.offset_ns
                .map_or("-".into(), |o| format!("{:.3}", o as f64 / 1e6)),
        );
        let style = if i == selected {
            theme.cursor_label()
        } else {
            Style::default()
        };
        lines.push(Line::styled(text, style));
    }
    let r = centered(area, 80, lines.len() as u16 + 2);
    popup(f, r, "biggest start-skew events (Enter jumps)", lines);
}
