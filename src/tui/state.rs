//! The UI state and what each action does to it. Views read this; nothing
//! here draws. The app is the session (keys, mouse, messages), the capture
//! shown and, with a baseline, the other one, and the chrome around them
//! (screen, overlays, panels, the last frame's layout).

mod baseline;
mod bookmarks;
mod chrome;
mod clock;
mod direct;
mod export;
mod first_screen;
mod go;
mod lists;
mod mouse;
mod navigate;
mod nvtx_view;
mod overlay;
mod pair;
mod panels;
mod quitting;
mod range;
mod reference;
mod session;
mod show;
mod start;
mod stats_view;
mod steps_view;
mod stragglers;
mod writes;

pub use super::selection::{EventRef, JumpSource, Place, Screen, Target};
pub use super::timescale::Ruler;
pub use chrome::Chrome;
pub use overlay::Overlay;
pub use pair::{Baseline, BaselineStatus, step_starts};
pub use session::{Progress, Session};

use super::action::{Action, Mode};
use super::capture::Capture;
use super::data::{LoadMsg, Loaded};
use super::finder;
use super::keymap::Keymap;
use super::messages::Level;
use super::panel::PanelKind;
use super::scroll::Scroll;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::sync::Arc;

pub use super::pick::Pick;

/// Keys kept while the first frame loads: a burst of typing, not a
/// buffer for a stuck key.
const TYPED_AHEAD: usize = 64;

/// The whole UI state: the session, the capture shown and the baseline
/// beside it, and the chrome around them.
pub struct App {
    session: Session,
    /// The capture the timeline shows.
    capture: Capture,
    /// The `--baseline` capture beside it (None without one).
    baseline: Option<Baseline>,
    chrome: Chrome,
}

