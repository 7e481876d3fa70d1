//! The regression gate: which figures grew by more than a percentage of
//! their before value.

use super::side::delta_pct;

/// What the gate fails on: growth above `pct` % in the default figures,
/// and summed kernel time only when asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    pub pct: f64,
    /// `--gate total-kernel`: summed kernel time includes the time NCCL
    /// kernels wait for a late peer, so it grows when no step got slower.
    pub total_kernel: bool,
}

/// A figure the gate watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// p50 of the step durations.
    StepP50,
    /// NCCL time with no compute under it, per step (both sides have steps).
    ExposedNcclPerStep,
    /// The same per second of capture (a side without steps).
    ExposedNcclPerSecond,
    /// A paired skew group's excess.
    SkewExcess,
    /// Every kernel's duration summed over every device (`--gate total-kernel`).
    KernelTotal,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::StepP50,
        Metric::ExposedNcclPerStep,
        Metric::ExposedNcclPerSecond,
        Metric::SkewExcess,
        Metric::KernelTotal,
    ];

    /// As JSON names it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::StepP50 => "step_p50_ms",
            Metric::ExposedNcclPerStep => "exposed_nccl_ms_per_step",
            Metric::ExposedNcclPerSecond => "exposed_nccl_ms_per_s",
            Metric::SkewExcess => "skew_excess_ms",
            Metric::KernelTotal => "kernel_total_ms",
        }
    }
}

/// A figure that grew by more than the gate's percentage.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    pub metric: Metric,
    /// The skew group's key (after side); `None` for whole-capture figures.
    pub key: Option<String>,
    /// In ms.
    pub before: f64,
    pub after: f64,
    /// Growth in % of before; `None` when before was 0.
    pub pct: Option<f64>,
}

impl Regression {
    /// `step p50 12.000 -> 15.000 ms (+25.0%)`.
    pub fn phrase(&self) -> String {
        let what = match (&self.metric, &self.key) {
            (Metric::StepP50, _) => "step p50".to_string(),
            (Metric::KernelTotal, _) => "total kernel time".to_string(),
            (Metric::ExposedNcclPerStep, _) => "exposed NCCL per step".to_string(),
            (Metric::ExposedNcclPerSecond, _) => "exposed NCCL per second".to_string(),
            (Metric::SkewExcess, Some(k)) => format!("skew excess of {k}"),
            (Metric::SkewExcess, None) => "skew excess".to_string(),
        };
        let pct = self
            .pct
            .map_or("from 0".to_string(), |p| format!("{p:+.1}%"));
        format!("{what} {:.3} -> {:.3} ms ({pct})", self.before, self.after)
    }
}

/// `before` → `after` (ms) as a regression when it grew by more than `pct`.
pub(super) fn check(
    metric: Metric,
    key: Option<&str>,
    before: f64,
    after: f64,
    pct: f64,
) -> Option<Regression> {
    let grown = match delta_pct(before, after) {
        Some(d) => d > pct,
        None => after > before,
    };
    grown.then(|| Regression {
        metric,
        key: key.map(str::to_string),
        before,
        after,
        pct: delta_pct(before, after),
    })
}
