//! `t`: which clock the ruler reads — the capture clock (the reference
//! clock with several files), time since the first event, or UTC
//! wall-clock time (to match job logs).

use super::App;
use crate::tui::data::Loaded;
use crate::tui::timescale::Ruler;
use crate::tui::wallclock;

impl App {
    /// Capture clock → relative → UTC → capture clock; UTC is skipped when
    /// the capture has no UTC start stamp.
    pub(super) fn cycle_time(&mut self, l: &Loaded) {
        self.chrome.ruler = match self.chrome.ruler {
            Ruler::Utc => Ruler::Capture,
            Ruler::Capture => Ruler::Relative,
            Ruler::Relative if wallclock::utc_start(&l.profile, &l.analysis.clock).is_some() => {
                Ruler::Utc
            }
            Ruler::Relative => {
                self.say("no UTC start stamp in this capture: back to the capture clock");
                Ruler::Capture
            }
        };
    }

    /// UTC of capture-clock time 0 while the ruler shows UTC.
    pub fn utc_origin(&self, l: &Loaded) -> Option<i64> {
        (self.chrome.ruler == Ruler::Utc)
            .then(|| wallclock::utc_start(&l.profile, &l.analysis.clock))
            .flatten()
    }
}
