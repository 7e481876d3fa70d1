//! Where each rank's captured collectives sit in its group's sequence.
//!
//! Per-rank captures start and stop on their own (`--delay`,
//! `--capture-range`, a crash), so one rank's first captured collective can
//! be another's fourth. Each rank gets an offset: its i-th NCCL kernel of
//! the stream is the group's instance `offset + i`.
//!
//! The rule for a placement (later figures rely on it being *confirmed*):
//! - **candidates** are the offsets at which the rank's ops agree with the
//!   ops already placed at every position of the overlap;
//! - **by ops**: a candidate is confirmed when it is the only one and the
//!   overlap holds at least [`MIN_OVERLAP`] instances;
//! - **by ends**: the ends of one collective coincide on every rank up to
//!   the constant offset between their clocks, so at the right offset the
//!   end differences have a tiny spread (MAD ≤ [`MAX_END_MAD_NS`] over at
//!   least [`MIN_OVERLAP`] instances) and at every other candidate a spread
//!   [`RUNNER_UP`] times larger. This needs no clock alignment at all; on
//!   one clock, where that offset is zero, the measure is the ends'
//!   distance itself (p90 of |end difference|);
//! - **by clock**: when ends cannot tell (a strictly periodic schedule),
//!   a rank on the same clock (domain) as a placed one confirms the
//!   offset at which their starts line up (median distance under 1 ms and
//!   [`RUNNER_UP`] times closer than any other); across clocks the nearest
//!   in time on the current alignment is taken, *not* confirmed (a guess);
//! - a **desync**: when no agreeing offset's ends fit but a prefix's do (or
//!   no offset agrees at all: the longest agreeing run), the first
//!   disagreement after that prefix. Two swapped ops are a desync at the
//!   first of them, not a late start: at the late-start offset the ops
//!   agree but the ends do not.

use super::super::clock::MAX_END_MAD_NS;
use super::super::nccl_name::CollOp;

/// Start and end of a kernel on the clock the group is matched on.
pub type Span = (i64, i64);

/// Fewer overlapping instances confirm nothing.
pub const MIN_OVERLAP: usize = 3;
/// The right offset's end spread is at least this many times smaller than
/// any other candidate's.
const RUNNER_UP: f64 = 4.0;
/// Spreads below this (ns) are all "exact": a 4× margin over 0 means nothing.
const MAD_FLOOR_NS: f64 = 1_000.0;
/// Offsets tried on each side of the first guess before a wide scan.
const NEAR: i64 = 4;
/// On one clock, an offset whose kernels start within this of the placed
/// ones' (median) is where the rank is: a collective's ranks start within
/// a millisecond far more often than a period apart.
const SAME_CLOCK_NS: f64 = 1_000_000.0;
/// Agreeing offsets scored per rank: enough to hold several periods of a
/// repeating schedule around the guess; a schedule of one op agrees
/// everywhere and would otherwise cost a full comparison per offset.
const MAX_AGREEING: usize = 64;
/// Ends compared per candidate: evenly spaced over the overlap, so a long
/// capture costs no more than a short one.
const END_SAMPLES: usize = 256;
/// Agreement checks of the wide scan, per rank (each stops at the first
/// disagreement, so most cost a few comparisons).
const WIDE_BUDGET: usize = 4096;

/// One rank's stream as the placement sees it.
pub struct Track<'a> {
    pub ops: &'a [CollOp],
    /// Parallel to `ops`.
    pub spans: &'a [Span],
    /// Its file's clock domain.
    pub domain: usize,
}

/// How a rank's offset was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Basis {
    /// The first rank placed: the others are placed against it.
    Anchor,
    /// The only offset at which its ops agree.
    Ops,
    /// Its ends line up at this offset and at no other.
    Ends,
    /// Several offsets fit the ops and ends, and on one clock with a placed
    /// rank only this one lines its kernels up in time.
    Clock,
    /// Several offsets fit equally: the nearest in time on the current
    /// alignment, a guess, not confirmed.
    Guess,
    /// Too few instances overlap the others' to tell.
    Short,
    /// Its ops disagree with the others' at every offset; placed by the
    /// longest agreeing run.
    Desync,
    /// Named by an operation id or NCCL's NVTX payload (rungs 1 and 2).
    Key,
}

