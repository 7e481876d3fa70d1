//! The minimum-duration filter's side of the render index: per track and
//! threshold, the summary of the events still drawn and how many are
//! hidden before each block — built the first time a lane is drawn with
//! the filter on, for the current threshold only, so a job of a thousand
//! ranks pays for the lanes it shows.

use crate::tui::index::{BLOCK, Summary, Track, summarize_min};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// One track's events of `min_dur` or longer.
#[derive(Debug, Clone)]
pub struct Filtered {
    pub min_dur: i64,
    pub summary: Summary,
    /// Events shorter than `min_dur` before each block boundary (blocks +
    /// 1 entries).
    hidden_before: Vec<u64>,
}

impl Filtered {
    pub fn of(track: &Track, min_dur: i64) -> Filtered {
        let n = track.len();
        let short = |k: usize| track.end[k].saturating_sub(track.start[k]) < min_dur;
        let mut hidden_before = Vec::with_capacity(n.div_ceil(BLOCK) + 1);
        let mut sum = 0u64;
        hidden_before.push(0);
        for b in 0..n.div_ceil(BLOCK) {
            sum += (b * BLOCK..((b + 1) * BLOCK).min(n))
                .filter(|&k| short(k))
                .count() as u64;
            hidden_before.push(sum);
        }
        Filtered {
            min_dur,
            summary: summarize_min(track.start, track.end, track.cat, min_dur),
            hidden_before,
        }
    }

    /// `track` (the one this was built from) with only its events of
    /// `min_dur` or longer drawn: their summary replaces the track's.
    pub fn apply<'a>(&'a self, track: Track<'a>) -> Track<'a> {
        Track {
            summary: &self.summary,
            min_dur: self.min_dur,
            ..track
        }
    }

    /// Hidden events of `track` (the one this was built from) starting in
    /// `[a, b)` of its clock: whole blocks from the counts, the rows of the
    /// two partial blocks read.
    pub fn hidden_between(&self, track: &Track, a: i64, b: i64) -> u64 {
        let i = track.start.partition_point(|&s| s < a);
        let j = track.start.partition_point(|&s| s < b).max(i);
        let short = |k: &usize| track.end[*k].saturating_sub(track.start[*k]) < self.min_dur;
        let count = |r: std::ops::Range<usize>| r.filter(short).count() as u64;
        let (bi, bj) = (i.div_ceil(BLOCK), j / BLOCK);
        if bi >= bj {
            return count(i..j);
        }
        count(i..bi * BLOCK)
            + (self.hidden_before[bj] - self.hidden_before[bi])
            + count(bj * BLOCK..j)
    }
}

/// The filtered summaries of the lanes drawn so far at the current
/// threshold, by the timeline row (`K`) they were drawn for; another
/// threshold starts afresh (only one is on screen).
#[derive(Debug)]
pub struct FilterCache<K> {
    at: Mutex<(i64, HashMap<K, Arc<Filtered>>)>,
}

impl<K> Default for FilterCache<K> {
    fn default() -> Self {
        FilterCache {
            at: Mutex::new((0, HashMap::new())),
        }
    }
}

impl<K: Hash + Eq> FilterCache<K> {
    /// Row `kind`'s track with its events of `min_dur` or longer, built
    /// on first use; `None` when the filter is off.
    pub fn get(&self, kind: K, track: &Track, min_dur: i64) -> Option<Arc<Filtered>> {
        if min_dur <= 0 {
            return None;
        }
        // A poisoned lock only means a draw panicked mid-insert: the map
        // holds whole entries, so it is still good.
        let mut at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        if at.0 != min_dur {
            *at = (min_dur, HashMap::new());
        }
        Some(
            at.1.entry(kind)
                .or_insert_with(|| Arc::new(Filtered::of(track, min_dur)))
                .clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::index::{Cats, summarize};

    #[test]
    fn hidden_counts_match_a_scan_at_every_window() {
        // 300 events, every third one 5 ns long, the others 50 ns.
        let start: Vec<i64> = (0..300).map(|i| i * 100).collect();
        let end: Vec<i64> = (0..300)
            .map(|i| i * 100 + if i % 3 == 0 { 5 } else { 50 })
            .collect();
        let cat = vec![0u8; 300];
        let summary = summarize(&start, &end, Cats::Each(&cat));
        let t = Track {
            start: &start,
            end: &end,
            cat: Cats::Each(&cat),
            summary: &summary,
            first: 0,
            rows: None,
            min_dur: 0,
        };
        let f = Filtered::of(&t, 10);
        for (a, b) in [
            (0, 30_000),
            (150, 7_777),
            (6_400, 12_800),
            (29_000, 99_999),
            (5, 5),
        ] {
            let want = (0..300)
                .filter(|&i| start[i] >= a && start[i] < b && i % 3 == 0)
                .count() as u64;
            assert_eq!(f.hidden_between(&t, a, b), want, "[{a}, {b})");
        }
        // The kept events' busy time: 200 × 50 ns.
        assert_eq!(*f.summary.block_prefix.last().unwrap(), 200 * 50);
        let shown = f.apply(t);
        assert_eq!(shown.busy(0, 300), 200 * 50);
        assert_eq!(shown.busy(1, 4), 100);
        assert!(!shown.shown(0) && shown.shown(1));
        assert!(t.shown(0), "the unfiltered track draws it");
    }
}
