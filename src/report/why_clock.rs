//! For the `why` section: a late rank's GPU clock over its GPU part (from
//! the kernel's launch to its start, or the lateness when the CPU part is
//! unknown) against its peers' over the same span, where the capture
//! sampled GPU metrics. A GPU that queued nothing and still started late,
//! at a lower clock than its peers, was slow, not held.

use crate::analysis::Window;
use crate::analysis::clock::Alignment;
use crate::analysis::gpu_metrics::{self, BELOW_PEERS};
use crate::analysis::why::Why;
use crate::profile::gpu_metrics::{GpuMetrics, read};
use crate::profile::{DevId, Profile};

/// Every file's GPU metric samples (files without them, or that cannot be
/// read, give none: `report metrics` says why).
#[derive(Default)]
pub struct Samples(Vec<(usize, GpuMetrics)>);

impl Samples {
    pub fn read(p: &Profile) -> Samples {
        Samples(
            p.files
                .iter()
                .enumerate()
                .filter(|(_, f)| f.has_table("GPU_METRICS"))
                .filter_map(|(i, f)| {
                    read(&f.path, &gpu_metrics::is_clock)
                        .ok()
                        .flatten()
                        .map(|m| (i, m))
                })
                .collect(),
        )
    }

    /// The clock series of device `d`, with its file.
    fn clock_of(
        &self,
        p: &Profile,
        d: DevId,
    ) -> Option<(usize, &str, &crate::profile::gpu_metrics::MetricSeries)> {
        let dev = &p.devices[d as usize];
        self.0
            .iter()
            .filter(|(f, _)| p.files[*f].host_index == dev.host)
            .find_map(|(f, m)| {
                m.series
                    .iter()
                    .filter(|s| s.device == dev.id)
                    .find_map(|s| {
                        let name = m.names.get(s.metric)?;
                        gpu_metrics::is_clock(name).then_some((*f, name.as_str(), s))
                    })
            })
    }
}

/// The late rank's clock over its GPU part and its peers'.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockDuring {
    pub metric: String,
    pub late: f64,
    pub samples: usize,
    pub peers_median: f64,
    pub peers: usize,
}

impl ClockDuring {
    pub fn below_peers(&self) -> bool {
        self.late <= BELOW_PEERS * self.peers_median
    }
}

/// `w`'s device's clock over its GPU part against the other members' of
/// its instance (`peers`), each read on its own file's clock.
pub fn during(
    p: &Profile,
    clock: &Alignment,
    s: &Samples,
    w: &Why,
    peers: &[DevId],
) -> Option<ClockDuring> {
    let start = clock.gpu_start(p, w.row);
    let held = if w.split_known() {
        w.gpu_ns
    } else {
        w.lateness_ns
    };
    let span = Window {
        start: start - held.max(0),
        end: start,
    };
    between(p, clock, s, w.device, peers, span)
}

/// Device `device`'s clock over `span` (reference clock) against `peers'`
/// (itself left out), each read on its own file's clock.
pub fn between(
    p: &Profile,
    clock: &Alignment,
    s: &Samples,
    device: DevId,
    peers: &[DevId],
    span: Window,
) -> Option<ClockDuring> {
    let mean = |d: DevId| {
        let (file, name, series) = s.clock_of(p, d)?;
        let local = clock.window_in_file(file, span);
        gpu_metrics::mean_between(series, local.start, local.end).map(|(m, n)| (name, m, n))
    };
    let (metric, late, samples) = mean(device)?;
    let mut others: Vec<f64> = peers
        .iter()
        .filter(|&&d| d != device)
        .filter_map(|&d| mean(d).filter(|x| x.0 == metric).map(|x| x.1))
        .collect();
    if others.is_empty() {
        return None;
    }
    others.sort_by(f64::total_cmp);
    Some(ClockDuring {
        metric: metric.to_string(),
        late,
        samples,
        peers_median: others[others.len() / 2],
        peers: others.len(),
    })
}
