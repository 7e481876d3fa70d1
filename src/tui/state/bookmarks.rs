//! `M` marks the place (the window, and the instance selected) under a
//! name; `'` lists the capture's bookmarks, Enter goes to one (a jump,
//! recorded in the history like every jump). Kept on disk by
//! `profile::bookmarks`, read when first asked for. The file is read and
//! written by the loop off the UI thread, one job at a time: whatever it
//! is and wherever it lives, `q` and signals are still answered.

use super::{App, Overlay, Pick};
use crate::profile::bookmarks::{Bookmark, Kept};
use crate::tui::action::Action;
use crate::tui::bookmark_jobs::{BookmarkJob, BookmarksDone, Side};
use crate::tui::capture::Capture;
use crate::tui::data::Loaded;
use crate::tui::messages::Level;
use crate::tui::selection::Target;
use crate::tui::timescale::View;

impl App {
    /// The next bookmark job for the loop to run, when none is running
    /// (one at a time: an add reads the file, then writes it whole).
    pub fn next_bookmark_job(&mut self) -> Option<BookmarkJob> {
        self.session.bookmark_jobs.start_next()
    }

    /// A job's end: the bookmarks now known, and what to say or open.
    pub fn on_bookmarks(&mut self, done: BookmarksDone) {
        self.session.bookmark_jobs.done();
        self.session.dirty = true;
        match done {
            BookmarksDone::Loaded { kept: Err(why), .. } => {
                self.session.messages.answer(Level::Warn, why)
            }
            BookmarksDone::Loaded {
                side,
                kept: Ok(kept),
                list,
            } => {
                self.keep_bookmarks(side, kept);
                // listed only if the capture they are of is still shown
                if list && side == self.side_shown() {
                    self.open_bookmarks();
                }
            }
            BookmarksDone::Added { kept: Err(why), .. } => self
                .session
                .messages
                .answer(Level::Warn, format!("bookmark not kept: {why}")),
            BookmarksDone::Added {
                side,
                name,
                kept: Ok((path, kept)),
            } => {
                self.keep_bookmarks(side, kept);
                self.say(format!(
                    "bookmarked {name} (' lists them; kept in {})",
                    crate::text_safe::path_text(&path)
                ));
            }
        }
    }

    fn keep_bookmarks(&mut self, side: Side, kept: Kept) {
        if let Some(why) = kept.left_out {
            self.session.messages.push(Level::Warn, why);
        }
        if let Some(c) = self.capture_on(side) {
            c.bookmarks = Some(kept.marks);
        }
    }

    /// Which of the pair the timeline shows (`Main` without a baseline).
    pub(super) fn side_shown(&self) -> Side {
        match &self.baseline {
            Some(b) if b.shown => Side::Baseline,
            _ => Side::Main,
        }
    }

    /// The capture of `side`, wherever `B` has put it.
    fn capture_on(&mut self, side: Side) -> Option<&mut Capture> {
        if side == self.side_shown() {
            Some(&mut self.capture)
        } else {
            self.baseline.as_mut().map(|b| &mut b.other)
        }
    }

    /// The name a bookmark of the place here gets when none is typed.
    fn place_name(&self, l: &Loaded) -> String {
        match self.capture.instance() {
            Some((g, k)) => format!("{}:{}", l.analysis.matching.groups[g].key, k + 1),
            None => {
                let v = &self.capture.view;
                format!("window {:.3}–{:.3} s", v.t0 / 1e9, v.end() / 1e9)
            }
        }
    }

    /// `M`: asks for a name.
    pub(super) fn ask_bookmark_name(&mut self) {
        self.chrome.overlay = Overlay::BookmarkName {
            input: String::new(),
        };
    }

    /// Enter in the name prompt: the place kept under `name` (the place's
    /// own name when empty).
    pub(super) fn add_bookmark(&mut self, name: &str) {
        let Some(l) = self.data() else { return };
        let w = self.capture.view.window();
        let instance = self.capture.instance();
        let bookmark = Bookmark {
            name: if name.trim().is_empty() {
                self.place_name(&l)
            } else {
                name.trim().to_string()
            },
            group: instance.map(|(g, _)| l.analysis.matching.groups[g].key.clone()),
            instance: instance.map(|(_, k)| k + 1),
            window_ns: [w.start, w.end],
            created: crate::tui::wallclock::iso_now(),
        };
        self.say(format!("bookmarking {}…", bookmark.name));
        let side = self.side_shown();
        self.session.bookmark_jobs.push(BookmarkJob::Add {
            data: l,
            side,
            bookmark,
        });
    }

    /// `'`: the list, once read.
    pub(super) fn open_bookmarks(&mut self) {
        match self.capture.bookmarks.as_deref() {
            Some([]) => self.say("no bookmarks yet (M marks this place)"),
            Some(_) => self.chrome.overlay = Overlay::Bookmarks(Pick::default()),
            None => {
                let Some(data) = self.data() else { return };
                self.say("reading the bookmarks…");
                let side = self.side_shown();
                self.session.bookmark_jobs.push(BookmarkJob::Load {
                    data,
                    side,
                    list: true,
                });
            }
        }
    }

    pub(super) fn apply_bookmarks(&mut self, a: Action, mut pick: Pick) {
        let n = self.capture.bookmarks.as_ref().map_or(0, Vec::len);
        match a {
            Action::Up | Action::Down => {
                pick.step(if a == Action::Up { -1 } else { 1 }, n);
                self.chrome.overlay = Overlay::Bookmarks(pick);
            }
            Action::Accept => {
                self.chrome.overlay = Overlay::None;
                let b = self
                    .capture
                    .bookmarks
                    .as_ref()
                    .and_then(|b| b.get(pick.selected))
                    .cloned();
                if let Some(b) = b {
                    self.go_bookmark(&b);
                }
            }
            Action::Cancel | Action::Bookmarks => self.chrome.overlay = Overlay::None,
            _ => self.chrome.overlay = Overlay::Bookmarks(pick),
        }
    }

    /// To a bookmark: its instance selected (when it still matches one),
    /// its window shown; one jump in the history.
    fn go_bookmark(&mut self, b: &Bookmark) {
        let Some(l) = self.data() else { return };
        let m = &l.analysis.matching;
        let instance = b
            .group
            .as_deref()
            .and_then(|key| m.group(key))
            .zip(b.instance)
            .filter(|&(g, k)| k >= 1 && k <= m.groups[g].instances())
            .map(|(g, k)| (g, k - 1));
        match instance {
            Some((g, k)) => self.go_instance(g, k),
            None => {
                let mut place = self.capture.place(self.chrome.screen);
                place.selection = None;
                self.go(Target::Place(place), true);
            }
        }
        let [a, e] = b.window_ns;
        self.capture.view = View {
            t0: a as f64,
            span: (e.saturating_sub(a)).max(1) as f64,
        };
        self.clamp_view();
        self.say(format!("at the bookmark {}", b.name));
    }
}
