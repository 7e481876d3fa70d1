//! The steps view's state: a row per step, a column per rank (a host's
//! ranks folded into one column, its worst, when there are many), the
//! figure each cell shows, the cursor cell and the two scrolls. The
//! figures are read from the capture's [`StepOverview`], never computed
//! here.

use super::scroll::Scroll;
use super::timescale::short_duration;
use crate::analysis::critical_path::{SegKind, StepPath};
use crate::analysis::step_account::RankStep;
use crate::analysis::step_overview::{StepOverview, composition};
use crate::profile::{DevId, Profile};
use std::collections::HashSet;

/// What a cell shows: one rank's figure in one step (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StepFigure {
    /// Exposed NCCL time before its call's last member arrived.
    #[default]
    Waiting,
    /// Exposed NCCL time after the last arrival.
    Transfer,
    HostBound,
    Dependency,
    /// Compute kernels' time over the peers' median for the same kernels.
    Slowdown,
    /// The step's critical path on this rank.
    OnPath,
    /// Compute kernels' time, alone or under NCCL.
    Compute,
    Idle,
}

impl StepFigure {
    pub const ALL: [StepFigure; 8] = [
        StepFigure::Waiting,
        StepFigure::Transfer,
        StepFigure::HostBound,
        StepFigure::Dependency,
        StepFigure::Slowdown,
        StepFigure::OnPath,
        StepFigure::Compute,
        StepFigure::Idle,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StepFigure::Waiting => "waiting",
            StepFigure::Transfer => "transfer",
            StepFigure::HostBound => "host-bound",
            StepFigure::Dependency => "dependency",
            StepFigure::Slowdown => "compute slowdown",
            StepFigure::OnPath => "on the critical path",
            StepFigure::Compute => "compute",
            StepFigure::Idle => "other idle",
        }
    }

    /// What the figure is, for the legend.
    pub fn meaning(self) -> &'static str {
        match self {
            StepFigure::Waiting => {
                "NCCL alone before its collective's last member started (the rank waited)"
            }
            StepFigure::Transfer => "NCCL alone after the last member started",
            StepFigure::HostBound => {
                "GPU idle while the next work's launch call had not returned (the CPU did not keep up)"
            }
            StepFigure::Dependency => {
                "GPU idle while its stream waited on an event recorded or completed later"
            }
            StepFigure::Slowdown => {
                "compute kernels' time over the peers' median for the same kernels"
            }
            StepFigure::OnPath => "time of the step's critical path on this rank",
            StepFigure::Compute => "compute kernels' time, alone or under NCCL",
            StepFigure::Idle => "GPU idle for no cause found",
        }
    }

    /// The next figure (`forward`) or the one before.
    pub fn cycle(self, forward: bool) -> StepFigure {
        let n = StepFigure::ALL.len();
        let i = StepFigure::ALL.iter().position(|&f| f == self).unwrap_or(0);
        StepFigure::ALL[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }

    /// Rank `rank` (an index into the step's ranks) in step index `step`.
    pub fn value(self, o: &StepOverview, step: usize, rank: usize) -> Option<i64> {
        let r: &RankStep = o.accounts.get(step)?.ranks.get(rank)?;
        Some(match self {
            StepFigure::Waiting => r.waiting_ns,
            StepFigure::Transfer => r.transfer_ns,
            StepFigure::HostBound => r.host_bound_ns,
            StepFigure::Dependency => r.dependency_ns,
            StepFigure::Idle => r.idle_ns,
            StepFigure::Compute => r.compute_ns + r.overlapped_ns,
            StepFigure::Slowdown => {
                // Sorted by device (a search: this runs per cell per frame).
                let cs = o.compute.get(step)?;
                let c = &cs[cs.binary_search_by_key(&r.device, |c| c.device).ok()?];
                (c.compute_ns - c.peers_ns).max(0)
            }
            StepFigure::OnPath => o.on_path.get(step).map_or(0, |by| {
                by.binary_search_by_key(&r.device, |e| e.0)
                    .map_or(0, |i| by[i].1)
            }),
        })
    }
}

/// One column of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepCol {
    /// A collapsed host: its ranks' largest figure per step.
    Host { host: u32, ranks: Vec<usize> },
    /// A rank: an index into each step's ranks.
    Rank(usize),
}

#[derive(Debug, Clone)]
pub struct StepsView {
    pub figure: StepFigure,
    /// Per rank (in the overview's order): its device and host.
    pub devices: Vec<DevId>,
    pub hosts: Vec<u32>,
    pub collapsed: HashSet<u32>,
    pub cols: Vec<StepCol>,
    /// The cursor: a step (index) and a column.
    pub row: usize,
    pub col: usize,
    pub steps: usize,
    /// Vertical over the steps; horizontal over the columns (drawing
    /// records what fits).
    pub rows_scroll: Scroll,
    pub cols_scroll: Scroll,
}

