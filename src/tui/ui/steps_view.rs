//! The steps view, full screen: a sparkline of step time, then a row per
//! step and a column per rank (hosts folded past a few hundred ranks),
//! each cell the chosen figure on the heat scale (its value in ms where
//! the columns are wide enough), then the cursor cell's account, its
//! step's critical path and what-ifs. Records the cell area for clicks;
//! changes nothing else.

use super::super::action::{Action, Mode};
use super::super::data::Loaded;
use super::super::state::App;
use super::super::steps_view::{StepCol, StepsView, path_words};
use super::heat::{FIRST, cell_style, glyph, level, level_top, ms2};
use super::labels::{fit_name, fit_tail};
use super::text::{cut_line, visible};
use super::theme::Theme;
use crate::analysis::critical_path::WhatIf;
use crate::analysis::step_account::PARTS;
use crate::analysis::step_overview::{StepOverview, cause_place};
use crate::tui::timescale::short_duration;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline, SparklineBar};

/// Row label columns: `   12w   41.2` (step, warm-up mark, its time in ms).
const LABEL: u16 = 13;
/// Columns of a cell that shows its value.
const VALUE_CELL: u16 = 7;
/// Rows under the cells for the cursor cell's account (two), path and
/// what-ifs, each cut at the frame (`…`).
const DETAIL_ROWS: u16 = 4;
/// Rows of the step-time sparkline.
const SPARK_ROWS: u16 = 2;

pub fn draw(f: &mut Frame, area: Rect, app: &mut App, l: &Loaded, theme: &Theme) {
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
    let overview = app.capture().steps_now().cloned();
    let (Some(o), Some(mut v)) = (overview, app.capture_mut().steps_view.take()) else {
        let head = " rankline · steps";
        f.render_widget(Paragraph::new(head).style(theme.bar()), title);
        let text = " computing each step's account and critical path on every rank…";
        f.render_widget(Paragraph::new(text).style(theme.dim()), main);
        let line = status_line(app, None, l, status.width);
        f.render_widget(Paragraph::new(visible(line)).style(theme.bar()), status);
        return;
    };
    let found = match &o.from {
        crate::analysis::step_spans::StepsFrom::Collectives { group, .. } => {
            format!(" (no step ranges: found from the period of {group})")
        }
        _ => String::new(),
    };
    let head = format!(
        " rankline · steps{found} · {} steps × {} ranks · cells: {} · warm-up: {}",
        o.accounts.len(),
        v.devices.len(),
        v.figure.name(),
        match o.warmup.min(o.accounts.len()) {
            0 => "none".to_string(),
            1 => "step 1".to_string(),
            n => format!("steps 1–{n}"),
        }
    );
    f.render_widget(
        Paragraph::new(cut_line(Line::from(head), title.width as usize)).style(theme.bar()),
        title,
    );
    if o.accounts.is_empty() {
        let text = format!(" {}", crate::analysis::step_spans::NO_STEPS);
        f.render_widget(Paragraph::new(text).style(theme.warning()), main);
        app.capture_mut().steps_view = Some(v);
        return;
    }
    let top = v.top(&o);
    // Columns each rank could have: wide enough for a value, or a glyph.
    let room = main.width.saturating_sub(LABEL + 1) / v.cols.len().max(1) as u16;
    let values = room >= VALUE_CELL - 1;
    let legend = legend(&v, top, values, theme, main.width);
    let head_rows = legend.len() as u16 + SPARK_ROWS + 1;
    let cw = match values {
        true => room.clamp(VALUE_CELL - 1, VALUE_CELL + 3),
        false => 1,
    };
    let cells = Rect {
        x: main.x + LABEL + 1,
        y: main.y + head_rows,
        width: main.width.saturating_sub(LABEL + 1),
        height: main.height.saturating_sub(head_rows + DETAIL_ROWS),
    };
    app.chrome_mut().layout.steps_cells = cells;
    app.chrome_mut().layout.steps_cell_width = cw;
    v.rows_scroll.fit(v.steps, cells.height as usize);
    v.cols_scroll.fit(v.cols.len(), (cells.width / cw) as usize);
    v.rows_scroll.show(v.row);
    v.cols_scroll.show(v.col);

    let buf = f.buffer_mut();
    for (y, line) in (main.y..).zip(&legend) {
        buf.set_line(main.x, y, line, main.width);
    }
    let spark = Rect {
        x: main.x,
        y: main.y + legend.len() as u16,
        width: main.width,
        height: SPARK_ROWS,
    };
    sparkline(f, spark, &v, &o, theme);
    let buf = f.buffer_mut();
    ruler(buf, main.x, cells, cw, &v, l, theme);
    rows(buf, main.x, cells, cw, values, &v, &o, top, theme);
    let detail = Rect {
        y: cells.bottom(),
        height: DETAIL_ROWS.min(main.bottom().saturating_sub(cells.bottom())),
        ..main
    };
    f.render_widget(
        Paragraph::new(detail_lines(&v, &o, l, theme, detail.width)),
        detail,
    );
    let line = status_line(app, Some(&o), l, status.width);
    f.render_widget(Paragraph::new(visible(line)).style(theme.bar()), status);
    app.capture_mut().steps_view = Some(v);
}