impl App {
    pub fn new(keymap: Keymap, no_color: bool) -> App {
        App {
            session: Session::new(keymap, no_color),
            capture: Capture::default(),
            baseline: None,
            chrome: Chrome::default(),
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    pub fn baseline(&self) -> Option<&Baseline> {
        self.baseline.as_ref()
    }

    pub fn chrome(&self) -> &Chrome {
        &self.chrome
    }

    /// What the run loop answers: quitting, redraws, the clipboard and
    /// exports it carries out.
    pub(in crate::tui) fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// What a frame writes back: the scroll it fitted the lanes and the
    /// straggler map to (and the bench's harness, which sets the view).
    pub(in crate::tui) fn capture_mut(&mut self) -> &mut Capture {
        &mut self.capture
    }

    /// What a frame writes back: where it drew, and the scrolls it fitted
    /// panels and overlays to.
    pub(in crate::tui) fn chrome_mut(&mut self) -> &mut Chrome {
        &mut self.chrome
    }

    /// The data of the capture shown, once loaded.
    pub fn data(&self) -> Option<Arc<Loaded>> {
        self.capture.data()
    }

    /// Answers the last key in the status line (kept in the messages).
    pub fn say(&mut self, text: impl Into<String>) {
        self.session.messages.answer(Level::Info, text);
    }

    /// The answer to the last key, while it stands.
    pub fn answer(&self) -> Option<&str> {
        self.session.messages.answered().map(|m| m.text.as_str())
    }

    /// The input mode, from the open overlay, else the screen (on the
    /// timeline: a focused side panel's, when one is).
    pub fn mode(&self) -> Mode {
        match self.chrome.overlay {
            Overlay::None => match self.chrome.screen {
                Screen::Timeline => match self.chrome.panels.focused() {
                    Some(PanelKind::Range) => Mode::Range,
                    Some(_) => Mode::Panel,
                    None => Mode::Timeline,
                },
                Screen::Stragglers => Mode::Stragglers,
                Screen::Steps => Mode::Steps,
            },
            Overlay::Finder { .. } | Overlay::GotoTime { .. } | Overlay::BookmarkName { .. } => {
                Mode::Finder
            }
            Overlay::BigEvents(_) => Mode::BigEvents,
            Overlay::Behind(_) => Mode::Behind,
            Overlay::Messages(_) => Mode::Messages,
            Overlay::Bookmarks(_) => Mode::Bookmarks,
            Overlay::NvtxTree(_) => Mode::NvtxTree,
            Overlay::Help(..) | Overlay::Legend(_) => Mode::Help,
            Overlay::Stats(ref st) if st.typing => Mode::Finder,
            Overlay::Stats(_) => Mode::Stats,
        }
    }

    /// Loads `sources` on this thread and takes every message as the loop
    /// would (tests and benchmarks, which have no background loader).
    pub fn load_now(
        &mut self,
        sources: &[crate::profile::Source],
        cache: Option<&crate::profile::CacheDir>,
        settings: &crate::analysis::settings::Settings,
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
        settings: &crate::analysis::settings::Settings,
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
        self.session.dirty = true;
        match msg {
            LoadMsg::Progress {
                stage,
                file,
                files,
                rows,
            } => {
                self.session.progress = Progress {
                    stage,
                    file,
                    files,
                    rows,
                }
            }
            LoadMsg::FileError(e) => {
                self.session.messages.push(Level::Error, e);
            }
            LoadMsg::CacheOff(why) | LoadMsg::Note(why) => {
                self.session.messages.push(Level::Warn, why);
            }
            LoadMsg::Done(loaded) => {
                for f in &loaded.profile.files {
                    if let Some(wal) = &f.wal {
                        self.session
                            .messages
                            .push(Level::Warn, crate::profile::wal_warning(&f.path, wal));
                    }
                    for line in f.suspect_warnings() {
                        self.session.messages.push(Level::Warn, line);
                    }
                }
                self.set_data(loaded);
            }
            LoadMsg::Analysed(loaded) => self.set_data(loaded),
            LoadMsg::Baseline(m) => self.on_baseline(m),
            LoadMsg::Writing => self.on_writing(),
            LoadMsg::Finished => self.on_finished(),
        }
        self.derive();
    }

    /// Installs data (the first frame's, then the analysed one), keeping
    /// the view and selection; once the analyses are in, applies `--goto`
    /// and a key pressed while they ran.
    pub fn set_data(&mut self, loaded: Arc<Loaded>) {
        let complete = loaded.complete;
        self.capture.set_data(loaded.clone());
        self.replay_typed_ahead();
        if !complete {
            return;
        }
        if let Some(goto) = self.session.pending_goto.take() {
            self.goto_instance(&goto);
        }
        self.announce_big_events(&loaded);
        if let Some(a) = self.session.pending_action.take() {
            self.session.messages.clear_answer();
            self.apply_timeline(a);
        }
        self.replay_typed_ahead();
        self.session.dirty = true;
    }

    /// The keys kept while waiting, in the order typed (a key that must
    /// wait again is kept again, behind the `pending_action`).
    fn replay_typed_ahead(&mut self) {
        for key in std::mem::take(&mut self.session.typed_ahead) {
            self.on_key(key);
        }
    }

    fn goto_instance(&mut self, spec: &str) {
        let Some(l) = self.data() else { return };
        let parsed = spec
            .rsplit_once(':')
            .and_then(|(g, k)| Some((g, k.trim().parse::<usize>().ok()?)));
        let found = parsed.and_then(|(g, k)| {
            let gi = l.analysis.matching.group(g)?;
            (k >= 1 && k <= l.analysis.matching.groups[gi].instances()).then_some((gi, k - 1))
        });
        match found {
            Some((g, k)) => {
                self.capture.jump = Some(JumpSource::Group(g));
                self.go_instance(g, k);
            }
            None => self.say(goto_problem(&l, spec)),
        }
    }

    /// What is derived from the window and the chrome, after every change
    /// and before the next frame: the overlap of the view's window while
    /// its panel is open, the range's facts while its panel is, the stats
    /// view's table and the NVTX tree while their views are open. Asked of
    /// jobs the loop runs off its thread ([`Self::next_derive_job`]).
    pub fn derive(&mut self) {
        if self.chrome.panels.is_open(PanelKind::Overlap)
            && let Some(job) = self.capture.window_job()
        {
            self.session.derive_jobs.push_back(job);
        }
        if self.chrome.panels.is_open(PanelKind::Range)
            && let Some(job) = self.capture.range_job()
        {
            self.session.derive_jobs.push_back(job);
        }
        if let Some(job) = self.stats_job() {
            self.session.derive_jobs.push_back(job);
        }
        if matches!(self.chrome.overlay, Overlay::NvtxTree(_))
            && let Some(job) = self.capture.nvtx_tree_job()
        {
            self.session.derive_jobs.push_back(job);
        }
        if self.chrome.screen == Screen::Steps
            && let Some(job) = self.capture.steps_job()
        {
            self.session.derive_jobs.push_back(job);
        }
    }

    /// After a frame: what is derived from the rows in view (the range's
    /// facts) is asked for again, when the frame moved them (a panel
    /// opened and the timeline lost rows). Its result comes back as a
    /// message, which asks for the next frame.
    pub fn after_frame(&mut self) {
        self.derive();
    }

    /// The next derived job to run off the UI thread.
    pub fn next_derive_job(&mut self) -> Option<crate::tui::derive_jobs::DeriveJob> {
        self.session.derive_jobs.pop_front()
    }

    /// A derived job's end: its result goes to the capture that asked for
    /// it (`B` may have swapped them meanwhile), and the key the state
    /// wants now is asked for.
    pub fn on_derived(&mut self, done: crate::tui::derive_jobs::DeriveDone) {
        self.session.dirty = true;
        if let Err(done) = self.capture.on_derived(done)
            && let Some(b) = self.baseline.as_mut()
        {
            let _ = b.other.on_derived(done);
        }
        self.capture.fit_steps_view();
        self.derive();
    }

    /// Handles a key press; keys go to text input in the finder and prompt.
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        self.session.dirty = true;
        // ctrl-c always quits, whatever the keymap says.
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.ask_quit();
            return;
        }
        let action = self.session.keymap.action(self.mode(), &key);
        // Before the first frame the timeline's keys have nothing to act
        // on: typed ahead, they are kept (a few dozen) and applied when it
        // appears. Quitting, help, the legend and the messages work at
        // once, as does every key of a popup they opened.
        let works_now = self.chrome.overlay != Overlay::None
            || matches!(
                action,
                Some(Action::Quit | Action::Help | Action::Legend | Action::Messages)
            );
        // A key after one that waits for the analyses waits behind it: typed
        // as `/AllGather⏎`, the query must not go to the timeline while the
        // finder waits to open.
        let waiting = self.capture.data.is_none() || self.session.pending_action.is_some();
        if waiting && !works_now {
            if self.session.typed_ahead.len() < TYPED_AHEAD {
                self.session.typed_ahead.push(key);
            }
            return;
        }
        if action.is_none() && self.type_into_overlay(&key) {
            return;
        }
        if let Some(a) = action {
            self.session.messages.clear_answer();
            self.apply(a);
        }
    }