impl Basis {
    pub fn name(self) -> &'static str {
        match self {
            Basis::Anchor => "anchor",
            Basis::Ops => "ops",
            Basis::Ends => "ends",
            Basis::Clock => "clock",
            Basis::Guess => "guess",
            Basis::Short => "short",
            Basis::Desync => "desync",
            Basis::Key => "key",
        }
    }

    /// Whether the pairing of this rank counts as confirmed.
    pub fn confirmed(self) -> bool {
        matches!(
            self,
            Basis::Anchor | Basis::Ops | Basis::Ends | Basis::Clock | Basis::Key
        )
    }
}

/// The placement of every rank of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Per rank: the group position (0-based) of its first kernel.
    pub offsets: Vec<usize>,
    pub basis: Vec<Basis>,
    /// Positions paired: every rank's kernels before this are instances.
    pub length: usize,
    /// The first position no offset explains (0-based), if any.
    pub desync: Option<usize>,
}

/// Ops placed so far, by group position (which may go below zero while
/// ranks are being placed).
struct Consensus {
    lo: i64,
    ops: Vec<Option<CollOp>>,
}

impl Consensus {
    fn get(&self, pos: i64) -> Option<CollOp> {
        let i = pos - self.lo;
        if i < 0 {
            return None;
        }
        self.ops.get(i as usize).copied().flatten()
    }

    fn hi(&self) -> i64 {
        self.lo + self.ops.len() as i64
    }

    fn add(&mut self, offset: i64, ops: &[CollOp]) {
        if ops.is_empty() {
            return;
        }
        let end = offset + ops.len() as i64;
        if offset < self.lo {
            let grow = (self.lo - offset) as usize;
            let mut v = vec![None; grow];
            v.append(&mut self.ops);
            self.ops = v;
            self.lo = offset;
        }
        if end > self.hi() {
            self.ops.resize((end - self.lo) as usize, None);
        }
        for (i, &op) in ops.iter().enumerate() {
            let slot = &mut self.ops[(offset - self.lo) as usize + i];
            slot.get_or_insert(op);
        }
    }

    /// How many of `ops` at `offset` agree before the first disagreement,
    /// and how many positions overlap placed ops at all.
    fn agreement(&self, offset: i64, ops: &[CollOp]) -> (usize, usize, bool) {
        let mut run = 0;
        let mut overlap = 0;
        let mut broken = false;
        for (i, &op) in ops.iter().enumerate() {
            if let Some(placed) = self.get(offset + i as i64) {
                overlap += 1;
                if placed != op {
                    broken = true;
                    break;
                }
                run += 1;
            }
        }
        (run, overlap, broken)
    }
}

/// Places every track (in their order; the longest is the anchor).
pub fn place(tracks: &[Track]) -> Placement {
    let n = tracks.len();
    let mut order: Vec<usize> = (0..n).collect();
    // Longest first (more to agree with), then rank order.
    order.sort_by_key(|&t| (std::cmp::Reverse(tracks[t].ops.len()), t));
    let mut offset: Vec<Option<i64>> = vec![None; n];
    let mut basis = vec![Basis::Anchor; n];
    // Per rank: how many of its kernels are paired (all, unless it desyncs).
    let mut kept: Vec<usize> = tracks.iter().map(|t| t.ops.len()).collect();
    let mut desync: Option<i64> = None;
    let mut consensus = Consensus {
        lo: 0,
        ops: Vec::new(),
    };
    for (k, &t) in order.iter().enumerate() {
        if k == 0 {
            offset[t] = Some(0);
            consensus.add(0, tracks[t].ops);
            continue;
        }
        let found = place_one(tracks, t, &offset, &consensus);
        offset[t] = Some(found.offset);
        basis[t] = found.basis;
        if let Some(i) = found.disagrees_at {
            kept[t] = i;
            let pos = found.offset + i as i64;
            desync = Some(desync.map_or(pos, |d| d.min(pos)));
        }
        consensus.add(found.offset, &tracks[t].ops[..kept[t]]);
    }
    let lo = offset.iter().flatten().copied().min().unwrap_or(0);
    let offsets: Vec<usize> = offset
        .iter()
        .map(|o| (o.unwrap_or(lo) - lo) as usize)
        .collect();
    let end = (0..n)
        .map(|t| offsets[t] + tracks[t].ops.len())
        .max()
        .unwrap_or(0);
    let desync = desync.map(|d| (d - lo) as usize);
    Placement {
        offsets,
        basis,
        length: desync.map_or(end, |d| d.min(end)),
        desync,
    }
}

