//! The `--baseline` capture beside the main one, as state: where its
//! loader is, its diff, and the capture not shown (a whole [`Capture`]:
//! `B` swaps it with the one shown). Apart from the `impl App` that
//! switches captures (`baseline.rs`) so that the state can hold it without
//! a cycle.

use crate::analysis::diff::Diff;
use crate::tui::capture::Capture;
use crate::tui::data::Loaded;
use std::sync::Arc;

/// Where the baseline is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaselineStatus {
    /// Loading; the loader's current stage.
    Loading(String),
    Ready,
    /// None of its inputs could be opened.
    Failed,
}

/// The `--baseline` capture beside the main one.
pub struct Baseline {
    pub status: BaselineStatus,
    /// The timeline shows the baseline (`B`).
    pub shown: bool,
    /// The differences from the baseline to the main capture, once both
    /// are analysed.
    pub diff: Option<Arc<Diff>>,
    /// The capture the timeline does not show, with the timeline's state
    /// on it as `B` left it.
    pub other: Capture,
}

impl Baseline {
    pub fn loading() -> Baseline {
        Baseline {
            status: BaselineStatus::Loading("waiting for the main capture".into()),
            shown: false,
            diff: None,
            other: Capture::default(),
        }
    }

    /// The data of the capture the timeline does not show.
    pub fn other(&self) -> Option<&Arc<Loaded>> {
        self.other.data.as_ref()
    }
}

/// The start of each step on the reference clock (the earliest start of
/// the k-th step range of any rank).
pub fn step_starts(l: &Loaded) -> Vec<i64> {
    let a = &l.analysis;
    a.steps
        .spans(&l.profile, &a.clock)
        .into_iter()
        .map(|s| s.0)
        .collect()
}
