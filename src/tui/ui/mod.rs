//! Drawing the UI from the state: title bar, timeline, side panels, status
//! line and popups. Nothing here changes state except the frame geometry
//! the state needs for cursor maths.

mod bookmarks;
pub mod cells;
pub mod glossary;
mod heat;
mod labels;
mod launch_config;
mod nvtx_view;
mod overlays;
mod panels;
mod popup;
mod stats_view;
mod steps_view;
mod stragglers;
mod text;
pub mod theme;
mod timeline;
mod title;
mod view_keys;

use super::action::{Action, Mode};
use super::data::Loaded;
use super::messages::Level;
use super::state::{App, JumpSource, Overlay, Screen};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Wrap};
use text::visible;
use theme::Theme;

/// Draws one frame. Records the timeline's size in the state.
pub fn draw(f: &mut Frame, app: &mut App) {
    draw_all(f, app);
    scrub_controls(f.buffer_mut());
}

/// Last line of defence: no cell may send a control character to the
/// terminal, even from a call site that forgot [`visible`] or writes cells
/// directly. ratatui drops them from spans, but `Cell::set_char` and
/// `set_symbol` pass them through. Visible escapes are the job of the call
/// sites; this only guarantees the terminal never executes file text.
fn scrub_controls(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        if cell.symbol().contains(crate::text_safe::is_escaped) {
            cell.set_symbol("\u{fffd}");
        }
    }
}

/// The smallest terminal rankline draws its screens in: below it every
/// screen would be cut (labels, panels, the status line), so it says
/// so instead.
pub const MIN_SIZE: (u16, u16) = (80, 24);

fn draw_all(f: &mut Frame, app: &mut App) {
    let theme = Theme {
        no_color: app.session().no_color,
    };
    let area = f.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        // Only a note, centred: the state (and the geometry it learnt) is
        // kept for when the terminal grows again.
        let note = format!(
            "rankline needs at least {}×{} (now {}×{})",
            MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
        );
        let rows = (note.chars().count() as u16).div_ceil(area.width.max(1));
        let middle = Rect {
            y: area.y + area.height.saturating_sub(rows) / 2,
            height: rows.min(area.height),
            ..area
        };
        f.render_widget(
            Paragraph::new(note)
                .alignment(ratatui::layout::Alignment::Center)
                .wrap(Wrap { trim: true }),
            middle,
        );
        return;
    }
    let [title, main, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let Some(l) = app
        .capture()
        .data
        .clone()
        .filter(|l| !l.profile.files.is_empty())
    else {
        // Still loading, or no file could be opened: progress and errors.
        draw_loading(f, app, &theme, title, main, status);
        return;
    };
    // The full-screen view: chosen here, in one place.
    if app.chrome().screen == Screen::Stragglers && app.capture().straggler.is_some() {
        stragglers::draw(f, area, app, &l, &theme);
        overlays::draw(f, main, app, &theme);
        return;
    }
    if app.chrome().screen == Screen::Steps {
        steps_view::draw(f, area, app, &l, &theme);
        overlays::draw(f, main, app, &theme);
        return;
    }
    let timeline_area = panels::layout_and_draw(f, main, app, &l, &theme);
    let label_width = timeline::label_width(timeline_area.width);
    app.chrome_mut().layout.lanes = Rect {
        y: timeline_area.y + timeline::RULER_ROWS,
        height: timeline_area.height.saturating_sub(timeline::RULER_ROWS),
        ..timeline_area
    };
    app.chrome_mut().layout.label_width = label_width;
    app.chrome_mut().layout.timeline = timeline_area;
    app.chrome_mut().layout.timeline_width =
        timeline_area.width.saturating_sub(label_width + 1) as usize;
    let lanes = &mut app.capture_mut().lanes;
    lanes.scroll.visible = timeline_area.height.saturating_sub(timeline::RULER_ROWS) as usize;
    lanes.keep_cursor_visible();
    f.render_widget(
        Paragraph::new(title::title_line(app, &l, title.width)).style(theme.bar()),
        title,
    );
    timeline::draw(f.buffer_mut(), timeline_area, app, &l, &theme);
    f.render_widget(
        Paragraph::new(status_line(app, &l, &theme, status.width)).style(theme.bar()),
        status,
    );
    overlays::draw(f, main, app, &theme);
}

