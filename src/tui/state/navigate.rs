//! Moving around the timeline: what each timeline action does to the view,
//! the cursor and the selection.

use super::jumps::{instance_of, one_hit_per_instance};
use super::{
    App, EventRef, JumpSource, MakeEvent, Overlay, event_on_row, event_span, row_of_event,
};
use crate::tui::action::Action;
use crate::tui::data::Loaded;
use crate::tui::finder::EntryKind;
use crate::tui::lanes::LaneKind;
use crate::tui::panel::PanelKind;
use crate::tui::selection::Target;
use crate::tui::timescale::View;

impl App {
    pub(super) fn apply_timeline(&mut self, a: Action) {
        let Some(l) = self.loaded.clone() else {
            match a {
                Action::Help => self.overlay = Overlay::Help { scroll: 0 },
                Action::Messages => self.open_messages(),
                _ => {}
            }
            return;
        };
        let needs_analysis = matches!(
            a,
            Action::NextBigEvent
                | Action::PrevBigEvent
                | Action::BigEventList
                | Action::OpenFinder
                | Action::FocusMode
                | Action::StragglerMap
        );
        if needs_analysis && !l.complete {
            self.message = Some("still matching collectives across ranks: a moment".into());
            self.pending_action = Some(a);
            return;
        }
        match a {
            Action::Help => self.overlay = Overlay::Help { scroll: 0 },
            Action::Legend => self.overlay = Overlay::Legend,
            Action::PanLeft => self.view.pan(-0.25),
            Action::PanRight => self.view.pan(0.25),
            Action::ZoomIn => self.view.zoom(0.5),
            Action::ZoomOut => self.view.zoom(2.0),
            Action::LaneUp => self.move_cursor(-1),
            Action::LaneDown => self.move_cursor(1),
            Action::PageUp => self.move_cursor(-(self.timeline_height.max(2) as isize - 1)),
            Action::PageDown => self.move_cursor(self.timeline_height.max(2) as isize - 1),
            Action::FitAll => {
                if let Some((a, b)) = l.span {
                    self.view = View::fit(a, b);
                }
            }
            Action::ZoomToSelection => match self.selection_span(&l) {
                Some((a, b)) => self.view.show(a, b),
                None => self.message = Some("nothing selected".into()),
            },
            Action::GotoTime => {
                self.overlay = Overlay::GotoTime {
                    input: String::new(),
                }
            }
            Action::Home => {
                if let Some((a, _)) = l.span {
                    self.view.t0 = a as f64 - self.view.span * 0.02;
                }
            }
            Action::End => {
                if let Some((_, b)) = l.span {
                    self.view.t0 = b as f64 - self.view.span * 0.98;
                }
            }
            Action::NextEvent => self.step_event(&l, true),
            Action::PrevEvent => self.step_event(&l, false),
            Action::SelectUnderCursor => self.select_under_cursor(&l),
            Action::ClearSelection => {
                self.selection = None;
                self.instance = None;
                if self.focus {
                    self.focus = false;
                    self.rebuild_rows();
                }
            }
            Action::ToggleRelativeTime => self.cycle_time(&l),
            Action::ToggleCollapse => {
                if let Some(row) = self.rows.get(self.cursor)
                    && row.collapsible
                {
                    let k = row.kind;
                    if !self.collapsed.remove(&k) {
                        self.collapsed.insert(k);
                    }
                    self.rebuild_rows();
                } else {
                    self.message = Some(
                        "this row cannot collapse: host and device rows (▾) and API rows with NVTX can"
                            .into(),
                    );
                }
            }
            Action::NextOccurrence => self.step_occurrence(&l, true),
            Action::PrevOccurrence => self.step_occurrence(&l, false),
            Action::NextBigEvent => self.step_big(&l, true),
            Action::PrevBigEvent => self.step_big(&l, false),
            Action::BigEventList => {
                if l.top_skews.is_empty() {
                    self.message =
                        Some("no collective matched across ranks in this capture".into());
                } else {
                    self.overlay = Overlay::BigEvents { selected: 0 };
                }
            }
            Action::FocusMode => {
                if self.instance.is_none() {
                    self.message = Some(
                        "focus mode needs a selected collective (Enter on an NCCL kernel)".into(),
                    );
                } else {
                    self.focus = !self.focus;
                    self.cursor = 0;
                    self.scroll = 0;
                    self.rebuild_rows();
                }
            }
            Action::PanelSkew => self.toggle_panel(PanelKind::Skew),
            Action::PanelLaunch => self.toggle_panel(PanelKind::Launch),
            Action::PanelOverlap => self.toggle_panel(PanelKind::Overlap),
            Action::PanelSummary => self.toggle_panel(PanelKind::Summary),
            Action::PanelDetails => self.toggle_panel(PanelKind::Details),
            Action::PanelDiff => self.toggle_panel(PanelKind::Diff),
            Action::PanelScrollUp => self.scroll_panel(false),
            Action::PanelScrollDown => self.scroll_panel(true),
            Action::FocusPanel => self.focus_panel(),
            Action::ToggleMouse => self.toggle_mouse(),
            Action::JumpToLaunch => self.jump_to_launch(&l),
            Action::HistoryBack => self.go_back(),
            Action::HistoryForward => self.go_forward(),
            Action::OpenFinder => {
                self.overlay = Overlay::Finder {
                    query: String::new(),
                    selected: 0,
                }
            }
            Action::Messages => self.open_messages(),
            Action::CopyReference => self.copy_reference(&l),
            Action::StragglerMap => self.open_straggler_map(&l),
            Action::SwitchCapture => self.switch_capture(),
            _ => {}
        }
    }