    fn type_into_overlay(&mut self, key: &KeyEvent) -> bool {
        let text = match &mut self.chrome.overlay {
            Overlay::Finder { query, pick } => {
                *pick = Pick::default();
                query
            }
            Overlay::GotoTime { input } | Overlay::BookmarkName { input } => input,
            Overlay::Stats(st) if st.typing => {
                st.pick = Pick::default();
                &mut st.filter
            }
            _ => return false,
        };
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
            KeyCode::Backspace => {
                text.pop();
            }
            _ => return false,
        }
        // The new query's hits, searched here once, not in every frame.
        if let (Overlay::Finder { query, .. }, Some(l)) = (&self.chrome.overlay, self.data()) {
            let query = query.clone();
            self.finder_hits(&l, &query);
        }
        true
    }

    /// The finder's hits for `query` (the first [`finder::SHOWN`]),
    /// searched only when the query or the names shown changed.
    fn finder_hits(&mut self, l: &Arc<Loaded>, query: &str) -> &[usize] {
        let key = (
            crate::tui::derive_jobs::data_key(l),
            query.to_string(),
            self.capture.show.names,
        );
        let names = key.2;
        self.capture.finder.get_or(key, || {
            finder::search(&l.entries, query, finder::SHOWN, names)
        })
    }

    /// Applies one action.
    pub fn apply(&mut self, a: Action) {
        self.session.dirty = true;
        if a == Action::Quit {
            self.ask_quit();
            return;
        }
        self.apply_unclamped(a);
        self.clamp_view();
        self.derive();
    }

    /// Keeps the window on the data (see `View::clamp_to`).
    pub fn clamp_view(&mut self) {
        if let Some((first, last)) = self.capture.data.as_ref().and_then(|l| l.span) {
            let width = self.chrome.layout.timeline_width;
            self.capture.view.clamp_to(first, last, width);
        }
    }

    fn apply_unclamped(&mut self, a: Action) {
        let in_help = matches!(self.chrome.overlay, Overlay::Help(..) | Overlay::Legend(_));
        if a == Action::Help && !in_help {
            // Whatever is open, `?` answers about it first.
            self.chrome.overlay = Overlay::Help(Scroll::default(), self.mode());
            return;
        }
        match self.chrome.overlay.clone() {
            Overlay::None if self.chrome.screen == Screen::Stragglers => self.apply_stragglers(a),
            Overlay::None if self.chrome.screen == Screen::Steps => self.apply_steps(a),
            Overlay::None => match self.chrome.panels.focused() {
                Some(k) => self.apply_panel(k, a),
                None => self.apply_timeline(a),
            },
            Overlay::Help(mut s, _) | Overlay::Legend(mut s) => {
                let help = match self.chrome.overlay {
                    Overlay::Help(_, first) => Some(first),
                    _ => None,
                };
                match a {
                    Action::Up => s.by(-1),
                    Action::Down => s.by(1),
                    Action::PageUp | Action::PageDown => s.page(a == Action::PageDown),
                    Action::Cancel | Action::Help | Action::Accept => {
                        self.chrome.overlay = Overlay::None;
                        return;
                    }
                    // `L` toggles the legend as `?` toggles the help.
                    Action::Legend if help.is_none() => {
                        self.chrome.overlay = Overlay::None;
                        return;
                    }
                    _ => {}
                }
                self.chrome.overlay = match help {
                    Some(first) => Overlay::Help(s, first),
                    None => Overlay::Legend(s),
                };
            }
            Overlay::Finder { query, pick } => self.apply_finder(a, query, pick),
            Overlay::BigEvents(pick) => self.apply_big_list(a, pick),
            Overlay::Behind(pick) => self.apply_behind_list(a, pick),
            Overlay::Messages(scroll) => self.apply_messages(a, scroll),
            Overlay::Stats(st) => self.apply_stats(a, st),
            Overlay::Bookmarks(pick) => self.apply_bookmarks(a, pick),
            Overlay::NvtxTree(pick) => self.apply_nvtx_tree(a, pick),
            Overlay::BookmarkName { input } => match a {
                Action::Accept => {
                    self.chrome.overlay = Overlay::None;
                    self.add_bookmark(&input);
                }
                Action::Cancel => self.chrome.overlay = Overlay::None,
                _ => {}
            },
            Overlay::GotoTime { input } => match a {
                Action::Accept => {
                    self.chrome.overlay = Overlay::None;
                    self.goto_time(&input);
                }
                Action::Cancel => self.chrome.overlay = Overlay::None,
                _ => {}
            },
        }
    }

    fn apply_finder(&mut self, a: Action, query: String, mut pick: Pick) {
        let Some(l) = self.data() else {
            self.chrome.overlay = Overlay::None;
            return;
        };
        let hits = self.finder_hits(&l, &query).to_vec();
        match a {
            Action::Up | Action::Down => {
                pick.step(if a == Action::Up { -1 } else { 1 }, hits.len());
                self.chrome.overlay = Overlay::Finder { query, pick };
            }
            Action::Cancel => self.chrome.overlay = Overlay::None,
            Action::Accept => {
                self.chrome.overlay = Overlay::None;
                if let Some(&e) = hits.get(pick.selected) {
                    self.jump_to_entry(&l, e);
                }
            }
            _ => {}
        }
    }

    fn apply_big_list(&mut self, a: Action, mut pick: Pick) {
        let Some(l) = self.data() else { return };
        let top = self.big_list(&l);
        match a {
            Action::Up | Action::Down => {
                pick.step(if a == Action::Up { -1 } else { 1 }, top.len());
                self.chrome.overlay = Overlay::BigEvents(pick);
            }
            Action::Cancel => self.chrome.overlay = Overlay::None,
            Action::Accept => {
                self.chrome.overlay = Overlay::None;
                if let Some(e) = top.get(pick.selected) {
                    self.capture.jump = Some(JumpSource::Group(e.group));
                    self.go_instance(e.group, e.instance);
                }
            }
            Action::SortList => self.chrome.big_list_by_time = !self.chrome.big_list_by_time,
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