struct Found {
    offset: i64,
    basis: Basis,
    /// Index into the track of its first disagreement (a desync).
    disagrees_at: Option<usize>,
}

/// A candidate offset and what it scores.
struct Candidate {
    offset: i64,
    /// Its ops agree at every overlapping position.
    agrees: bool,
    /// Index into the track of the first disagreement (its length when
    /// it agrees).
    until: usize,
    /// Spread (MAD, ns) of end differences over the agreeing part against
    /// the placed rank compared with; `None` with too few instances.
    end_mad: Option<f64>,
    /// Median |start difference| over the agreeing part.
    distance: f64,
    /// That rank is on the same clock, so `distance` is exact.
    same_clock: bool,
}

impl Candidate {
    fn ends_fit(&self) -> bool {
        self.end_mad.is_some_and(|m| m <= MAX_END_MAD_NS)
    }
}

fn place_one(tracks: &[Track], t: usize, offset: &[Option<i64>], c: &Consensus) -> Found {
    let me = &tracks[t];
    let m = me.ops.len() as i64;
    let (guess, same_clock) = nearest_in_time(tracks, t, offset);
    // Offsets overlapping the placed ops at all.
    let (lo, hi) = (c.lo - m + 1, c.hi() - 1);
    // A far offset can agree over a sliver of a repetitive sequence: an
    // offset must overlap at least half the shorter of the two.
    let need = (m.min(c.hi() - c.lo) / 2).max(MIN_OVERLAP.min(me.ops.len()) as i64);
    // (offset, index of the first disagreement if any).
    let check = |o: i64| -> Option<(i64, Option<usize>)> {
        if o < lo || o > hi || (o + m).min(c.hi()) - o.max(c.lo) < need {
            return None;
        }
        let (run, overlap, broken) = c.agreement(o, me.ops);
        if overlap == 0 {
            return None;
        }
        let at = broken.then(|| {
            // The first disagreement: the `run + 1`-th overlapping position.
            (0..me.ops.len())
                .filter(|&i| c.get(o + i as i64).is_some())
                .nth(run)
                .unwrap_or(me.ops.len())
        });
        Some((o, at))
    };
    // The guess, then outwards: near offsets, then (when none agrees) a
    // wide scan within a budget.
    let mut found: Vec<(i64, Option<usize>)> = Vec::new();
    let mut d = 0;
    // Across clocks the guess is only as good as the UTC stamps (off by
    // several collectives at times), so the scan goes on past the first
    // agreeing offset: a periodic schedule agrees a period away, and only
    // ends or time can tell which. On one clock the guess is where the
    // rank is: the near offsets suffice once one agrees.
    let enough = if same_clock { 1 } else { MAX_AGREEING };
    let agreeing = |f: &[(i64, Option<usize>)]| f.iter().filter(|f| f.1.is_none()).count();
    while d as usize <= WIDE_BUDGET / 2 && (d <= NEAR || agreeing(&found) < enough) {
        if guess - d < lo && guess + d > hi {
            break;
        }
        let sides = if d == 0 {
            vec![guess]
        } else {
            vec![guess - d, guess + d]
        };
        found.extend(sides.into_iter().filter_map(check));
        d += 1;
    }
    let cands: Vec<Candidate> = found
        .into_iter()
        .map(|(o, at)| score(tracks, t, offset, o, at))
        .collect();

    choose(&cands, c, me.ops.len())
}