    fn move_cursor(&mut self, by: isize) {
        let n = self.rows.len();
        if n == 0 {
            return;
        }
        self.cursor = (self.cursor as isize + by).clamp(0, n as isize - 1) as usize;
        self.keep_cursor_visible();
    }

    /// Start and end of the selection (the whole instance for a collective).
    pub fn selection_span(&self, l: &Loaded) -> Option<(i64, i64)> {
        if let Some((g, k)) = self.instance {
            let times = l.analysis.matching.groups[g].instance_times(k);
            let a = times.iter().map(|t| t.0).min()?;
            let b = times.iter().map(|t| t.1).max()?;
            return Some((a, b));
        }
        self.selection.map(|e| event_span(l, e))
    }

    /// Selects an event; a matched NCCL kernel selects its whole instance.
    pub fn select(&mut self, e: EventRef, center: bool) {
        let Some(l) = self.loaded.clone() else { return };
        self.selection = Some(e);
        let inst = match e {
            EventRef::Gpu(r) => l.analysis.matching.instance_of(r),
            _ => None,
        };
        let was_focus = self.focus;
        self.instance = inst;
        if inst.is_some() && !matches!(self.jump, Some(JumpSource::Finder { .. })) {
            self.jump = inst.map(|(g, _)| JumpSource::Group(g));
        }
        if was_focus && inst.is_none() {
            self.focus = false;
        }
        if self.focus || was_focus {
            self.rebuild_rows();
        }
        if center {
            let (a, b) = self.selection_span(&l).unwrap_or_else(|| event_span(&l, e));
            let len = b as f64 - a as f64;
            // A collective is shown whole and large enough to read its ranks;
            // a single event keeps the zoom unless it does not fit.
            let too_small = inst.is_some() && len < self.view.span / 20.0;
            if too_small || len > self.view.span * 0.8 {
                self.view.show(a, b);
            } else {
                self.view.center_on((a as f64 + b as f64) / 2.0);
            }
        }
        self.move_cursor_to_event(&l, e);
    }

    /// Jumps to a collective instance (recorded in the history).
    pub fn select_instance(&mut self, g: usize, k: usize) {
        let Some(l) = self.loaded.clone() else { return };
        let group = &l.analysis.matching.groups[g];
        // Select the late rank's kernel: the one the question is about.
        let late =
            group.instance_rows(k)[crate::analysis::skew::instance_skew(&l.profile, group, k).late];
        self.jump(Target::Event(EventRef::Gpu(late as usize)), true);
    }

    fn move_cursor_to_event(&mut self, l: &Loaded, e: EventRef) {
        let want = row_of_event(l, e);
        let mut pos = self.rows.iter().position(|row| row.kind == want);
        if pos.is_none() {
            // Expand what hides it.
            let dev = match want {
                LaneKind::Stream(lane) => Some(l.profile.lanes[lane as usize].device),
                _ => None,
            };
            let mut changed = false;
            if let Some(d) = dev {
                changed |= self.collapsed.remove(&LaneKind::Device(d));
            }
            // A collapsed host hides every row of its devices and threads.
            let host = crate::tui::lanes::row_device(&l.profile, &l.index, want)
                .map(|d| l.profile.devices[d as usize].host);
            if let Some(h) = host {
                changed |= self.collapsed.remove(&LaneKind::Host(h));
            }
            if let LaneKind::Nvtx(tr) = want {
                changed |= self
                    .collapsed
                    .remove(&LaneKind::Api(l.index.nvtx_tracks[tr].thread));
            }
            if changed {
                self.rebuild_rows();
                pos = self.rows.iter().position(|row| row.kind == want);
            }
        }
        if let Some(p) = pos {
            self.cursor = p;
            self.keep_cursor_visible();
        }
    }