impl StepsView {
    /// The view of `o`'s steps, ranks on `hosts` (per rank); past a few
    /// hundred ranks each host opens folded.
    pub fn new(o: &StepOverview, hosts: Vec<u32>) -> StepsView {
        let devices = o
            .accounts
            .first()
            .map(|a| a.ranks.iter().map(|r| r.device).collect())
            .unwrap_or_default();
        let collapsed = if crate::tui::lanes::hosts_start_collapsed(&hosts) {
            hosts.iter().copied().collect()
        } else {
            HashSet::new()
        };
        let mut v = StepsView {
            figure: StepFigure::default(),
            devices,
            hosts,
            collapsed,
            cols: Vec::new(),
            // The first step after warm-up.
            row: o.warmup.min(o.accounts.len().saturating_sub(1)),
            col: 0,
            steps: o.accounts.len(),
            rows_scroll: Scroll::default(),
            cols_scroll: Scroll::default(),
        };
        v.rebuild_cols();
        v
    }

    /// Ranks in order, each host's folded into one column when collapsed.
    pub fn rebuild_cols(&mut self) {
        let keep = self.cols.get(self.col).cloned();
        self.cols.clear();
        for (r, &h) in self.hosts.iter().enumerate() {
            if !self.collapsed.contains(&h) {
                self.cols.push(StepCol::Rank(r));
                continue;
            }
            match self.cols.last_mut() {
                Some(StepCol::Host { host, ranks }) if *host == h => ranks.push(r),
                _ => self.cols.push(StepCol::Host {
                    host: h,
                    ranks: vec![r],
                }),
            }
        }
        // The cursor stays on its rank, or the host it folded into.
        let found = keep.and_then(|k| {
            let host = match k {
                StepCol::Rank(r) => self.hosts[r],
                StepCol::Host { host, .. } => host,
            };
            self.cols.iter().position(|c| *c == k).or_else(|| {
                self.cols.iter().position(|c| match c {
                    StepCol::Host { host: h, .. } => *h == host,
                    StepCol::Rank(r) => self.hosts[*r] == host,
                })
            })
        });
        self.col = found.unwrap_or(0).min(self.cols.len().saturating_sub(1));
        self.cols_scroll.len = self.cols.len();
        self.cols_scroll.show(self.col);
    }

    /// The figure in the cell of step index `step` and column `col`, and
    /// the rank it is of (a folded host's worst rank).
    pub fn cell(&self, o: &StepOverview, step: usize, col: usize) -> Option<(i64, usize)> {
        match self.cols.get(col)? {
            StepCol::Rank(r) => Some((self.figure.value(o, step, *r)?, *r)),
            StepCol::Host { ranks, .. } => ranks
                .iter()
                .filter_map(|&r| Some((self.figure.value(o, step, r)?, std::cmp::Reverse(r))))
                .max()
                .map(|(v, r)| (v, r.0)),
        }
    }

    /// The top of the colour scale: the largest figure after warm-up (the
    /// warm-up's own when there is nothing after it).
    pub fn top(&self, o: &StepOverview) -> i64 {
        let all = |from: usize| {
            (from..self.steps)
                .flat_map(|s| {
                    (0..self.devices.len()).filter_map(move |r| self.figure.value(o, s, r))
                })
                .max()
                .unwrap_or(0)
        };
        match all(o.warmup.min(self.steps)) {
            0 => all(0),
            top => top,
        }
    }

    /// What Enter on the cursor opens: (step index, rank).
    pub fn target(&self, o: &StepOverview) -> Option<(usize, usize)> {
        let (_, r) = self.cell(o, self.row, self.col)?;
        Some((self.row, r))
    }

    pub fn move_row(&mut self, by: isize) {
        let n = self.steps as isize;
        self.row = (self.row as isize + by).clamp(0, (n - 1).max(0)) as usize;
        self.rows_scroll.show(self.row);
    }

    pub fn move_col(&mut self, by: isize) {
        let n = self.cols.len() as isize;
        self.col = (self.col as isize + by).clamp(0, (n - 1).max(0)) as usize;
        self.cols_scroll.show(self.col);
    }

    pub fn put_cursor(&mut self, row: usize, col: usize) {
        self.row = row.min(self.steps.saturating_sub(1));
        self.col = col.min(self.cols.len().saturating_sub(1));
        self.rows_scroll.show(self.row);
        self.cols_scroll.show(self.col);
    }

