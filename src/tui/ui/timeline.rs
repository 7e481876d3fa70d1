//! The timeline: a ruler, then one row per lane with a label and cells.

use super::cells::{Cell, cells};
use super::labels::{fit_lane_label, fit_name, marker_labels, tick_labels};
use super::theme::Theme;
use crate::text_safe::escape_controls;
use crate::tui::capture::time::{event_span, row_view};
use crate::tui::data::Loaded;
use crate::tui::index::{Cat, CpuTrackKind, Track};
use crate::tui::lanes::{LaneKind, event_on_row};
use crate::tui::selection::JumpSource;
use crate::tui::state::{App, EventRef, Ruler};
use crate::tui::timescale::{format_abs, format_offset, tick_step};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// Rows the ruler takes.
pub const RULER_ROWS: u16 = 2;

/// Width of the label column for a timeline of `width` columns.
pub fn label_width(width: u16) -> u16 {
    (width / 5).clamp(12, 24)
}

struct Geometry {
    x0: u16,
    width: usize,
    t0: f64,
    ns_per_cell: f64,
}

impl Geometry {
    fn col(&self, t: i64) -> Option<usize> {
        let c = ((t as f64 - self.t0) / self.ns_per_cell).floor();
        (c >= 0.0 && (c as usize) < self.width).then_some(c as usize)
    }
}

fn put(buf: &mut Buffer, x: u16, y: u16, c: char, style: Style) {
    if let Some(cell) = buf.cell_mut((x, y)) {
        cell.set_char(c).set_style(style);
    }
}

/// Writes `s` from `x`, at most `max` cells; control characters (names
/// from the file) become visible escapes before the cut.
fn put_str(buf: &mut Buffer, x: u16, y: u16, max: usize, s: &str, style: Style) {
    for (i, c) in escape_controls(s).chars().take(max).enumerate() {
        put(buf, x + i as u16, y, c, style);
    }
}

/// Draws the timeline into `area`.
pub fn draw(buf: &mut Buffer, area: Rect, app: &App, l: &Loaded, theme: &Theme) {
    if area.width < 20 || area.height <= RULER_ROWS {
        return;
    }
    let lw = label_width(area.width);
    let width = (area.width - lw - 1) as usize;
    let geo = Geometry {
        x0: area.x + lw + 1,
        width,
        t0: app.capture().view.t0,
        ns_per_cell: app.capture().view.span / width as f64,
    };
    let mut markers = instance_markers(app, l, &geo);
    markers.extend(range_markers(app, &geo));
    draw_ruler(buf, area, app, l, &geo, &markers, theme);
    let selected = selected_rows(app, l);
    let late_lane = late_lane(app, l);
    let absent = absent_marks(app, l, &geo);
    let rows_h = (area.height - RULER_ROWS) as usize;
    for (i, row) in app
        .capture()
        .lanes
        .rows
        .iter()
        .enumerate()
        .skip(app.capture().lanes.scroll.top)
        .take(rows_h)
    {
        let y = area.y + RULER_ROWS + (i - app.capture().lanes.scroll.top) as u16;
        let is_late = late_lane.is_some_and(|k| k == row.kind);
        // Escaped before the cut, so the `◀` and padding fit what is shown.
        let label = escape_controls(&row.label).into_owned();
        let mark = match (
            row.collapsible,
            app.capture().lanes.collapsed.contains(&row.kind),
        ) {
            (false, _) => "",
            (true, true) => "▸",
            (true, false) => "▾",
        };
        let style = if i == app.capture().lanes.cursor {
            theme.cursor_label()
        } else if is_late {
            theme.late_label()
        } else {
            theme.label()
        };
        let max = lw as usize;
        // The `◀` and the fold mark take their columns first.
        let room = max
            .saturating_sub(mark.chars().count())
            .saturating_sub(if is_late { 2 } else { 0 });
        let fitted = match row.kind {
            // A device header: its tag is the row; the GPU name gives way.
            LaneKind::Device(_) | LaneKind::Host(_) => fit_name(&label, room).unwrap_or_default(),
            _ => fit_lane_label(&label, lead_of(l, row.kind, &label), room),
        };
        let head = format!("{mark}{fitted}");
        let shown: String = if is_late {
            format!("{head:<w$}◀", w = max - 1)
        } else {
            head
        };
        put_str(buf, area.x, y, max, &format!("{shown:<max$}"), style);
        draw_row(buf, y, &geo, app, l, row.kind, &selected, &markers, theme);
        if let Some((c, text)) = absent
            .iter()
            .find(|(k, ..)| *k == row.kind)
            .map(|(_, c, t)| (*c, *t))
        {
            let room = geo.width.saturating_sub(c);
            put_str(buf, geo.x0 + c as u16, y, room, text, theme.warning());
        }
        if i == app.capture().lanes.cursor {
            // The cursor: the time under it is what Enter selects.
            let x = geo.x0 + (width / 2) as u16;
            if let Some(cell) = buf.cell_mut((x, y)) {
                let s = cell
                    .style()
                    .add_modifier(ratatui::style::Modifier::UNDERLINED);
                if cell.symbol() == " " {
                    cell.set_char('·');
                }
                cell.set_style(s);
            }
        }
    }
}

