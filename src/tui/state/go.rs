//! Jumps: the one mover, [`App::go`], and the history it records. `J`,
//! `n`/`N`, `]`/`[`, the finder, the big-event list, panel rows and
//! `--goto` all land through it; back and forward use it without
//! recording.

use super::App;
use crate::tui::data::Loaded;
use crate::tui::selection::{EventRef, JumpSource, Screen, Target};

impl App {
    /// The one way jumps land: the selection, what `n`/`N` step through,
    /// its facts and (with `record`) the history, together. An event is
    /// shown on the timeline, whatever screen the jump left.
    pub fn go(&mut self, to: Target, record: bool) {
        let Some(l) = self.data() else { return };
        if record {
            let here = self.capture.place(self.chrome.screen);
            self.capture.history.push(here);
        }
        let c = &mut self.capture;
        match to {
            Target::Event(e) => {
                self.chrome.screen = Screen::Timeline;
                c.select(Some(e), true);
            }
            Target::Instance(g, k) => {
                self.chrome.screen = Screen::Timeline;
                c.jump = Some(JumpSource::Group(g));
                c.select(late_kernel(&l, g, k), true);
            }
            Target::Step(source, at) => {
                self.chrome.screen = Screen::Timeline;
                let e = match &source {
                    JumpSource::Group(g) => late_kernel(&l, *g, at),
                    JumpSource::Finder { events, .. } => {
                        events.get(at).map(|&e| match instance_of(&l, e) {
                            Some((g, k)) => late_kernel(&l, g, k).unwrap_or(e),
                            None => e,
                        })
                    }
                    // The path's own row: a collective's transfer runs on
                    // this rank, whoever arrived last.
                    JumpSource::Path { events, .. } => events.get(at).copied(),
                };
                c.jump = Some(source);
                c.select(e, true);
            }
            Target::Place(p) => {
                c.select(p.selection, false);
                c.view = p.view;
                c.lanes.put_cursor(p.cursor);
                self.chrome.screen = p.screen;
            }
        }
    }

    /// A recorded jump that shows what it lands on whole, as `z` then
    /// would: the views that list things to look at (the NVTX tree, the
    /// stats view) zoom to what Enter picks.
    pub(super) fn go_zoomed(&mut self, to: Target) {
        self.go(to, true);
        if self.capture.selection.is_some() {
            self.zoom_to_selection();
        }
    }

    /// `z`: the window on the selection (a collective's instance whole).
    pub(super) fn zoom_to_selection(&mut self) {
        match self.capture.selection_span() {
            Some((a, b)) => self.capture.view.show(a, b),
            None => self.say("nothing selected"),
        }
    }

    /// `go` to a collective instance, recorded.
    pub(super) fn go_instance(&mut self, g: usize, k: usize) {
        self.go(Target::Instance(g, k), true);
    }

    pub(super) fn go_back(&mut self) {
        let here = self.capture.place(self.chrome.screen);
        match self.capture.history.back(here) {
            Some(p) => self.go(Target::Place(p), false),
            None => self.say("no earlier jump to go back to"),
        }
    }

    pub(super) fn go_forward(&mut self) {
        let here = self.capture.place(self.chrome.screen);
        match self.capture.history.forward(here) {
            Some(p) => self.go(Target::Place(p), false),
            None => self.say("nothing to go forward to"),
        }
    }

    /// `J`: from a kernel to its launch call, and from a call back to the
    /// (first) kernel it launched.
    pub(super) fn jump_to_launch(&mut self, l: &Loaded) {
        let p = &l.profile;
        match self.capture.selection {
            Some(EventRef::Gpu(r)) if p.gpu.launch(r) != crate::profile::NONE => {
                self.go(Target::Event(EventRef::Api(p.gpu.launch(r) as usize)), true);
            }
            Some(EventRef::Gpu(_)) => self.say("this kernel has no launch call in the capture"),
            // The selection's facts found what the call launched.
            Some(EventRef::Api(_)) => match self.capture.facts.launched {
                Some(k) => self.go(Target::Event(EventRef::Gpu(k)), true),
                None => self.say("this call launched no GPU work"),
            },
            _ => self.say("select a kernel or a launch call first"),
        }
    }

    /// `(k, n)`: the selection is hit `k` (1-based) of the finder's `n`.
    pub fn finder_hit(&self) -> Option<(usize, usize)> {
        let events = self.capture.jump.as_ref()?.events()?;
        let i = self.finder_position(events)?;
        Some((i + 1, events.len()))
    }

    /// Where the selection is among finder hits: the same event, or (for a
    /// collective) any rank of the same instance.
    pub(super) fn finder_position(&self, events: &[EventRef]) -> Option<usize> {
        let c = &self.capture;
        let (l, s) = (c.data.as_ref()?, c.selection?);
        events
            .iter()
            .position(|&e| e == s || (c.instance().is_some() && instance_of(l, e) == c.instance()))
    }
}

/// The late rank's kernel of instance `k` of group `g`, as the skew
/// analysis found it (or, when it never started it, the first member's).
fn late_kernel(l: &Loaded, g: usize, k: usize) -> Option<EventRef> {
    let group = l.analysis.matching.groups.get(g)?;
    if k >= group.instances() {
        return None;
    }
    let late = crate::tui::capture::facts::late_rank(l, g, k)?;
    // A late rank that never started it (a hang): the first that did, so
    // that the instance is shown.
    let row = group
        .row(k, late)
        .or_else(|| group.members(k).next().map(|m| m.1))?;
    Some(EventRef::Gpu(row))
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