    /// Events of a timeline row (a time-sorted track) and how to name one.
    pub(super) fn row_events(
        l: &Loaded,
        kind: LaneKind,
    ) -> Option<(crate::tui::index::Track<'_>, MakeEvent)> {
        match kind {
            LaneKind::Stream(lane) => Some((
                l.index.gpu_track(&l.profile, lane as usize),
                EventRef::Gpu as MakeEvent,
            )),
            LaneKind::Api(t) => Some((
                l.index.api_track(&l.profile, t as usize),
                EventRef::Api as MakeEvent,
            )),
            LaneKind::Nvtx(tr) => Some((l.index.nvtx_track(tr), EventRef::Nvtx as MakeEvent)),
            _ => None,
        }
    }

    fn step_event(&mut self, l: &Loaded, forward: bool) {
        let Some(row) = self.rows.get(self.cursor) else {
            return;
        };
        let Some((track, make)) = Self::row_events(l, row.kind) else {
            self.message = Some(
                "this row has no events to step through; move to a stream, API or NVTX row".into(),
            );
            return;
        };
        let here = match self.selection.filter(|&e| self.row_holds(l, e)) {
            Some(e) => event_span(l, e).0,
            None => self.view.center() as i64,
        };
        // The track is on its file's clock.
        let here = here.saturating_sub(l.shift_ns(l.row_file(row.kind), here));
        let i = if forward {
            let i = track.start.partition_point(|&s| s <= here);
            (i < track.len()).then_some(i)
        } else {
            let i = track.start.partition_point(|&s| s < here);
            i.checked_sub(1)
        };
        match i {
            Some(i) => {
                let e = make(track.row(i));
                self.select(e, true);
            }
            None => {
                self.message = Some(format!(
                    "no {} event on this row",
                    if forward { "later" } else { "earlier" }
                ))
            }
        }
    }

    fn row_holds(&self, l: &Loaded, e: EventRef) -> bool {
        self.rows
            .get(self.cursor)
            .is_some_and(|row| event_on_row(l, row.kind, e))
    }

    fn select_under_cursor(&mut self, l: &Loaded) {
        let Some(row) = self.rows.get(self.cursor) else {
            return;
        };
        let Some((track, make)) = Self::row_events(l, row.kind) else {
            self.message = Some("no events on this row".into());
            return;
        };
        let t = self.view.center() as i64;
        let slack = (self.view.span / self.timeline_width.max(1) as f64).ceil() as i64;
        let i = track.start.partition_point(|&s| s <= t);
        // The event containing the cursor, else the nearest within one cell.
        let mut best: Option<(i64, usize)> = None;
        for k in i.saturating_sub(3)..(i + 1).min(track.len()) {
            let d = if track.start[k] > t {
                track.start[k].saturating_sub(t)
            } else if track.end[k] < t {
                t.saturating_sub(track.end[k])
            } else {
                0
            };
            if d <= slack && best.is_none_or(|b| d < b.0) {
                best = Some((d, k));
            }
        }
        match best {
            Some((_, k)) => {
                let e = make(track.row(k));
                self.select(e, false);
            }
            None => match nearest(&track, t) {
                // Nothing under the cursor: the nearest event of the lane,
                // brought into view.
                Some(k) => {
                    self.select(make(track.row(k)), true);
                    self.message = Some("nothing under the cursor: selected the nearest".into());
                }
                None => self.message = Some("no events on this row".into()),
            },
        }
    }

    fn step_occurrence(&mut self, l: &Loaded, forward: bool) {
        match self.jump.clone() {
            None => {
                self.message = Some(
                    "nothing to step through: select a collective or use the finder (/)".into(),
                )
            }
            Some(JumpSource::Group(g)) => {
                let n = l.analysis.matching.groups[g].instances();
                let k = match self.instance {
                    Some((sg, sk)) if sg == g => {
                        if forward {
                            (sk + 1 < n).then_some(sk + 1)
                        } else {
                            sk.checked_sub(1)
                        }
                    }
                    _ => (n > 0).then_some(0),
                };
                match k {
                    Some(k) => self.select_instance(g, k),
                    None => {
                        self.message = Some(format!(
                            "no {} instance",
                            if forward { "next" } else { "previous" }
                        ))
                    }
                }
            }
            Some(JumpSource::Finder { events, .. }) => {
                let cur = self.finder_position(l, &events);
                let next = match cur {
                    Some(i) if forward => (i + 1 < events.len()).then_some(i + 1),
                    Some(i) => i.checked_sub(1),
                    None => (!events.is_empty()).then_some(0),
                };
                match next {
                    Some(i) => match instance_of(l, events[i]) {
                        Some((g, k)) => self.select_instance(g, k),
                        None => self.jump(Target::Event(events[i]), true),
                    },
                    None => {
                        self.message = Some(format!(
                            "no {} occurrence",
                            if forward { "next" } else { "previous" }
                        ))
                    }
                }
            }
        }
    }

