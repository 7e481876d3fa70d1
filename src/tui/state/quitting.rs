//! Quitting while the loader writes the cache: a finished load is never
//! thrown away without a word. The first `q` (or Ctrl-C) lets the write
//! finish and says so on the status line; the second quits at once (the
//! half-written temp file is removed on the way out).

use super::App;
use super::writes::Writes;
use crate::tui::messages::Level;

impl App {
    /// `q` or Ctrl-C: quits, unless the cache is being written, which
    /// is then finished first (a second ask quits at once).
    pub(super) fn ask_quit(&mut self) {
        self.session.writes = match self.session.writes {
            Writes::Writing => {
                self.session.messages.answer(
                    Level::Info,
                    "finishing the cache entry, then quitting (q or Ctrl-C again: quit without it)",
                );
                Writes::QuitWhenDone
            }
            Writes::Idle | Writes::QuitWhenDone => {
                self.session.quit = true;
                Writes::Idle
            }
        };
    }

    /// The loader began writing.
    pub(super) fn on_writing(&mut self) {
        if self.session.writes == Writes::Idle {
            self.session.writes = Writes::Writing;
        }
    }

    /// The loader is done, its writes included.
    pub(super) fn on_finished(&mut self) {
        if self.session.writes == Writes::QuitWhenDone {
            self.session.quit = true;
        }
        self.session.writes = Writes::Idle;
    }
}
