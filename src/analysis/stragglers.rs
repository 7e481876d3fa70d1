//! The straggler matrix of a group: per rank and instance, how late the
//! rank started against the instance's earliest start.
//!
//! Built from the group's [`InstanceSkew`]s (made by
//! [`super::skew::instance_skew`]), so the earliest start, and any clock
//! correction applied there, is the one every other skew figure uses.

use super::matching::Group;
use super::skew::{GroupSkew, InstanceSkew};
use crate::profile::DevId;

/// The lateness matrix of one group, over the instances its skew covers.
#[derive(Debug, Clone, PartialEq)]
pub struct StragglerMap {
    /// Index of the group in the matching.
    pub group: usize,
    /// The group's devices, in its order (the matrix's rows).
    pub devices: Vec<DevId>,
    /// 0-based instance indices (the matrix's columns), in time order.
    pub instances: Vec<usize>,
    /// Per instance: its start skew is above the big-event threshold.
    pub big: Vec<bool>,
    /// Rank-major: rank `r`, column `c` at `r * instances.len() + c`;
    /// start − the instance's earliest start, ≥ 0 ([`NOT_CAPTURED`] where
    /// the rank's capture does not cover the instance).
    pub lateness_ns: Vec<i64>,
    /// Per rank: mean and largest lateness over the columns it has.
    pub mean_ns: Vec<f64>,
    pub max_ns: Vec<i64>,
    /// Per rank: columns where it started last (ties: lowest device).
    pub late_count: Vec<usize>,
    /// Largest lateness in the matrix (the top of the scale).
    pub max_all_ns: i64,
}

impl StragglerMap {
    pub fn ranks(&self) -> usize {
        self.devices.len()
    }

    pub fn columns(&self) -> usize {
        self.instances.len()
    }

    /// The lateness of rank `r` (row) at column `c`; `None` where its
    /// capture does not cover the instance.
    pub fn at(&self, r: usize, c: usize) -> Option<i64> {
        let ns = self.lateness_ns[r * self.instances.len() + c];
        (ns != NOT_CAPTURED).then_some(ns)
    }

    /// One rank's row.
    pub fn row(&self, r: usize) -> impl Iterator<Item = Option<i64>> + '_ {
        (0..self.instances.len()).map(move |c| self.at(r, c))
    }
}

/// A cell of a rank whose capture does not cover the instance.
const NOT_CAPTURED: i64 = i64::MIN;

/// The start of rank `d` in instance `inst`, on the clock
/// [`InstanceSkew::earliest_start`] is on (the reference clock).
fn rank_start(g: &Group, inst: &InstanceSkew, d: usize) -> Option<i64> {
    g.span(inst.index, d).map(|s| s.0)
}

/// The matrix of group `g` over the instances of its skew `s`.
pub fn straggler_map(g: &Group, s: &GroupSkew) -> StragglerMap {
    let ranks = g.devices.len();
    let cols = s.instances.len();
    let mut lateness_ns = vec![0i64; ranks * cols];
    let mut late_count = vec![0usize; ranks];
    for (c, inst) in s.instances.iter().enumerate() {
        for d in 0..ranks {
            // Never negative: the earliest start is the minimum (saturating
            // maths keeps extreme timestamps from wrapping).
            lateness_ns[d * cols + c] = rank_start(g, inst, d).map_or(NOT_CAPTURED, |t| {
                t.saturating_sub(inst.earliest_start).max(0)
            });
        }
        if ranks > 0 {
            late_count[inst.late] += 1;
        }
    }
    let row = |d: usize| {
        lateness_ns[d * cols..(d + 1) * cols]
            .iter()
            .copied()
            .filter(|&x| x != NOT_CAPTURED)
    };
    let mean_ns: Vec<f64> = (0..ranks)
        .map(|d| {
            let n = row(d).count();
            if n == 0 {
                0.0
            } else {
                row(d).map(|x| x as f64).sum::<f64>() / n as f64
            }
        })
        .collect();
    let max_ns: Vec<i64> = (0..ranks).map(|d| row(d).max().unwrap_or(0)).collect();
    StragglerMap {
        group: s.group,
        devices: g.devices.clone(),
        instances: s.instances.iter().map(|i| i.index).collect(),
        big: s
            .instances
            .iter()
            .map(|i| i.start_skew_ns > s.big_threshold_ns)
            .collect(),
        max_all_ns: max_ns.iter().copied().max().unwrap_or(0),
        lateness_ns,
        mean_ns,
        max_ns,
        late_count,
    }
}

/// The group the map opens on when none is selected: the first with big
/// events, else the one with the most instances (ties: the first).
pub fn default_group(skews: &[GroupSkew]) -> Option<usize> {
    skews
        .iter()
        .find(|s| !s.big_events.is_empty())
        .or_else(|| {
            skews
                .iter()
                .rev()
                .max_by_key(|s| s.instances.len())
                .filter(|s| !s.instances.is_empty())
        })
        .map(|s| s.group)
}

/// Rank order by mean lateness, latest first (ties: group order).
pub fn by_mean_lateness(m: &StragglerMap) -> Vec<usize> {
    let mut order: Vec<usize> = (0..m.ranks()).collect();
    order.sort_by(|&a, &b| m.mean_ns[b].total_cmp(&m.mean_ns[a]).then(a.cmp(&b)));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skew_of(index: usize, earliest: i64, late: usize, skew: i64) -> InstanceSkew {
        InstanceSkew {
            index,
            op: crate::analysis::nccl_name::CollOp::AllReduce,
            ranks: 4,
            earliest_start: earliest,
            start_skew_ns: skew,
            end_skew_ns: 0,
            late,
            early: 0,
            baseline_ns: 0,
            total_ns: 0,
            max_duration_ns: 0,
            resolvable: true,
            unfinished: false,
            open: false,
        }
    }

    fn group_skew(group: usize, instances: Vec<InstanceSkew>, big: bool) -> GroupSkew {
        let big_events = if big {
            vec![crate::analysis::skew::BigEvent {
                instance: instances[0].clone(),
                step: None,
                offset_in_step_ns: None,
                late_host: None,
            }]
        } else {
            Vec::new()
        };
        GroupSkew {
            group,
            instances,
            start_skew_ms: None,
            end_skew_ms: None,
            nccl_total_ns: 0,
            baseline_ns: 0,
            big_threshold_ns: 0,
            big_events,
            big_excess_ns: 0,
            other_excess_ns: 0,
            late_counts: Vec::new(),
            early_counts: Vec::new(),
            mean_lateness_ms_excluding_big: Vec::new(),
        }
    }

    #[test]
    fn the_default_group_is_the_first_with_big_events_else_the_largest() {
        let one =
            |g, n: usize, big| group_skew(g, (0..n).map(|k| skew_of(k, 0, 0, 0)).collect(), big);
        assert_eq!(
            default_group(&[one(0, 5, false), one(1, 2, true), one(2, 1, true)]),
            Some(1)
        );
        assert_eq!(
            default_group(&[one(0, 2, false), one(1, 5, false), one(2, 5, false)]),
            Some(1)
        );
        assert_eq!(default_group(&[one(0, 0, false)]), None);
        assert_eq!(default_group(&[]), None);
    }
}
