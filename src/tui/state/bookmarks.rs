//! `M` marks the place (the window, and the instance selected) under a
//! name; `'` lists the capture's bookmarks, Enter goes to one (a jump,
//! recorded in the history like every jump). Kept on disk by
//! `profile::bookmarks`, read when first asked for.

use super::{App, Overlay, Pick};
use crate::profile::bookmarks::{self, Bookmark};
use crate::tui::action::Action;
use crate::tui::data::Loaded;
use crate::tui::selection::Target;
use crate::tui::timescale::View;

impl App {
    /// The bookmarks, read from disk the first time.
    pub fn bookmarks(&mut self) -> Result<&[Bookmark], String> {
        if self.bookmarks.is_none() {
            let Some(l) = self.data() else {
                return Ok(&[]);
            };
            let inputs = bookmarks::inputs(&l.profile);
            if inputs.is_empty() {
                return Err("bookmarks are kept for files: the demo has none".into());
            }
            self.bookmarks = Some(bookmarks::load(&inputs)?);
        }
        Ok(self.bookmarks.as_deref().unwrap_or(&[]))
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
        self.overlay = Overlay::BookmarkName {
            input: String::new(),
        };
    }

    /// Enter in the name prompt: the place kept under `name` (the place's
    /// own name when empty).
    pub(super) fn add_bookmark(&mut self, name: &str) {
        let Some(l) = self.data() else { return };
        let inputs = bookmarks::inputs(&l.profile);
        if inputs.is_empty() {
            self.say("bookmarks are kept for files: the demo has none");
            return;
        }
        if let Err(why) = self.bookmarks() {
            self.messages.answer(crate::tui::messages::Level::Warn, why);
            return;
        }
        let w = self.capture.view.window();
        let instance = self.capture.instance();
        let b = Bookmark {
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
        match bookmarks::add(&inputs, b.clone()) {
            Ok(path) => {
                let said = format!(
                    "bookmarked {} (' lists them; kept in {})",
                    b.name,
                    crate::text_safe::path_text(&path)
                );
                self.bookmarks.get_or_insert_with(Vec::new).push(b);
                self.say(said);
            }
            Err(why) => self.messages.answer(
                crate::tui::messages::Level::Warn,
                format!("bookmark not kept: {why}"),
            ),
        }
    }

    /// `'`: the list.
    pub(super) fn open_bookmarks(&mut self) {
        match self.bookmarks() {
            Ok([]) => self.say("no bookmarks yet (M marks this place)"),
            Ok(_) => self.overlay = Overlay::Bookmarks(Pick::default()),
            Err(why) => self.messages.answer(crate::tui::messages::Level::Warn, why),
        }
    }

    pub(super) fn apply_bookmarks(&mut self, a: Action, mut pick: Pick) {
        let n = self.bookmarks.as_ref().map_or(0, Vec::len);
        match a {
            Action::Up | Action::Down => {
                pick.step(if a == Action::Up { -1 } else { 1 }, n);
                self.overlay = Overlay::Bookmarks(pick);
            }
            Action::Accept => {
                self.overlay = Overlay::None;
                let b = self
                    .bookmarks
                    .as_ref()
                    .and_then(|b| b.get(pick.selected))
                    .cloned();
                if let Some(b) = b {
                    self.go_bookmark(&b);
                }
            }
            Action::Cancel | Action::Bookmarks => self.overlay = Overlay::None,
            _ => self.overlay = Overlay::Bookmarks(pick),
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
                let mut place = self.capture.place(self.screen);
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
