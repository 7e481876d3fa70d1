//! The UI state and what each action does to it. Views read this; nothing
//! here draws.

mod baseline;
mod capture;
mod clock;
mod first_screen;
mod jumps;
mod lists;
mod mouse;
mod navigate;
mod panels;
mod reference;
mod stragglers;

pub use super::selection::{EventRef, JumpSource, Panels, Place, Screen, Target};
pub use capture::{Baseline, BaselineStatus, step_starts};

use super::action::{Action, Mode};
use super::data::{LoadMsg, Loaded};
use super::finder;
use super::history::History;
use super::keymap::Keymap;
use super::lanes::{self, LaneKind, LaneRow};
use super::messages::{Level, Messages};
use super::panel::{FrameLayout, PanelView};
use super::scroll::Scroll;
use super::stragglers::StragglerView;
use super::timescale::View;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::collections::HashSet;
use std::sync::Arc;

/// A popup over the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help {
        scroll: usize,
    },
    Legend,
    Finder {
        query: String,
        selected: usize,
    },
    BigEvents {
        selected: usize,
    },
    /// The session's messages (`!`).
    Messages {
        scroll: usize,
    },
    GotoTime {
        input: String,
    },
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
    /// Every load message of the session (failed files, cache off…).
    pub messages: Messages,
    /// Said in the status line (demo profile, keymap in use…).
    pub banner: Option<String>,
    pub view: View,
    pub relative_time: bool,
    /// Ruler in UTC wall-clock time (from the capture's start stamp).
    pub utc_time: bool,
    /// The big-events list in time order instead of by skew.
    pub big_list_by_time: bool,
    /// Text for the terminal's clipboard (OSC 52), written by the loop.
    pub clipboard: Option<String>,
    pub rows: Vec<LaneRow>,
    pub collapsed: HashSet<LaneKind>,
    pub cursor: usize,
    pub scroll: usize,
    pub selection: Option<EventRef>,
    /// (group, instance) of the selection, when it is a matched collective.
    pub instance: Option<(usize, usize)>,
    pub jump: Option<JumpSource>,
    pub panels: Panels,
    /// Each panel's scroll and cursor, which one `{` `}` move, and which
    /// one has the keys.
    pub panel_view: PanelView,
    /// Where the last frame drew things, for the mouse.
    pub layout: FrameLayout,
    /// Mouse capture wanted (the loop turns it on or off to match).
    pub mouse: bool,
    pub focus: bool,
    pub overlay: Overlay,
    pub message: Option<String>,
    pub no_color: bool,
    /// `--goto GROUP:INSTANCE`, applied when loading ends.
    pub pending_goto: Option<String>,
    /// A key pressed before the cross-rank analyses were done, done when
    /// they are (a key pressed a moment early is not lost).
    pub pending_action: Option<Action>,
    pub quit: bool,
    /// Why the UI had to stop, printed after the terminal is restored.
    pub fatal: Option<String>,
    /// Something changed since the last frame.
    pub dirty: bool,
    /// Timeline columns in the last frame (for cursor maths).
    pub timeline_width: usize,
    /// Timeline rows visible in the last frame.
    pub timeline_height: usize,
    /// Places left by jumps (`Backspace` back, `alt-Right` forward).
    pub history: History<Place>,
    /// The help's rows and visible rows in the last frame.
    pub help_scroll: Scroll,
    pub screen: Screen,
    /// The straggler map of the group last shown (kept while the group
    /// stays the same, so its cursor and sort survive a trip to the
    /// timeline).
    pub straggler: Option<StragglerView>,
    /// The `--baseline` capture (None without one).
    pub baseline: Option<Baseline>,
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
            messages: Messages::default(),
            banner: None,
            view: View { t0: 0.0, span: 1.0 },
            relative_time: false,
            utc_time: false,
            big_list_by_time: false,
            clipboard: None,
            rows: Vec::new(),
            collapsed: HashSet::new(),
            cursor: 0,
            scroll: 0,
            selection: None,
            instance: None,
            jump: None,
            panels: Panels::default(),
            panel_view: PanelView::default(),
            layout: FrameLayout::default(),
            mouse: true,
            focus: false,
            overlay: Overlay::None,
            message: None,
            no_color,
            pending_goto: None,
            pending_action: None,
            quit: false,
            fatal: None,
            dirty: true,
            timeline_width: 100,
            timeline_height: 30,
            history: History::default(),
            help_scroll: Scroll::default(),
            screen: Screen::Timeline,
            straggler: None,
            baseline: None,
        }
    }

    /// The input mode, from the open overlay, else the screen (on the
    /// timeline: a focused side panel's, when one is).
    pub fn mode(&self) -> Mode {
        match self.overlay {
            Overlay::None => match self.screen {
                Screen::Timeline if self.panel_view.focused(&self.panels).is_some() => Mode::Panel,
                Screen::Timeline => Mode::Timeline,
                Screen::Stragglers => Mode::Stragglers,
            },
            Overlay::Finder { .. } | Overlay::GotoTime { .. } => Mode::Finder,
            Overlay::BigEvents { .. } | Overlay::Messages { .. } => Mode::Panel,
            Overlay::Help { .. } | Overlay::Legend => Mode::Help,
        }
    }

    /// Loads `sources` on this thread and takes every message as the loop
    /// would (tests and benchmarks, which have no background loader).
    pub fn load_now(
        &mut self,
        sources: &[crate::profile::Source],
        cache: Option<&crate::profile::CacheDir>,
        settings: &crate::analysis::Settings,
    ) {
        let mut msgs = Vec::new();
        super::data::load(sources, cache, settings, &mut |m| msgs.push(m));
        for m in msgs {
            if !matches!(m, LoadMsg::Progress { .. }) {
                self.on_load(m);
            }
        }
    }

    /// [`App::load_now`] with a `--baseline` capture.
    pub fn load_now_with_baseline(
        &mut self,
        sources: &[crate::profile::Source],
        baseline: &[crate::profile::Source],
        cache: Option<&crate::profile::CacheDir>,
        settings: &crate::analysis::Settings,
    ) {
        self.baseline = Some(Baseline::loading());
        let msgs = std::sync::Mutex::new(Vec::new());
        super::baseline::load_pair(sources, baseline, cache, settings, &|m| {
            msgs.lock().expect("not poisoned").push(m)
        });
        for m in msgs.into_inner().expect("not poisoned") {
            if !matches!(m, LoadMsg::Progress { .. }) {
                self.on_load(m);
            }
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
            LoadMsg::FileError(e) => {
                self.messages.push(Level::Error, e.clone());
                self.file_errors.push(e);
            }
            LoadMsg::CacheOff(why) | LoadMsg::Note(why) => {
                self.messages.push(Level::Warn, why);
            }
            LoadMsg::Done(loaded) => {
                for f in &loaded.profile.files {
                    if let Some(wal) = &f.wal {
                        self.messages
                            .push(Level::Warn, crate::profile::wal_warning(&f.path, wal));
                    }
                }
                self.set_loaded(loaded);
            }
            LoadMsg::Analysed(loaded) => self.set_analysed(loaded),
            LoadMsg::Baseline(m) => self.on_baseline(m),
        }
    }

    /// Swaps in the fully analysed data, keeping the view and selection,
    /// then applies `--goto`.
    pub fn set_analysed(&mut self, loaded: Arc<Loaded>) {
        if self.loaded.is_none() {
            self.set_loaded(loaded);
            return;
        }
        self.loaded = Some(loaded.clone());
        self.rebuild_rows();
        if let Some(e) = self.selection {
            self.select(e, false);
        }
        if let Some(goto) = self.pending_goto.take() {
            self.goto_instance(&goto);
        }
        self.announce_big_events(&loaded);
        if let Some(a) = self.pending_action.take() {
            self.message = None;
            self.apply_timeline(a);
        }
        self.dirty = true;
    }

    /// Installs loaded data: fits the view and applies `--goto`.
    pub fn set_loaded(&mut self, loaded: Arc<Loaded>) {
        if let Some((a, b)) = loaded.span {
            self.view = View::fit(a, b);
        }
        let complete = loaded.complete;
        self.loaded = Some(loaded.clone());
        self.rebuild_rows();
        self.start_on_first_lane_with_events(&loaded);
        if complete && let Some(goto) = self.pending_goto.take() {
            self.goto_instance(&goto);
        }
        if complete {
            self.announce_big_events(&loaded);
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
                self.select_instance(g, k);
            }
            None => self.message = Some(goto_problem(&l, spec)),
        }
    }

    pub fn rebuild_rows(&mut self) {
        let Some(l) = self.loaded.clone() else { return };
        self.rows = match (self.focus, self.instance) {
            (true, Some((g, k))) => lanes::focus(&l.profile, &l.analysis, g, k),
            _ => lanes::build(&l.profile, &l.analysis, &l.index, &self.collapsed),
        };
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
        self.keep_cursor_visible();
    }

    /// Scrolls so the cursor row is on screen (after a resize too), and
    /// never past the last row: when the terminal grows, the view stays
    /// full rather than keeping rows scrolled off the top.
    pub fn keep_cursor_visible(&mut self) {
        let h = self.timeline_height.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + h {
            self.scroll = self.cursor + 1 - h;
        }
        self.scroll = self.scroll.min(self.rows.len().saturating_sub(h));
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
        self.apply_unclamped(a);
        self.clamp_view();
    }

    /// Keeps the window on the data (see [`View::clamp_to`]).
    pub fn clamp_view(&mut self) {
        if let Some((first, last)) = self.loaded.as_ref().and_then(|l| l.span) {
            self.view.clamp_to(first, last, self.timeline_width);
        }
    }

    fn apply_unclamped(&mut self, a: Action) {
        match self.overlay.clone() {
            Overlay::None if self.screen == Screen::Stragglers => self.apply_stragglers(a),
            Overlay::None => match self.panel_view.focused(&self.panels) {
                Some(k) => self.apply_panel(k, a),
                None => self.apply_timeline(a),
            },
            Overlay::Help { scroll } => {
                // Clamped against the rows the last frame drew.
                let mut s = self.help_scroll;
                s.top = scroll;
                match a {
                    Action::Up => s.by(-1),
                    Action::Down => s.by(1),
                    Action::PageUp | Action::PageDown => s.page(a == Action::PageDown),
                    Action::Cancel | Action::Help | Action::Accept => {
                        self.overlay = Overlay::None;
                        return;
                    }
                    _ => {}
                }
                self.overlay = Overlay::Help { scroll: s.top };
            }
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
            Overlay::Messages { scroll } => self.apply_messages(a, scroll),
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
        let top = self.big_list(&l);
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
                if let Some(e) = top.get(selected) {
                    self.jump = Some(JumpSource::Group(e.group));
                    self.select_instance(e.group, e.instance);
                }
            }
            Action::SortList => self.big_list_by_time = !self.big_list_by_time,
            _ => {}
        }
    }
}

