//! Placing the view, the selection and the cursor directly, as a script
//! does where a user would press keys or click: tests that set up a scene,
//! and what the run loop takes from the session to carry out.

use super::App;
use crate::profile::bookmarks::Bookmark;
use crate::tui::export::ExportJob;
use crate::tui::panel::PanelKind;
use crate::tui::selection::EventRef;
use crate::tui::timescale::View;

impl App {
    pub fn set_view(&mut self, view: View) {
        self.capture.view = view;
    }

    /// Selects an event as a click would ([`crate::tui::capture::Capture::select`]).
    pub fn select(&mut self, e: Option<EventRef>, center: bool) {
        self.capture.select(e, center);
    }

    /// Puts the lane cursor on row `row`, scrolled into view.
    pub fn put_cursor(&mut self, row: usize) {
        self.capture.lanes.put_cursor(row);
    }

    /// Collapses every row shown that folds (hosts, devices, threads), as
    /// pressing the collapse key on each would.
    pub fn collapse_all(&mut self) {
        let lanes = &mut self.capture.lanes;
        let kinds: Vec<_> = lanes
            .rows
            .iter()
            .filter(|r| r.collapsible)
            .map(|r| r.kind)
            .collect();
        lanes.collapsed.extend(kinds);
        self.capture.rebuild_rows();
    }

    /// The shown capture's bookmarks as if read from its bookmarks file.
    pub fn set_bookmarks(&mut self, marks: Vec<Bookmark>) {
        self.capture.bookmarks = Some(marks);
    }

    /// Scrolls panel `kind` so its row `top` is first.
    pub fn put_panel_top(&mut self, kind: PanelKind, top: usize) {
        self.chrome.panels.scroll_mut(kind).top = top;
    }

    /// The trace export asked for, to run (the loop's).
    pub fn take_export(&mut self) -> Option<ExportJob> {
        self.session.export.take()
    }

    /// The OSC 52 sequence a copy asked for, to write (the loop's).
    pub fn take_clipboard(&mut self) -> Option<String> {
        self.session.clipboard.take()
    }
}