/// The rule of the module's header, over the scored candidates.
fn choose(cands: &[Candidate], c: &Consensus, m: usize) -> Found {
    let overlap = |o: i64| (0..m as i64).filter(|i| c.get(o + i).is_some()).count();
    let placed = |x: &Candidate, basis: Basis| Found {
        offset: x.offset,
        basis,
        disagrees_at: (!x.agrees).then_some(x.until),
    };
    let by = |f: &dyn Fn(&Candidate) -> f64, pool: &[&Candidate]| -> Option<(usize, f64)> {
        let mut v: Vec<(usize, f64)> = pool.iter().enumerate().map(|(i, x)| (i, f(x))).collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
        let best = *v.first()?;
        Some((best.0, v.get(1).map_or(f64::INFINITY, |r| r.1)))
    };
    let agreeing: Vec<&Candidate> = cands.iter().filter(|x| x.agrees).collect();
    // Ends first: they need no clock. An agreeing offset and the agreeing
    // prefix of a disagreeing one compete: the prefix winning by far is a
    // desync (swapped ops), not a late start.
    let mad = |x: &Candidate| x.end_mad.unwrap_or(f64::INFINITY);
    let pool: Vec<&Candidate> = cands
        .iter()
        .filter(|x| x.agrees || x.until >= MIN_OVERLAP)
        .collect();
    let fitting: Vec<&Candidate> = pool.iter().copied().filter(|x| x.ends_fit()).collect();
    if let Some((i, _)) = by(&mad, &fitting) {
        let best = fitting[i];
        let others = pool
            .iter()
            .filter(|x| x.offset != best.offset)
            .map(|x| mad(x))
            .fold(f64::INFINITY, f64::min);
        if others >= RUNNER_UP * mad(best).max(MAD_FLOOR_NS) {
            return placed(
                best,
                if best.agrees {
                    Basis::Ends
                } else {
                    Basis::Desync
                },
            );
        }
        let fit_agreeing: Vec<&Candidate> = fitting.iter().copied().filter(|x| x.agrees).collect();
        if !fit_agreeing.is_empty() {
            return by_time(&fit_agreeing, &placed);
        }
        let mut found = by_time(&fitting, &placed);
        found.basis = Basis::Desync;
        return found;
    }
    match agreeing.len() {
        0 => {
            // The longest agreeing run; ties: the first tried (nearest the guess).
            let best = cands.iter().fold(None::<&Candidate>, |b, x| match b {
                Some(b) if b.until >= x.until => Some(b),
                _ => Some(x),
            });
            match best {
                Some(x) => placed(x, Basis::Desync),
                None => Found {
                    offset: 0,
                    basis: Basis::Desync,
                    disagrees_at: Some(0),
                },
            }
        }
        1 if overlap(agreeing[0].offset) >= MIN_OVERLAP => placed(agreeing[0], Basis::Ops),
        1 => placed(agreeing[0], Basis::Short),
        _ => by_time(&agreeing, &placed),
    }
}

/// Several offsets fit the ops (and ends): on one clock, the one whose
/// kernels line up in time confirms itself; otherwise the nearest is a
/// guess.
fn by_time(pool: &[&Candidate], placed: &dyn Fn(&Candidate, Basis) -> Found) -> Found {
    let mut v: Vec<&Candidate> = pool.to_vec();
    v.sort_by(|a, b| a.distance.total_cmp(&b.distance));
    let best = v[0];
    let runner_up = v.get(1).map_or(f64::INFINITY, |x| x.distance);
    let exact = best.same_clock
        && best.distance < SAME_CLOCK_NS
        && runner_up >= RUNNER_UP * best.distance.max(MAD_FLOOR_NS);
    placed(best, if exact { Basis::Clock } else { Basis::Guess })
}