/// Why `--goto SPEC` found nothing: the valid groups, or the instance
/// range of the group named.
fn goto_problem(l: &Loaded, spec: &str) -> String {
    let groups = &l.analysis.matching.groups;
    let (g, _) = spec.rsplit_once(':').unwrap_or((spec, ""));
    if let Some(gi) = l.analysis.matching.group(g) {
        return format!(
            "--goto {spec}: {g} has instances 1 to {}",
            groups[gi].instances()
        );
    }
    const SHOWN: usize = 12;
    let mut keys: Vec<&str> = groups.iter().take(SHOWN).map(|g| g.key.as_str()).collect();
    if groups.len() > SHOWN {
        keys.push("…");
    }
    if keys.is_empty() {
        format!("--goto {spec}: this capture has no matched collective groups")
    } else {
        format!(
            "--goto {spec}: no such group:instance; groups are {} (see `rankline report skew`)",
            keys.join(" ")
        )
    }
}

/// Whether timeline row `kind` shows event `e` (a device row shows all its
/// GPU events).
pub fn event_on_row(l: &Loaded, kind: LaneKind, e: EventRef) -> bool {
    let p = &l.profile;
    match (kind, e) {
        (LaneKind::Stream(lane), EventRef::Gpu(r)) => p.gpu.lane(r) == lane,
        (LaneKind::Device(d), EventRef::Gpu(r)) => p.lanes[p.gpu.lane(r) as usize].device == d,
        (LaneKind::Host(h), EventRef::Gpu(r)) => {
            p.devices[p.lanes[p.gpu.lane(r) as usize].device as usize].host == h
        }
        (LaneKind::Api(t), EventRef::Api(r)) => p.runtime.thread(r) == t,
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
        EventRef::Gpu(r) => LaneKind::Stream(p.gpu.lane(r)),
        EventRef::Api(r) => LaneKind::Api(p.runtime.thread(r)),
        EventRef::Nvtx(r) => {
            let t = p.nvtx.thread(r);
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

/// Start and end of an event on the reference clock.
pub fn event_span(l: &Loaded, e: EventRef) -> (i64, i64) {
    let (p, clock) = (&l.profile, &l.analysis.clock);
    match e {
        EventRef::Gpu(r) => clock.gpu_span(p, r),
        EventRef::Api(r) => clock.runtime_span(p, r),
        EventRef::Nvtx(r) => clock.nvtx_span(p, r),
    }
}
