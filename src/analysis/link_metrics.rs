//! NVLink, PCIe and NIC throughput while each collective type ran: the
//! GPU metric samples (`nsys profile --gpu-metrics-devices`) a device took
//! while one of its NCCL kernels of that op was running, against those it
//! took while none was; and a host's NIC counters (`--nic-metrics`) over
//! the intervals that fell while one of the host's NCCL kernels of that op
//! ran. A GPU metric sample is the link's level at an instant, as a share
//! of its peak — not a count of bytes: a kernel shorter than the sampling
//! interval may hold no sample at all. A NIC interval is a count over its
//! span, placed by its middle.

use super::clock::Alignment;
use super::intervals::{Span, union};
use super::kernel_class::KernelClasses;
use super::nccl_breakdown::each_kernel;
use super::nccl_name::CollOp;
use super::window::Window;
use crate::profile::gpu_metrics::MetricSeries;
use crate::profile::{DevId, LaneId, Profile};
use std::collections::BTreeMap;

/// Whether a metric is a link's throughput: NVLink's (per direction,
/// requests and responses, user and protocol data, as the GPU's metric set
/// names them) or PCIe's, as a share of peak. PCIe's request counts are
/// not.
pub fn is_link(metric: &str) -> bool {
    (metric.starts_with("NVLink ") || metric.starts_with("PCIe "))
        && metric.ends_with("[Throughput %]")
}

/// The NCCL kernels inside `w`, grouped by `key` (of the kernel's lane
/// and op) and merged per group, on each kernel's own file clock (where
/// its file's metric samples and counters are), sorted: per (device, op)
/// for GPU metrics, per (file, op) for a host's NIC counters.
pub fn nccl_spans<K: Ord>(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    w: Window,
    key: impl Fn(LaneId, CollOp) -> K,
) -> BTreeMap<K, Vec<Span>> {
    let mut spans: BTreeMap<K, Vec<Span>> = BTreeMap::new();
    each_kernel(p, classes, clock, w, |lane, row, k, _| {
        spans
            .entry(key(lane, k.op))
            .or_default()
            .push((p.gpu.start(row), p.gpu.end(row)));
    });
    for s in spans.values_mut() {
        *s = union(std::mem::take(s));
    }
    spans
}

/// A counter's total over intervals and their length: a rate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    pub intervals: usize,
    pub total: f64,
    pub ns: i64,
}

impl Rate {
    /// Per second.
    pub fn per_s(&self) -> Option<f64> {
        (self.ns > 0).then(|| self.total / self.ns as f64 * 1e9)
    }
}

/// A counter's intervals (`start`, `end`, what it added; in start order)
/// whose middle is within `bounds`, split by whether it falls in one of
/// `inside` (merged spans, sorted).
pub fn counted(
    start: &[i64],
    end: &[i64],
    v: &[f64],
    inside: &[Span],
    bounds: Span,
) -> (Rate, Rate) {
    let (mut a, mut b) = (Rate::default(), Rate::default());
    for ((&s, &e), &x) in start.iter().zip(end).zip(v) {
        let mid = s + (e - s) / 2;
        if mid < bounds.0 || mid > bounds.1 {
            continue;
        }
        let k = inside.partition_point(|sp| sp.1 <= mid);
        let r = if k < inside.len() && inside[k].0 <= mid {
            &mut a
        } else {
            &mut b
        };
        r.intervals += 1;
        r.total += x;
        r.ns += e - s;
    }
    (a, b)
}

/// Samples of a series, inside some spans and outside all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Split {
    pub inside: Level,
    pub outside: Level,
}

/// A mean over samples (None without any).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Level {
    pub samples: usize,
    sum: f64,
}

impl Level {
    fn add(&mut self, v: f64) {
        self.samples += 1;
        self.sum += v;
    }

    pub fn mean(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum / self.samples as f64)
    }
}

/// `s`'s samples within `bounds` split by whether they fall in one of
/// `inside` (merged spans, sorted; a sample at a span's start counts, one
/// at its end does not).
pub fn split(s: &MetricSeries, inside: &[Span], bounds: Span) -> Split {
    let mut out = Split::default();
    let mut k = 0;
    for (&t, &v) in s.t.iter().zip(&s.v) {
        if t < bounds.0 || t > bounds.1 {
            continue;
        }
        while k < inside.len() && inside[k].1 <= t {
            k += 1;
        }
        if k < inside.len() && inside[k].0 <= t {
            out.inside.add(v);
        } else {
            out.outside.add(v);
        }
    }
    out
}

/// The median gap between a series' samples: its sampling interval.
pub fn interval(s: &MetricSeries) -> Option<i64> {
    let mut gaps: Vec<i64> = s.t.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() {
        return None;
    }
    let mid = gaps.len() / 2;
    Some(*gaps.select_nth_unstable(mid).1)
}

/// Every NCCL span of `device`, of any op, merged: what "while no NCCL
/// kernel ran" is measured against.
pub fn any_op(spans: &BTreeMap<(DevId, CollOp), Vec<Span>>, device: DevId) -> Vec<Span> {
    union(
        spans
            .iter()
            .filter(|((d, _), _)| *d == device)
            .flat_map(|(_, s)| s.iter().copied())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(t: &[i64], v: &[f64]) -> MetricSeries {
        MetricSeries {
            device: 0,
            metric: 0,
            t: t.to_vec(),
            v: v.to_vec(),
        }
    }

    #[test]
    fn samples_split_by_the_spans_they_fall_in() {
        let s = series(&[0, 10, 20, 30, 40, 50], &[1.0, 80.0, 60.0, 2.0, 70.0, 3.0]);
        // [10, 30) and [40, 45): 10 and 20 in the first, 40 in the second;
        // 30 is the first span's end, outside
        let got = split(&s, &[(10, 30), (40, 45)], (0, 50));
        assert_eq!(got.inside.samples, 3);
        assert_eq!(got.inside.mean(), Some(70.0));
        assert_eq!(got.outside.samples, 3);
        assert_eq!(got.outside.mean(), Some(2.0));
        // bounds leave samples out on both sides
        let got = split(&s, &[(10, 30)], (5, 35));
        assert_eq!((got.inside.samples, got.outside.samples), (2, 1));
        assert_eq!(split(&s, &[], (100, 200)).inside.mean(), None);
    }

    #[test]
    fn counter_intervals_count_where_their_middle_falls() {
        // intervals of 10 ns adding 100, 200, 300; a span over the
        // second's middle (15) only
        let (inside, outside) = counted(
            &[0, 10, 20],
            &[10, 20, 30],
            &[100.0, 200.0, 300.0],
            &[(12, 18)],
            (i64::MIN, i64::MAX),
        );
        assert_eq!((inside.intervals, inside.total, inside.ns), (1, 200.0, 10));
        assert_eq!(inside.per_s(), Some(20e9));
        assert_eq!(
            (outside.intervals, outside.total, outside.ns),
            (2, 400.0, 20)
        );
        assert_eq!(Rate::default().per_s(), None);
    }

    #[test]
    fn link_metrics_are_throughputs_of_nvlink_and_pcie() {
        assert!(is_link("NVLink TX Responses User Data [Throughput %]"));
        assert!(is_link("PCIe RX Throughput [Throughput %]"));
        assert!(!is_link("PCIe Read Requests to BAR1 [Requests]"));
        assert!(!is_link("DRAM Read Bandwidth [Throughput %]"));
    }
}
