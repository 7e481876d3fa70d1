//! What is derived from the view's window, the range marked and the
//! views' choices (the overlap panel's visible window, the range panel's
//! facts, the stats table, the NVTX tree, the steps' figures), computed
//! off the UI thread:
//! reading every kernel in a window takes 40–225 ms at 1–5 M kernels, and
//! no key may wait for it. The loop runs a job and hands back its result;
//! the capture it was asked of keeps it ([`crate::tui::derived::Latest`]).

use crate::analysis::Window;
use crate::analysis::name_stats::{self, StatsBy, StatsOf};
use crate::analysis::overlap::{DeviceOverlap, overlap};
use crate::analysis::step_overview::{self, StepOverview};
use crate::profile::names::KernelNames;
use crate::tui::data::Loaded;
use crate::tui::lanes::LaneKind;
use crate::tui::nvtx_view::NvtxTree;
use crate::tui::range::RangeFacts;
use crate::tui::stats_view::StatsTable;
use std::sync::Arc;

/// What the overlap of a window was derived for: the data (its address)
/// and the window.
pub type WindowKey = (usize, Window);

/// What a range's facts were derived for: the data (its address), the
/// range, the rows in view (first, end, of how many) and the names shown.
pub type RangeKey = (usize, Window, usize, usize, usize, KernelNames);

/// What a stats table was derived for: the data (its address), the kind
/// of rows, the names shown and the window.
pub type StatsKey = (usize, StatsOf, KernelNames, Window);

/// What an NVTX tree was derived for: the data (its address) and the
/// thread.
pub type TreeKey = (usize, usize);

/// What the steps' figures were derived for: the data (its address).
pub type StepsKey = usize;

/// The address that tells one capture's data from another's.
pub fn data_key(data: &Arc<Loaded>) -> usize {
    Arc::as_ptr(data) as usize
}

/// Work the loop runs off its thread.
pub enum DeriveJob {
    WindowOverlap {
        data: Arc<Loaded>,
        key: WindowKey,
    },
    RangeFacts {
        data: Arc<Loaded>,
        key: RangeKey,
        rows: Vec<LaneKind>,
    },
    Stats {
        data: Arc<Loaded>,
        key: StatsKey,
    },
    NvtxTree {
        data: Arc<Loaded>,
        key: TreeKey,
    },
    Steps {
        data: Arc<Loaded>,
        key: StepsKey,
    },
}

/// A [`DeriveJob`] done.
pub enum DeriveDone {
    WindowOverlap {
        key: WindowKey,
        overlap: Vec<DeviceOverlap>,
    },
    RangeFacts {
        key: RangeKey,
        facts: Box<RangeFacts>,
    },
    Stats {
        key: StatsKey,
        table: Box<StatsTable>,
    },
    NvtxTree {
        key: TreeKey,
        tree: Box<NvtxTree>,
    },
    Steps {
        key: StepsKey,
        overview: Arc<StepOverview>,
    },
}

impl DeriveJob {
    /// Does it (pure, may take a while).
    pub fn run(self) -> DeriveDone {
        match self {
            DeriveJob::WindowOverlap { data, key } => {
                let (a, p) = (&data.analysis, &data.profile);
                DeriveDone::WindowOverlap {
                    key,
                    overlap: overlap(p, &a.classes, &a.clock, key.1),
                }
            }
            DeriveJob::RangeFacts { data, key, rows } => DeriveDone::RangeFacts {
                key,
                facts: Box::new(crate::tui::range::facts(&data, key.1, &rows, key.5)),
            },
            DeriveJob::Stats { data, key } => {
                let (_, of, names, window) = key;
                let (p, clock) = (&data.profile, &data.analysis.clock);
                let rows = name_stats::table(p, clock, of, StatsBy::Name, names, window)
                    .unwrap_or_default();
                DeriveDone::Stats {
                    key,
                    table: Box::new(StatsTable::new(of, names, window, rows)),
                }
            }
            DeriveJob::NvtxTree { data, key } => DeriveDone::NvtxTree {
                key,
                tree: Box::new(crate::tui::nvtx_view::build(&data, key.1)),
            },
            DeriveJob::Steps { data, key } => {
                let (a, p) = (&data.analysis, &data.profile);
                let overview = step_overview::overview(
                    p,
                    &a.classes,
                    &a.clock,
                    &a.matching,
                    &a.steps,
                    step_overview::WARMUP_STEPS,
                );
                DeriveDone::Steps {
                    key,
                    overview: Arc::new(overview),
                }
            }
        }
    }
}

impl DeriveDone {
    /// The address of the data it was derived from.
    pub fn data(&self) -> usize {
        match self {
            DeriveDone::WindowOverlap { key, .. } => key.0,
            DeriveDone::RangeFacts { key, .. } => key.0,
            DeriveDone::Stats { key, .. } => key.0,
            DeriveDone::NvtxTree { key, .. } => key.0,
            DeriveDone::Steps { key, .. } => *key,
        }
    }
}