/// Scores offset `o` of track `t` (agreeing up to `at`, if given) against
/// the placed track it overlaps most, one on its own clock first.
fn score(
    tracks: &[Track],
    t: usize,
    offset: &[Option<i64>],
    o: i64,
    at: Option<usize>,
) -> Candidate {
    let me = &tracks[t];
    let until = at.unwrap_or(me.ops.len());
    // (same clock, overlap, other track, index shift: other = mine + shift, first index).
    let best = (0..tracks.len())
        .filter(|&x| x != t)
        .filter_map(|x| offset[x].map(|ox| (x, o - ox)))
        .map(|(x, shift)| {
            let lo = 0.max(-shift);
            let hi = (until as i64).min(tracks[x].ops.len() as i64 - shift);
            let same = tracks[x].domain == me.domain;
            (same, (hi - lo).max(0) as usize, x, shift, lo)
        })
        .filter(|b| b.1 > 0)
        .max_by_key(|&(same, overlap, x, ..)| (same, overlap, std::cmp::Reverse(x)));
    let mut cand = Candidate {
        offset: o,
        agrees: at.is_none(),
        until,
        end_mad: None,
        distance: f64::INFINITY,
        same_clock: false,
    };
    let Some((same, overlap, x, shift, lo)) = best else {
        return cand;
    };
    let other = &tracks[x];
    let step = overlap.div_ceil(END_SAMPLES).max(1);
    let samples = overlap.div_ceil(step);
    let mut end_diff = Vec::with_capacity(samples);
    let mut start_dist = Vec::with_capacity(samples);
    for k in (0..overlap).step_by(step) {
        let i = (lo as usize) + k;
        let j = (i as i64 + shift) as usize;
        let (a, b) = (me.spans[i], other.spans[j]);
        end_diff.push(a.1.saturating_sub(b.1) as f64);
        start_dist.push(a.0.saturating_sub(b.0).unsigned_abs() as f64);
    }
    // On one clock there is no offset between the clocks to allow for:
    // the ends themselves meet, so their distance (p90) is the measure —
    // ends a period apart (a repeating schedule one step off) spread as
    // little as the right ones, and two collectives back to back end a few
    // tens of µs apart, which a spread cannot tell from jitter.
    cand.end_mad = (end_diff.len() >= MIN_OVERLAP).then(|| {
        if same {
            let mut gaps: Vec<f64> = end_diff.iter().map(|d| d.abs()).collect();
            p90(&mut gaps)
        } else {
            mad(&mut end_diff)
        }
    });
    cand.distance = median(&mut start_dist);
    cand.same_clock = same;
    cand
}

/// The offset that puts track `t`'s first kernel (or the anchor's first
/// kernel, when `t` starts before it) next to the nearest one in time.
/// Whether that kernel is on the same clock is the second value.
fn nearest_in_time(tracks: &[Track], t: usize, offset: &[Option<i64>]) -> (i64, bool) {
    let me = &tracks[t];
    // Against the longest placed track, one on the same clock first.
    let Some((x, ox)) = (0..tracks.len())
        .filter(|&x| x != t)
        .filter_map(|x| offset[x].map(|o| (x, o)))
        .max_by_key(|&(x, _)| {
            (
                tracks[x].domain == me.domain,
                tracks[x].ops.len(),
                std::cmp::Reverse(x),
            )
        })
    else {
        return (0, false);
    };
    let same = tracks[x].domain == me.domain;
    let other = &tracks[x];
    let (Some(mine), Some(theirs)) = (me.spans.first(), other.spans.first()) else {
        return (ox, same);
    };
    let guess = if mine.0 >= theirs.0 {
        ox + nearest(other.spans, mine.0) as i64
    } else {
        ox - nearest(me.spans, theirs.0) as i64
    };
    (guess, same)
}

/// Index of the span starting nearest `t` (spans in start order).
fn nearest(spans: &[Span], t: i64) -> usize {
    let i = spans.partition_point(|s| s.0 < t);
    if i == 0 {
        return 0;
    }
    if i >= spans.len() {
        return spans.len() - 1;
    }
    if t - spans[i - 1].0 <= spans[i].0 - t {
        i - 1
    } else {
        i
    }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::INFINITY;
    }
    let mid = v.len() / 2;
    v.select_nth_unstable_by(mid, f64::total_cmp);
    v[mid]
}

/// The 90th percentile (nearest rank).
fn p90(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::INFINITY;
    }
    let at = ((v.len() * 9).div_ceil(10)).clamp(1, v.len()) - 1;
    v.select_nth_unstable_by(at, f64::total_cmp);
    v[at]
}

