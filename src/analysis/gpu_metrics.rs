//! What GPU metric samples say per device: each metric's mean, range and
//! sampling interval, and the devices whose clock ran below their peers'.
//! A sample is one reading at one instant, not a count over the interval:
//! a mean of samples is the metric's level, and one between samples is
//! not seen.

use crate::profile::gpu_metrics::{MetricSeries, Totals};

/// One metric of one device over the samples taken.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricSummary {
    pub device: u32,
    pub metric: String,
    pub samples: usize,
    /// Mean time between two samples (ns), when there are two.
    pub interval_ns: Option<i64>,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

/// Each series' summary, devices in order, metrics in the export's order.
/// The interval is the mean one (first to last sample over the gaps
/// between them): nsys samples at a fixed rate.
pub fn summarize(m: &Totals) -> Vec<MetricSummary> {
    m.series
        .iter()
        .filter(|s| s.samples > 0)
        .map(|s| MetricSummary {
            device: s.device,
            metric: m.names.get(s.metric).cloned().unwrap_or_default(),
            samples: s.samples,
            interval_ns: (s.samples > 1).then(|| (s.last - s.first) / (s.samples as i64 - 1)),
            mean: s.sum / s.samples as f64,
            min: s.min,
            max: s.max,
        })
        .collect()
}

/// The mean of `s`'s samples in [`from`, `to`] and how many there were;
/// when none falls inside (a window shorter than the sampling interval),
/// the last sample before `to`, the level then.
pub fn mean_between(s: &MetricSeries, from: i64, to: i64) -> Option<(f64, usize)> {
    let lo = s.t.partition_point(|&t| t < from);
    let hi = s.t.partition_point(|&t| t <= to);
    if hi > lo {
        let v = &s.v[lo..hi];
        return Some((v.iter().sum::<f64>() / v.len() as f64, v.len()));
    }
    hi.checked_sub(1).map(|k| (s.v[k], 1))
}

/// A device whose clock's mean is this share of its peers' median or
/// less ran slower than they did.
pub const BELOW_PEERS: f64 = 0.9;

/// A device's clock below its peers'.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BelowPeers {
    /// Index into the devices the summaries were taken over (the caller's).
    pub device: usize,
    pub metric: String,
    pub mean: f64,
    pub peers_median: f64,
}

/// The unit to write after a value of `metric`: nsys names a clock
/// metric with its unit in brackets (`GPC Clock Frequency [MHz]`).
pub fn unit(metric: &str) -> &'static str {
    if metric.contains("[MHz]") { " MHz" } else { "" }
}

/// Whether a metric is a clock: its frequency, where lower means slower
/// (an SM activity below its peers' can be a rank waiting, not a slow GPU).
pub fn is_clock(metric: &str) -> bool {
    let m = metric.to_ascii_lowercase();
    m.contains("clock") && (m.contains("frequency") || m.contains("mhz"))
}

/// Devices (each one's summaries, across every file of the job) whose mean
/// of a clock metric is [`BELOW_PEERS`] of the median of every device's
/// mean or less. A median over three devices or more: with two, which one
/// is the slow one the figures cannot say.
pub fn below_peers(devices: &[&[MetricSummary]]) -> Vec<BelowPeers> {
    let mut metrics: Vec<&str> = devices
        .iter()
        .flat_map(|d| d.iter())
        .map(|s| s.metric.as_str())
        .filter(|m| is_clock(m))
        .collect();
    metrics.sort_unstable();
    metrics.dedup();
    let mut out = Vec::new();
    for metric in metrics {
        let means: Vec<(usize, f64)> = devices
            .iter()
            .enumerate()
            .filter_map(|(d, s)| s.iter().find(|s| s.metric == metric).map(|s| (d, s.mean)))
            .collect();
        if means.len() < 3 {
            continue;
        }
        let mut sorted: Vec<f64> = means.iter().map(|&(_, m)| m).collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        for (device, mean) in means {
            if mean <= BELOW_PEERS * median {
                out.push(BelowPeers {
                    device,
                    metric: metric.to_string(),
                    mean,
                    peers_median: median,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(device: u32, mhz: &[f64]) -> MetricSeries {
        MetricSeries {
            device,
            metric: 0,
            t: (0..mhz.len() as i64).map(|k| k * 1_000_000).collect(),
            v: mhz.to_vec(),
        }
    }

    fn totals(device: u32, mhz: &[f64]) -> crate::profile::gpu_metrics::SeriesTotals {
        crate::profile::gpu_metrics::SeriesTotals {
            device,
            metric: 0,
            samples: mhz.len(),
            sum: mhz.iter().sum(),
            min: mhz.iter().copied().fold(f64::INFINITY, f64::min),
            max: mhz.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            first: 0,
            last: (mhz.len() as i64 - 1) * 1_000_000,
        }
    }

    #[test]
    fn a_throttled_device_is_below_its_peers() {
        let m = Totals {
            names: vec!["GPC Clock Frequency [MHz]".into()],
            series: vec![
                totals(0, &[1980.0, 1980.0]),
                totals(1, &[1970.0, 1990.0]),
                totals(2, &[1410.0, 1410.0]),
                totals(3, &[1980.0, 1975.0]),
            ],
        };
        let s = summarize(&m);
        assert_eq!(s[1].mean, 1980.0);
        assert_eq!(
            (s[2].min, s[2].max, s[2].interval_ns),
            (1410.0, 1410.0, Some(1_000_000))
        );
        let per_device: Vec<&[MetricSummary]> = s.chunks(1).collect();
        let below = below_peers(&per_device);
        assert_eq!(below.len(), 1);
        assert_eq!((below[0].device, below[0].mean), (2, 1410.0));
        assert_eq!(below[0].peers_median, 1980.0);
        // Two devices: which is slow, the figures cannot say.
        assert!(below_peers(&per_device[1..3]).is_empty());
    }

    #[test]
    fn a_window_averages_its_samples_or_takes_the_last_before() {
        let s = clock(0, &[1000.0, 2000.0, 3000.0]);
        assert_eq!(mean_between(&s, 0, 1_000_000), Some((1500.0, 2)));
        assert_eq!(mean_between(&s, 1_200_000, 1_800_000), Some((2000.0, 1)));
        assert_eq!(mean_between(&s, -5, -1), None);
    }

    #[test]
    fn only_clocks_are_compared() {
        assert!(is_clock("GPC Clock Frequency [MHz]"));
        assert!(is_clock("SYS Clock Frequency [MHz]"));
        assert!(!is_clock("SMs Active [Throughput %]"));
    }
}