/// The stream lanes of the selected instance's ranks that lack it, with
/// the column of its earliest start and what to say there: the rank never
/// launched it (behind, in a hang) or its capture does not cover it.
fn absent_marks(app: &App, l: &Loaded, geo: &Geometry) -> Vec<(LaneKind, usize, &'static str)> {
    let Some((g, k)) = app.capture().instance() else {
        return Vec::new();
    };
    let group = &l.analysis.matching.groups[g];
    let Some(col) = group
        .members(k)
        .map(|m| m.2.0)
        .min()
        .and_then(|t| geo.col(t))
    else {
        return Vec::new();
    };
    group
        .missing(k)
        .into_iter()
        .map(|d| {
            let behind = crate::tui::behind::never_launched_from(&l.behind, g, d)
                .is_some_and(|from| k >= from);
            let text = if behind {
                "× never launched (behind)"
            } else {
                "∅ not captured"
            };
            (LaneKind::Stream(group.lanes[d]), col, text)
        })
        .collect()
}

/// Columns of the selected instance's earliest start, latest start and end.
fn instance_markers(app: &App, l: &Loaded, geo: &Geometry) -> Vec<(usize, &'static str)> {
    let Some((g, k)) = app.capture().instance() else {
        return Vec::new();
    };
    // On the reference clock, as the view.
    let group = &l.analysis.matching.groups[g];
    let times: Vec<(i64, i64)> = group.members(k).map(|m| m.2).collect();
    let first = times.iter().map(|t| t.0).min().unwrap_or(0);
    let last = times.iter().map(|t| t.0).max().unwrap_or(0);
    let end = times.iter().map(|t| t.1).max().unwrap_or(0);
    // Most important first: the late rank's start names the answer.
    [(last, "last"), (first, "first"), (end, "end")]
        .into_iter()
        .filter_map(|(t, tag)| geo.col(t).map(|c| (c, tag)))
        .collect()
}

/// Columns of the marked range's start and end.
fn range_markers(app: &App, geo: &Geometry) -> Vec<(usize, &'static str)> {
    let r = &app.capture().range;
    let (a, b) = match (r.start, r.end) {
        (Some(a), Some(b)) => (Some(a.min(b)), Some(a.max(b))),
        other => other,
    };
    [(a, "range"), (b, "range end")]
        .into_iter()
        .filter_map(|(t, tag)| geo.col(t?).map(|c| (c, tag)))
        .collect()
}

fn draw_ruler(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    l: &Loaded,
    geo: &Geometry,
    markers: &[(usize, &str)],
    theme: &Theme,
) {
    let step = tick_step(geo.ns_per_cell, 14.0);
    // Relative ticks are at round offsets from the first event.
    let origin = if app.chrome().ruler == Ruler::Relative {
        l.span.map_or(0, |s| s.0) as f64
    } else {
        0.0
    };
    let utc0 = app.utc_origin(l);
    let mut t = match utc0 {
        // In UTC the ticks fall on round wall-clock times: shifted by the
        // start stamp's remainder (in integers: f64 cannot hold an epoch in ns).
        Some(u) => {
            let phase = u.rem_euclid(step.max(1.0) as i64) as f64;
            ((geo.t0 + phase) / step).ceil() * step - phase
        }
        None => origin + ((geo.t0 - origin) / step).ceil() * step,
    };
    let y = area.y;
    let mode = match utc0 {
        Some(_) => "utc",
        None if app.chrome().ruler == Ruler::Relative => "rel",
        None => "abs",
    };
    put_str(
        buf,
        area.x,
        y,
        (geo.x0 - area.x) as usize,
        &format!("time ({mode})"),
        theme.dim(),
    );
    // Ticks are at least a cell apart, so a bounded loop: near the ends of
    // the i64 range `t += step` can be lost to f64 rounding.
    let mut ticks = Vec::new();
    for _ in 0..=geo.width {
        if t >= geo.t0 + geo.ns_per_cell * geo.width as f64 {
            break;
        }
        if let Some(c) = geo.col(t as i64) {
            let text = if let Some(u) = utc0 {
                crate::tui::wallclock::tick_label(u.saturating_add(t as i64), step)
            } else if app.chrome().ruler == Ruler::Relative {
                format_offset(t - origin, step)
            } else {
                format_abs(t, step)
            };
            put(buf, geo.x0 + c as u16, y, '╷', theme.dim());
            ticks.push((c, text));
        }
        t += step;
    }
    for (c, text) in tick_labels(&ticks, geo.width) {
        put_str(buf, geo.x0 + c as u16, y, text.len(), &text, theme.dim());
    }
    let y2 = y + 1;
    let cursor = geo.width / 2;
    put(buf, geo.x0 + cursor as u16, y2, '▼', theme.dim());
    for &(c, _) in markers {
        put(buf, geo.x0 + c as u16, y2, '┃', theme.marker());
    }
    for (c, tag) in marker_labels(markers, &[cursor], geo.width) {
        put_str(buf, geo.x0 + c as u16, y2, tag.len(), tag, theme.marker());
    }
}

