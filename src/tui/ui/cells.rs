//! Level of detail: each timeline cell covers a time slice and shows how
//! much of it is busy and which category dominates. A cell costs two binary
//! searches plus a bounded amount of work, so a frame costs the same at any
//! zoom.

use crate::tui::index::{BLOCK, Track};

/// What one cell shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Busy share of the slice, 0–1.
    pub busy: f32,
    /// Dominant category (meaningful when `busy > 0`).
    pub cat: u8,
    /// The event (track index) covering most of the slice.
    pub event: Option<usize>,
    /// That event covers the whole slice.
    pub covered: bool,
}

const EMPTY: Cell = Cell {
    busy: 0.0,
    cat: 0,
    event: None,
    covered: false,
};

/// Above this many events in a slice, busy time comes from block sums and
/// the category from (at most `SAMPLES`) block summaries.
const EXACT_LIMIT: usize = 24;
const SAMPLES: usize = 64;

/// A slice spanning at least this many blocks is drawn from block
/// summaries alone.
const COARSE_BLOCKS: usize = 8;

/// Cells for `width` slices of `ns_per_cell` starting at `t0`.
pub fn cells(track: &Track, t0: f64, ns_per_cell: f64, width: usize) -> Vec<Cell> {
    let mut out = vec![EMPTY; width];
    if track.is_empty() || width == 0 {
        return out;
    }
    let blocks = &track.summary.block_start;
    let first = t0.floor() as i64;
    // Slices are consecutive: one slice's end is the next one's start,
    // found by galloping forward (cheap for sparse and dense alike). `k` is
    // the first block starting at or after the slice; `i` the first row,
    // when known.
    let mut k = blocks.partition_point(|&s| s < first);
    let mut i = Some(track.start.partition_point(|&s| s < first));
    for (c, cell) in out.iter_mut().enumerate() {
        let a = (t0 + c as f64 * ns_per_cell).floor() as i64;
        let b = ((t0 + (c + 1) as f64 * ns_per_cell).floor() as i64).max(a.saturating_add(1));
        let kb = gallop_blocks(blocks, k, b);
        if kb - k >= COARSE_BLOCKS {
            // Thousands of events: the blocks that start in the slice say
            // enough, and reading only them keeps zoomed-out frames cheap
            // however large the track.
            *cell = coarse_cell(track, k, kb, b.saturating_sub(a) as f64);
            i = None;
        } else {
            let from = i.unwrap_or_else(|| {
                let lo = k.saturating_sub(1) * BLOCK;
                lo + track.start[lo..].partition_point(|&s| s < a)
            });
            let j = gallop(track, from, b);
            *cell = one_cell(track, a, b, from, j);
            i = Some(j);
        }
        k = kb;
    }
    out
}

/// The first block at or after `from` whose start is not below `b`.
fn gallop_blocks(blocks: &[i64], from: usize, b: i64) -> usize {
    let mut lo = from;
    let mut hi = from;
    let mut step = 1;
    while hi < blocks.len() && blocks[hi] < b {
        lo = hi + 1;
        hi = from + step;
        step *= 2;
    }
    let hi = hi.min(blocks.len());
    lo + blocks[lo.min(hi)..hi].partition_point(|&s| s < b)
}

/// A slice drawn from the summaries of blocks `k0..k1`.
fn coarse_cell(t: &Track, k0: usize, k1: usize, len: f64) -> Cell {
    let sum = t.summary;
    let step = (k1 - k0).div_ceil(SAMPLES).max(1);
    let mut votes = [0i64; 32];
    let busy = (sum.block_prefix[k1] - sum.block_prefix[k0]) as f64;
    if t.min_dur > 0 && busy <= 0.0 {
        return EMPTY;
    }
    for k in (k0..k1).step_by(step) {
        let vote = &mut votes[sum.block_cat[k] as usize % 32];
        *vote = vote.saturating_add((sum.block_prefix[k + 1] - sum.block_prefix[k]).max(1));
    }
    let cat = (0..32).fold(0, |best, c| if votes[c] > votes[best] { c } else { best }) as u8;
    Cell {
        busy: ((busy / len).min(1.0) as f32).max(f32::MIN_POSITIVE),
        cat,
        event: None,
        covered: false,
    }
}

/// The first index at or after `from` whose start is not below `b`:
/// galloping over the dense block starts, then a search inside one block.
fn gallop(t: &Track, from: usize, b: i64) -> usize {
    let blocks = &t.summary.block_start;
    let start = t.start;
    if from >= start.len() || start[from] >= b {
        return from;
    }
    // Blocks after `from`'s whose first start is below `b` hold no answer.
    let k0 = from / BLOCK + 1;
    let mut lo = k0;
    let mut hi = k0;
    let mut step = 1;
    while hi < blocks.len() && blocks[hi] < b {
        lo = hi + 1;
        hi = k0 + step;
        step *= 2;
    }
    let hi = hi.min(blocks.len());
    let k = lo + blocks[lo.min(hi)..hi].partition_point(|&s| s < b);
    // The answer lies in block k - 1 (or is the first row of block k).
    let rows_from = ((k - 1) * BLOCK).max(from);
    let rows_to = (k * BLOCK).min(start.len());
    rows_from + start[rows_from..rows_to].partition_point(|&s| s < b)
}

