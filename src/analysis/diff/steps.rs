//! Step durations before and after: count, p50, p90, max.

use super::side::Side;
use crate::analysis::stats::Spread;

/// Why exposed NCCL per step can grow past the gate while the step p50
/// does not: said once, where that happens, by `diff` text and the
/// timeline's diff panel.
pub const STEPS_MISS_GPU_WAITS: &str = "the step p50 did not move: steps are CPU-side NVTX ranges, which do not grow while the GPU waits";

/// One side's steps.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepFigures {
    pub count: usize,
    /// Step durations in ms; `None` without steps.
    pub spread_ms: Option<Spread>,
}

/// Steps before and after.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepsDiff {
    pub before: StepFigures,
    pub after: StepFigures,
}

pub fn steps_diff(before: Side, after: Side) -> StepsDiff {
    StepsDiff {
        before: figures(before),
        after: figures(after),
    }
}

/// A step lasts from the earliest start to the latest end of its range
/// over every rank (`Steps::spans`).
fn figures(s: Side) -> StepFigures {
    // A step no rank recorded spans nothing: not a step to time.
    let spans: Vec<(i64, i64)> = s
        .analysis
        .steps
        .spans(s.profile, &s.analysis.clock)
        .into_iter()
        .filter(|&(a, b)| b > a)
        .collect();
    StepFigures {
        count: spans.len(),
        spread_ms: Spread::of(spans.iter().map(|&(a, b)| b.saturating_sub(a) as f64 / 1e6)),
    }
}
