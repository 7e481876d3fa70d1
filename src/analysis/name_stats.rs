//! The tables every Nsight user knows (`nsys stats` `cuda_gpu_kern_sum`,
//! `nvtx_sum`, `cuda_api_sum`, `osrt_sum`, `cuda_gpu_mem_time_sum`): per
//! name (or per device or stream and name) the count and total, mean,
//! median, min, max and sample standard deviation of the durations,
//! sorted by total. Defined as nsys defines them: durations inclusive (an
//! NVTX range's includes its children), the median of an even count the
//! mean of the two middle values, stddev over n − 1; kernels by their
//! demangled name (the short one where there is none).

use super::clock::Alignment;
use super::window::Window;
use crate::profile::names::KernelNames;
use crate::profile::{DevId, GpuKind, LaneId, Profile, Sym};
use std::collections::HashMap;

/// The columns of a stats table as nsys heads them (with their units),
/// the report's and the timeline's alike.
pub const COLUMNS: [&str; 9] = [
    "time_%",
    "total_ms",
    "count",
    "avg_ms",
    "med_ms",
    "min_ms",
    "max_ms",
    "stddev_ms",
    "name",
];

/// Which events a table is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatsOf {
    #[default]
    Kernels,
    Nvtx,
    Api,
    Osrt,
    Copies,
}

impl StatsOf {
    pub const ALL: [StatsOf; 5] = [
        StatsOf::Kernels,
        StatsOf::Nvtx,
        StatsOf::Api,
        StatsOf::Osrt,
        StatsOf::Copies,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StatsOf::Kernels => "kernels",
            StatsOf::Nvtx => "nvtx",
            StatsOf::Api => "api",
            StatsOf::Osrt => "osrt",
            StatsOf::Copies => "copies",
        }
    }

    /// What the table counts, as its heading says it.
    /// What the table is of; kernels by the names they are counted under.
    pub fn described(self, names: KernelNames) -> &'static str {
        match self {
            StatsOf::Kernels if names == KernelNames::Short => "GPU kernels (by short name)",
            StatsOf::Kernels => "GPU kernels (by demangled name)",
            StatsOf::Copies => "GPU memory copies and sets",
            StatsOf::Nvtx => "NVTX ranges (inclusive of nested ranges)",
            StatsOf::Api => "CUDA API calls (runtime and driver)",
            StatsOf::Osrt => "OS runtime calls",
        }
    }

    /// Events on the GPU (a device and a stream each).
    pub fn on_gpu(self) -> bool {
        matches!(self, StatsOf::Kernels | StatsOf::Copies)
    }
}

/// What rows are per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatsBy {
    #[default]
    Name,
    Device,
    Stream,
}

impl StatsBy {
    pub const ALL: [StatsBy; 3] = [StatsBy::Name, StatsBy::Device, StatsBy::Stream];

    pub fn name(self) -> &'static str {
        match self {
            StatsBy::Name => "name",
            StatsBy::Device => "device",
            StatsBy::Stream => "stream",
        }
    }
}

/// Why `by` cannot split `of` (device and stream are for GPU events), if
/// it cannot: the one line the command line and the report say.
pub fn by_refused(of: StatsOf, by: StatsBy) -> Option<String> {
    (by != StatsBy::Name && !of.on_gpu()).then(|| {
        format!(
            "--by {} is for kernels and copies (GPU events); {} are per name",
            by.name(),
            of.name()
        )
    })
}

/// One row of a stats table; times in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct StatRow {
    pub name: Sym,
    /// An NVTX range's domain (Sym 0: the default one); `None` for other
    /// events. nsys keeps ranges of one name in two domains apart.
    pub domain: Option<Sym>,
    /// With `--by device` or `stream`.
    pub device: Option<DevId>,
    /// With `--by stream`.
    pub lane: Option<LaneId>,
    pub count: usize,
    /// GPU copies and sets: the operations its records hold (a batched
    /// copy record, `copyCount` > 1, holds several; its time is the
    /// record's). Equal to `count` for every other row.
    pub copies: u64,
    pub total_ns: i64,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// Sample standard deviation (n − 1); 0 for one event.
    pub stddev_ns: f64,
}