/// The figure, what it means (when there is room), and its scale.
fn legend(v: &StepsView, top: i64, values: bool, theme: &Theme, width: u16) -> Vec<Line<'static>> {
    let name = format!(" {}, ms", v.figure.name());
    let meaning = format!(" ({})", v.figure.meaning());
    let mut spans = vec![Span::styled(name, theme.heading())];
    if Line::from(format!("{}{meaning}", v.figure.name())).width() + 60 <= width as usize {
        spans.push(Span::styled(meaning, theme.dim()));
    }
    spans.push(Span::raw(": "));
    spans.push(Span::styled(format!("{FIRST}0 "), theme.dim()));
    if top > 0 {
        for i in 1..=8 {
            spans.push(Span::styled(
                format!("{}≤{} ", glyph(i), ms2(level_top(i, top))),
                cell_style(theme, i),
            ));
        }
    }
    if values {
        spans.push(Span::styled("(cells: ms)", theme.dim()));
    }
    vec![cut_line(Line::from(spans), width as usize)]
}

/// Step time per step, the cursor's step marked, warm-up dim; the steps
/// around the cursor when there are more than columns.
fn sparkline(f: &mut Frame, area: Rect, v: &StepsView, o: &StepOverview, theme: &Theme) {
    let label = Rect {
        width: LABEL.min(area.width),
        ..area
    };
    let times: Vec<i64> = o.accounts.iter().map(|a| a.span_ns()).collect();
    let max = times.iter().copied().max().unwrap_or(0);
    f.render_widget(
        Paragraph::new(vec![
            Line::styled(" step time", theme.heading()),
            Line::styled(format!(" max {}", ms2(max as f64)), theme.dim()),
        ]),
        label,
    );
    let bars = Rect {
        x: area.x + LABEL + 1,
        width: area.width.saturating_sub(LABEL + 1),
        ..area
    };
    let from = v
        .row
        .saturating_sub(bars.width as usize / 2)
        .min(times.len().saturating_sub(bars.width as usize));
    let data: Vec<SparklineBar> = times
        .iter()
        .enumerate()
        .skip(from)
        .map(|(i, &t)| {
            let style = if i == v.row {
                theme.cursor_label()
            } else if o.is_warmup(i + 1) {
                theme.dim()
            } else {
                theme.label()
            };
            SparklineBar::from(t.max(0) as u64).style(Some(style))
        })
        .collect();
    f.render_widget(Sparkline::default().data(data).max(max.max(1) as u64), bars);
}

/// Above the cells: the label header and each column's rank (or host).
fn ruler(
    buf: &mut Buffer,
    x0: u16,
    cells: Rect,
    cw: u16,
    v: &StepsView,
    l: &Loaded,
    theme: &Theme,
) {
    let y = cells.y - 1;
    buf.set_string(x0, y, " step time ms", theme.dim());
    let p = &l.profile;
    let mut free_from = 0u16;
    for x in 0..cells.width / cw {
        let Some(c) = v.cols_scroll.row_at(x as usize) else {
            break;
        };
        let at = x * cw;
        let text = match (&v.cols[c], cw > 1) {
            (StepCol::Rank(r), true) => {
                fit_tail(&p.device_label(v.devices[*r]).tag(), cw as usize - 1)
            }
            (StepCol::Host { host, .. }, true) => {
                fit_name(p.host_label(*host), cw as usize - 1).unwrap_or_default()
            }
            // One column per rank: its index every tenth.
            (_, false) if c % 10 == 0 && at >= free_from => c.to_string(),
            _ => continue,
        };
        let text = crate::text_safe::escape_controls(&text).into_owned();
        let style = if c == v.col {
            theme.cursor_label()
        } else {
            theme.dim()
        };
        buf.set_stringn(cells.x + at, y, &text, (cells.width - at) as usize, style);
        free_from = at + text.chars().count() as u16 + 1;
    }
}

