//! `T`: the NVTX tree of the cursor's thread (else the first with
//! ranges); Tab goes on to the next thread, Enter zooms the timeline to a
//! range or kernel.

use super::{App, Overlay, Pick};
use crate::tui::action::Action;
use crate::tui::data::Loaded;
use crate::tui::lanes::{LaneKind, row_process};
use crate::tui::nvtx_view::{self, TreeRow};
use crate::tui::selection::{EventRef, Target};

impl App {
    pub(super) fn open_nvtx_tree(&mut self, l: &Loaded) {
        let threads = nvtx_view::threads(l);
        let Some(&first) = threads.first() else {
            self.say("no NVTX push/pop ranges in this capture");
            return;
        };
        let idx = &l.index;
        // The cursor row's thread, when it is a thread's row.
        let here = self.capture.lanes.at_cursor().and_then(|r| match r.kind {
            LaneKind::Api(t) => Some(t as usize),
            LaneKind::Nvtx(tr) => Some(idx.nvtx_tracks[tr].thread as usize),
            LaneKind::Cpu(tr) => Some(idx.cpu_tracks[tr].thread as usize),
            _ => None,
        });
        // Else the first thread of the cursor row's process, else the first.
        let of_process = self
            .capture
            .lanes
            .at_cursor()
            .and_then(|r| row_process(&l.profile, idx, r.kind))
            .and_then(|pr| {
                threads
                    .iter()
                    .copied()
                    .find(|&t| l.profile.threads[t].process == pr)
            });
        let t = here
            .filter(|t| threads.contains(t))
            .or(of_process)
            .unwrap_or(first);
        // Its tree is derived off the UI thread (`App::derive`).
        self.capture.nvtx_thread = Some(t);
        self.chrome.overlay = Overlay::NvtxTree(Pick::default());
    }

    pub(super) fn apply_nvtx_tree(&mut self, a: Action, mut pick: Pick) {
        let Some(l) = self.data() else { return };
        let n = self.capture.nvtx_tree_now().map_or(0, |t| t.rows.len());
        let page = pick.scroll.visible.max(2) as isize - 1;
        match a {
            Action::Up => pick.step(-1, n),
            Action::Down => pick.step(1, n),
            Action::PageUp => pick.step(-page, n),
            Action::PageDown => pick.step(page, n),
            Action::Home => pick.step(-(n as isize), n),
            Action::End => pick.step(n as isize, n),
            Action::NextThread => {
                let threads = nvtx_view::threads(&l);
                let at = self.capture.nvtx_thread;
                let i = at.and_then(|t| threads.iter().position(|&x| x == t));
                if let Some(&next) = threads.get(i.map_or(0, |i| (i + 1) % threads.len().max(1))) {
                    self.capture.nvtx_thread = Some(next);
                }
                pick = Pick::default();
            }
            Action::Accept => {
                let target = self.capture.nvtx_tree_now().and_then(|t| {
                    t.rows.get(pick.selected).map(|r| match *r {
                        TreeRow::Range(i) => EventRef::Nvtx(t.nodes[i].row),
                        TreeRow::Kernel(k, _) => EventRef::Gpu(k),
                    })
                });
                self.chrome.overlay = Overlay::None;
                if let Some(e) = target {
                    self.go_zoomed(Target::Event(e));
                }
                return;
            }
            Action::Cancel => {
                self.chrome.overlay = Overlay::None;
                return;
            }
            _ => {}
        }
        self.chrome.overlay = Overlay::NvtxTree(pick);
    }
}
