//! The straggler map's state: the matrix of the group shown (derived once
//! when the group changes), its rows (ranks grouped by host, hosts
//! collapsible to one row), the sort, the cursor cell and the two scrolls.

use super::scroll::Scroll;
use crate::analysis::stragglers::StragglerMap;
use std::collections::HashSet;
use std::sync::Arc;

/// One row of the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapRow {
    /// A host: a header, or (collapsed) the latest of its ranks per column.
    Host { host: u32, ranks: Vec<usize> },
    /// A rank: an index into the map's rows.
    Rank(usize),
}

/// What the straggler view shows and where its cursor is.
#[derive(Debug, Clone)]
pub struct StragglerView {
    pub map: Arc<StragglerMap>,
    /// Per rank of the map: its host.
    pub hosts: Vec<u32>,
    /// Ranks (and hosts) by mean lateness, latest first; else group order.
    pub by_mean: bool,
    pub collapsed: HashSet<u32>,
    pub rows: Vec<MapRow>,
    /// The cursor: a row of `rows` and a column of the map.
    pub row: usize,
    pub col: usize,
    /// Vertical over `rows`; horizontal over the map's columns. Drawing
    /// records what fits.
    pub rows_scroll: Scroll,
    pub cols_scroll: Scroll,
    /// Per rank: the first instance (0-based) it never launched while the
    /// others waited in it (it is behind in a hang), if any.
    pub never: Vec<Option<usize>>,
}

impl StragglerView {
    pub fn new(map: Arc<StragglerMap>, hosts: Vec<u32>) -> StragglerView {
        // Past a few hundred ranks the map opens as hosts × instances (each
        // host's latest rank per column); Space opens a host.
        let collapsed = if crate::tui::lanes::hosts_start_collapsed(&hosts) {
            hosts.iter().copied().collect()
        } else {
            HashSet::new()
        };
        let mut v = StragglerView {
            map,
            hosts,
            by_mean: false,
            collapsed,
            rows: Vec::new(),
            row: 0,
            col: 0,
            rows_scroll: Scroll::default(),
            cols_scroll: Scroll::default(),
            never: Vec::new(),
        };
        v.rebuild_rows();
        // On the first rank, not its host's header (on the first host when
        // hosts are collapsed).
        v.row = v
            .rows
            .iter()
            .position(|r| matches!(r, MapRow::Rank(_)))
            .unwrap_or(0);
        v
    }

    /// Hosts in order of their first rank (or their latest rank's mean),
    /// each followed by its ranks unless collapsed.
    pub fn rebuild_rows(&mut self) {
        let m = &self.map;
        let mut ranks: Vec<usize> = (0..m.ranks()).collect();
        if self.by_mean {
            ranks.sort_by(|&a, &b| m.mean_ns[b].total_cmp(&m.mean_ns[a]).then(a.cmp(&b)));
        }
        // Hosts in the order their first rank comes in.
        let mut hosts: Vec<(u32, Vec<usize>)> = Vec::new();
        for r in ranks {
            let h = self.hosts[r];
            match hosts.iter_mut().find(|(x, _)| *x == h) {
                Some((_, rs)) => rs.push(r),
                None => hosts.push((h, vec![r])),
            }
        }
        let keep = self.rows.get(self.row).cloned();
        self.rows.clear();
        for (host, ranks) in hosts {
            let collapsed = self.collapsed.contains(&host);
            self.rows.push(MapRow::Host {
                host,
                ranks: ranks.clone(),
            });
            if !collapsed {
                self.rows.extend(ranks.into_iter().map(MapRow::Rank));
            }
        }
        // The cursor stays on its rank (or host) when the order changes.
        let found = keep.and_then(|k| match k {
            MapRow::Rank(r) => self
                .rows
                .iter()
                .position(|x| *x == MapRow::Rank(r))
                .or_else(|| self.host_row(self.hosts[r])),
            MapRow::Host { host, .. } => self.host_row(host),
        });
        self.row = found.unwrap_or(0).min(self.rows.len().saturating_sub(1));
        self.rows_scroll.len = self.rows.len();
        self.rows_scroll.show(self.row);
    }