/// GPU rows highlighted as selected: the instance's kernels, or the event.
/// The selection (a collective's instance: every member), and while
/// `n` / `N` walk a step's critical path, every row of it.
fn selected_rows(app: &App, l: &Loaded) -> Vec<EventRef> {
    let c = app.capture();
    let mut rows: Vec<EventRef> = match c.instance() {
        Some((g, k)) => l.analysis.matching.groups[g]
            .members(k)
            .map(|m| EventRef::Gpu(m.1))
            .collect(),
        None => c.selection.into_iter().collect(),
    };
    if let Some(JumpSource::Path { events, .. }) = &c.jump {
        rows.extend(events);
    }
    rows
}

/// The stream row of the selected instance's late rank.
fn late_lane(app: &App, l: &Loaded) -> Option<LaneKind> {
    let late = app.capture().facts.late.as_ref()?;
    Some(LaneKind::Stream(l.profile.gpu.lane(late.row)))
}

fn event_name(app: &App, l: &Loaded, kind: LaneKind, track: &Track, i: usize) -> String {
    let p = &l.profile;
    let row = track.row(i);
    let sym = match kind {
        LaneKind::Stream(_) => p.gpu.name_as(row, app.capture().show.names),
        LaneKind::Api(_) => p.runtime.name(row),
        LaneKind::Nvtx(_) => p.nvtx.name(row),
        LaneKind::Cpu(tr) => match l.index.cpu_tracks[tr].kind {
            CpuTrackKind::Osrt => p.osrt.name(row),
            CpuTrackKind::OffCpu => return "off-CPU".into(),
            // The innermost user-mode frame: what the thread ran there.
            CpuTrackKind::Samples => p.samples.leaf(row),
        },
        _ => return String::new(),
    };
    p.strings.get(sym).to_string()
}

