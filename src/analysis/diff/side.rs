//! One capture as the diff reads it, which side a one-sided figure comes from, and the
//! percentage change: their own file so that each part of the diff uses them without
//! using the diff module.

use crate::analysis::pipeline::Analysis;
use crate::profile::Profile;

/// One capture as the diff reads it: its profile and its analyses
/// (`analysis::bundle::analyze`).
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub profile: &'a Profile,
    pub analysis: &'a Analysis,
}

/// Which capture a one-sided figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Before,
    After,
}

impl Which {
    pub const ALL: [Which; 2] = [Which::Before, Which::After];

    pub fn name(self) -> &'static str {
        match self {
            Which::Before => "before",
            Which::After => "after",
        }
    }
}

/// `after − before` as a percentage of `before`; `None` when before is 0.
pub fn delta_pct(before: f64, after: f64) -> Option<f64> {
    (before != 0.0).then(|| 100.0 * (after - before) / before)
}
