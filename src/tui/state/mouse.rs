//! The mouse, hit-tested against the last frame's layout: the wheel zooms
//! the timeline at the pointer (with Shift it pans) and scrolls the panel
//! under it; a click selects the lane and the event under the pointer, or
//! acts on a panel row as Enter would.

use super::{App, EventRef, Overlay, Screen};
use crate::tui::action::Action;
use crate::tui::data::Loaded;
use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind as K};
use ratatui::layout::Position;

/// Rows one wheel notch scrolls a panel or the help.
const WHEEL_ROWS: isize = 3;

impl App {
    pub fn on_mouse(&mut self, m: MouseEvent) {
        // Events still queued after capture was turned off.
        if !self.mouse || self.loaded.is_none() {
            return;
        }
        self.dirty = true;
        let at = Position::new(m.column, m.row);
        let wheel = match m.kind {
            K::ScrollUp => Some(-1),
            K::ScrollDown => Some(1),
            _ => None,
        };
        match self.overlay {
            Overlay::None if self.screen == Screen::Stragglers => {
                // The wheel moves the cursor (Shift: across instances), as
                // the arrow keys do; a click acts as Enter on the cell.
                let shift = m.modifiers.contains(KeyModifiers::SHIFT);
                let step = match (m.kind, shift) {
                    (K::ScrollUp, false) => Some(Action::Up),
                    (K::ScrollDown, false) => Some(Action::Down),
                    (K::ScrollUp, true) | (K::ScrollLeft, _) => Some(Action::PanLeft),
                    (K::ScrollDown, true) | (K::ScrollRight, _) => Some(Action::PanRight),
                    _ => None,
                };
                if let Some(a) = step {
                    for _ in 0..WHEEL_ROWS {
                        self.apply(a);
                    }
                } else if m.kind == K::Down(MouseButton::Left) {
                    self.click_map(at.x, at.y);
                }
                return;
            }
            Overlay::None => {}
            Overlay::Help { .. } => {
                if let Some(dir) = wheel {
                    let a = if dir < 0 { Action::Up } else { Action::Down };
                    for _ in 0..WHEEL_ROWS {
                        self.apply(a);
                    }
                }
                return;
            }
            _ => return,
        }
        if let Some(panel) = self.layout.panel_at(at.x, at.y).cloned() {
            let Some(kind) = panel.kind else { return };
            match m.kind {
                K::ScrollUp | K::ScrollDown => self
                    .panel_view
                    .scroll_mut(kind)
                    .by(wheel.unwrap_or(0) * WHEEL_ROWS),
                K::Down(MouseButton::Left) if panel.inner.contains(at) => {
                    // The cursor goes to the line clicked, then Enter.
                    let y = (at.y - panel.inner.y) as usize;
                    let row = self.panel_view.scroll(kind).row_at(y);
                    match row.and_then(|r| panel.line_at(r)) {
                        Some(line) => {
                            self.panel_view.set_cursor(kind, &panel, line);
                            self.accept_panel_line(kind, line);
                        }
                        None => self.message = Some("nothing to go to on this row".into()),
                    }
                }
                _ => {}
            }
            return;
        }
        if !self.layout.timeline.contains(at) {
            return;
        }
        let shift = m.modifiers.contains(KeyModifiers::SHIFT);
        match (m.kind, shift) {
            (K::ScrollUp, false) => self.zoom_at(at.x, Action::ZoomIn),
            (K::ScrollDown, false) => self.zoom_at(at.x, Action::ZoomOut),
            (K::ScrollUp, true) | (K::ScrollLeft, _) => self.apply(Action::PanLeft),
            (K::ScrollDown, true) | (K::ScrollRight, _) => self.apply(Action::PanRight),
            (K::Down(MouseButton::Left), _) => self.click_lane(at),
            _ => {}
        }
    }

    /// `m`: mouse capture off (the terminal selects text) or back on.
    pub(super) fn toggle_mouse(&mut self) {
        self.mouse = !self.mouse;
        self.message = Some(if self.mouse {
            "mouse on: wheel zooms, click selects (Shift-drag selects text)".into()
        } else {
            "mouse off: the terminal selects text".into()
        });
    }

    /// The window fraction at column `x` (None over the lane labels).
    fn fraction_at(&self, x: u16) -> Option<f64> {
        let lanes = self.layout.lanes;
        let x0 = lanes.x + self.layout.label_width + 1;
        let width = lanes.width.saturating_sub(self.layout.label_width + 1);
        (x >= x0 && width > 0).then(|| ((x - x0) as f64 + 0.5) / width as f64)
    }

    /// Zooms as the key does, then pans so the time under the pointer stays
    /// under it.
    fn zoom_at(&mut self, x: u16, zoom: Action) {
        let frac = self.fraction_at(x).unwrap_or(0.5);
        let t = self.view.t0 + frac * self.view.span;
        self.apply(zoom);
        let want_t0 = t - frac * self.view.span;
        self.view.pan((want_t0 - self.view.t0) / self.view.span);
        self.clamp_view();
    }

    /// Moves the cursor to the lane clicked and selects the event under the
    /// pointer (the nearest within a cell).
    fn click_lane(&mut self, at: Position) {
        let Some(l) = self.loaded.clone() else { return };
        let lanes = self.layout.lanes;
        if !lanes.contains(at) {
            return;
        }
        let row = self.scroll + (at.y - lanes.y) as usize;
        let Some(kind) = self.rows.get(row).map(|r| r.kind) else {
            return;
        };
        self.cursor = row;
        self.message = None;
        let Some(frac) = self.fraction_at(at.x) else {
            return;
        };
        let t = self.view.t0 + frac * self.view.span;
        match event_at(self, &l, kind, t) {
            Some(e) => self.select(e, false),
            None => self.message = Some("nothing under the pointer on this lane".into()),
        }
    }
}

/// The event of lane `kind` containing time `t`, else the nearest within
/// one cell.
fn event_at(app: &App, l: &Loaded, kind: crate::tui::lanes::LaneKind, t: f64) -> Option<EventRef> {
    let (track, make) = App::row_events(l, kind)?;
    // The pointer is on the reference clock, the track on its file's.
    let t = t as i64;
    let t = t.saturating_sub(l.shift_ns(l.row_file(kind), t));
    let cell = (app.view.span / app.timeline_width.max(1) as f64).ceil() as i64;
    let i = track.start.partition_point(|&s| s <= t);
    // Ends are not sorted: look a few back for a long event still running.
    (i.saturating_sub(8)..(i + 1).min(track.len()))
        .map(|k| {
            let d = if track.start[k] > t {
                track.start[k].saturating_sub(t)
            } else {
                t.saturating_sub(track.end[k]).max(0)
            };
            (d, k)
        })
        .filter(|&(d, _)| d <= cell)
        .min()
        .map(|(_, k)| make(track.row(k)))
}