/// The status line for a bar `width` columns wide: when it does not fit,
/// the key hints go first, then the `n`/`N` source; what still does not
/// fit ends in `…` (the whole message is in `!`).
fn status_line(app: &App, l: &Loaded, theme: &Theme, width: u16) -> Line<'static> {
    let facts = &app.capture().facts;
    let fits = |line: &Line| line.width() <= width as usize;
    for detail in [2, 1] {
        let line = status_line_with(app, l, theme, &facts.status, detail, width);
        if fits(&line) {
            return line;
        }
    }
    // The selection whole (its verdict last) beats the messages after it;
    // a selection too wide itself gives way to its short form, which
    // keeps the verdict ahead of the lane names.
    let whole = unicode_width::UnicodeWidthStr::width(facts.status.as_str()) < width as usize;
    let sel = if whole || facts.status_short.is_empty() {
        &facts.status
    } else {
        for detail in [1, 0] {
            let line = status_line_with(app, l, theme, &facts.status_short, detail, width);
            if fits(&line) {
                return line;
            }
        }
        &facts.status_short
    };
    text::cut_line(
        status_line_with(app, l, theme, sel, 0, width),
        width as usize,
    )
}

/// The status line; `detail` 2 has everything, 1 drops the key hints (a
/// focused panel's too: its title keeps the main ones), 0 also the
/// `n`/`N` source. A popup's keys stay at every detail, and stand for the
/// selection it covers.
fn status_line_with(
    app: &App,
    l: &Loaded,
    theme: &Theme,
    sel: &str,
    detail: u8,
    width: u16,
) -> Line<'static> {
    let keys = |a: Action| app.session().keymap.keys_for(Mode::Timeline, a);
    let mut spans = Vec::new();
    if let Some(b) = &app.session().banner {
        spans.push(Span::styled(format!(" {b}"), theme.heading()));
    }
    let sel = sel.to_string();
    let focused = app.chrome().panels.focused();
    let popup = app.chrome().overlay != Overlay::None;
    if popup || detail >= 2 {
        // The keys of what has them first: they are the ones that work now.
        if let Some(view) = view_keys::line(app, usize::from(width).saturating_sub(1)) {
            spans.push(Span::styled(format!(" {view}"), theme.heading()));
        }
    }
    // Under a popup the selection waits: the popup's keys stand for it.
    if !popup && sel.is_empty() && detail >= 2 && focused.is_none() {
        // `]` only where there is a big event to go to.
        let big = if l.big_events.is_empty() {
            String::new()
        } else {
            format!(" {} next big event ·", keys(Action::NextBigEvent))
        };
        spans.push(Span::raw(format!(
            " {} select ·{big} {} find · {} help · {} quit",
            keys(Action::SelectUnderCursor),
            keys(Action::OpenFinder),
            keys(Action::Help),
            keys(Action::Quit)
        )));
    } else if !popup && !sel.is_empty() {
        let bar = if focused.is_some() && detail >= 2 {
            " │"
        } else {
            ""
        };
        spans.push(Span::styled(format!("{bar} {sel}"), theme.heading()));
        let source = match &app.capture().jump {
            Some(JumpSource::Group(g)) => {
                format!("instances of {}", l.analysis.matching.groups[*g].key)
            }
            Some(JumpSource::Finder { label, .. }) => match app.finder_hit() {
                Some((k, n)) => format!("{label} · hit {k} of {n} {}", hit_noun(app, label)),
                None => label.clone(),
            },
            Some(JumpSource::Path { step, .. }) => match app.finder_hit() {
                Some((k, n)) => format!("critical path of step {step} · row {k} of {n}"),
                None => format!("critical path of step {step}"),
            },
            None => String::new(),
        };
        if !source.is_empty() && detail >= 1 {
            spans.push(Span::raw(format!(
                " │ {}/{}: {source}",
                keys(Action::NextOccurrence),
                keys(Action::PrevOccurrence)
            )));
        }
    }
    if !l.complete {
        spans.push(Span::styled(" │ matching collectives…", theme.dim()));
    }
    if let Some(m) = app.answer() {
        spans.push(Span::styled(format!(" │ {m}"), theme.warning()));
    } else if let Some(newest) = app.session().messages.newest() {
        // Kept until a key says something else; `!` lists them all.
        let style = match newest.level {
            Level::Info => theme.dim(),
            Level::Warn | Level::Error => theme.warning(),
        };
        spans.push(Span::styled(
            format!(" │ {} {}", newest.level.icon(), newest.text),
            style,
        ));
        spans.push(Span::raw(format!(
            " · {} all {}",
            keys(Action::Messages),
            app.session().messages.len()
        )));
    }
    // With the hints dropped, the line starts at a separator: drop it.
    if let Some(first) = spans.first_mut()
        && let Some(rest) = first.content.strip_prefix(" │")
    {
        first.content = rest.to_string().into();
    }
    // The banner and what follows it: one separator, never two (the demo
    // showed `(embedded) │ │ 4 big-skew…`).
    if app.session().banner.is_some()
        && let Some(next) = spans.get_mut(1)
        && !next.content.starts_with(" │")
    {
        next.content = format!(" │{}", next.content).into();
    }
    visible(Line::from(spans))
}