#[allow(clippy::too_many_arguments)]
fn rows(
    buf: &mut Buffer,
    x0: u16,
    cells: Rect,
    cw: u16,
    values: bool,
    v: &StepsView,
    o: &StepOverview,
    top: i64,
    theme: &Theme,
) {
    for y in 0..cells.height {
        let Some(s) = v.rows_scroll.row_at(y as usize) else {
            break;
        };
        let at_y = cells.y + y;
        let a = &o.accounts[s];
        let warm = if o.is_warmup(a.step) { "w" } else { " " };
        let label = format!(" {:>4}{warm} {:>6}", a.step, ms2(a.span_ns() as f64));
        let style = if s == v.row {
            theme.cursor_label()
        } else if o.is_warmup(a.step) {
            theme.dim()
        } else {
            theme.label()
        };
        buf.set_stringn(x0, at_y, &label, LABEL as usize, style);
        for x in 0..cells.width / cw {
            let Some(c) = v.cols_scroll.row_at(x as usize) else {
                break;
            };
            let (text, mut style) = match v.cell(o, s, c) {
                Some((ns, _)) => {
                    let lv = level(ns, top);
                    let text = match (values, ns) {
                        (true, 0) => format!("{FIRST:>w$}", w = cw as usize - 1),
                        // Under a µs: not rounded to a zero that is not.
                        (true, 1..1_000) => format!("{:>w$}", "<.001", w = cw as usize - 1),
                        (true, _) => format!("{:>w$}", ms2(ns as f64), w = cw as usize - 1),
                        (false, _) => glyph(lv).to_string(),
                    };
                    (text, cell_style(theme, lv))
                }
                None => ("-".to_string(), theme.dim()),
            };
            if s == v.row && c == v.col {
                style = style.add_modifier(Modifier::REVERSED);
            }
            buf.set_stringn(cells.x + x * cw, at_y, &text, cw as usize, style);
        }
    }
}

/// The cursor cell's rank in its step (every part of its account), the
/// step's critical path in a line and its largest what-ifs.
fn detail_lines(
    v: &StepsView,
    o: &StepOverview,
    l: &Loaded,
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    let p = &l.profile;
    let Some((s, r)) = v.target(o) else {
        return Vec::new();
    };
    let a = &o.accounts[s];
    let rank = &a.ranks[r];
    let parts: Vec<String> = PARTS
        .iter()
        .zip(rank.parts())
        .filter(|(_, ns)| *ns > 0)
        .map(|(name, ns)| format!("{name} {}", ms2(ns as f64)))
        .collect();
    let mut head = format!(
        " step {}{} · {} · {}",
        a.step,
        if o.is_warmup(a.step) {
            " (warm-up)"
        } else {
            ""
        },
        short_duration(a.span_ns()),
        p.device_label(rank.device).tag(),
    );
    if let Some(c) = o
        .compute
        .get(s)
        .and_then(|c| c.iter().find(|c| c.device == rank.device))
        && let Some(ratio) = c.ratio()
    {
        head += &format!(" · its compute {ratio:.2}× its peers'");
    }
    let mut lines = vec![
        Line::styled(head, theme.heading()),
        Line::from(format!(" {} (ms)", parts.join(" · "))),
        Line::from(format!(" critical path: {}", path_words(p, &o.paths[s]))),
    ];
    let whatifs: Vec<String> = o.paths[s]
        .what_if
        .iter()
        .take(3)
        .map(|w| {
            format!(
                "without {}: saves {}",
                cause_words(p, w),
                short_duration(w.saves_ns)
            )
        })
        .collect();
    lines.push(Line::styled(
        match whatifs.is_empty() {
            true => " what-if: no cause on the path would save time when removed".to_string(),
            false => format!(" what-if: {}", whatifs.join(" · ")),
        },
        theme.dim(),
    ));
    lines
        .into_iter()
        .map(|l| cut_line(visible(l), width as usize))
        .collect()
}

/// A cause in words: `os_wait on D3 (pthread_cond_wait)`, or on every
/// rank of a host at once: `os_wait on gpu-a23 ×8 ranks (…)`.
fn cause_words(p: &crate::profile::Profile, w: &WhatIf) -> String {
    let who = cause_place(p, w)
        .map(|on| format!(" on {on}"))
        .unwrap_or_default();
    let what = w
        .what
        .map(|s| format!(" ({})", fit_name(p.strings.get(s), 40).unwrap_or_default()))
        .unwrap_or_default();
    format!("{}{who}{what}", w.kind.name())
}

/// The cause that would save most over the steps after warm-up, then the
/// keys (dropped when they do not fit).
fn status_line(app: &App, o: Option<&StepOverview>, l: &Loaded, width: u16) -> Line<'static> {
    let keys = |a: Action| app.session().keymap.keys_for(Mode::Steps, a);
    let causes = match o.and_then(|o| o.causes.first()) {
        Some((w, n)) => format!(
            " first to fix: {}: {} over {n} step{} │",
            cause_words(&l.profile, w),
            short_duration(w.saves_ns),
            if *n == 1 { "" } else { "s" }
        ),
        None => String::new(),
    };
    let full = format!(
        "{causes} {} figure · {} open · {} host · {} back · {} help",
        keys(Action::NextFigure),
        keys(Action::Accept),
        keys(Action::ToggleCollapse),
        keys(Action::Cancel),
        keys(Action::Help)
    );
    if Line::from(full.as_str()).width() <= width as usize {
        Line::from(full)
    } else {
        Line::from(format!("{causes} {} help", keys(Action::Help)))
    }
}
