//! The straggler map, full screen: a row per rank (grouped by host), a
//! column per instance of the group, each cell the rank's start lateness
//! on a glyph scale (colour too unless NO_COLOR), with its legend in ms.
//! Records the cell area and what fits for the state; changes nothing else.

use super::super::action::{Action, Mode};
use super::super::data::Loaded;
use super::super::state::App;
use super::super::stragglers::{MapRow, StragglerView};
use super::heat::{FIRST, cell_style, glyph, level, level_top, ms2};
use super::labels::{fit_name, fit_tail};
use super::text::visible;
use super::theme::Theme;
use crate::tui::timescale::short_duration;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// A lateness under the group's clock error (ranks on clocks aligned only
/// as well as that): not resolvable, drawn apart from the scale.
const NOT_RESOLVABLE: char = '~';

/// The glyph and level of lateness `ns` on a scale topped by `top`, a
/// lateness within `floor` (the clock error; 0 on one clock) not
/// resolvable: `None` for the level.
fn cell_level(ns: i64, top: i64, floor: i64) -> Option<usize> {
    if ns > 0 && ns <= floor {
        None
    } else {
        Some(level(ns, top))
    }
}

/// A cell whose rank's capture does not cover the instance: not lateness.
const NOT_CAPTURED: char = '-';
/// A cell of a rank that never launched the instance while the others
/// waited in it (behind, in a hang): not lateness, and not a capture edge.
const NEVER_LAUNCHED: char = '×';

/// The legend: each glyph with the lateness it stands for; the
/// definition first when there is room. No step finer than the clock
/// error `floor` is offered: below it, "not resolvable". Where even the
/// short form is wider than `width`, its steps go on under it: a step cut
/// at the frame (`▅≤4` for `▅≤4.0`) would misstate the scale.
fn legend(
    top: i64,
    floor: i64,
    partial: bool,
    never: bool,
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    let long = " lateness (start − the instance's first start), ms: ";
    let short = " lateness, ms: ";
    let mut spans = vec![Span::styled(long, theme.heading())];
    spans.push(Span::styled(format!("{FIRST}0 "), theme.dim()));
    if floor > 0 {
        spans.push(Span::styled(
            format!(
                "{NOT_RESOLVABLE}≤{} not resolvable (clocks) ",
                ms2(floor as f64)
            ),
            theme.dim(),
        ));
    }
    if top > 0 {
        for i in (1..=8).filter(|&i| level_top(i, top) > floor as f64) {
            spans.push(Span::styled(
                format!("{}≤{} ", glyph(i), ms2(level_top(i, top))),
                cell_style(theme, i),
            ));
        }
    }
    if partial {
        spans.push(Span::styled(
            format!("{NOT_CAPTURED}not captured "),
            theme.dim(),
        ));
    }
    if never {
        spans.push(Span::styled(
            format!("{NEVER_LAUNCHED}never launched (behind) "),
            theme.warning(),
        ));
    }
    let line = Line::from(spans);
    if line.width() <= width as usize {
        return vec![line];
    }
    let mut spans = line.spans;
    spans[0].content = short.into();
    let mut lines = vec![Line::default()];
    for span in spans {
        let last = lines.last_mut().expect("one line at least");
        if !last.spans.is_empty() && last.width() + span.width() > width as usize {
            lines.push(Line::from(vec![
                Span::raw(" ".repeat(short.len() - 1)),
                span,
            ]));
        } else {
            last.spans.push(span);
        }
    }
    lines
}

/// The title's words on the group's clocks, when they are several: the
/// alignment in full when it fits in `room` columns, else the agreement
/// alone (the legend's "not resolvable" step says the rest).
fn clock_words(g: &crate::analysis::matching::Group, l: &Loaded, room: usize) -> String {
    if g.clocks.is_none() {
        return String::new();
    }
    let full = format!(" · clocks: {}", l.analysis.clock.describe_on(&l.profile));
    let short = format!(" · clocks agree ±{} ms", ms2(g.clock_error_ns() as f64));
    [full, short]
        .into_iter()
        .find(|w| Line::from(w.as_str()).width() <= room)
        .unwrap_or_default()
}

/// The label of a map row in at most `max` columns: a host's name gives
/// way with `…` before its rank count, a rank's tag keeps its end (`…0:3`)
/// before its mean — a figure is never the part that is cut.
fn row_label(v: &StragglerView, row: usize, l: &Loaded, max: usize) -> String {
    let p = &l.profile;
    match &v.rows[row] {
        MapRow::Host { host, ranks } => {
            let mark = if v.collapsed.contains(host) {
                '▸'
            } else {
                '▾'
            };
            let name = p.hosts.get(*host as usize).map_or("", |h| h.as_str());
            let name = if name.is_empty() { "host" } else { name };
            // A node event of the host in this group: its instances are
            // one event (⚑ and how many instances it held up).
            let held = node_event_instances(l, v.map.group, *host);
            let count = match held {
                0 => format!(" ({})", ranks.len()),
                n => format!(" ({}) ⚑{n}", ranks.len()),
            };
            let room = max.saturating_sub(2 + count.chars().count());
            let name = fit_name(name, room).unwrap_or_default();
            format!("{mark} {name}{count}")
        }
        MapRow::Rank(r) => {
            let mean = format!("{:>6}", ms2(v.map.mean_ns[*r]));
            let tag = p.device_label(v.map.devices[*r]).tag();
            let tag = fit_tail(&tag, max.saturating_sub(2 + 1 + mean.len()));
            format!("  {tag:<5} {mean}")
        }
    }
}

