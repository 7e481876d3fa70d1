//! What is derived from the view's window and the range marked (the
//! overlap panel's visible window, the range panel's facts), computed off
//! the UI thread: reading every kernel in a window takes 40–225 ms at
//! 1–5 M kernels, and no key may wait for it. The loop runs a job and
//! hands back its result; the capture it was asked of keeps it
//! ([`crate::tui::derived::Latest`]).

use crate::analysis::Window;
use crate::analysis::overlap::{DeviceOverlap, overlap};
use crate::profile::names::KernelNames;
use crate::tui::data::Loaded;
use crate::tui::lanes::LaneKind;
use crate::tui::range::RangeFacts;
use std::sync::Arc;

/// What the overlap of a window was derived for: the data (its address)
/// and the window.
pub type WindowKey = (usize, Window);

/// What a range's facts were derived for: the data (its address), the
/// range, the rows in view (first, end, of how many) and the names shown.
pub type RangeKey = (usize, Window, usize, usize, usize, KernelNames);

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
        }
    }
}

impl DeriveDone {
    /// The address of the data it was derived from.
    pub fn data(&self) -> usize {
        match self {
            DeriveDone::WindowOverlap { key, .. } => key.0,
            DeriveDone::RangeFacts { key, .. } => key.0,
        }
    }
}
