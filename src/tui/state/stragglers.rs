//! Opening the straggler map (`H`) and what each of its keys does. The
//! matrix is derived here, once per group, from the skew analysis; the
//! view only reads it.

use super::{App, EventRef, Screen};
use crate::analysis::stragglers::{default_group, straggler_map};
use crate::tui::action::Action;
use crate::tui::data::Loaded;
use crate::tui::selection::{JumpSource, Target};
use crate::tui::stragglers::StragglerView;

impl App {
    /// The group the map shows: the selected instance's, else the group
    /// `n`/`N` step through, else the first with big events (or the
    /// largest).
    fn map_group(&self, l: &Loaded) -> Option<usize> {
        let c = &self.capture;
        c.instance()
            .map(|(g, _)| g)
            .or(match c.jump {
                Some(JumpSource::Group(g)) => Some(g),
                _ => None,
            })
            .or_else(|| default_group(&l.analysis.skews))
    }

    /// `H` on the timeline: the map of the group, its cursor on the
    /// selected instance and rank when there is one.
    pub(super) fn open_straggler_map(&mut self, l: &Loaded) {
        let Some(g) = self.map_group(l) else {
            self.say("no collective matched across ranks in this capture");
            return;
        };
        let Some(skew) = l.analysis.skews.iter().find(|s| s.group == g) else {
            return;
        };
        let c = &mut self.capture;
        if c.straggler.as_ref().is_none_or(|v| v.map.group != g) {
            let group = &l.analysis.matching.groups[g];
            let hosts = group
                .devices
                .iter()
                .map(|&d| l.profile.devices[d as usize].host)
                .collect();
            let map = straggler_map(group, skew);
            let never = (0..map.ranks())
                .map(|r| crate::tui::behind::never_launched_from(&l.behind, g, r))
                .collect();
            let mut view = StragglerView::new(std::sync::Arc::new(map), hosts);
            view.never = never;
            c.straggler = Some(view);
        }
        if let (Some(v), Some((sg, k))) = (c.straggler.as_mut(), c.facts.instance)
            && sg == g
        {
            let col = v.map.instances.iter().position(|&i| i == k);
            let rank = match c.selection {
                Some(EventRef::Gpu(r)) => l.analysis.matching.groups[g]
                    .members(k)
                    .find(|m| m.1 == r)
                    .map(|m| m.0),
                _ => None,
            };
            if let Some(c) = col {
                let row = rank.map_or(v.row, |r| v.row_of_rank(r));
                v.put_cursor(row, c);
            }
        }
        self.chrome.screen = Screen::Stragglers;
    }

    pub(super) fn apply_stragglers(&mut self, a: Action) {
        let Some(l) = self.data() else { return };
        let Some(v) = self.capture.straggler.as_mut() else {
            self.chrome.screen = Screen::Timeline;
            return;
        };
        match a {
            Action::Up => v.move_row(-1),
            Action::Down => v.move_row(1),
            Action::PageUp => v.move_row(-(v.rows_scroll.visible.max(2) as isize - 1)),
            Action::PageDown => v.move_row(v.rows_scroll.visible.max(2) as isize - 1),
            Action::PanLeft => v.move_col(-1),
            Action::PanRight => v.move_col(1),
            Action::Home => v.move_col(-(v.map.columns() as isize)),
            Action::End => v.move_col(v.map.columns() as isize),
            Action::SortList => v.toggle_sort(),
            Action::ToggleCollapse => v.toggle_collapse(),
            Action::Accept => self.open_map_cell(&l),
            Action::Cancel | Action::StragglerMap => self.chrome.screen = Screen::Timeline,
            Action::HistoryBack => self.go_back(),
            Action::HistoryForward => self.go_forward(),
            _ => {}
        }
    }

    /// Enter (or a click) on a cell: the instance on the timeline, with
    /// the cell's rank selected and its lane in view.
    fn open_map_cell(&mut self, l: &Loaded) {
        let v = self.capture.straggler.as_ref();
        let Some((k, r)) = v.and_then(|v| v.target()) else {
            self.say("no instance under the cursor");
            return;
        };
        let g = v.map_or(0, |v| v.map.group);
        let Some(row) = l.analysis.matching.groups[g].row(k, r) else {
            self.say("this rank's capture does not cover the instance");
            return;
        };
        self.capture.jump = Some(JumpSource::Group(g));
        self.go(Target::Event(EventRef::Gpu(row)), true);
    }

    /// A click on the map: the cell under the pointer gets the cursor, then
    /// acts as Enter.
    pub(super) fn click_map(&mut self, x: u16, y: u16) {
        let Some(v) = self.capture.straggler.as_mut() else {
            return;
        };
        let area = self.chrome.layout.map_cells;
        if !area.contains(ratatui::layout::Position::new(x, y)) {
            return;
        }
        let row = v.rows_scroll.row_at((y - area.y) as usize);
        let col = v.cols_scroll.row_at((x - area.x) as usize);
        if let (Some(row), Some(col)) = (row, col) {
            v.put_cursor(row, col);
            self.apply(Action::Accept);
        }
    }
}