    /// Folds or unfolds the host of the cursor's column.
    pub fn toggle_collapse(&mut self) {
        let host = match self.cols.get(self.col) {
            Some(StepCol::Rank(r)) => self.hosts[*r],
            Some(StepCol::Host { host, .. }) => *host,
            None => return,
        };
        if !self.collapsed.remove(&host) {
            self.collapsed.insert(host);
        }
        self.rebuild_cols();
    }

    pub fn cycle_figure(&mut self, forward: bool) {
        self.figure = self.figure.cycle(forward);
    }
}

/// A step's critical path in a line: its time, then its largest kinds
/// with the rank holding most of each rank's own kind ("41.2 ms — 30.1 ms
/// compute on D5 …, 8.0 ms transfer, 2.0 ms other").
pub fn path_words(p: &Profile, path: &StepPath) -> String {
    let parts: Vec<String> = composition(path)
        .iter()
        .take(4)
        .map(|k| {
            let mut s = format!("{} {}", short_duration(k.ns), k.kind.name());
            if matches!(k.kind, SegKind::Compute | SegKind::OsWait | SegKind::Host)
                && let Some((Some(d), _)) = k.devices.first()
            {
                s += &format!(" on {}", p.device_label(*d).tag());
                if k.devices.len() > 1 {
                    s += " …";
                }
            }
            s
        })
        .collect();
    format!(
        "{} — {}",
        short_duration(path.span.1 - path.span.0),
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compute_stragglers::StepCompute;
    use crate::analysis::step_account::StepAccount;

    fn rank(device: DevId, waiting_ns: i64) -> RankStep {
        RankStep {
            device,
            waiting_ns,
            compute_ns: 10,
            ..RankStep::default()
        }
    }

    /// 3 steps (the first warm-up) × 4 ranks; ranks 0, 1 on host 0 and
    /// 2, 3 on host 1.
    fn overview() -> StepOverview {
        let waits = [[90, 0, 0, 0], [1, 2, 3, 4], [5, 0, 8, 0]];
        StepOverview {
            warmup: 1,
            accounts: waits
                .iter()
                .enumerate()
                .map(|(i, w)| StepAccount {
                    step: i + 1,
                    span: (i as i64 * 100, i as i64 * 100 + 100),
                    ranks: (0..4).map(|d| rank(d, w[d as usize])).collect(),
                })
                .collect(),
            compute: vec![
                vec![],
                (0..4)
                    .map(|d| StepCompute {
                        device: d,
                        compute_ns: 10 + d as i64,
                        peers_ns: 11,
                    })
                    .collect(),
                vec![],
            ],
            ..StepOverview::default()
        }
    }

    #[test]
    fn cells_read_the_overview_and_a_folded_host_shows_its_worst_rank() {
        let o = overview();
        let mut v = StepsView::new(&o, vec![0, 0, 1, 1]);
        assert_eq!(v.row, 1, "the first step after warm-up");
        assert_eq!(v.cell(&o, 1, 2), Some((3, 2)));
        // Warm-up's 90 is left out of the scale.
        assert_eq!(v.top(&o), 8);
        v.put_cursor(2, 3);
        v.toggle_collapse();
        assert_eq!(v.cols.len(), 3);
        assert_eq!(v.col, 2, "the cursor folds into its host");
        assert_eq!(v.cell(&o, 2, 2), Some((8, 2)));
        assert_eq!(v.target(&o), Some((2, 2)));
        v.cycle_figure(true);
        v.cycle_figure(true);
        v.cycle_figure(true);
        v.cycle_figure(true);
        assert_eq!(v.figure, StepFigure::Slowdown);
        // Rank 3 ran 2 ns over its peers in step 2; a faster one, 0.
        assert_eq!(StepFigure::Slowdown.value(&o, 1, 3), Some(2));
        assert_eq!(StepFigure::Slowdown.value(&o, 1, 0), Some(0));
        assert_eq!(StepFigure::Slowdown.value(&o, 0, 0), None);
        assert_eq!(v.figure.cycle(false), StepFigure::Dependency);
        assert_eq!(StepFigure::Idle.cycle(true), StepFigure::Waiting);
    }

    #[test]
    fn the_cursor_scrolls_both_ways() {
        let o = overview();
        let mut v = StepsView::new(&o, vec![0, 0, 1, 1]);
        v.rows_scroll.fit(3, 2);
        v.cols_scroll.fit(4, 2);
        v.move_row(5);
        v.move_col(5);
        assert_eq!((v.row, v.col), (2, 3));
        assert_eq!((v.rows_scroll.top, v.cols_scroll.top), (1, 2));
        v.move_row(-9);
        v.move_col(-9);
        assert_eq!(
            (v.row, v.col, v.rows_scroll.top, v.cols_scroll.top),
            (0, 0, 0, 0)
        );
    }
}
