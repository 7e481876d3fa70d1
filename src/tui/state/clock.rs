//! `t`: which clock the ruler reads — the capture clock, time since the
//! first event, or UTC wall-clock time (to match job logs).

use super::App;
use crate::tui::data::Loaded;
use crate::tui::wallclock;

impl App {
    /// Capture clock → relative → UTC → capture clock; UTC is skipped when
    /// the capture has no UTC start stamp.
    pub(super) fn cycle_time(&mut self, l: &Loaded) {
        if self.utc_time {
            self.utc_time = false;
        } else if !self.relative_time {
            self.relative_time = true;
        } else {
            self.relative_time = false;
            if wallclock::utc_start(&l.profile).is_some() {
                self.utc_time = true;
            } else {
                self.message =
                    Some("no UTC start stamp in this capture: back to the capture clock".into());
            }
        }
    }

    /// UTC of capture-clock time 0 while the ruler shows UTC.
    pub fn utc_origin(&self, l: &Loaded) -> Option<i64> {
        self.utc_time
            .then(|| wallclock::utc_start(&l.profile))
            .flatten()
    }
}