/// Median absolute deviation from the median.
fn mad(v: &mut [f64]) -> f64 {
    let m = median(v);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    median(&mut dev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CollOp::*;

    const MS: i64 = 1_000_000;

    /// A job's sequence: ops with irregular spacing (as compute between
    /// collectives varies), each kernel 300 µs.
    fn job(len: usize) -> (Vec<CollOp>, Vec<Span>) {
        let mut t = 0;
        let mut ops = Vec::new();
        let mut spans = Vec::new();
        for i in 0..len {
            ops.push(AllReduce);
            // A hash, not a short cycle: a jitter repeating every k
            // collectives would make offsets k apart indistinguishable.
            let jitter = ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as i64;
            t += 2 * MS + jitter * 100_000;
            spans.push((t, t + 300_000));
        }
        (ops, spans)
    }

    /// Ranks capturing `from..to` of the job, each on a clock `shift` off.
    fn ranks(
        len: usize,
        cuts: &[(usize, usize, i64, usize)],
    ) -> Vec<(Vec<CollOp>, Vec<Span>, usize)> {
        let (ops, spans) = job(len);
        cuts.iter()
            .map(|&(from, to, shift, domain)| {
                let s = spans[from..to]
                    .iter()
                    .map(|&(a, b)| (a + shift, b + shift))
                    .collect();
                (ops[from..to].to_vec(), s, domain)
            })
            .collect()
    }

    fn run(r: &[(Vec<CollOp>, Vec<Span>, usize)]) -> Placement {
        let tracks: Vec<Track> = r
            .iter()
            .map(|(o, s, d)| Track {
                ops: o,
                spans: s,
                domain: *d,
            })
            .collect();
        place(&tracks)
    }

    #[test]
    fn staggered_starts_of_one_op_are_placed_by_ends() {
        // Every op the same: only the ends can say where a rank starts,
        // even with clocks 7 ms apart (more than 3 collectives).
        let r = ranks(
            40,
            &[(0, 40, 0, 0), (3, 40, 7 * MS, 1), (5, 38, -7 * MS, 2)],
        );
        let p = run(&r);
        assert_eq!(p.offsets, vec![0, 3, 5]);
        assert_eq!(p.basis, vec![Basis::Anchor, Basis::Ends, Basis::Ends]);
        assert_eq!((p.length, p.desync), (40, None));
    }

    #[test]
    fn a_rank_starting_before_the_longest_gets_offset_zero() {
        let r = ranks(40, &[(4, 40, 0, 0), (0, 30, 0, 0)]);
        let p = run(&r);
        assert_eq!(p.offsets, vec![4, 0]);
        assert!(p.basis[1].confirmed());
    }

    #[test]
    fn a_unique_op_places_without_ends() {
        let (mut ops, spans) = job(20);
        ops[0] = Broadcast;
        let a = (ops.clone(), spans.clone(), 0);
        let b = (ops[..10].to_vec(), spans[..10].to_vec(), 1);
        let p = run(&[a, b]);
        assert_eq!(p.offsets, vec![0, 0]);
        assert!(p.basis[1].confirmed());
    }

    #[test]
    fn periodic_schedules_are_confirmed_by_one_clock_only() {
        // Exactly periodic: every offset fits the ends' spread. On one
        // clock the ends themselves meet at one offset only; across clocks
        // 5 ms apart (more than a period) the nearest is a guess.
        let ops = vec![AllReduce; 20];
        let spans: Vec<Span> = (0..20).map(|i| (i * 4 * MS, i * 4 * MS + MS)).collect();
        let a = (ops.clone(), spans.clone(), 0);
        let b = (ops[2..].to_vec(), spans[2..].to_vec(), 0);
        let p = run(&[a.clone(), b]);
        assert_eq!(p.offsets, vec![0, 2]);
        assert_eq!(p.basis[1], Basis::Ends);
        let shifted: Vec<Span> = spans[2..]
            .iter()
            .map(|s| (s.0 + 5 * MS, s.1 + 5 * MS))
            .collect();
        let p = run(&[a, (ops[2..].to_vec(), shifted, 1)]);
        assert_eq!(p.basis[1], Basis::Guess);
        assert!(!p.basis[1].confirmed());
    }

    #[test]
    fn swapped_ops_are_a_desync_at_the_first() {
        let ops: Vec<CollOp> = (0..12)
            .map(|i| if i % 2 == 0 { ReduceScatter } else { AllGather })
            .collect();
        let (_, spans) = job(12);
        let mut swapped = ops.clone();
        swapped.swap(6, 7);
        let p = run(&[(ops.clone(), spans.clone(), 0), (swapped, spans.clone(), 0)]);
        assert_eq!(p.desync, Some(6));
        assert_eq!(p.length, 6);
        assert_eq!(p.offsets, vec![0, 0]);
        assert_eq!(p.basis[1], Basis::Desync);
    }
}