#[allow(clippy::too_many_arguments)]
fn draw_row(
    buf: &mut Buffer,
    y: u16,
    geo: &Geometry,
    app: &App,
    l: &Loaded,
    kind: LaneKind,
    selected: &[EventRef],
    markers: &[(usize, &str)],
    theme: &Theme,
) {
    let p = &l.profile;
    // The row's file clock: the view is on the reference clock.
    let file_t0 = row_view(l, kind, app.capture().view).t0;
    let min = app.capture().show.min_dur;
    // Kept here: the drawn track borrows the filtered summary.
    let filtered;
    let (row_cells, track): (Vec<Cell>, Option<Track>) = match kind {
        LaneKind::Missing(_) => {
            put_str(
                buf,
                geo.x0,
                y,
                geo.width,
                "no GPU activity recorded (CUDA context only)",
                theme.warning(),
            );
            return;
        }
        LaneKind::Device(_) | LaneKind::Host(_) => {
            let mut merged = vec![
                Cell {
                    busy: 0.0,
                    cat: 0,
                    event: None,
                    covered: false
                };
                geo.width
            ];
            for lane in crate::tui::lanes::streams_under(p, kind) {
                let stream = LaneKind::Stream(lane);
                let t = l.index.gpu_track(p, lane as usize);
                let f = l.filtered.get(stream, &t, min);
                let t = match f.as_deref() {
                    Some(f) => f.apply(t),
                    None => t,
                };
                let t0 = row_view(l, stream, app.capture().view).t0;
                for (m, c) in merged
                    .iter_mut()
                    .zip(cells(&t, t0, geo.ns_per_cell, geo.width))
                {
                    if c.busy > m.busy {
                        *m = Cell {
                            covered: false,
                            event: None,
                            ..c
                        };
                    }
                }
            }
            (merged, None)
        }
        _ => {
            let Some((t, _)) = crate::tui::capture::time::track(l, kind) else {
                return;
            };
            filtered = l.filtered.get(kind, &t, min);
            let t = match filtered.as_deref() {
                Some(f) => f.apply(t),
                None => t,
            };
            (cells(&t, file_t0, geo.ns_per_cell, geo.width), Some(t))
        }
    };
    // A stream's waits on events (stream-wait-event syncs), where it has
    // nothing of its own to draw.
    let mut waits = vec![false; geo.width];
    if let LaneKind::Stream(lane) = kind {
        let w = (
            geo.t0 as i64,
            (geo.t0 + geo.ns_per_cell * geo.width as f64) as i64,
        );
        for (_, t) in crate::analysis::cuda_sync::waits_on_lane(p, &l.analysis.clock, lane, w) {
            if let Some(c) = geo.col(t) {
                waits[c] = true;
            }
        }
    }
    // Columns of selected events on this row, even if they are too small to
    // dominate a cell.
    let mut sel_cols = vec![false; geo.width];
    for &e in selected
        .iter()
        .filter(|&&e| event_on_row(p, &l.index, kind, e))
    {
        let (a, b) = event_span(l, e);
        let ca = geo
            .col(a)
            .unwrap_or(if (a as f64) < geo.t0 { 0 } else { geo.width });
        let cb = geo.col(b).unwrap_or(if (b as f64) < geo.t0 {
            0
        } else {
            geo.width.saturating_sub(1)
        });
        if ca < geo.width {
            for s in sel_cols.iter_mut().take(cb + 1).skip(ca) {
                *s = true;
            }
        }
    }
    for (c, cell) in row_cells.iter().enumerate() {
        let x = geo.x0 + c as u16;
        let (mut ch, mut style) = if cell.busy > 0.0 {
            theme.cell(Cat::from_u8(cell.cat), cell.busy)
        } else {
            (' ', Style::default())
        };
        if ch == ' ' && markers.iter().any(|m| m.0 == c) {
            ch = '┊';
            style = theme.marker();
        }
        if ch == ' ' && waits.get(c).copied().unwrap_or(false) {
            ch = '◇';
            style = theme.marker();
        }
        if sel_cols[c] {
            if ch == ' ' || ch == '┊' {
                ch = '│';
            }
            style = theme.selected(style);
        }
        put(buf, x, y, ch, style);
    }
    // Names on events wide enough to hold them.
    let Some(track) = track else { return };
    let mut c = 0;
    while c < row_cells.len() {
        let cell = row_cells[c];
        let Some(ev) = cell.event.filter(|_| cell.covered) else {
            c += 1;
            continue;
        };
        let mut end = c;
        while end + 1 < row_cells.len()
            && row_cells[end + 1].covered
            && row_cells[end + 1].event == Some(ev)
        {
            end += 1;
        }
        let run = end - c + 1;
        if run >= 5 {
            let name = event_name(app, l, kind, &track, ev);
            let style = if sel_cols[c] {
                theme.selected(theme.name_on(Cat::from_u8(cell.cat)))
            } else {
                theme.name_on(Cat::from_u8(cell.cat))
            };
            if let Some(name) = fit_name(&escape_controls(&name), run - 2) {
                put_str(buf, geo.x0 + c as u16 + 1, y, run - 2, &name, style);
            }
        }
        c = end + 1;
    }
}

/// How many leading characters of a lane's label name its device or host
/// (`node00:3 ` in `node00:3 T41228 nvtx1`): the part that gives way first,
/// since the header rows above already name it.
fn lead_of(l: &Loaded, kind: LaneKind, label: &str) -> usize {
    let p = &l.profile;
    let Some(d) = crate::tui::lanes::row_device(p, &l.index, kind) else {
        return 0;
    };
    let tag = escape_controls(&p.device_label(d).tag()).into_owned();
    let host = escape_controls(p.host_label(p.devices[d as usize].host)).into_owned();
    [tag, host]
        .into_iter()
        .find(|lead| label.starts_with(&format!("{lead} ")))
        .map_or(0, |lead| lead.chars().count())
}
