//! Jumps and the jump history. `J`, `n`/`N`, `]`/`[`, the finder, the
//! big-event list and `--goto` all land through [`App::jump`], which
//! records where they left; back and forward use it without recording.

use super::{App, JumpSource};
use crate::tui::data::Loaded;
use crate::tui::selection::{EventRef, Place, Screen, Target};

impl App {
    pub fn place(&self) -> Place {
        Place {
            selection: self.selection,
            view: self.view,
            cursor: self.cursor,
            screen: self.screen,
        }
    }

    /// The one way jumps land; `record` keeps the place left for `Backspace`.
    /// An event is shown on the timeline, whatever screen the jump left.
    pub(super) fn jump(&mut self, to: Target, record: bool) {
        if record {
            let here = self.place();
            self.history.push(here);
        }
        match to {
            Target::Event(e) => {
                self.screen = Screen::Timeline;
                self.select(e, true);
            }
            Target::Place(p) => {
                match p.selection {
                    Some(e) => self.select(e, false),
                    None => {
                        self.selection = None;
                        self.instance = None;
                    }
                }
                self.view = p.view;
                self.screen = p.screen;
                self.cursor = p.cursor.min(self.rows.len().saturating_sub(1));
                self.keep_cursor_visible();
            }
        }
    }

    pub(super) fn go_back(&mut self) {
        let here = self.place();
        match self.history.back(here) {
            Some(p) => self.jump(Target::Place(p), false),
            None => self.message = Some("no earlier jump to go back to".into()),
        }
    }

    pub(super) fn go_forward(&mut self) {
        let here = self.place();
        match self.history.forward(here) {
            Some(p) => self.jump(Target::Place(p), false),
            None => self.message = Some("nothing to go forward to".into()),
        }
    }

    /// `J`: from a kernel to its launch call, and from a call back to the
    /// (first) kernel it launched.
    pub(super) fn jump_to_launch(&mut self, l: &Loaded) {
        let p = &l.profile;
        match self.selection {
            Some(EventRef::Gpu(r)) if p.gpu.launch(r) != crate::profile::NONE => {
                self.jump(Target::Event(EventRef::Api(p.gpu.launch(r) as usize)), true);
            }
            Some(EventRef::Gpu(_)) => {
                self.message = Some("this kernel has no launch call in the capture".into());
            }
            Some(EventRef::Api(call)) => {
                let kernel = (0..p.gpu.len())
                    .filter(|&i| p.gpu.launch(i) as usize == call)
                    .min_by_key(|&i| p.gpu.start(i));
                match kernel {
                    Some(k) => self.jump(Target::Event(EventRef::Gpu(k)), true),
                    None => self.message = Some("this call launched no GPU work".into()),
                }
            }
            _ => self.message = Some("select a kernel or a launch call first".into()),
        }
    }

    /// `(k, n)`: the selection is hit `k` (1-based) of the finder's `n`.
    pub fn finder_hit(&self, l: &Loaded) -> Option<(usize, usize)> {
        let Some(JumpSource::Finder { events, .. }) = &self.jump else {
            return None;
        };
        let i = self.finder_position(l, events)?;
        Some((i + 1, events.len()))
    }

    /// Where the selection is among finder hits: the same event, or (for a
    /// collective) any rank of the same instance.
    pub(super) fn finder_position(&self, l: &Loaded, events: &[EventRef]) -> Option<usize> {
        let s = self.selection?;
        events.iter().position(|&e| {
            e == s || (self.instance.is_some() && instance_of(l, e) == self.instance)
        })
    }
}

/// The collective instance a GPU event belongs to, if it is matched.
pub fn instance_of(l: &Loaded, e: EventRef) -> Option<(usize, usize)> {
    match e {
        EventRef::Gpu(r) => l.analysis.matching.instance_of(r),
        _ => None,
    }
}

/// Finder hits in time order with one entry per collective instance (the
/// ranks of an instance are one hit, not eight).
pub fn one_hit_per_instance(l: &Loaded, events: Vec<EventRef>) -> Vec<EventRef> {
    let mut seen = std::collections::HashSet::new();
    events
        .into_iter()
        .filter(|&e| instance_of(l, e).is_none_or(|i| seen.insert(i)))
        .collect()
}