impl StatRow {
    /// Whether its records hold batched copies (`copyCount` > 1): more
    /// copies than records.
    pub fn batched(&self) -> bool {
        self.copies != self.count as u64
    }

    /// The row's name as nsys's tables show it: an NVTX range as
    /// `domain:name` (`:name` in the default domain), others as named.
    pub fn label<'a>(&self, strings: &'a crate::profile::Interner) -> std::borrow::Cow<'a, str> {
        match self.domain {
            Some(d) => format!("{}:{}", strings.get(d), strings.get(self.name)).into(),
            None => strings.get(self.name).into(),
        }
    }
}

/// The table of `of` per `by`, over the events wholly inside `w` (on the
/// reference clock), largest total first (then by name) — within each
/// device (and stream) with `by` device or stream. `by` other than
/// name is for GPU events only: [`by_refused`] for the others.
pub fn table(
    p: &Profile,
    clock: &Alignment,
    of: StatsOf,
    by: StatsBy,
    names: KernelNames,
    w: Window,
) -> Result<Vec<StatRow>, String> {
    if let Some(why) = by_refused(of, by) {
        return Err(why);
    }
    type Key = (Sym, Option<Sym>, Option<DevId>, Option<LaneId>);
    let mut groups: HashMap<Key, (Vec<i64>, u64)> = HashMap::new();
    each(p, clock, of, names, w, &mut |r, name, lane, d| {
        // nsys names a domain only from its create event: unnamed, none.
        let domain = (of == StatsOf::Nvtx).then(|| {
            let d = p.nvtx.domain(r);
            if crate::profile::names::is_unnamed_domain(p.strings.get(d)) {
                0
            } else {
                d
            }
        });
        let key = match (by, lane) {
            (StatsBy::Device, Some(l)) => (name, domain, Some(p.lanes[l as usize].device), None),
            (StatsBy::Stream, Some(l)) => (name, domain, Some(p.lanes[l as usize].device), Some(l)),
            _ => (name, domain, None, None),
        };
        let ops = if of == StatsOf::Copies {
            u64::from(p.gpu.copies(r))
        } else {
            1
        };
        let g = groups.entry(key).or_default();
        g.0.push(d);
        g.1 += ops;
    });
    let mut rows: Vec<StatRow> = groups
        .into_iter()
        .map(|((name, domain, device, lane), (mut d, copies))| StatRow {
            domain,
            copies,
            ..row(name, device, lane, &mut d)
        })
        .collect();
    // Per device (and stream) when the rows are: each one's rows together,
    // largest total first within it.
    rows.sort_by(|a, b| {
        (a.device, a.lane)
            .cmp(&(b.device, b.lane))
            .then(b.total_ns.cmp(&a.total_ns))
            .then_with(|| a.label(&p.strings).cmp(&b.label(&p.strings)))
    });
    Ok(rows)
}

/// The rows of the events of `of` named `name` wholly inside `w`,
/// longest first (the stats view's Enter, then `n` / `N`).
pub fn longest_first(
    p: &Profile,
    clock: &Alignment,
    of: StatsOf,
    names: KernelNames,
    name: Sym,
    w: Window,
) -> Vec<usize> {
    let mut found = Vec::new();
    each(p, clock, of, names, w, &mut |r, n, _, d| {
        if n == name {
            found.push((d, r));
        }
    });
    found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    found.into_iter().map(|(_, r)| r).collect()
}

