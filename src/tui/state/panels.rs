//! What the panel actions do: open and close panels, scroll the one opened
//! last.

use super::{App, JumpSource};
use crate::tui::finder::EntryKind;
use crate::tui::panel::{PanelKind, PanelTarget};

impl App {
    pub(super) fn toggle_panel(&mut self, k: PanelKind) {
        self.panel_view.toggle(&mut self.panels, k);
    }

    /// Enter (a click) on a panel row: goes where the row leads.
    pub fn enter_panel_row(&mut self, to: PanelTarget) {
        let Some(l) = self.loaded.clone() else { return };
        match to {
            PanelTarget::Event(e) => self.select(e, true),
            PanelTarget::Instance(g, k) => {
                self.jump = Some(JumpSource::Group(g));
                self.select_instance(g, k);
            }
            PanelTarget::Kernel(name) => {
                let p = &l.profile;
                let entry = l.entries.iter().position(
                    |e| matches!(e.kind, EntryKind::Kernel(s) if p.strings.get(s) == name),
                );
                match entry {
                    Some(e) => self.jump_to_entry(&l, e),
                    None => {
                        self.message = Some(format!("no kernel {name} in this capture"));
                    }
                }
            }
        }
    }

    /// `{` `}`: a page of the last-opened panel.
    pub(super) fn scroll_panel(&mut self, down: bool) {
        match self.panel_view.last_opened {
            Some(k) => self.panel_view.scroll_mut(k).page(down),
            None => self.message = Some("no panel open to scroll (1-6 open one)".into()),
        }
    }
}
