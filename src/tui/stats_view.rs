//! The stats view (`S`): `report stats` as a table on the timeline, of the
//! whole capture or the visible window, sorted by any column, filtered by
//! a part of the name. This is the table and its order; the keys are in
//! `state::stats_view`, the drawing in `ui::stats_view`.

use crate::analysis::Window;
use crate::analysis::name_stats::{StatRow, StatsOf};
use crate::profile::Interner;
use crate::profile::names::KernelNames;

/// The columns, as `report stats` heads them.
pub use crate::analysis::name_stats::COLUMNS;
/// The column of the name (sorted A to Z; the figures largest first).
pub const NAME: usize = 8;
/// Sorted by total at first, as nsys sorts.
pub const TOTAL: usize = 1;

/// The order the tables come in with `Tab`.
pub const KINDS: [StatsOf; 5] = [
    StatsOf::Kernels,
    StatsOf::Copies,
    StatsOf::Nvtx,
    StatsOf::Api,
    StatsOf::Osrt,
];

/// Over what the table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    Capture,
    /// The window the timeline showed when it was chosen.
    Window,
}

/// The view's state: which table, its order and filter, its cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsState {
    pub of: StatsOf,
    pub scope: Scope,
    pub sort: usize,
    pub reverse: bool,
    pub filter: String,
    /// Keys go to the filter (after `/`, until Enter or Esc).
    pub typing: bool,
    pub pick: crate::tui::pick::Pick,
}

impl Default for StatsState {
    fn default() -> Self {
        StatsState {
            of: StatsOf::Kernels,
            scope: Scope::Capture,
            sort: TOTAL,
            reverse: false,
            filter: String::new(),
            typing: false,
            pick: Default::default(),
        }
    }
}

/// A table computed for a kind and a window.
#[derive(Debug, Clone)]
pub struct StatsTable {
    pub of: StatsOf,
    /// The kernel names rows are counted under.
    pub names: KernelNames,
    pub window: Window,
    pub rows: Vec<StatRow>,
    pub total_ns: i64,
}

impl StatsTable {
    pub fn new(of: StatsOf, names: KernelNames, window: Window, rows: Vec<StatRow>) -> StatsTable {
        let total_ns = crate::analysis::name_stats::total_ns(&rows);
        StatsTable {
            of,
            names,
            window,
            rows,
            total_ns,
        }
    }

    /// A row's share of the table's total, in percent.
    pub fn share(&self, r: &StatRow) -> f64 {
        crate::analysis::name_stats::share_pct(r, self.total_ns)
    }
}

/// The rows shown, as indices into `t.rows`: those whose name holds the
/// filter (any case), sorted by the state's column — figures largest
/// first, the name A to Z, `reverse` the other way; ties by total, then
/// name, so the order never depends on the hash of a map.
pub fn order(t: &StatsTable, strings: &Interner, s: &StatsState) -> Vec<usize> {
    let filter = s.filter.to_lowercase();
    let name = |i: usize| t.rows[i].label(strings);
    let mut shown: Vec<usize> = (0..t.rows.len())
        .filter(|&i| filter.is_empty() || name(i).to_lowercase().contains(&filter))
        .collect();
    let key = |i: usize| -> f64 {
        let r = &t.rows[i];
        match s.sort {
            0 | 1 => r.total_ns as f64,
            2 => r.count as f64,
            3 => r.mean_ns,
            4 => r.median_ns,
            5 => r.min_ns as f64,
            6 => r.max_ns as f64,
            _ => r.stddev_ns,
        }
    };
    shown.sort_by(|&a, &b| {
        let by_name = name(a).cmp(&name(b));
        let primary = if s.sort == NAME {
            by_name
        } else {
            key(b).total_cmp(&key(a))
        };
        let primary = if s.reverse {
            primary.reverse()
        } else {
            primary
        };
        primary
            .then(t.rows[b].total_ns.cmp(&t.rows[a].total_ns))
            .then(by_name)
    });
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: u32, count: usize, total_ns: i64, max_ns: i64) -> StatRow {
        StatRow {
            name,
            domain: None,
            device: None,
            lane: None,
            count,
            copies: count as u64,
            total_ns,
            mean_ns: total_ns as f64 / count as f64,
            median_ns: 0.0,
            min_ns: 0,
            max_ns,
            stddev_ns: 0.0,
        }
    }

    #[test]
    fn rows_sort_by_any_column_either_way_and_filter_by_a_part_of_the_name() {
        let mut strings = Interner::default();
        let (a, b, c) = (
            strings.intern("ncclAllReduce"),
            strings.intern("gemm"),
            strings.intern("NCCL_send"),
        );
        let t = StatsTable::new(
            StatsOf::Kernels,
            KernelNames::Demangled,
            Window::ALL,
            vec![
                row(a, 10, 500, 90),
                row(b, 100, 900, 20),
                row(c, 1, 100, 100),
            ],
        );
        let mut s = StatsState::default();
        assert_eq!(order(&t, &strings, &s), [1, 0, 2], "by total");
        s.sort = 6;
        assert_eq!(order(&t, &strings, &s), [2, 0, 1], "by max");
        s.reverse = true;
        assert_eq!(order(&t, &strings, &s), [1, 0, 2]);
        s = StatsState {
            sort: NAME,
            ..StatsState::default()
        };
        assert_eq!(order(&t, &strings, &s), [2, 1, 0], "A to Z, by bytes");
        s.filter = "nccl".into();
        assert_eq!(order(&t, &strings, &s), [2, 0], "any case");
        assert!((t.share(&t.rows[1]) - 60.0).abs() < 1e-9);
    }
}
