//! The `--baseline` capture in the state: what its loader said, and `B`,
//! which switches the timeline between the two captures, keeping the view
//! at the same offset from the start of the same step.

use super::App;
use super::pair::{BaselineStatus, step_starts};
use crate::tui::data::{BaselineMsg, Loaded};
use crate::tui::messages::Level;

impl App {
    pub(super) fn on_baseline(&mut self, m: BaselineMsg) {
        let show = self.capture.show;
        let Some(b) = self.baseline.as_mut() else {
            return;
        };
        match m {
            BaselineMsg::Stage(stage) => b.status = BaselineStatus::Loading(stage),
            BaselineMsg::Loaded(l) => {
                b.status = BaselineStatus::Ready;
                b.other.show = show;
                b.other.set_data(l);
            }
            BaselineMsg::Diff(d) => b.diff = Some(d),
            BaselineMsg::Failed => {
                b.status = BaselineStatus::Failed;
                self.session.messages.push(
                    Level::Error,
                    "the baseline could not be opened: B and panel 6 have nothing to compare",
                );
            }
        }
    }

    /// `B`: the other capture, at the same offset from the start of the
    /// same step number as the view now (without steps on both sides, from
    /// the capture's start).
    pub(super) fn switch_capture(&mut self) {
        let Some(b) = self.baseline.as_ref() else {
            self.say("no baseline to switch to: start with rankline AFTER... --baseline BEFORE");
            return;
        };
        match &b.status {
            BaselineStatus::Loading(stage) => {
                let stage = stage.clone();
                self.say(format!("the baseline is still loading ({stage}): a moment"));
                return;
            }
            BaselineStatus::Failed => {
                self.say("the baseline could not be opened (! lists why)");
                return;
            }
            BaselineStatus::Ready => {}
        }
        let (Some(here), Some(there)) = (self.data(), b.other().cloned()) else {
            return;
        };
        if !here.complete {
            // The steps come with the analyses; done when they arrive.
            self.say("still finding the steps: a moment");
            self.session.pending_action = Some(crate::tui::action::Action::SwitchCapture);
            return;
        }
        let v = self.capture.view;
        let (t0, said) = same_place(&here, &there, v.t0, v.center());
        let Some(b) = self.baseline.as_mut() else {
            return;
        };
        // The two captures trade places, each with its own state.
        std::mem::swap(&mut self.capture, &mut b.other);
        b.shown = !b.shown;
        let which = if b.shown { "baseline" } else { "main capture" };
        // The same zoom, at the same place of the same step.
        self.capture.view = crate::tui::timescale::View { t0, span: v.span };
        self.capture.rebuild_rows();
        self.say(format!("B: the {which}, {said}"));
    }
}

/// Where a view starting at `t0` (centred on `center`) in `here` starts in
/// `there`, and how that was decided: the same offset from the start of the
/// step the view's centre is in, else from the capture's start.
fn same_place(here: &Loaded, there: &Loaded, t0: f64, center: f64) -> (f64, String) {
    let (from, to) = (step_starts(here), step_starts(there));
    if from.is_empty() || to.is_empty() {
        let start = |l: &Loaded| l.span.map_or(0.0, |s| s.0 as f64);
        return (
            start(there) + (t0 - start(here)),
            "same offset from the capture's start (no steps on both sides; see --step-marker)"
                .into(),
        );
    }
    let k = from
        .partition_point(|&s| s as f64 <= center)
        .saturating_sub(1);
    let offset = t0 - from[k] as f64;
    if k < to.len() {
        (to[k] as f64 + offset, format!("step {}", k + 1))
    } else {
        let last = to.len() - 1;
        (
            to[last] as f64 + offset,
            format!(
                "step {} (it has {} steps, not {})",
                last + 1,
                to.len(),
                k + 1
            ),
        )
    }
}