    fn host_row(&self, host: u32) -> Option<usize> {
        self.rows
            .iter()
            .position(|x| matches!(x, MapRow::Host { host: h, .. } if *h == host))
    }

    /// The lateness drawn in a cell (`None`: the rank's capture does not
    /// cover the instance), and the rank it is of (a collapsed host shows
    /// its latest rank; an expanded host header, nothing).
    pub fn cell(&self, row: usize, col: usize) -> Option<(Option<i64>, usize)> {
        match self.rows.get(row)? {
            MapRow::Rank(r) => Some((self.map.at(*r, col), *r)),
            MapRow::Host { host, ranks } => {
                if !self.collapsed.contains(host) {
                    return None;
                }
                // The latest; ties: the first in group order.
                ranks
                    .iter()
                    .map(|&r| (self.map.at(r, col), std::cmp::Reverse(r)))
                    .max()
                    .map(|(ns, r)| (ns, r.0))
            }
        }
    }

    /// Rank `r` never launched column `col`'s instance: it is behind there
    /// (a cell without lateness that is not a capture's edge).
    pub fn never_launched(&self, r: usize, col: usize) -> bool {
        let Some(&k) = self.map.instances.get(col) else {
            return false;
        };
        self.never
            .get(r)
            .copied()
            .flatten()
            .is_some_and(|from| k >= from)
    }

    /// Whether any rank is behind (the legend says what its cells mean).
    pub fn any_never(&self) -> bool {
        self.never.iter().any(Option::is_some)
    }

    /// What Enter on the cursor cell opens: (0-based instance, rank).
    pub fn target(&self) -> Option<(usize, usize)> {
        let &k = self.map.instances.get(self.col)?;
        let r = match self.rows.get(self.row)? {
            MapRow::Host { ranks, .. } if !self.collapsed.contains(&self.host_of(self.row)) => {
                // A header: the latest of its ranks.
                ranks
                    .iter()
                    .map(|&r| (self.map.at(r, self.col), std::cmp::Reverse(r)))
                    .max()?
                    .1
                    .0
            }
            _ => self.cell(self.row, self.col)?.1,
        };
        Some((k, r))
    }

    fn host_of(&self, row: usize) -> u32 {
        match &self.rows[row] {
            MapRow::Host { host, .. } => *host,
            MapRow::Rank(r) => self.hosts[*r],
        }
    }

    /// Moves the cursor by rows, scrolling to keep it shown.
    pub fn move_row(&mut self, by: isize) {
        let n = self.rows.len() as isize;
        self.row = (self.row as isize + by).clamp(0, (n - 1).max(0)) as usize;
        self.rows_scroll.show(self.row);
    }

    /// Moves the cursor by columns, scrolling to keep it shown.
    pub fn move_col(&mut self, by: isize) {
        let n = self.map.columns() as isize;
        self.col = (self.col as isize + by).clamp(0, (n - 1).max(0)) as usize;
        self.cols_scroll.show(self.col);
    }

    /// Puts the cursor on a cell (a click, or an instance already
    /// selected on the timeline).
    pub fn put_cursor(&mut self, row: usize, col: usize) {
        self.row = row.min(self.rows.len().saturating_sub(1));
        self.col = col.min(self.map.columns().saturating_sub(1));
        self.rows_scroll.show(self.row);
        self.cols_scroll.show(self.col);
    }

    /// The row of rank `r`, expanding its host if it is collapsed.
    pub fn row_of_rank(&mut self, r: usize) -> usize {
        if self.collapsed.remove(&self.hosts[r]) {
            self.rebuild_rows();
        }
        self.rows
            .iter()
            .position(|x| *x == MapRow::Rank(r))
            .unwrap_or(0)
    }

