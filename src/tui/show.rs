//! What the timeline shows of its events: a minimum duration for the
//! events drawn, and which of a kernel's names every view uses. One value
//! per capture, set on both when a baseline is loaded, read by the views.

use crate::profile::names::KernelNames;
use crate::tui::timescale::format_duration;

/// The minimum durations the filter key cycles through (0: every event
/// drawn), with the words the title uses.
pub const MIN_DURATIONS: [i64; 5] = [0, 1_000, 10_000, 100_000, 1_000_000];
const LABELS: [&str; 5] = ["off", "1 µs", "10 µs", "100 µs", "1 ms"];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Show {
    /// Events shorter than this are not drawn, picked or stepped to.
    pub min_dur: i64,
    pub names: KernelNames,
}

impl Show {
    /// The next minimum duration of the cycle (after 1 ms: off).
    pub fn next_min_dur(self) -> i64 {
        let at = MIN_DURATIONS.iter().position(|&m| m == self.min_dur);
        MIN_DURATIONS[at.map_or(0, |i| (i + 1) % MIN_DURATIONS.len())]
    }

    /// `≥ 10 µs`, when the filter is on.
    pub fn filter_label(self) -> Option<String> {
        let at = MIN_DURATIONS.iter().position(|&m| m == self.min_dur);
        (self.min_dur > 0).then(|| match at {
            Some(i) => format!("≥ {}", LABELS[i]),
            None => format!("≥ {}", format_duration(self.min_dur)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_goes_through_every_step_and_back_to_off() {
        let mut s = Show::default();
        let mut seen = vec![s.min_dur];
        for _ in 0..MIN_DURATIONS.len() {
            s.min_dur = s.next_min_dur();
            seen.push(s.min_dur);
        }
        assert_eq!(seen, [0, 1_000, 10_000, 100_000, 1_000_000, 0]);
        assert_eq!(s.filter_label(), None);
        s.min_dur = 10_000;
        assert_eq!(s.filter_label().as_deref(), Some("≥ 10 µs"));
    }
}
