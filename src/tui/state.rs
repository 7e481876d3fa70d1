//! The UI state and what each action does to it. Views read this; nothing
//! here draws.

use super::action::{Action, Mode};
use super::data::{LoadMsg, Loaded};
use super::finder::{self, EntryKind};
use super::keymap::Keymap;
use super::lanes::{self, LaneKind, LaneRow};
use super::timescale::View;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::collections::HashSet;
use std::sync::Arc;

/// A selected event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRef {
    Gpu(usize),
    Api(usize),
    Nvtx(usize),
}

/// What `n` / `N` step through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JumpSource {
    /// The instances of a collective group.
    Group(usize),
    /// Occurrences of a finder entry (label, rows in time order).
    Finder {
        label: String,
        events: Vec<EventRef>,
    },
}

/// Which side panels are open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Panels {
    pub skew: bool,
    pub launch: bool,
    pub overlap: bool,
    pub summary: bool,
    pub details: bool,
}

impl Panels {
    pub fn any(&self) -> bool {
        self.skew || self.launch || self.overlap || self.summary || self.details
    }
}

/// A popup over the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help { scroll: usize },
    Legend,
    Finder { query: String, selected: usize },
    BigEvents { selected: usize },
    GotoTime { input: String },
}

/// Loading progress.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    pub stage: String,
    pub file: usize,
    pub files: usize,
    pub rows: usize,
}

/// The whole UI state.
pub struct App {
    pub keymap: Keymap,
    pub loaded: Option<Arc<Loaded>>,
    pub progress: Progress,
    pub file_errors: Vec<String>,
    /// Said in the status line (demo profile, keymap in use…).
    pub banner: Option<String>,
    pub view: View,
    pub relative_time: bool,
    pub rows: Vec<LaneRow>,
    pub collapsed: HashSet<LaneKind>,
    pub cursor: usize,
    pub scroll: usize,
    pub selection: Option<EventRef>,
    /// (group, instance) of the selection, when it is a matched collective.
    pub instance: Option<(usize, usize)>,
    pub jump: Option<JumpSource>,
    pub panels: Panels,
    pub focus: bool,
    pub overlay: Overlay,
    pub message: Option<String>,
    pub no_color: bool,
    /// `--goto GROUP:INSTANCE`, applied when loading ends.
    pub pending_goto: Option<String>,
    pub quit: bool,
    /// Why the UI had to stop, printed after the terminal is restored.
    pub fatal: Option<String>,
    /// Something changed since the last frame.
    pub dirty: bool,
    /// Timeline columns in the last frame (for cursor maths).
    pub timeline_width: usize,
    /// Timeline rows visible in the last frame.
    pub timeline_height: usize,
}

impl App {
    pub fn new(keymap: Keymap, no_color: bool) -> App {
        App {
            keymap,
            loaded: None,
            progress: Progress {
                stage: "starting".into(),
                ..Default::default()
            },
            file_errors: Vec::new(),
            banner: None,
            view: View { t0: 0.0, span: 1.0 },
            relative_time: false,
            rows: Vec::new(),
            collapsed: HashSet::new(),
            cursor: 0,
            scroll: 0,
            selection: None,
            instance: None,
            jump: None,
            panels: Panels::default(),
            focus: false,
            overlay: Overlay::None,
            message: None,
            no_color,
            pending_goto: None,
            quit: false,
            fatal: None,
            dirty: true,
            timeline_width: 100,
            timeline_height: 30,
        }
    }

    /// The input mode, from the open overlay.
    pub fn mode(&self) -> Mode {
        match self.overlay {
            Overlay::None => Mode::Timeline,
            Overlay::Finder { .. } | Overlay::GotoTime { .. } => Mode::Finder,
            Overlay::BigEvents { .. } => Mode::Panel,
            Overlay::Help { .. } | Overlay::Legend => Mode::Help,
        }
    }

