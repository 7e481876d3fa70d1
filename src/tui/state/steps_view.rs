//! Opening the steps view (`P`) and what each of its keys does. The
//! steps' figures are derived off the UI thread the first time it opens
//! (they take seconds at a thousand ranks); the view says so meanwhile.

use super::App;
use crate::analysis::critical_path::PathEvent;
use crate::tui::action::Action;
use crate::tui::capture::Capture;
use crate::tui::selection::{EventRef, JumpSource, Screen, Target};
use crate::tui::steps_view::{StepsView, path_words};

impl Capture {
    /// The view's state, made once the figures are derived (and again for
    /// another capture's data).
    pub fn fit_steps_view(&mut self) {
        let (Some(o), Some(l)) = (self.steps_now().cloned(), self.data.clone()) else {
            return;
        };
        if self
            .steps_view
            .as_ref()
            .is_some_and(|v| v.steps == o.accounts.len())
        {
            return;
        }
        let hosts = o
            .accounts
            .first()
            .map(|a| {
                a.ranks
                    .iter()
                    .map(|r| l.profile.devices[r.device as usize].host)
                    .collect()
            })
            .unwrap_or_default();
        self.steps_view = Some(StepsView::new(&o, hosts));
    }
}

impl App {
    /// `P` on the timeline.
    pub(super) fn open_steps(&mut self) {
        self.chrome.screen = Screen::Steps;
        self.capture.fit_steps_view();
    }

    pub(super) fn apply_steps(&mut self, a: Action) {
        let page = |v: &StepsView| v.rows_scroll.visible.max(2) as isize - 1;
        let Some(v) = self.capture.steps_view.as_mut() else {
            // Still computing: only leaving means anything.
            match a {
                Action::Cancel | Action::StepsView => self.chrome.screen = Screen::Timeline,
                Action::HistoryBack => self.go_back(),
                _ => {}
            }
            return;
        };
        match a {
            Action::Up => v.move_row(-1),
            Action::Down => v.move_row(1),
            Action::PageUp => v.move_row(-page(v)),
            Action::PageDown => v.move_row(page(v)),
            Action::PanLeft => v.move_col(-1),
            Action::PanRight => v.move_col(1),
            Action::Home => v.move_col(-(v.cols.len() as isize)),
            Action::End => v.move_col(v.cols.len() as isize),
            Action::NextFigure => v.cycle_figure(true),
            Action::PrevFigure => v.cycle_figure(false),
            Action::ToggleCollapse => v.toggle_collapse(),
            Action::Accept => self.open_step_cell(),
            Action::Cancel | Action::StepsView => self.chrome.screen = Screen::Timeline,
            Action::HistoryBack => self.go_back(),
            Action::HistoryForward => self.go_forward(),
            _ => {}
        }
    }

    /// Enter (or a click) on a cell: the step's span on the timeline, the
    /// cursor on the rank's part of the critical path (its first row
    /// there, else the path's first), every row of the path marked and
    /// `n` / `N` walking along it.
    fn open_step_cell(&mut self) {
        let Some(l) = self.data() else { return };
        let (Some(o), Some(v)) = (self.capture.steps_now().cloned(), &self.capture.steps_view)
        else {
            return;
        };
        let Some((s, r)) = v.target(&o) else {
            return;
        };
        let device = v.devices[r];
        let (span, path) = (o.accounts[s].span, &o.paths[s]);
        let mut events: Vec<(EventRef, bool)> = Vec::new();
        for seg in &path.path {
            let Some(e) = seg.event else { continue };
            let e = match e {
                PathEvent::Gpu(row) => EventRef::Gpu(row),
                PathEvent::Api(row) => EventRef::Api(row),
                PathEvent::Osrt(row) => EventRef::Osrt(row),
            };
            if events.last().is_none_or(|(last, _)| *last != e) {
                events.push((e, seg.device == Some(device)));
            }
        }
        let at = events.iter().position(|&(_, mine)| mine).unwrap_or(0);
        let words = path_words(&l.profile, path);
        let step = s + 1;
        if events.is_empty() {
            let here = self.capture.place(self.chrome.screen);
            self.capture.history.push(here);
            self.chrome.screen = Screen::Timeline;
            self.capture.view.show(span.0, span.1);
            self.say(format!("step {step}: {words}"));
            return;
        }
        let source = JumpSource::Path {
            step,
            events: events.into_iter().map(|(e, _)| e).collect(),
        };
        self.go(Target::Step(source, at), true);
        self.capture.view.show(span.0, span.1);
        self.say(format!("step {step}: {words} (n / N: along the path)"));
    }

    /// A click on the view: the cell under the pointer gets the cursor,
    /// then acts as Enter.
    pub(super) fn click_steps(&mut self, x: u16, y: u16) {
        let (area, cw) = (
            self.chrome.layout.steps_cells,
            self.chrome.layout.steps_cell_width.max(1),
        );
        let Some(v) = self.capture.steps_view.as_mut() else {
            return;
        };
        if !area.contains(ratatui::layout::Position::new(x, y)) {
            return;
        }
        let row = v.rows_scroll.row_at((y - area.y) as usize);
        let col = v.cols_scroll.row_at(((x - area.x) / cw) as usize);
        if let (Some(row), Some(col)) = (row, col) {
            v.put_cursor(row, col);
            self.apply(Action::Accept);
        }
    }
}