/// Every event of `of` wholly inside `w` (on the reference clock): its
/// row, the name it is counted under (a kernel's as `names` says), its
/// lane (GPU events) and duration.
fn each(
    p: &Profile,
    clock: &Alignment,
    of: StatsOf,
    names: KernelNames,
    w: Window,
    visit: &mut dyn FnMut(usize, Sym, Option<LaneId>, i64),
) {
    if of.on_gpu() {
        for lane_id in 0..p.lanes.len() as LaneId {
            let file = p.lane_file(lane_id);
            let wf = clock.window_in_file(file, w);
            for (r, s, e) in clock.lane_rows(p, lane_id, w, file) {
                let kind = p.gpu.kind(r);
                let wanted = match of {
                    StatsOf::Kernels => kind == GpuKind::Kernel,
                    _ => kind != GpuKind::Kernel,
                };
                if !wanted || !wf.contains(s, e) {
                    continue;
                }
                let name = match of {
                    StatsOf::Kernels => p.gpu.name_as(r, names),
                    _ => p.gpu.name(r),
                };
                visit(r, name, Some(lane_id), e.saturating_sub(s));
            }
        }
        return;
    }
    for t in 0..p.threads.len() {
        let wf = clock.window_in_file(p.thread_file(t as _), w);
        let mut rows = |rows: std::ops::Range<usize>,
                        one: &dyn Fn(usize) -> Option<(Sym, i64, i64)>| {
            for r in rows {
                if let Some((name, s, e)) = one(r)
                    && wf.contains(s, e)
                {
                    visit(r, name, None, e.saturating_sub(s));
                }
            }
        };
        match of {
            StatsOf::Api => rows(p.runtime_by_thread[t].clone(), &|r| {
                Some((p.runtime.name(r), p.runtime.start(r), p.runtime.end(r)))
            }),
            StatsOf::Nvtx => rows(p.nvtx_by_thread[t].clone(), &|r| {
                p.nvtx
                    .is_range(r)
                    .then(|| (p.nvtx.name(r), p.nvtx.start(r), p.nvtx.end(r)))
            }),
            StatsOf::Osrt => rows(p.osrt_by_thread[t].clone(), &|r| {
                Some((p.osrt.name(r), p.osrt.start(r), p.osrt.end(r)))
            }),
            StatsOf::Kernels | StatsOf::Copies => {}
        }
    }
}

/// The table's total: its rows' totals summed (saturating).
pub fn total_ns(rows: &[StatRow]) -> i64 {
    rows.iter().fold(0i64, |a, r| a.saturating_add(r.total_ns))
}

/// A row's share of a table's total `total`, in percent.
pub fn share_pct(r: &StatRow, total: i64) -> f64 {
    if total > 0 {
        100.0 * r.total_ns as f64 / total as f64
    } else {
        0.0
    }
}

fn row(name: Sym, device: Option<DevId>, lane: Option<LaneId>, d: &mut [i64]) -> StatRow {
    d.sort_unstable();
    let n = d.len();
    let total = d.iter().fold(0i64, |a, &x| a.saturating_add(x));
    let mean = d.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
    let median = if n % 2 == 1 {
        d[n / 2] as f64
    } else {
        (d[n / 2 - 1] as f64 + d[n / 2] as f64) / 2.0
    };
    let stddev = if n > 1 {
        (d.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    StatRow {
        name,
        domain: None,
        device,
        lane,
        count: n,
        copies: n as u64,
        total_ns: total,
        mean_ns: mean,
        median_ns: median,
        min_ns: d[0],
        max_ns: d[n - 1],
        stddev_ns: stddev,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two_and_stddev_is_n_minus_1() {
        let r = row(0, None, None, &mut [4, 1, 3, 2]);
        assert_eq!((r.count, r.total_ns, r.min_ns, r.max_ns), (4, 10, 1, 4));
        assert_eq!(r.median_ns, 2.5);
        assert_eq!(r.mean_ns, 2.5);
        // Σ (x − 2.5)² = 5, over n − 1 = 3.
        assert!((r.stddev_ns - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        let one = row(0, None, None, &mut [7]);
        assert_eq!((one.median_ns, one.stddev_ns), (7.0, 0.0));
    }
}
