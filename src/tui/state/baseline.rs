//! The `--baseline` capture in the state: what its loader said, and `B`,
//! which switches the timeline between the two captures, keeping the view
//! at the same offset from the start of the same step.

use super::App;
use super::capture::{BaselineStatus, step_starts};
use crate::tui::data::{BaselineMsg, Loaded};
use crate::tui::messages::Level;

impl App {
    pub(super) fn on_baseline(&mut self, m: BaselineMsg) {
        let Some(b) = self.baseline.as_mut() else {
            return;
        };
        match m {
            BaselineMsg::Stage(stage) => b.status = BaselineStatus::Loading(stage),
            BaselineMsg::Loaded(l) => {
                b.status = BaselineStatus::Ready;
                b.other.loaded = Some(l);
            }
            BaselineMsg::Diff(d) => b.diff = Some(d),
            BaselineMsg::Failed => {
                b.status = BaselineStatus::Failed;
                self.messages.push(
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
            self.message = Some(
                "no baseline to switch to: start with rankline AFTER... --baseline BEFORE".into(),
            );
            return;
        };
        match &b.status {
            BaselineStatus::Loading(stage) => {
                self.message = Some(format!("the baseline is still loading ({stage}): a moment"));
                return;
            }
            BaselineStatus::Failed => {
                self.message = Some("the baseline could not be opened (! lists why)".into());
                return;
            }
            BaselineStatus::Ready => {}
        }
        let (Some(here), Some(there)) = (self.loaded.clone(), b.other().cloned()) else {
            return;
        };
        if !here.complete {
            // The steps come with the analyses; done when they arrive.
            self.message = Some("still finding the steps: a moment".into());
            self.pending_action = Some(crate::tui::action::Action::SwitchCapture);
            return;
        }
        let (t0, said) = same_place(&here, &there, self.view.t0, self.view.center());
        self.swap_capture();
        self.view.t0 = t0;
        self.rebuild_rows();
        let which = if self.baseline.as_ref().is_some_and(|b| b.shown) {
            "baseline"
        } else {
            "main capture"
        };
        self.message = Some(format!("B: the {which}, {said}"));
    }

    /// Swaps the shown capture, and the state that goes with it, with the
    /// other one.
    fn swap_capture(&mut self) {
        let Some(b) = self.baseline.as_mut() else {
            return;
        };
        let o = &mut b.other;
        std::mem::swap(&mut self.loaded, &mut o.loaded);
        std::mem::swap(&mut self.selection, &mut o.selection);
        std::mem::swap(&mut self.instance, &mut o.instance);
        std::mem::swap(&mut self.jump, &mut o.jump);
        std::mem::swap(&mut self.history, &mut o.history);
        std::mem::swap(&mut self.collapsed, &mut o.collapsed);
        std::mem::swap(&mut self.focus, &mut o.focus);
        std::mem::swap(&mut self.straggler, &mut o.straggler);
        b.shown = !b.shown;
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