    fn step_big(&mut self, l: &Loaded, forward: bool) {
        if l.big_events.is_empty() {
            self.message = Some("no big start-skew events in this capture".into());
            return;
        }
        let cur = self.instance.and_then(|(g, k)| {
            l.big_events
                .iter()
                .position(|e| e.group == g && e.instance == k)
        });
        // With nothing selected, "next" starts from the left edge of the view.
        let here = self.view.t0 as i64;
        let next = match cur {
            Some(i) if forward => (i + 1 < l.big_events.len()).then_some(i + 1),
            Some(i) => i.checked_sub(1),
            None if forward => l.big_events.iter().position(|e| e.start > here).or(Some(0)),
            None => l
                .big_events
                .iter()
                .rposition(|e| e.start < here)
                .or(Some(l.big_events.len() - 1)),
        };
        match next {
            Some(i) => {
                let e = &l.big_events[i];
                self.jump = Some(JumpSource::Group(e.group));
                self.select_instance(e.group, e.instance);
            }
            None => {
                self.message = Some(format!(
                    "no {} big event",
                    if forward { "next" } else { "previous" }
                ))
            }
        }
    }

    pub(super) fn jump_to_entry(&mut self, l: &Loaded, e: usize) {
        let entry = &l.entries[e];
        let p = &l.profile;
        let mut events: Vec<(i64, EventRef)> = match entry.kind {
            EntryKind::Group(g) => {
                self.jump = Some(JumpSource::Group(g));
                if l.analysis.matching.groups[g].instances() > 0 {
                    self.select_instance(g, 0);
                }
                return;
            }
            EntryKind::Device(d) => {
                self.show_device_row(d);
                return;
            }
            EntryKind::Kernel(s) => (0..p.gpu.len())
                .filter(|&i| p.gpu.name(i) == s)
                .map(|i| (event_span(l, EventRef::Gpu(i)).0, EventRef::Gpu(i)))
                .collect(),
            EntryKind::Nvtx(s) => (0..p.nvtx.len())
                .filter(|&i| p.nvtx.name(i) == s && p.nvtx.is_range(i))
                .map(|i| (event_span(l, EventRef::Nvtx(i)).0, EventRef::Nvtx(i)))
                .collect(),
        };
        events.sort_by_key(|e| e.0);
        let events = one_hit_per_instance(l, events.into_iter().map(|e| e.1).collect());
        if let Some(&first) = events.first() {
            self.jump = Some(JumpSource::Finder {
                label: entry.label.clone(),
                events,
            });
            match instance_of(l, first) {
                Some((g, k)) => self.select_instance(g, k),
                None => self.jump(Target::Event(first), true),
            }
        }
    }

    /// Puts the cursor on a device's header row, expanding its host.
    fn show_device_row(&mut self, d: crate::profile::DevId) {
        let Some(l) = self.loaded.clone() else { return };
        let host = l.profile.devices[d as usize].host;
        if self.collapsed.remove(&LaneKind::Host(host)) {
            self.rebuild_rows();
        }
        if let Some(pos) = self.rows.iter().position(|r| r.kind == LaneKind::Device(d)) {
            self.cursor = pos;
            self.keep_cursor_visible();
        }
    }

    pub(super) fn goto_time(&mut self, input: &str) {
        let Some(l) = self.loaded.clone() else { return };
        let Ok(s) = input.trim().trim_end_matches('s').trim().parse::<f64>() else {
            self.message = Some(format!("not a time in seconds: {input}"));
            return;
        };
        let base = if self.relative_time {
            l.span.map_or(0, |s| s.0) as f64
        } else {
            0.0
        };
        self.view.center_on(base + s * 1e9);
    }
}

/// The event of `track` closest to time `t` (by its nearer edge).
fn nearest(track: &crate::tui::index::Track<'_>, t: i64) -> Option<usize> {
    let i = track.start.partition_point(|&s| s <= t);
    let gap = |k: usize| {
        if track.start[k] > t {
            track.start[k].saturating_sub(t)
        } else {
            t.saturating_sub(track.end[k]).max(0)
        }
    };
    [i.checked_sub(1), (i < track.len()).then_some(i)]
        .into_iter()
        .flatten()
        .min_by_key(|&k| gap(k))
}
