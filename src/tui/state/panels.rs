//! What the panel actions do: open and close panels, scroll the one opened
//! last, focus one and move its cursor over its rows, and go where a row
//! leads (Enter on the cursor's row and a click on a row alike).

use super::App;
use crate::tui::action::Action;
use crate::tui::finder::EntryKind;
use crate::tui::panel::{PanelKind, PanelTarget};
use crate::tui::selection::Target;

impl App {
    pub(super) fn toggle_panel(&mut self, k: PanelKind) {
        self.chrome.panels.toggle(k);
    }

    /// `p` on the timeline: the keys go to the last-opened panel.
    pub(super) fn focus_panel(&mut self) {
        match self.chrome.panels.last_opened {
            Some(k) => self.chrome.panels.focus(Some(k)),
            None => self.say("no panel open to focus (1-6 open one)"),
        }
    }

    /// What a key does while side panel `k` has the keys.
    pub(super) fn apply_panel(&mut self, k: PanelKind, a: Action) {
        match a {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Home
            | Action::End => self.move_panel_cursor(k, a),
            Action::Accept => self.accept_panel_line(k, self.chrome.panels.cursor(k)),
            Action::FocusPanel => {
                // The next open panel in screen order, round to the first.
                let open = self.chrome.panels.open();
                let at = open.iter().position(|&o| o == k).unwrap_or(0);
                self.chrome.panels.focus(Some(open[(at + 1) % open.len()]));
            }
            Action::Cancel => self.chrome.panels.focus(None),
            // The range panel's `y`: its `--window`.
            Action::CopyReference => self.copy_reference(),
            // The cursor leads a focused panel's scroll: it moves a page.
            Action::PanelScrollUp => self.move_panel_cursor(k, Action::PageUp),
            Action::PanelScrollDown => self.move_panel_cursor(k, Action::PageDown),
            // The status line offers them while a panel has the keys.
            Action::NextOccurrence | Action::PrevOccurrence => {
                if let Some(l) = self.data() {
                    self.step_occurrence(&l, a == Action::NextOccurrence);
                }
            }
            _ => {}
        }
    }

    /// Moves panel `k`'s cursor by a line, a page of rows, or to an end,
    /// over the lines the last frame drew; the panel scrolls to show it.
    fn move_panel_cursor(&mut self, k: PanelKind, a: Action) {
        let Some(area) = self.chrome.layout.panels.iter().find(|p| p.kind == Some(k)) else {
            return;
        };
        let (Some(last), Some(rows)) = (
            area.lines.len().checked_sub(1),
            area.lines.last().map(|r| r.end),
        ) else {
            return;
        };
        let at = self.chrome.panels.cursor(k).min(last);
        let page = self
            .chrome
            .panels
            .scroll(k)
            .visible
            .saturating_sub(1)
            .max(1);
        let first_row = area.lines[at].start;
        let to = match a {
            Action::Up => at.saturating_sub(1),
            Action::Down => (at + 1).min(last),
            Action::Home => 0,
            Action::End => last,
            Action::PageUp => {
                let line = area.line_at(first_row.saturating_sub(page)).unwrap_or(0);
                line.min(at.saturating_sub(1))
            }
            Action::PageDown => {
                let line = area
                    .line_at((first_row + page).min(rows - 1))
                    .unwrap_or(last);
                line.max((at + 1).min(last))
            }
            _ => at,
        };
        self.chrome.panels.set_cursor(k, area, to);
    }

    /// Enter on line `line` of panel `k` (the cursor's, or the one
    /// clicked): goes where it leads, as the last frame drew it.
    pub(super) fn accept_panel_line(&mut self, k: PanelKind, line: usize) {
        let target = self
            .chrome
            .layout
            .panels
            .iter()
            .find(|p| p.kind == Some(k))
            .and_then(|p| p.target(line));
        match target {
            Some(t) => {
                self.session.messages.clear_answer();
                self.enter_panel_row(t);
            }
            None => self.say("nothing to go to on this row"),
        }
    }

    /// Enter (a click) on a panel row: goes where the row leads, as a
    /// jump (the history keeps the way back).
    pub fn enter_panel_row(&mut self, to: PanelTarget) {
        let Some(l) = self.data() else { return };
        match to {
            PanelTarget::Event(e) => self.go(Target::Event(e), true),
            PanelTarget::Instance(g, k) => self.go_instance(g, k),
            PanelTarget::Kernel(name) => {
                let p = &l.profile;
                let names = self.capture.show.names;
                let entry = l.entries.iter().position(|e| {
                    matches!(e.kind, EntryKind::Kernel(form, s)
                        if form == names && p.strings.get(s) == name)
                });
                match entry {
                    Some(e) => self.jump_to_entry(&l, e),
                    None => self.say(format!("no kernel {name} in this capture")),
                }
            }
        }
    }

    /// `{` `}`: a page of the last-opened panel.
    pub(super) fn scroll_panel(&mut self, down: bool) {
        match self.chrome.panels.last_opened {
            Some(k) => self.chrome.panels.scroll_mut(k).page(down),
            None => self.say("no panel open to scroll (1-6 open one)"),
        }
    }
}