    pub fn on_load(&mut self, msg: LoadMsg) {
        self.dirty = true;
        match msg {
            LoadMsg::Progress {
                stage,
                file,
                files,
                rows,
            } => {
                self.progress = Progress {
                    stage,
                    file,
                    files,
                    rows,
                }
            }
            LoadMsg::FileError(e) => self.file_errors.push(e),
            LoadMsg::Done(loaded) => {
                if let Some(first) = self.file_errors.first() {
                    let more = self.file_errors.len() - 1;
                    self.message = Some(if more > 0 {
                        format!("{first} (and {more} more)")
                    } else {
                        first.clone()
                    });
                }
                self.set_loaded(Arc::from(loaded));
            }
            LoadMsg::Analysed(loaded) => self.set_analysed(Arc::from(loaded)),
        }
    }

    /// Swaps in the fully analysed data, keeping the view and selection,
    /// then applies `--goto`.
    pub fn set_analysed(&mut self, loaded: Arc<Loaded>) {
        if self.loaded.is_none() {
            self.set_loaded(loaded);
            return;
        }
        self.loaded = Some(loaded);
        self.rebuild_rows();
        if let Some(e) = self.selection {
            self.select(e, false);
        }
        if let Some(goto) = self.pending_goto.take() {
            self.goto_instance(&goto);
        }
        self.dirty = true;
    }

    /// Installs loaded data: fits the view and applies `--goto`.
    pub fn set_loaded(&mut self, loaded: Arc<Loaded>) {
        if let Some((a, b)) = loaded.span {
            self.view = View::fit(a, b);
        }
        let complete = loaded.complete;
        self.loaded = Some(loaded);
        self.rebuild_rows();
        if complete && let Some(goto) = self.pending_goto.take() {
            self.goto_instance(&goto);
        }
        self.dirty = true;
    }

    fn goto_instance(&mut self, spec: &str) {
        let Some(l) = self.loaded.clone() else { return };
        let parsed = spec
            .rsplit_once(':')
            .and_then(|(g, k)| Some((g, k.trim().parse::<usize>().ok()?)));
        let found = parsed.and_then(|(g, k)| {
            let gi = l.analysis.matching.group(g)?;
            (k >= 1 && k <= l.analysis.matching.groups[gi].instances()).then_some((gi, k - 1))
        });
        match found {
            Some((g, k)) => {
                self.jump = Some(JumpSource::Group(g));
                self.select_instance(g, k, true);
            }
            None => {
                self.message = Some(format!(
                    "--goto {spec}: no such group:instance (see `rankline report skew`)"
                ))
            }
        }
    }

    pub fn rebuild_rows(&mut self) {
        let Some(l) = self.loaded.clone() else { return };
        self.rows = match (self.focus, self.instance) {
            (true, Some((g, k))) => lanes::focus(&l.profile, &l.analysis, &l.index, g, k),
            _ => lanes::build(&l.profile, &l.analysis, &l.index, &self.collapsed),
        };
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
        self.keep_cursor_visible();
    }

    /// Scrolls so the cursor row is on screen (after a resize too).
    pub fn keep_cursor_visible(&mut self) {
        let h = self.timeline_height.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + h {
            self.scroll = self.cursor + 1 - h;
        }
    }

