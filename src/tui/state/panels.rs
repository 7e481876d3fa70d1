//! What the panel actions do: open and close panels, scroll the one opened
//! last.

use super::App;
use crate::tui::panel::PanelKind;

impl App {
    pub(super) fn toggle_panel(&mut self, k: PanelKind) {
        self.panel_view.toggle(&mut self.panels, k);
    }

    /// `{` `}`: a page of the last-opened panel.
    pub(super) fn scroll_panel(&mut self, down: bool) {
        match self.panel_view.last_opened {
            Some(k) => self.panel_view.scroll_mut(k).page(down),
            None => self.message = Some("no panel open to scroll (1-5 open one)".into()),
        }
    }
}
