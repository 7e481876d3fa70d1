//! Moving around the timeline: what each timeline action does to the view,
//! the cursor and the selection.

use super::go::one_hit_per_instance;
use super::{App, JumpSource, Overlay, Pick};
use crate::tui::action::Action;
use crate::tui::capture::time::{self, From};
use crate::tui::data::Loaded;
use crate::tui::finder::EntryKind;
use crate::tui::lanes::LaneKind;
use crate::tui::panel::PanelKind;
use crate::tui::scroll::Scroll;
use crate::tui::selection::{EventRef, Target};
use crate::tui::timescale::View;

impl App {
    pub(super) fn apply_timeline(&mut self, a: Action) {
        let Some(l) = self.data() else {
            if a == Action::Messages {
                self.open_messages();
            }
            return;
        };
        let needs_analysis = matches!(
            a,
            Action::NextBigEvent
                | Action::PrevBigEvent
                | Action::BigEventList
                | Action::BehindList
                | Action::OpenFinder
                | Action::FocusMode
                | Action::StragglerMap
                | Action::ExportTrace
                | Action::StatsView
                | Action::AddBookmark
                | Action::Bookmarks
        );
        if needs_analysis && !l.complete {
            self.say("still matching collectives across ranks: a moment");
            self.session.pending_action = Some(a);
            return;
        }
        let height = self.capture.lanes.scroll.visible.max(2) as isize - 1;
        let view = &mut self.capture.view;
        match a {
            Action::Legend => self.chrome.overlay = Overlay::Legend(Scroll::default()),
            Action::PanLeft => view.pan(-0.25),
            Action::PanRight => view.pan(0.25),
            Action::ZoomIn => view.zoom(0.5),
            Action::ZoomOut => view.zoom(2.0),
            Action::LaneUp => self.capture.lanes.move_cursor(-1),
            Action::LaneDown => self.capture.lanes.move_cursor(1),
            Action::PageUp => self.capture.lanes.move_cursor(-height),
            Action::PageDown => self.capture.lanes.move_cursor(height),
            Action::FitAll => {
                if let Some((a, b)) = l.span {
                    *view = View::fit(a, b);
                }
            }
            Action::ZoomToSelection => self.zoom_to_selection(),
            Action::GotoTime => {
                self.chrome.overlay = Overlay::GotoTime {
                    input: String::new(),
                }
            }
            Action::Home => {
                if let Some((a, _)) = l.span {
                    view.t0 = a as f64 - view.span * 0.02;
                }
            }
            Action::End => {
                if let Some((_, b)) = l.span {
                    view.t0 = b as f64 - view.span * 0.98;
                }
            }
            Action::NextEvent => self.step_event(&l, true),
            Action::PrevEvent => self.step_event(&l, false),
            Action::SelectUnderCursor => self.select_under_cursor(&l),
            Action::ClearSelection if !self.capture.range.is_empty() => self.clear_range(),
            Action::ClearSelection => {
                let c = &mut self.capture;
                let focus = c.lanes.focus;
                c.lanes.focus = false;
                c.select(None, false);
                if focus {
                    c.rebuild_rows();
                }
            }
            Action::ToggleRelativeTime => self.cycle_time(&l),
            Action::MinDuration => self.cycle_min_duration(),
            Action::KernelNames => self.switch_kernel_names(),
            Action::ToggleCollapse => {
                let lanes = &mut self.capture.lanes;
                match lanes.at_cursor().filter(|row| row.collapsible) {
                    Some(row) => {
                        let k = row.kind;
                        if !lanes.collapsed.remove(&k) {
                            lanes.collapsed.insert(k);
                        }
                        self.capture.rebuild_rows();
                    }
                    None => self.say(
                        "this row cannot collapse: host and device rows (▾) and API rows with NVTX can",
                    ),
                }
            }
            Action::NextOccurrence => self.step_occurrence(&l, true),
            Action::PrevOccurrence => self.step_occurrence(&l, false),
            Action::NextBigEvent => self.step_big(&l, true),
            Action::PrevBigEvent => self.step_big(&l, false),
            Action::BehindList => self.chrome.overlay = Overlay::Behind(Pick::default()),
            Action::BigEventList => {
                if l.top_skews.is_empty() {
                    self.say("no collective matched across ranks in this capture");
                } else {
                    self.chrome.overlay = Overlay::BigEvents(Pick::default());
                }
            }
            Action::FocusMode => {
                if self.capture.instance().is_none() {
                    self.say("focus mode needs a selected collective (Enter on an NCCL kernel)");
                } else {
                    let lanes = &mut self.capture.lanes;
                    lanes.focus = !lanes.focus;
                    lanes.cursor = 0;
                    lanes.scroll.top = 0;
                    self.capture.rebuild_rows();
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
                self.chrome.overlay = Overlay::Finder {
                    query: String::new(),
                    pick: Pick::default(),
                }
            }
            Action::Messages => self.open_messages(),
            Action::CopyReference => self.copy_reference(),
            Action::ExportTrace => self.export_trace(&l),
            Action::NvtxTree => self.open_nvtx_tree(&l),
            Action::AddBookmark => self.ask_bookmark_name(),
            Action::Bookmarks => self.open_bookmarks(),
            Action::RangeStart => self.mark_range(true, None),
            Action::RangeEnd => self.mark_range(false, None),
            Action::PanelRange => self.toggle_panel(PanelKind::Range),
            Action::StatsView => self.open_stats(),
            Action::StragglerMap => self.open_straggler_map(&l),
            Action::StepsView => self.open_steps(),
            Action::SwitchCapture => self.switch_capture(),
            _ => {}
        }
    }

    /// The duration of one timeline cell (ns): how near the cursor an
    /// event must be to count as under it.
    fn cell_ns(&self) -> i64 {
        let v = &self.capture.view;
        (v.span / self.chrome.layout.timeline_width.max(1) as f64).ceil() as i64
    }

    fn step_event(&mut self, l: &Loaded, forward: bool) {
        let c = &self.capture;
        let Some(row) = c.lanes.at_cursor() else {
            return;
        };
        let kind = row.kind;
        if time::track(l, kind).is_none() {
            self.say("this row has no events to step through; move to a stream, API or NVTX row");
            return;
        }
        let on_row = |e: &EventRef| crate::tui::lanes::event_on_row(&l.profile, &l.index, kind, *e);
        let from = match c.selection.filter(on_row) {
            Some(e) => From::Event(e),
            None => From::Time(c.view.center() as i64),
        };
        match time::step(l, kind, from, forward, c.show.min_dur) {
            Some(e) => self.capture.select(Some(e), true),
            None => self.say(format!(
                "no {} event on this row",
                if forward { "later" } else { "earlier" }
            )),
        }
    }

    fn select_under_cursor(&mut self, l: &Loaded) {
        let c = &self.capture;
        let Some(kind) = c.lanes.at_cursor().map(|r| r.kind) else {
            return;
        };
        let t = c.view.center() as i64;
        let min = c.show.min_dur;
        match time::event_at(l, kind, t, self.cell_ns(), min) {
            Some(hit) => self.capture.select(Some(hit.event), false),
            None => match time::nearest(l, kind, t, min) {
                // Nothing under the cursor: the nearest event of the lane,
                // brought into view.
                Some(e) => {
                    self.capture.select(Some(e), true);
                    self.say("nothing under the cursor: selected the nearest");
                }
                None => self.say("no events on this row"),
            },
        }
    }

    pub(super) fn step_occurrence(&mut self, l: &Loaded, forward: bool) {
        let c = &self.capture;
        let next = |at: Option<usize>, n: usize| match at {
            Some(i) if forward => (i + 1 < n).then_some(i + 1),
            Some(i) => i.checked_sub(1),
            None => (n > 0).then_some(0),
        };
        let (source, at) = match c.jump.clone() {
            None => {
                self.say("nothing to step through: select a collective or use the finder (/)");
                return;
            }
            Some(JumpSource::Group(g)) => {
                let n = l.analysis.matching.groups[g].instances();
                let here = c.instance().filter(|&(sg, _)| sg == g).map(|(_, k)| k);
                (JumpSource::Group(g), next(here, n))
            }
            Some(source) => {
                let events = source.events().unwrap_or_default();
                let at = next(self.finder_position(events), events.len());
                (source, at)
            }
        };
        let what = match source {
            JumpSource::Group(_) => "instance",
            JumpSource::Finder { .. } => "occurrence",
            JumpSource::Path { .. } => "row of the critical path",
        };
        match at {
            Some(i) => self.go(Target::Step(source, i), true),
            None => self.say(format!(
                "no {} {what}",
                if forward { "next" } else { "previous" }
            )),
        }
    }

    fn step_big(&mut self, l: &Loaded, forward: bool) {
        if l.big_events.is_empty() {
            self.say("no big start-skew events in this capture");
            return;
        }
        let cur = self.capture.instance().and_then(|(g, k)| {
            l.big_events
                .iter()
                .position(|e| e.group == g && e.instance == k)
        });
        // With nothing selected, "next" starts from the left edge of the view.
        let here = self.capture.view.t0 as i64;
        let n = l.big_events.len();
        let next = match cur {
            Some(i) if forward => (i + 1 < n).then_some(i + 1),
            Some(i) => i.checked_sub(1),
            None if forward => l.big_events.iter().position(|e| e.start > here).or(Some(0)),
            None => l
                .big_events
                .iter()
                .rposition(|e| e.start < here)
                .or(Some(n - 1)),
        };
        match next {
            Some(i) => {
                let e = &l.big_events[i];
                self.go_instance(e.group, e.instance);
            }
            None => self.say(format!(
                "no {} big event",
                if forward { "next" } else { "previous" }
            )),
        }
    }

    pub(super) fn jump_to_entry(&mut self, l: &Loaded, e: usize) {
        let entry = &l.entries[e];
        let p = &l.profile;
        let mut events: Vec<(i64, EventRef)> = match entry.kind {
            EntryKind::Group(g) => {
                if l.analysis.matching.groups[g].instances() > 0 {
                    self.go_instance(g, 0);
                } else {
                    self.capture.jump = Some(JumpSource::Group(g));
                }
                return;
            }
            EntryKind::Device(d) => {
                self.show_device_row(d);
                return;
            }
            EntryKind::Host(h) => {
                // The host's first device row, under its host header.
                if let Some(d) = crate::analysis::completeness::device_order(p)
                    .into_iter()
                    .find(|&d| p.devices[d as usize].host == h)
                {
                    self.show_device_row(d);
                }
                return;
            }
            EntryKind::Kernel(names, s) => (0..p.gpu.len())
                .filter(|&i| p.gpu.name_as(i, names) == s)
                .map(|i| (time::event_span(l, EventRef::Gpu(i)).0, EventRef::Gpu(i)))
                .collect(),
            EntryKind::Nvtx(s) => (0..p.nvtx.len())
                .filter(|&i| p.nvtx.name(i) == s && p.nvtx.is_range(i))
                .map(|i| (time::event_span(l, EventRef::Nvtx(i)).0, EventRef::Nvtx(i)))
                .collect(),
        };
        events.sort_by_key(|e| e.0);
        let events = one_hit_per_instance(l, events.into_iter().map(|e| e.1).collect());
        if !events.is_empty() {
            let source = JumpSource::Finder {
                label: entry.label.clone(),
                events,
            };
            self.go(Target::Step(source, 0), true);
        }
    }

    /// Puts the cursor on a device's header row, expanding its host.
    fn show_device_row(&mut self, d: crate::profile::DevId) {
        let Some(l) = self.data() else { return };
        let host = l.profile.devices[d as usize].host;
        let c = &mut self.capture;
        if c.lanes.collapsed.remove(&LaneKind::Host(host)) {
            c.rebuild_rows();
        }
        if let Some(pos) = c.lanes.find(LaneKind::Device(d)) {
            c.lanes.put_cursor(pos);
        }
    }

    pub(super) fn goto_time(&mut self, input: &str) {
        let Some(l) = self.data() else { return };
        // The ruler reads UTC: so does `g` (a time from a job's log).
        if let Some(origin) = self.utc_origin(&l) {
            let near = origin.saturating_add(self.capture.view.center() as i64);
            match crate::tui::wallclock_input::parse_wall_clock(input, near) {
                Ok(utc) => {
                    let t = utc.saturating_sub(origin) as f64;
                    self.capture.view.center_on(t);
                    if let Some((a, b)) = l.span
                        && !(a as f64..=b as f64).contains(&t)
                    {
                        self.say(format!(
                            "{} is outside the capture: the view stops at its edge",
                            input.trim()
                        ));
                    }
                }
                Err(e) => self.say(e),
            }
            return;
        }
        let Ok(s) = input.trim().trim_end_matches('s').trim().parse::<f64>() else {
            self.say(format!("not a time in seconds: {input}"));
            return;
        };
        let base = if self.chrome.ruler == super::Ruler::Relative {
            l.span.map_or(0, |s| s.0) as f64
        } else {
            0.0
        };
        self.capture.view.center_on(base + s * 1e9);
    }
}
