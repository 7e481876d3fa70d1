//! Exposed NCCL time: NCCL time with no compute under it, the part of
//! communication a step waits for. The gate watches it rather than summed
//! kernel time, which grows whenever an NCCL kernel waits longer for a
//! late peer although no step got slower.
//!
//! Not overlapped is an upper bound on what better overlap could save,
//! not a promise.

use super::overlap::OverlapPair;
use super::side::delta_pct;
use crate::analysis::overlap::DeviceOverlap;

/// What the exposed time is divided by, the same on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExposedPer {
    /// Both sides have steps: ms per step.
    Step,
    /// Otherwise: ms per second of each device's span.
    Second,
}

impl ExposedPer {
    /// As text and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            ExposedPer::Step => "step",
            ExposedPer::Second => "second",
        }
    }
}

/// Exposed NCCL time before and after, in ms per step (or per second),
/// the mean over each side's devices with NCCL time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExposedNccl {
    pub per: ExposedPer,
    pub before_ms: f64,
    pub after_ms: f64,
}

impl ExposedNccl {
    pub fn delta_pct(&self) -> Option<f64> {
        delta_pct(self.before_ms, self.after_ms)
    }
}

/// `None` when neither side has NCCL time on any device.
pub fn exposed_nccl(
    pairs: &[OverlapPair],
    steps_before: usize,
    steps_after: usize,
) -> Option<ExposedNccl> {
    let per = if steps_before > 0 && steps_after > 0 {
        ExposedPer::Step
    } else {
        ExposedPer::Second
    };
    let side = |pick: fn(&OverlapPair) -> Option<&DeviceOverlap>, steps: usize| {
        let each: Vec<f64> = pairs
            .iter()
            .filter_map(pick)
            .filter(|o| o.nccl_ns > 0)
            .map(|o| match per {
                ExposedPer::Step => o.nccl_only_ns as f64 / 1e6 / steps as f64,
                ExposedPer::Second if o.span_ns > 0 => {
                    1e3 * o.nccl_only_ns as f64 / o.span_ns as f64
                }
                ExposedPer::Second => 0.0,
            })
            .collect();
        (!each.is_empty()).then(|| each.iter().sum::<f64>() / each.len() as f64)
    };
    let before = side(|p| p.before.as_ref(), steps_before);
    let after = side(|p| p.after.as_ref(), steps_after);
    (before.is_some() || after.is_some()).then(|| ExposedNccl {
        per,
        before_ms: before.unwrap_or(0.0),
        after_ms: after.unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{DeviceKey, DeviceLabel};

    fn device(nccl_only_ms: i64, nccl_ms: i64, span_ms: i64) -> DeviceOverlap {
        DeviceOverlap {
            device: 0,
            span_ns: span_ms * 1_000_000,
            compute_only_ns: 0,
            nccl_only_ns: nccl_only_ms * 1_000_000,
            overlap_ns: (nccl_ms - nccl_only_ms) * 1_000_000,
            copy_only_ns: 0,
            idle_ns: 0,
            nccl_ns: nccl_ms * 1_000_000,
            compute_kernels: 0,
            nccl_kernels: 1,
            copies: 0,
        }
    }

    fn pair(b: Option<DeviceOverlap>, a: Option<DeviceOverlap>) -> OverlapPair {
        OverlapPair {
            device: DeviceLabel {
                key: DeviceKey::Id(0),
                text: "0".into(),
            },
            before: b,
            after: a,
        }
    }

    #[test]
    fn exposed_time_is_the_mean_over_devices_with_nccl_per_step_else_per_second() {
        let pairs = [
            pair(Some(device(10, 30, 100)), Some(device(20, 30, 100))),
            pair(Some(device(30, 40, 200)), Some(device(40, 40, 200))),
            // No NCCL: not part of the mean.
            pair(Some(device(0, 0, 100)), Some(device(0, 0, 100))),
        ];
        let e = exposed_nccl(&pairs, 5, 10).unwrap();
        assert_eq!(e.per, ExposedPer::Step);
        // (10/5 + 30/5) / 2 before; (20/10 + 40/10) / 2 after.
        assert_eq!((e.before_ms, e.after_ms), (4.0, 3.0));
        assert_eq!(e.delta_pct(), Some(-25.0));
        let e = exposed_nccl(&pairs, 0, 10).unwrap();
        assert_eq!(e.per, ExposedPer::Second);
        // (1000·10/100 + 1000·30/200) / 2 = 125; (200 + 200) / 2 = 200.
        assert_eq!((e.before_ms, e.after_ms), (125.0, 200.0));
        assert_eq!(exposed_nccl(&pairs[2..], 5, 5), None);
    }
}