/// How many big instances of group `g` a node event of `host` held up.
fn node_event_instances(l: &Loaded, g: usize, host: u32) -> usize {
    l.analysis
        .skews
        .iter()
        .filter(|s| s.group == g)
        .flat_map(|s| &s.big_events)
        .filter(|b| b.late_host.is_some_and(|h| h.node_event && h.host == host))
        .count()
}

/// Columns of the row labels: the widest label, within a fifth of the
/// width (at least 14, at most 28) — but never too few for a rank's mean.
fn label_width(v: &StragglerView, l: &Loaded, width: u16) -> u16 {
    let widest = (0..v.rows.len())
        .map(|r| Line::from(row_label(v, r, l, usize::MAX)).width())
        .max()
        .unwrap_or(0) as u16;
    widest
        .clamp(14, (width / 5).clamp(14, 28))
        .max(MIN_RANK_LABEL)
}

/// `  …:3 ` and a six-column mean: the least a rank row can say.
const MIN_RANK_LABEL: u16 = 2 + 4 + 1 + 6;

/// Draws the map into `area` (title and status bars included).
pub fn draw(f: &mut Frame, area: Rect, app: &mut App, l: &Loaded, theme: &Theme) {
    let Some(mut v) = app.capture_mut().straggler.take() else {
        return;
    };
    let title = Rect { height: 1, ..area };
    let status = Rect {
        y: area.bottom().saturating_sub(1),
        height: 1,
        ..area
    };
    let main = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(2),
        ..area
    };
    let group = &l.analysis.matching.groups[v.map.group];
    let head = format!(
        " rankline · straggler map · {}: {} ranks × {} instances · {}",
        group.key,
        v.map.ranks(),
        v.map.columns(),
        if v.by_mean {
            "latest ranks first"
        } else {
            "group order"
        }
    );
    let room = (title.width as usize).saturating_sub(Line::from(head.as_str()).width());
    let head = head + &clock_words(group, l, room);
    f.render_widget(
        Paragraph::new(visible(Line::from(head))).style(theme.bar()),
        title,
    );

    let partial = (0..v.map.ranks()).any(|r| v.map.row(r).any(|c| c.is_none()));
    let floor = group.clock_error_ns();
    let legend = legend(
        v.map.max_all_ns,
        floor,
        partial,
        v.any_never(),
        theme,
        main.width,
    );
    // Above the cells: the legend's lines and the instance ruler.
    let head_rows = legend.len() as u16 + 1;
    let lw = label_width(&v, l, main.width);
    let cells = Rect {
        x: main.x + lw + 1,
        y: main.y + head_rows,
        width: main.width.saturating_sub(lw + 1),
        height: main.height.saturating_sub(head_rows),
    };
    app.chrome_mut().layout.map_cells = cells;
    v.rows_scroll.fit(v.rows.len(), cells.height as usize);
    v.cols_scroll.fit(v.map.columns(), cells.width as usize);
    v.rows_scroll.show(v.row);
    v.cols_scroll.show(v.col);

    let buf = f.buffer_mut();
    for (y, line) in (main.y..).zip(&legend) {
        buf.set_line(main.x, y, line, main.width);
    }
    ruler(buf, main.x, cells, &v, theme);
    rows(buf, main.x, lw, cells, &v, l, theme);
    let line = status_line(app, &v, l, status.width);
    f.render_widget(Paragraph::new(visible(line)).style(theme.bar()), status);
    app.capture_mut().straggler = Some(v);
}

/// The label header and instance numbers every ten columns; big events
/// are marked `!`, and a number that would run into a mark is left out
/// (it read `90 ! 110` with the marks written over `100`).
fn ruler(buf: &mut Buffer, x0: u16, cells: Rect, v: &StragglerView, theme: &Theme) {
    let y = cells.y - 1;
    buf.set_string(x0, y, " rank  mean ms", theme.dim());
    let shown: Vec<usize> = (0..cells.width)
        .map_while(|x| v.cols_scroll.row_at(x as usize))
        .collect();
    let bang: Vec<bool> = shown.iter().map(|&c| v.map.big[c]).collect();
    let mut free_from = 0usize;
    for (x, &c) in shown.iter().enumerate() {
        let k = v.map.instances[c] + 1;
        let text = k.to_string();
        let end = x + text.len();
        if k.is_multiple_of(10)
            && x >= free_from
            && end <= cells.width as usize
            // Nor touches one: `20!` reads as one label.
            && !bang[x.saturating_sub(1)..(end + 1).min(bang.len())].iter().any(|&b| b)
        {
            buf.set_string(cells.x + x as u16, y, &text, theme.dim());
            free_from = end + 1;
        }
    }
    for (x, _) in bang.iter().enumerate().filter(|(_, b)| **b) {
        buf.set_string(cells.x + x as u16, y, "!", theme.warning());
    }
}

