//! The mouse, hit-tested against the last frame's layout: the wheel zooms
//! the timeline at the pointer (with Shift it pans) and scrolls the panel
//! under it; a click selects the lane and the event under the pointer, or
//! acts on a panel row as Enter would.

use super::{App, Overlay, Screen};
use crate::tui::action::Action;
use crate::tui::capture::time;
use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind as K};
use ratatui::layout::Position;

/// Rows one wheel notch scrolls a panel or the help.
const WHEEL_ROWS: isize = 3;

impl App {
    pub fn on_mouse(&mut self, m: MouseEvent) {
        // Events still queued after capture was turned off.
        if !self.session.mouse || self.capture.data.is_none() {
            return;
        }
        self.session.dirty = true;
        let at = Position::new(m.column, m.row);
        let wheel = match m.kind {
            K::ScrollUp => Some(-1),
            K::ScrollDown => Some(1),
            _ => None,
        };
        match self.chrome.overlay {
            Overlay::None if matches!(self.chrome.screen, Screen::Stragglers | Screen::Steps) => {
                // The wheel moves the cursor (Shift: across columns), as
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
                    match self.chrome.screen {
                        Screen::Steps => self.click_steps(at.x, at.y),
                        _ => self.click_map(at.x, at.y),
                    }
                }
                return;
            }
            Overlay::None => {}
            Overlay::Help(..) | Overlay::Legend(_) => {
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
        if let Some(panel) = self.chrome.layout.panel_at(at.x, at.y).cloned() {
            let Some(kind) = panel.kind else { return };
            match m.kind {
                K::ScrollUp | K::ScrollDown => self
                    .chrome
                    .panels
                    .scroll_mut(kind)
                    .by(wheel.unwrap_or(0) * WHEEL_ROWS),
                K::Down(MouseButton::Left) if panel.inner.contains(at) => {
                    // The cursor goes to the line clicked, then Enter.
                    let y = (at.y - panel.inner.y) as usize;
                    let row = self.chrome.panels.scroll(kind).row_at(y);
                    match row.and_then(|r| panel.line_at(r)) {
                        Some(line) => {
                            self.chrome.panels.set_cursor(kind, &panel, line);
                            self.accept_panel_line(kind, line);
                        }
                        None => self.say("nothing to go to on this row"),
                    }
                }
                _ => {}
            }
            return;
        }
        if !self.chrome.layout.timeline.contains(at) {
            return;
        }
        // A drag on the ruler marks a range: pressed at its start,
        // released at its end.
        let button = matches!(
            m.kind,
            K::Down(MouseButton::Left) | K::Drag(MouseButton::Left) | K::Up(MouseButton::Left)
        );
        if button && at.y < self.chrome.layout.lanes.y {
            let t = self.fraction_at(at.x).map(|f| {
                let v = self.capture.view;
                (v.t0 + f * v.span) as i64
            });
            match (m.kind, t) {
                (K::Down(MouseButton::Left), Some(t)) => {
                    self.capture.range = Default::default();
                    self.mark_range(true, Some(t));
                }
                // A click without a drag marks nothing.
                (K::Up(MouseButton::Left), Some(t))
                    if self.capture.range.start == Some(t) && self.capture.range.end.is_none() =>
                {
                    self.capture.range = Default::default();
                    self.say("drag along the ruler to mark a range");
                }
                // While dragging the end follows the pointer; the panel
                // opens on release (opening it would move the ruler).
                (K::Drag(MouseButton::Left), Some(t)) if self.capture.range.start.is_some() => {
                    self.capture.range.end = Some(t);
                }
                (K::Up(MouseButton::Left), Some(t)) if self.capture.range.start.is_some() => {
                    self.mark_range(false, Some(t));
                }
                _ => {}
            }
            self.derive();
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
        self.session.mouse = !self.session.mouse;
        self.say(if self.session.mouse {
            "mouse on: wheel zooms, click selects (Shift-drag selects text)"
        } else {
            "mouse off: the terminal selects text"
        });
    }

    /// The window fraction at column `x` (None over the lane labels).
    fn fraction_at(&self, x: u16) -> Option<f64> {
        let lanes = self.chrome.layout.lanes;
        let x0 = lanes.x + self.chrome.layout.label_width + 1;
        let width = lanes
            .width
            .saturating_sub(self.chrome.layout.label_width + 1);
        (x >= x0 && width > 0).then(|| ((x - x0) as f64 + 0.5) / width as f64)
    }

    /// Zooms as the key does, then pans so the time under the pointer stays
    /// under it.
    fn zoom_at(&mut self, x: u16, zoom: Action) {
        let frac = self.fraction_at(x).unwrap_or(0.5);
        let v = self.capture.view;
        let t = v.t0 + frac * v.span;
        self.apply(zoom);
        let v = &mut self.capture.view;
        let want_t0 = t - frac * v.span;
        v.pan((want_t0 - v.t0) / v.span);
        self.clamp_view();
    }

    /// Moves the cursor to the lane clicked and selects the event under the
    /// pointer (the nearest within a cell).
    fn click_lane(&mut self, at: Position) {
        let Some(l) = self.data() else { return };
        let lanes = self.chrome.layout.lanes;
        if !lanes.contains(at) {
            return;
        }
        let c = &mut self.capture;
        let row = c.lanes.scroll.top + (at.y - lanes.y) as usize;
        let Some(kind) = c.lanes.rows.get(row).map(|r| r.kind) else {
            return;
        };
        c.lanes.put_cursor(row);
        self.session.messages.clear_answer();
        let Some(frac) = self.fraction_at(at.x) else {
            return;
        };
        let v = self.capture.view;
        let t = (v.t0 + frac * v.span) as i64;
        let cell = (v.span / self.chrome.layout.timeline_width.max(1) as f64).ceil() as i64;
        match time::event_at(&l, kind, t, cell, self.capture.show.min_dur) {
            Some(hit) => self.capture.select(Some(hit.event), false),
            None => self.say("nothing under the pointer on this lane"),
        }
    }
}