    /// Handles a key press; keys go to text input in the finder and prompt.
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        self.dirty = true;
        // ctrl-c always quits, whatever the keymap says.
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        let action = self.keymap.action(self.mode(), &key);
        if action.is_none() && self.type_into_overlay(&key) {
            return;
        }
        if let Some(a) = action {
            self.message = None;
            self.apply(a);
        }
    }

    /// Mouse wheel zooms, shift+wheel pans (a bonus: nothing needs a mouse).
    pub fn on_mouse(&mut self, m: crossterm::event::MouseEvent) {
        use crossterm::event::MouseEventKind as K;
        if self.loaded.is_none() || self.overlay != Overlay::None {
            return;
        }
        let shift = m.modifiers.contains(KeyModifiers::SHIFT);
        match (m.kind, shift) {
            (K::ScrollUp, false) => self.apply(Action::ZoomIn),
            (K::ScrollDown, false) => self.apply(Action::ZoomOut),
            (K::ScrollUp, true) | (K::ScrollLeft, _) => self.apply(Action::PanLeft),
            (K::ScrollDown, true) | (K::ScrollRight, _) => self.apply(Action::PanRight),
            _ => {}
        }
    }

    fn type_into_overlay(&mut self, key: &KeyEvent) -> bool {
        let text = match &mut self.overlay {
            Overlay::Finder { query, selected } => {
                *selected = 0;
                query
            }
            Overlay::GotoTime { input } => input,
            _ => return false,
        };
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
            KeyCode::Backspace => {
                text.pop();
            }
            _ => return false,
        }
        true
    }

    /// Applies one action.
    pub fn apply(&mut self, a: Action) {
        self.dirty = true;
        if a == Action::Quit {
            self.quit = true;
            return;
        }
        match self.overlay.clone() {
            Overlay::None => self.apply_timeline(a),
            Overlay::Help { scroll } => match a {
                Action::Up => {
                    self.overlay = Overlay::Help {
                        scroll: scroll.saturating_sub(1),
                    }
                }
                Action::Down => self.overlay = Overlay::Help { scroll: scroll + 1 },
                Action::Cancel | Action::Help | Action::Accept => self.overlay = Overlay::None,
                _ => {}
            },
            Overlay::Legend => {
                if matches!(
                    a,
                    Action::Cancel | Action::Accept | Action::Legend | Action::Help
                ) {
                    self.overlay = Overlay::None;
                }
            }
            Overlay::Finder { query, selected } => self.apply_finder(a, query, selected),
            Overlay::BigEvents { selected } => self.apply_big_list(a, selected),
            Overlay::GotoTime { input } => match a {
                Action::Accept => {
                    self.overlay = Overlay::None;
                    self.goto_time(&input);
                }
                Action::Cancel => self.overlay = Overlay::None,
                _ => {}
            },
        }
    }

    fn apply_timeline(&mut self, a: Action) {
        let Some(l) = self.loaded.clone() else {
            if a == Action::Help {
                self.overlay = Overlay::Help { scroll: 0 };
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
        );
        if needs_analysis && !l.complete {
            self.message = Some("still matching collectives across ranks: a moment".into());
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
            Action::ToggleRelativeTime => self.relative_time = !self.relative_time,
            Action::ToggleCollapse => {
                if let Some(row) = self.rows.get(self.cursor)
                    && row.collapsible
                {
                    let k = row.kind;
                    if !self.collapsed.remove(&k) {
                        self.collapsed.insert(k);
                    }
                    self.rebuild_rows();
                }
            }
            Action::NextOccurrence => self.step_occurrence(&l, true),
            Action::PrevOccurrence => self.step_occurrence(&l, false),
            Action::NextBigEvent => self.step_big(&l, true),
            Action::PrevBigEvent => self.step_big(&l, false),
            Action::BigEventList => {
                if l.big_events.is_empty() {
                    self.message = Some("no big start-skew events in this capture".into());
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
            Action::PanelSkew => self.panels.skew = !self.panels.skew,
            Action::PanelLaunch => self.panels.launch = !self.panels.launch,
            Action::PanelOverlap => self.panels.overlap = !self.panels.overlap,
            Action::PanelSummary => self.panels.summary = !self.panels.summary,
            Action::PanelDetails => self.panels.details = !self.panels.details,
            Action::JumpToLaunch => self.jump_to_launch(&l),
            Action::OpenFinder => {
                self.overlay = Overlay::Finder {
                    query: String::new(),
                    selected: 0,
                }
            }
            _ => {}
        }
    }

    fn apply_finder(&mut self, a: Action, query: String, selected: usize) {
        let Some(l) = self.loaded.clone() else {
            self.overlay = Overlay::None;
            return;
        };
        let hits = finder::search(&l.entries, &query, 200);
        match a {
            Action::Up => {
                self.overlay = Overlay::Finder {
                    query,
                    selected: selected.saturating_sub(1),
                }
            }
            Action::Down => {
                let s = (selected + 1).min(hits.len().saturating_sub(1));
                self.overlay = Overlay::Finder { query, selected: s };
            }
            Action::Cancel => self.overlay = Overlay::None,
            Action::Accept => {
                self.overlay = Overlay::None;
                if let Some(&e) = hits.get(selected) {
                    self.jump_to_entry(&l, e);
                }
            }
            _ => {}
        }
    }

    fn apply_big_list(&mut self, a: Action, selected: usize) {
        let Some(l) = self.loaded.clone() else { return };
        let top = l.top_big_events();
        match a {
            Action::Up => {
                self.overlay = Overlay::BigEvents {
                    selected: selected.saturating_sub(1),
                }
            }
            Action::Down => {
                self.overlay = Overlay::BigEvents {
                    selected: (selected + 1).min(top.len().saturating_sub(1)),
                }
            }
            Action::Cancel => self.overlay = Overlay::None,
            Action::Accept => {
                self.overlay = Overlay::None;
                if let Some(&i) = top.get(selected) {
                    let e = &l.big_events[i];
                    self.jump = Some(JumpSource::Group(e.group));
                    self.select_instance(e.group, e.instance, true);
                }
            }
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
            let rows = l.analysis.matching.groups[g].instance_rows(k);
            let a = rows
                .iter()
                .map(|&r| l.profile.gpu.start[r as usize])
                .min()?;
            let b = rows.iter().map(|&r| l.profile.gpu.end[r as usize]).max()?;
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
            let len = (b - a) as f64;
            // A collective is shown whole and large enough to read its ranks;
            // a single event keeps the zoom unless it does not fit.
            let too_small = inst.is_some() && len < self.view.span / 20.0;
            if too_small || len > self.view.span * 0.8 {
                self.view.show(a, b);
            } else {
                self.view.center_on((a + b) as f64 / 2.0);
            }
        }
        self.move_cursor_to_event(&l, e);
    }

    pub fn select_instance(&mut self, g: usize, k: usize, center: bool) {
        let Some(l) = self.loaded.clone() else { return };
        let group = &l.analysis.matching.groups[g];
        // Select the late rank's kernel: the one the question is about.
        let late =
            group.instance_rows(k)[crate::analysis::skew::instance_skew(&l.profile, group, k).late];
        self.select(EventRef::Gpu(late as usize), center);
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
    fn row_events(l: &Loaded, kind: LaneKind) -> Option<(super::index::Track<'_>, MakeEvent)> {
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
                track.start[k] - t
            } else if track.end[k] < t {
                t - track.end[k]
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
            None => self.message = Some("nothing under the cursor".into()),
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
                    Some(k) => self.select_instance(g, k, true),
                    None => {
                        self.message = Some(format!(
                            "no {} instance",
                            if forward { "next" } else { "previous" }
                        ))
                    }
                }
            }
            Some(JumpSource::Finder { events, .. }) => {
                let cur = self
                    .selection
                    .and_then(|s| events.iter().position(|&e| e == s));
                let next = match cur {
                    Some(i) if forward => (i + 1 < events.len()).then_some(i + 1),
                    Some(i) => i.checked_sub(1),
                    None => (!events.is_empty()).then_some(0),
                };
                match next {
                    Some(i) => self.select(events[i], true),
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
                self.select_instance(e.group, e.instance, true);
            }
            None => {
                self.message = Some(format!(
                    "no {} big event",
                    if forward { "next" } else { "previous" }
                ))
            }
        }
    }

    fn jump_to_entry(&mut self, l: &Loaded, e: usize) {
        let entry = &l.entries[e];
        let p = &l.profile;
        let mut events: Vec<(i64, EventRef)> = match entry.kind {
            EntryKind::Group(g) => {
                self.jump = Some(JumpSource::Group(g));
                if l.analysis.matching.groups[g].instances() > 0 {
                    self.select_instance(g, 0, true);
                }
                return;
            }
            EntryKind::Kernel(s) => (0..p.gpu.len())
                .filter(|&i| p.gpu.name[i] == s)
                .map(|i| (p.gpu.start[i], EventRef::Gpu(i)))
                .collect(),
            EntryKind::Nvtx(s) => (0..p.nvtx.len())
                .filter(|&i| p.nvtx.name[i] == s && p.nvtx.is_range(i))
                .map(|i| (p.nvtx.start[i], EventRef::Nvtx(i)))
                .collect(),
        };
        events.sort_by_key(|e| e.0);
        let events: Vec<EventRef> = events.into_iter().map(|e| e.1).collect();
        if let Some(&first) = events.first() {
            self.jump = Some(JumpSource::Finder {
                label: entry.label.clone(),
                events,
            });
            self.select(first, true);
        }
    }

    fn jump_to_launch(&mut self, l: &Loaded) {
        match self.selection {
            Some(EventRef::Gpu(r)) if l.profile.gpu.launch[r] != crate::profile::NONE => {
                self.select(EventRef::Api(l.profile.gpu.launch[r] as usize), true);
            }
            Some(EventRef::Gpu(_)) => {
                self.message = Some("this kernel has no launch call in the capture".into());
            }
            _ => self.message = Some("select a kernel first".into()),
        }
    }

    fn goto_time(&mut self, input: &str) {
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

/// Whether timeline row `kind` shows event `e` (a device row shows all its
/// GPU events).
pub fn event_on_row(l: &Loaded, kind: LaneKind, e: EventRef) -> bool {
    let p = &l.profile;
    match (kind, e) {
        (LaneKind::Stream(lane), EventRef::Gpu(r)) => p.gpu.lane[r] == lane,
        (LaneKind::Device(d), EventRef::Gpu(r)) => p.lanes[p.gpu.lane[r] as usize].device == d,
        (LaneKind::Api(t), EventRef::Api(r)) => p.runtime.thread[r] == t,
        // A track's rows are in profile order: binary search.
        (LaneKind::Nvtx(tr), EventRef::Nvtx(r)) => l
            .index
            .nvtx_track(tr)
            .rows
            .is_some_and(|rs| rs.binary_search(&(r as u32)).is_ok()),
        _ => false,
    }
}

/// The row an event lives on.
pub fn row_of_event(l: &Loaded, e: EventRef) -> LaneKind {
    let p = &l.profile;
    match e {
        EventRef::Gpu(r) => LaneKind::Stream(p.gpu.lane[r]),
        EventRef::Api(r) => LaneKind::Api(p.runtime.thread[r]),
        EventRef::Nvtx(r) => {
            let t = p.nvtx.thread[r];
            l.index.nvtx_of_thread[t as usize]
                .iter()
                .map(|&tr| LaneKind::Nvtx(tr))
                .find(|&k| event_on_row(l, k, e))
                .unwrap_or(LaneKind::Api(t))
        }
    }
}

/// Turns a profile row into an event of a row's kind.
type MakeEvent = fn(usize) -> EventRef;

/// Start and end of an event.
pub fn event_span(l: &Loaded, e: EventRef) -> (i64, i64) {
    let p = &l.profile;
    match e {
        EventRef::Gpu(r) => (p.gpu.start[r], p.gpu.end[r]),
        EventRef::Api(r) => (p.runtime.start[r], p.runtime.end[r]),
        EventRef::Nvtx(r) => (p.nvtx.start[r], p.nvtx.end[r]),
    }
}