fn rows(
    buf: &mut Buffer,
    x0: u16,
    lw: u16,
    cells: Rect,
    v: &StragglerView,
    l: &Loaded,
    theme: &Theme,
) {
    let top = v.map.max_all_ns;
    let floor = l.analysis.matching.groups[v.map.group].clock_error_ns();
    for y in 0..cells.height {
        let Some(row) = v.rows_scroll.row_at(y as usize) else {
            break;
        };
        let at_y = cells.y + y;
        let label = row_label(v, row, l, lw as usize);
        let style = if row == v.row {
            theme.cursor_label()
        } else if matches!(v.rows[row], MapRow::Host { .. }) {
            theme.heading()
        } else {
            theme.label()
        };
        let label = visible(Line::styled(label, style));
        buf.set_line(x0, at_y, &label, lw);
        for x in 0..cells.width {
            let Some(c) = v.cols_scroll.row_at(x as usize) else {
                break;
            };
            let (ch, mut style) = match v.cell(row, c) {
                Some((Some(ns), _)) => match cell_level(ns, top, floor) {
                    Some(lv) => (glyph(lv), cell_style(theme, lv)),
                    None => (NOT_RESOLVABLE, theme.dim()),
                },
                Some((None, r)) if v.never_launched(r, c) => (NEVER_LAUNCHED, theme.warning()),
                Some((None, _)) => (NOT_CAPTURED, theme.dim()),
                None => (' ', Style::default()),
            };
            if row == v.row && c == v.col {
                style = style.add_modifier(Modifier::REVERSED);
            }
            buf[(cells.x + x, at_y)].set_char(ch).set_style(style);
        }
    }
}

/// The cursor cell in words, then the keys (dropped when they do not fit).
fn status_line(app: &App, v: &StragglerView, l: &Loaded, width: u16) -> Line<'static> {
    let keys = |a: Action| app.session().keymap.keys_for(Mode::Stragglers, a);
    let p = &l.profile;
    let group = &l.analysis.matching.groups[v.map.group];
    let what = match (v.map.instances.get(v.col), v.target()) {
        (Some(&k), Some((_, r))) => {
            let big = if v.map.big[v.col] {
                " · big event"
            } else {
                ""
            };
            let when = match v.map.at(r, v.col) {
                Some(ns) => format!("+{}", short_duration(ns)),
                None if v.never_launched(r, v.col) => "never launched: behind".into(),
                None => "not captured".into(),
            };
            format!(
                " {} instance {}/{} · {} {when}{big}",
                group.key,
                k + 1,
                group.instances(),
                p.device_label(v.map.devices[r]).tag(),
            )
        }
        _ => String::new(),
    };
    let full = format!(
        "{what} │ {} open · {} sort · {} host · {} back · {} help",
        keys(Action::Accept),
        keys(Action::SortList),
        keys(Action::ToggleCollapse),
        keys(Action::Cancel),
        keys(Action::Help)
    );
    if Line::from(full.as_str()).width() <= width as usize {
        Line::from(full)
    } else {
        Line::from(format!("{what} │ {} help", keys(Action::Help)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lateness_within_the_clock_error_is_not_resolvable() {
        let top = 40_000_000;
        let floor = 5_500_000;
        assert_eq!(cell_level(0, top, floor), Some(0));
        assert_eq!(cell_level(5_000_000, top, floor), None);
        assert_eq!(cell_level(6_000_000, top, floor), Some(6));
        assert_eq!(cell_level(5_000_000, top, 0), Some(5));
        // no legend step finer than the floor
        let theme = Theme { no_color: true };
        let text: String = legend(top, floor, false, false, &theme, 200)[0]
            .spans
            .iter()
            .map(|s| s.content.to_string())
            .collect();
        assert!(text.contains("~≤5.5 not resolvable (clocks)"), "{text}");
        assert!(!text.contains("≤0.31"), "{text}");
        assert!(text.contains("█≤40"), "{text}");
    }

    #[test]
    fn a_legend_wider_than_the_frame_goes_on_under_itself_whole() {
        let theme = Theme { no_color: true };
        let lines = legend(64_000_000, 2_000, true, true, &theme, 80);
        assert!(lines.len() > 1);
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.to_string()).collect())
            .collect();
        for t in &text {
            assert!(Line::from(t.as_str()).width() <= 80, "{t}");
        }
        let all = text.join("");
        for step in [
            "~≤0.002",
            "▁≤0.50",
            "▅≤8.0",
            "█≤64",
            "not captured",
            "never launched",
        ] {
            assert!(all.contains(step), "{step} in {text:#?}");
        }
        assert!(text[0].starts_with(" lateness, ms: "), "{text:#?}");
    }
}
