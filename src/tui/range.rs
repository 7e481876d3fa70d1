//! A time range marked on the ruler (`,` and `.`, or a drag on the
//! ruler), and what is in it: busy time per lane in view (interval
//! unions), the kernels and NVTX ranges by time (as `report stats
//! --window` counts them: wholly inside), the collective instances inside
//! with their skews. Pure: derived once per range and view.

use super::data::Loaded;
use super::lanes::LaneKind;
use crate::analysis::Window;
use crate::analysis::intervals;
use crate::analysis::name_stats::{self, StatRow, StatsBy, StatsOf};
use crate::profile::DevId;
use crate::profile::names::KernelNames;

/// The marks: a start, and an end once given (in either order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RangeMarks {
    pub start: Option<i64>,
    pub end: Option<i64>,
}

impl RangeMarks {
    /// The range, once both ends are marked (on the reference clock).
    pub fn window(&self) -> Option<Window> {
        let (a, b) = (self.start?, self.end?);
        Some(Window {
            start: a.min(b),
            end: a.max(b),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_none() && self.end.is_none()
    }
}

/// The range as `report` and `export` take it: `--window START END`, in
/// seconds on the reference clock.
pub fn window_arg(w: Window) -> String {
    format!(
        "--window {:.9} {:.9}",
        w.start as f64 / 1e9,
        w.end as f64 / 1e9
    )
}

/// One collective instance wholly inside the range.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceIn {
    pub group: usize,
    pub index: usize,
    pub start_skew_ns: i64,
    pub late: DevId,
}

/// What the range holds.
#[derive(Debug, Clone)]
pub struct RangeFacts {
    pub window: Window,
    /// Per row in view that has GPU work or CUDA calls: the time any of
    /// its events runs inside the range (their union, clipped to it).
    pub busy: Vec<(LaneKind, i64)>,
    /// By total time, largest first, wholly inside the range.
    pub kernels: Vec<StatRow>,
    pub nvtx: Vec<StatRow>,
    /// In time order.
    pub instances: Vec<InstanceIn>,
}

/// The facts of `w` for the rows `rows` (those on screen).
pub fn facts(l: &Loaded, w: Window, rows: &[LaneKind], names: KernelNames) -> RangeFacts {
    let (p, clock) = (&l.profile, &l.analysis.clock);
    // A device's busy time on its own file's clock, only the range
    // placed in it — as `report overlap --window` measures it.
    let lane_spans = |lane: usize, out: &mut Vec<(i64, i64)>| {
        let file = p.lane_file(lane as _);
        let wf = clock.window_in_file(file, w);
        out.extend(
            clock
                .lane_rows(p, lane as _, w, file)
                .filter_map(|(_, s, e)| wf.clip(s, e)),
        );
    };
    let mut busy = Vec::new();
    for &row in rows {
        let mut spans: Vec<intervals::Span> = Vec::new();
        match row {
            LaneKind::Stream(l) => lane_spans(l as usize, &mut spans),
            LaneKind::Device(d) => {
                for (i, lane) in p.lanes.iter().enumerate() {
                    if lane.device == d {
                        lane_spans(i, &mut spans);
                    }
                }
            }
            LaneKind::Api(t) => {
                spans.extend(clock.thread_calls(p, t as usize, w).filter_map(|r| {
                    let (s, e) = clock.runtime_span(p, r);
                    w.clip(s, e)
                }))
            }
            _ => continue,
        }
        busy.push((row, intervals::total(&intervals::union(spans))));
    }
    let table = |of| name_stats::table(p, clock, of, StatsBy::Name, names, w).unwrap_or_default();
    let mut instances = Vec::new();
    for gs in &l.analysis.skews {
        let g = &l.analysis.matching.groups[gs.group];
        for i in &gs.instances {
            if i.earliest_start < w.start || i.earliest_start > w.end {
                continue;
            }
            let end = g.members(i.index).map(|m| m.2.1).max().unwrap_or(i64::MAX);
            if end <= w.end {
                instances.push(InstanceIn {
                    group: gs.group,
                    index: i.index,
                    start_skew_ns: i.start_skew_ns,
                    late: g.devices[i.late],
                });
            }
        }
    }
    // The earliest start of each, once (a key reads every rank's kernel).
    instances.sort_by_cached_key(|i| {
        let g = &l.analysis.matching.groups[i.group];
        (g.members(i.index).map(|m| m.2.0).min(), i.group, i.index)
    });
    RangeFacts {
        window: w,
        busy,
        kernels: table(StatsOf::Kernels),
        nvtx: table(StatsOf::Nvtx),
        instances,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_either_way() {
        let m = RangeMarks {
            start: Some(50),
            end: Some(10),
        };
        assert_eq!(m.window(), Some(Window { start: 10, end: 50 }));
        assert_eq!(RangeMarks::default().window(), None);
    }
}