/// The stages in loading order; an nsys report's export ("exporting with
/// nsys") comes before them and counts as the start.
const STAGES: [&str; 9] = [
    "opening",
    "reading strings",
    "reading processes and GPUs",
    "reading kernels",
    "reading memcpy",
    "reading memset",
    "reading runtime calls",
    "reading NVTX",
    "sorting and linking",
];

fn draw_loading(
    f: &mut Frame,
    app: &mut App,
    theme: &Theme,
    title: Rect,
    main: Rect,
    status: Rect,
) {
    let head = if app.capture().data.is_some() {
        " rankline  no file could be opened"
    } else {
        " rankline  loading…"
    };
    f.render_widget(Paragraph::new(head).style(theme.bar()), title);
    let pr = &app.session().progress;
    let stage_i = STAGES.iter().position(|s| *s == pr.stage).unwrap_or(
        if pr.stage == "exporting with nsys" {
            0
        } else {
            STAGES.len()
        },
    );
    let files = pr.files.max(1) as f64;
    let ratio =
        ((pr.file as f64 + stage_i as f64 / (STAGES.len() + 1) as f64) / files).clamp(0.0, 1.0);
    let box_area = Rect {
        x: main.x + 2,
        y: main.y + main.height / 3,
        width: main.width.saturating_sub(4),
        height: 3.min(main.height),
    };
    let label = if pr.rows > 0 {
        format!(
            "{} (file {}/{}) · {} rows",
            pr.stage,
            pr.file + 1,
            pr.files.max(1),
            pr.rows
        )
    } else {
        format!("{} (file {}/{})", pr.stage, pr.file + 1, pr.files.max(1))
    };
    let gauge = Gauge::default()
        .block(Block::default().borders(Borders::ALL).title(" loading "))
        .ratio(ratio)
        .label(label);
    f.render_widget(gauge, box_area);
    let mut lines: Vec<Line> = app
        .session()
        .messages
        .errors()
        .map(|e| visible(Line::styled(format!("⚠ {}", e.text), theme.warning())))
        .collect();
    if !lines.is_empty() {
        lines.insert(0, Line::from(""));
        let y = box_area.y + box_area.height;
        let r = Rect {
            x: main.x + 2,
            y,
            width: main.width.saturating_sub(4),
            height: main.bottom().saturating_sub(y),
        };
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), r);
    }
    let hint = format!(
        " {} quit",
        app.session().keymap.keys_for(Mode::Timeline, Action::Quit)
    );
    f.render_widget(Paragraph::new(hint).style(theme.bar()), status);
    overlays::draw(f, main, app, theme);
}

/// What the finder's hits are: a collective's hits are its instances (one
/// per instance, not per rank), else the kind of event the name is.
fn hit_noun(app: &App, label: &str) -> &'static str {
    use crate::tui::selection::EventRef;
    if app.capture().instance().is_some() {
        return "instances";
    }
    match app.capture().selection {
        Some(EventRef::Gpu(_)) if label.ends_with("(kernel)") => "kernels",
        Some(EventRef::Nvtx(_)) => "ranges",
        Some(EventRef::Api(_)) => "calls",
        _ => "events",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Style};

    #[test]
    fn a_control_character_written_straight_into_a_cell_never_reaches_the_terminal() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf[(0, 0)].set_char('\x1b');
        buf[(1, 0)].set_symbol("\u{9b}");
        buf[(2, 0)].set_char('a');
        scrub_controls(&mut buf);
        let cells: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
        assert_eq!(cells, ["\u{fffd}", "\u{fffd}", "a", " "]);
    }

    #[test]
    fn visible_escapes_every_span_and_keeps_styles() {
        let red = Style::default().fg(Color::Red);
        let line = visible(Line::from(vec![
            Span::raw("clean"),
            Span::styled("k\x1b]0;x\x07", red),
        ]));
        assert_eq!(line.spans[0].content, "clean");
        assert_eq!(line.spans[1].content, "k\\x1b]0;x\\x07");
        assert_eq!(line.spans[1].style, red);
    }
}