/// Rows `i..j` start inside `[a, b)`.
fn one_cell(t: &Track, a: i64, b: i64, i: usize, j: usize) -> Cell {
    // Events starting before the slice may reach into it (nested calls:
    // look back a little).
    let lo = (i.saturating_sub(3)..i)
        .find(|&k| t.end[k] > a && t.shown(k))
        .unwrap_or(i);
    let len = b.saturating_sub(a) as f64;
    if j == lo {
        return EMPTY;
    }
    // Events below the minimum duration are not there.
    let clip = |k: usize| {
        if t.shown(k) {
            t.end[k].min(b).saturating_sub(t.start[k].max(a)).max(0)
        } else {
            0
        }
    };
    if j - lo <= EXACT_LIMIT {
        let mut busy = 0i64;
        let mut best: Option<(i64, usize)> = None;
        for k in (lo..j).filter(|&k| t.shown(k)) {
            let d = clip(k);
            busy = busy.saturating_add(d);
            if best.is_none_or(|b| d > b.0) {
                best = Some((d, k));
            }
        }
        let Some((_, k)) = best else { return EMPTY };
        if busy == 0 && !(lo..j).any(|k| t.start[k] >= a && t.shown(k)) {
            return EMPTY;
        }
        return Cell {
            busy: ((busy as f64 / len).min(1.0) as f32).max(f32::MIN_POSITIVE),
            cat: t.cat.get(k),
            event: Some(k),
            covered: t.start[k] <= a && t.end[k] >= b,
        };
    }
    // Many events: durations of those starting inside, plus spill-over;
    // the dominant category from the block summaries the slice covers.
    let sum = t.summary;
    let overhang = if t.shown(j - 1) {
        t.end[j - 1].saturating_sub(b).max(0)
    } else {
        0
    };
    let inside = t.busy(i, j) - overhang;
    let spill = (lo..i).map(clip).fold(0, i64::saturating_add);
    // Filtered, every event drawn lasts: no busy time, nothing drawn.
    if t.min_dur > 0 && inside.saturating_add(spill) <= 0 {
        return EMPTY;
    }
    let busy = (inside.saturating_add(spill) as f64 / len).clamp(0.0, 1.0) as f32;
    let (k0, k1) = (i / BLOCK, (j - 1) / BLOCK + 1);
    let step = (k1 - k0).div_ceil(SAMPLES).max(1);
    let mut votes = [0i64; 32];
    for k in (k0..k1).step_by(step) {
        let vote = &mut votes[sum.block_cat[k] as usize % 32];
        *vote = vote.saturating_add((sum.block_prefix[k + 1] - sum.block_prefix[k]).max(1));
    }
    let cat = (0..32).fold(0, |best, c| if votes[c] > votes[best] { c } else { best }) as u8;
    Cell {
        busy: busy.max(f32::MIN_POSITIVE),
        cat,
        event: None,
        covered: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::index::{Cats, Summary, summarize};

    fn track<'a>(
        start: &'a [i64],
        end: &'a [i64],
        cat: &'a [u8],
        summary: &'a Summary,
    ) -> Track<'a> {
        Track {
            start,
            end,
            cat: Cats::Each(cat),
            summary,
            first: 0,
            rows: None,
            min_dur: 0,
        }
    }

    #[test]
    fn exact_cells() {
        let (s, e, c) = ([0, 25, 100], [10, 75, 400], [1, 2, 3]);
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        let cells = cells(&t, 0.0, 50.0, 6);
        assert_eq!(cells[0].busy, 0.7); // [0,10) + [25,50)
        assert_eq!(cells[0].cat, 2);
        assert_eq!(cells[1].busy, 0.5); // [50,75)
        assert_eq!(cells[1].event, Some(1));
        assert_eq!(cells[2].busy, 1.0);
        assert!(cells[2].covered);
        assert_eq!(cells[2].cat, 3);
        assert!(cells[5].covered);
    }

    #[test]
    fn events_below_the_minimum_are_not_drawn_at_any_zoom() {
        // Short (5 ns) events every 10 ns, one long (400 ns) at the end.
        let mut s: Vec<i64> = (0..1000).map(|i| i * 10).collect();
        let mut e: Vec<i64> = s.iter().map(|x| x + 5).collect();
        s.push(10_000);
        e.push(10_400);
        let c = vec![1u8; s.len()];
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        let f = crate::tui::filtered::Filtered::of(&t, 100);
        let shown = f.apply(t);
        // Exact, medium and coarse slices alike: only the long one.
        for ns in [20.0, 400.0, 2_000.0] {
            let cells = cells(&shown, 0.0, ns, (10_400.0 / ns) as usize + 1);
            let drawn: Vec<usize> = (0..cells.len()).filter(|&i| cells[i].busy > 0.0).collect();
            let first = drawn.first().copied().unwrap_or(0);
            assert!(first as f64 * ns >= 10_000.0 - ns, "{ns}: {drawn:?}");
            assert!(!drawn.is_empty(), "{ns}");
        }
        // Unfiltered, the short ones are there.
        assert!(cells(&t, 0.0, 20.0, 10).iter().all(|c| c.busy > 0.0));
    }

    #[test]
    fn empty_slices_are_empty() {
        let (s, e, c) = ([100], [200], [0]);
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        let cells = cells(&t, 0.0, 50.0, 6);
        assert_eq!(cells[0].busy, 0.0);
        assert_eq!(cells[1].busy, 0.0);
        assert_eq!(cells[4].busy, 0.0);
        assert_eq!(cells[2].busy, 1.0);
    }

    #[test]
    fn dense_slices_use_prefix_sums() {
        // 1000 events of 5 ns every 10 ns: half busy at any coarse zoom.
        let s: Vec<i64> = (0..1000).map(|i| i * 10).collect();
        let e: Vec<i64> = s.iter().map(|x| x + 5).collect();
        let c = vec![4u8; 1000];
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        let cells = cells(&t, 0.0, 1000.0, 10);
        for cell in &cells {
            assert!((cell.busy - 0.5).abs() < 0.01, "{cell:?}");
            assert_eq!(cell.cat, 4);
        }
    }

    #[test]
    fn gallop_finds_the_boundary() {
        let s: Vec<i64> = (0..1000).map(|i| i * 10).collect();
        let e: Vec<i64> = s.iter().map(|x| x + 5).collect();
        let c = vec![0u8; s.len()];
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        for from in [0, 5, 63, 64, 65, 500, 999, 1000] {
            for b in [-5, 0, 1, 55, 640, 641, 5000, 9990, 9991, 50000] {
                let want = s.partition_point(|&x| x < b).max(from);
                assert_eq!(gallop(&t, from, b), want, "from {from} b {b}");
            }
        }
    }

    #[test]
    fn zoomed_out_cells_come_from_blocks() {
        // 100 000 events, half busy, the second half another category.
        let s: Vec<i64> = (0..100_000).map(|i| i * 10).collect();
        let e: Vec<i64> = s.iter().map(|x| x + 5).collect();
        let c: Vec<u8> = (0..100_000)
            .map(|i| if i < 50_000 { 3 } else { 6 })
            .collect();
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        let cells = cells(&t, 0.0, 100_000.0, 10);
        for (n, cell) in cells.iter().enumerate() {
            assert!((cell.busy - 0.5).abs() < 0.02, "{n}: {cell:?}");
            assert_eq!(cell.cat, if n < 5 { 3 } else { 6 }, "{n}");
        }
        // Zooming back in after a coarse slice still finds exact rows.
        let fine = super::cells(&t, 995_000.0, 10.0, 4);
        assert_eq!(fine[0].event, Some(99_500));
        assert_eq!(fine[0].busy, 0.5);
    }

    /// Busy time over any rows equals the sum of their durations, across
    /// block boundaries (the per-event sums it replaces gave it exactly).
    #[test]
    fn busy_over_any_rows_is_the_sum_of_their_durations() {
        let s: Vec<i64> = (0..300).map(|i| i * 10).collect();
        let e: Vec<i64> = (0..300).map(|i| i * 10 + (i * 7) % 13 - 2).collect();
        let c = vec![0u8; s.len()];
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        for i in [0, 1, 63, 64, 65, 127, 128, 200, 299, 300] {
            for j in [i, i + 1, 64, 128, 129, 191, 250, 300] {
                if j < i || j > s.len() {
                    continue;
                }
                let want: i64 = (i..j).map(|k| (e[k] - s[k]).max(0)).sum();
                assert_eq!(t.busy(i, j), want, "{i}..{j}");
            }
        }
    }

    #[test]
    fn tiny_events_still_show() {
        let (s, e, c) = ([10], [10], [0]);
        let p = summarize(&s, &e, Cats::Each(&c));
        let t = track(&s, &e, &c, &p);
        let cells = cells(&t, 0.0, 100.0, 2);
        assert!(cells[0].busy > 0.0);
        assert_eq!(cells[1].busy, 0.0);
    }
}