    pub fn toggle_sort(&mut self) {
        self.by_mean = !self.by_mean;
        self.rebuild_rows();
    }

    /// Collapses or expands the host of the cursor row.
    pub fn toggle_collapse(&mut self) {
        if self.rows.is_empty() {
            return;
        }
        let h = self.host_of(self.row);
        // Collapsing: the cursor's rank is gone, so it lands on its host.
        if !self.collapsed.remove(&h) {
            self.collapsed.insert(h);
        }
        self.rebuild_rows();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 ranks × 3 columns; ranks 0, 1 on host 0 and 2, 3 on host 1.
    fn view() -> StragglerView {
        let lateness_ns = vec![
            0, 1, 2, // rank 0: mean 1
            5, 0, 0, // rank 1: mean 5/3
            9, 9, 0, // rank 2: mean 6
            0, 0, 9, // rank 3: mean 3
        ];
        let map = StragglerMap {
            group: 0,
            devices: vec![0, 1, 2, 3],
            instances: vec![0, 1, 2],
            big: vec![false; 3],
            mean_ns: vec![1.0, 5.0 / 3.0, 6.0, 3.0],
            max_ns: vec![2, 5, 9, 9],
            late_count: vec![0, 1, 1, 1],
            max_all_ns: 9,
            lateness_ns,
        };
        StragglerView::new(Arc::new(map), vec![0, 0, 1, 1])
    }

    fn ranks(v: &StragglerView) -> Vec<String> {
        v.rows
            .iter()
            .map(|r| match r {
                MapRow::Host { host, .. } => format!("h{host}"),
                MapRow::Rank(r) => r.to_string(),
            })
            .collect()
    }

    #[test]
    fn rows_group_ranks_by_host_and_sort_by_mean_lateness() {
        let mut v = view();
        assert_eq!(ranks(&v), ["h0", "0", "1", "h1", "2", "3"]);
        v.put_cursor(5, 0);
        v.toggle_sort();
        // The host with the latest rank first; latest rank first in each.
        assert_eq!(ranks(&v), ["h1", "2", "3", "h0", "1", "0"]);
        assert_eq!(
            v.rows[v.row],
            MapRow::Rank(3),
            "the cursor stays on its rank"
        );
    }

    #[test]
    fn a_collapsed_host_shows_its_latest_rank_and_opens_on_it() {
        let mut v = view();
        v.put_cursor(4, 2);
        v.toggle_collapse();
        assert_eq!(ranks(&v), ["h0", "0", "1", "h1"]);
        assert_eq!(v.row, 3, "the cursor is on the collapsed host");
        assert_eq!(v.cell(3, 0), Some((Some(9), 2)));
        assert_eq!(v.cell(3, 2), Some((Some(9), 3)));
        assert_eq!(v.target(), Some((2, 3)));
        // An expanded header draws nothing, and opens on its latest rank.
        assert_eq!(v.cell(0, 0), None);
        v.put_cursor(0, 0);
        assert_eq!(v.target(), Some((0, 1)));
        // Going to a rank expands its host.
        assert_eq!(v.row_of_rank(2), 4);
    }

    #[test]
    fn the_cursor_scrolls_both_ways() {
        let mut v = view();
        v.rows_scroll.fit(v.rows.len(), 2);
        v.cols_scroll.fit(3, 1);
        assert_eq!(v.row, 1, "the first rank, below its host");
        v.put_cursor(0, 0);
        v.move_row(4);
        assert_eq!((v.row, v.rows_scroll.top), (4, 3));
        v.move_col(5);
        assert_eq!((v.col, v.cols_scroll.top), (2, 2));
        v.move_row(-10);
        v.move_col(-10);
        assert_eq!(
            (v.row, v.col, v.rows_scroll.top, v.cols_scroll.top),
            (0, 0, 0, 0)
        );
    }
}
