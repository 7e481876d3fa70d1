//! Which units of different clock domains are one communicator. Across
//! hosts the ends of one call still meet, but each host's clock is off by
//! its own offset (and drifts a few ppm): the difference between a true
//! partner's ends is that offset — plus drift over time and microseconds
//! of jitter — at *every* instance. Siblings in lockstep give the same
//! difference most of the time but wander wherever one of them was
//! delayed, and a wrong pairing (another op sequence, one step off)
//! wanders or sits a step period away from what the UTC stamps say. So a
//! link is the alignment of two units' op sequences whose end differences
//! fit one line tightly over all of it, the closest to UTC of those.

use super::unit::Unit;
use crate::analysis::clock::{Alignment, MAX_DRIFT_PPM, robust_line};
use crate::analysis::nccl_name::CollOp;
use crate::profile::Profile;

/// Fewest instances two units must share for a link.
const MIN_SHARED: usize = 5;
/// A link's end differences may spread this much (MAD, ns) — the ends'
/// jitter on both hosts, tens of µs — and no instance may stray further
/// than [`TAIL_NS`] from the line: partners never part. Node-local groups
/// of two hosts in lockstep wander by 0.1–0.5 ms (16 nodes of
/// `make-fixtures scale-nodes`): at 200/500 µs they were taken as one.
const MAD_NS: f64 = 50_000.0;
const TAIL_NS: f64 = 250_000.0;
/// How far the UTC stamps may put two hosts' clocks apart (ns): NTP keeps
/// them within milliseconds; a schedule one step off sits a step period
/// (tens of ms or more) away.
pub const UTC_ERROR_NS: f64 = 50_000_000.0;
/// How far UTC stamps may be off at worst (ns): only an alignment whose
/// ends fit is taken from this far.
const UTC_WIDE_NS: f64 = 1_000_000_000.0;
/// Ends compared per alignment for the fit (evenly spaced); every shared
/// instance is checked for the tail.
const FIT_SAMPLES: usize = 256;
/// Drift is fitted over at least this span (ns), as the clock fit does.
const DRIFT_SPAN_NS: f64 = 10e9;

/// Two units whose ends differ by one line at every shared instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Indices into the units.
    pub a: usize,
    pub b: usize,
    /// Which instances of the two are one.
    pub pairing: Pairing,
    /// `b`'s end − `a`'s where they start sharing (ns, on the alignment
    /// given, from the fitted line).
    pub lag_ns: f64,
    /// Largest distance of any shared instance from the fitted line (ns).
    pub tail_ns: f64,
    /// How fast `b`'s clock runs against `a`'s (ppm; 0 when the shared
    /// span is too short to fit it).
    pub lag_slope_ppm: f64,
    /// Median deviation of the end differences from the line (ns).
    pub mad_ns: f64,
    pub shared: usize,
    /// `a`'s first and last shared end (the line's span; `lag_ns` is
    /// at the first).
    pub span: (i64, i64),
    /// The units' clock domains.
    pub domains: (usize, usize),
}

/// Which instances of two linked units are one.
#[derive(Debug, Clone, PartialEq)]
pub enum Pairing {
    /// Unit `b`'s instance `i + shift` is unit `a`'s instance `i`, over
    /// all they share: one communicator.
    Shift(i64),
    /// Only these (`a`'s instance, `b`'s), in order: `a` or `b` exchanges
    /// with units of other hosts too ([`super::partners`]).
    Part(Vec<(u32, u32)>),
}

impl Link {
    /// `b`'s clock minus `a`'s at `t` (on `a`'s time) by this link's line.
    pub(super) fn difference_at(&self, t: i64) -> f64 {
        self.lag_ns + self.lag_slope_ppm * 1e-6 * (t - self.span.0) as f64
    }
}

/// The partners in part among `links` that [`agreeing`] kept (`agree`),
/// with their kernel pairs.
pub fn agreeing_parts<'a>(
    links: &'a [Link],
    agree: &'a [bool],
) -> impl Iterator<Item = (&'a Link, &'a [(u32, u32)])> {
    links
        .iter()
        .zip(agree)
        .filter(|(_, ok)| **ok)
        .filter_map(|(l, _)| match &l.pairing {
            Pairing::Part(pairs) => Some((l, pairs.as_slice())),
            Pairing::Shift(_) => None,
        })
}

/// A unit's series: its longest member's ops and ends (on `clock`).
pub struct Series {
    pub ops: Vec<CollOp>,
    pub ends: Vec<i64>,
}

/// Each unit's series.
pub fn series(p: &Profile, clock: &Alignment, units: &[Unit]) -> Vec<Series> {
    units.iter().map(|u| series_of(p, clock, u)).collect()
}

fn series_of(p: &Profile, clock: &Alignment, u: &Unit) -> Series {
    let s = u.reference();
    Series {
        ops: s.ops.clone(),
        ends: s
            .rows
            .iter()
            .map(|&r| clock.gpu_end(p, r as usize))
            .collect(),
    }
}

/// The ops each series runs, each once, by name (found once: series run
/// to 10⁵ kernels).
pub fn kinds(all: &[Series]) -> Vec<Vec<CollOp>> {
    all.iter()
        .map(|s| {
            let mut k = s.ops.clone();
            k.sort_by_key(|o| o.name());
            k.dedup();
            k
        })
        .collect()
}

/// Every link between units of different domains: partners, siblings
/// (one offset most of the time, parting somewhere), and units whose ends
/// wander where their ops agree near in time. A unit with no link
/// at all has nothing to say about its partners (UTC stamps missing or far
/// off, no other unit runs its ops, or ends that never meet anyone's, as a
/// tree all-reduce's across nodes).
pub fn links(units: &[Unit], all: &[Series]) -> Vec<Link> {
    // Only units that run the same ops can be one communicator.
    let kinds = kinds(all);
    let mut out = Vec::new();
    for a in 0..units.len() {
        for b in a + 1..units.len() {
            if units[a].domain == units[b].domain
                || kinds[a] != kinds[b]
                || units[a]
                    .seqs
                    .iter()
                    .any(|x| units[b].seqs.iter().any(|y| y.device == x.device))
            {
                continue;
            }
            // UTC stamps are usually within ms; when no alignment within
            // that fits, the stamps may be off by more (drift since boot,
            // a bad NTP sync): only an alignment whose ends fit counts
            // from the wider window.
            let near = best_alignment(&all[a], &all[b], UTC_ERROR_NS);
            let found = match near {
                Some(l) if partners_fit(&l) => Some(l),
                near => best_alignment(&all[a], &all[b], UTC_WIDE_NS)
                    .filter(partners_fit)
                    .or(near),
            };
            if let Some(mut l) = found {
                (l.a, l.b) = (a, b);
                l.domains = (units[a].domain, units[b].domain);
                out.push(l);
            }
        }
    }
    out
}

/// Alignments tried per pair of units at most.
const MAX_SHIFTS: usize = 64;
/// Points of `x` that propose alignments.
const PROBES: usize = 16;

/// The alignments worth trying: for a few instances of `x`, the instances
/// of `y` of the same op ending within the UTC error of it; an alignment
/// most of them propose.
fn proposed_shifts(x: &Series, y: &Series, window: f64) -> Vec<i64> {
    let step = x.ops.len().div_ceil(PROBES).max(1);
    let mut votes: std::collections::BTreeMap<i64, usize> = Default::default();
    let mut probes = 0;
    let mut first: Vec<i64> = Vec::new();
    for i in (0..x.ops.len()).step_by(step) {
        probes += 1;
        let (lo, hi) = (
            x.ends[i].saturating_sub(window as i64),
            x.ends[i].saturating_add(window as i64),
        );
        let from = y.ends.partition_point(|&e| e < lo);
        for j in from..y.ends.len() {
            if y.ends[j] > hi {
                break;
            }
            if y.ops[j] == x.ops[i] {
                *votes.entry(j as i64 - i as i64).or_default() += 1;
                if i == 0 {
                    first.push(j as i64);
                }
            }
        }
    }
    // A capture that starts or stops early meets fewer probes; a clock
    // that runs wrong meets only the first (it parts from UTC as it goes).
    let mut kept: Vec<(i64, usize)> = votes
        .into_iter()
        .filter(|&(s, v)| 3 * v >= probes || first.contains(&s))
        .collect();
    // A wide window over a busy schedule proposes many: the best voted.
    kept.sort_by_key(|&(s, v)| (std::cmp::Reverse(v), s.abs()));
    kept.truncate(MAX_SHIFTS);
    kept.into_iter().map(|(s, _)| s).collect()
}

/// The alignment of `y` against `x` whose end differences fit a line,
/// closest to UTC; `None` when none does.
fn best_alignment(x: &Series, y: &Series, window: f64) -> Option<Link> {
    let shifts = proposed_shifts(x, y, window);
    let (m, n) = (x.ops.len() as i64, y.ops.len() as i64);
    let mut best: Option<Link> = None;
    for shift in shifts {
        let lo = 0.max(-shift);
        let hi = m.min(n - shift);
        if hi - lo < MIN_SHARED as i64 {
            continue;
        }
        let pairs: Vec<(usize, usize)> = (lo..hi)
            .map(|i| (i as usize, (i + shift) as usize))
            .collect();
        let agree = pairs.iter().filter(|&&(i, j)| x.ops[i] == y.ops[j]).count();
        // Nine in ten agree, or they agree from the start for half the
        // overlap and then part (a desync is one communicator diverging).
        let prefix = pairs
            .iter()
            .take_while(|&&(i, j)| x.ops[i] == y.ops[j])
            .count();
        if 10 * agree < 9 * pairs.len() && 2 * prefix < pairs.len() {
            continue;
        }
        let shared: Vec<(usize, usize)> = pairs
            .into_iter()
            .filter(|&(i, j)| x.ops[i] == y.ops[j])
            .collect();
        let step = shared.len().div_ceil(FIT_SAMPLES).max(1);
        let (xs, ys): (Vec<f64>, Vec<f64>) = shared
            .iter()
            .step_by(step)
            .map(|&(i, j)| (x.ends[i] as f64, (y.ends[j] - x.ends[i]) as f64))
            .unzip();
        let t0 = xs[0];
        let xs: Vec<f64> = xs.iter().map(|t| t - t0).collect();
        let span = xs.iter().copied().fold(0.0, f64::max);
        let Some(f) = robust_line(&xs, &ys, span >= DRIFT_SPAN_NS, 0.0) else {
            continue;
        };
        // Far from UTC where they start sharing: not this alignment (a
        // clock that runs wrong parts from UTC only as it goes).
        let offset = f.offset;
        if offset.abs() > window {
            continue;
        }
        // Ends that wander where the ops agree near in time: evidence
        // that the two are not one communicator (kept only when no
        // alignment fits).
        let fits = f.mad_all <= MAD_NS;
        let better = match &best {
            None => true,
            Some(b) => match (partners_fit(b), fits) {
                (true, false) => false,
                (false, true) => true,
                _ => offset.abs() < b.lag_ns.abs(),
            },
        };
        if !better {
            continue;
        }
        let tail = shared
            .iter()
            .map(|&(i, j)| {
                let dx = x.ends[i] as f64 - t0;
                ((y.ends[j] - x.ends[i]) as f64 - f.offset - f.slope * dx).abs()
            })
            .fold(0.0, f64::max);
        best = Some(Link {
            a: 0,
            b: 0,
            pairing: Pairing::Shift(shift),
            lag_ns: offset,
            tail_ns: tail,
            lag_slope_ppm: f.slope * 1e6,
            mad_ns: f.mad_all,
            shared: shared.len(),
            span: (x.ends[shared[0].0], x.ends[shared[shared.len() - 1].0]),
            domains: (0, 0),
        });
    }
    best
}

/// Whether a link's ends fit its line at all (else they wander).
fn partners_fit(l: &Link) -> bool {
    l.mad_ns <= MAD_NS
}

/// Whether a link says the two units are one communicator: no shared
/// instance strays from the line (siblings part where one was delayed).
/// The line may drift more than a clock can: the clock fit refuses that
/// clock, with its figure.
pub fn partners(l: &Link) -> bool {
    partners_fit(l) && l.tail_ns <= TAIL_NS
}

/// Whether a link's drift is one a clock can have.
pub fn plausible(l: &Link) -> bool {
    l.lag_slope_ppm.abs() <= MAX_DRIFT_PPM
}

/// An offset between two hosts the partner links along a path and a
/// link may differ by (ns) before the link is taken for siblings, on top
/// of the links' own tails and what drift can add.
const HOSTS_AGREE_NS: f64 = 100_000.0;
/// Drift the links' lines may have got wrong (fraction): a few instances
/// fit a slope only roughly.
const DRIFT_ERROR: f64 = 10e-6;

/// Which partner links agree with the others on the hosts' clocks. All
/// communicators between two hosts see one offset (and drift): taken
/// tightest first, a link between hosts already connected through
/// earlier links must imply the offset their path implies. Siblings in
/// lockstep fit a line over a short capture too, but at the offset of
/// their schedule, milliseconds from the clocks'.
pub fn agreeing(links: &[Link]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..links.len()).filter(|&i| partners(&links[i])).collect();
    order.sort_by(|&x, &y| {
        let (x, y) = (&links[x], &links[y]);
        (!plausible(x), x.tail_ns)
            .partial_cmp(&(!plausible(y), y.tail_ns))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then((x.a, x.b).cmp(&(y.a, y.b)))
    });
    let mut ok = vec![false; links.len()];
    // accepted links by domain
    let mut edges: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for i in order {
        let l = &links[i];
        let (da, db) = l.domains;
        let t = (l.span.0 / 2).saturating_add(l.span.1 / 2);
        if let Some((implied, slack)) = path_difference(links, &edges, da, db, t) {
            let allowed = HOSTS_AGREE_NS + slack + l.tail_ns;
            if (l.difference_at(t) - implied).abs() > allowed {
                continue;
            }
        }
        ok[i] = true;
        edges.entry(da).or_default().push(i);
        edges.entry(db).or_default().push(i);
    }
    ok
}

/// Host `to`'s clock minus host `from`'s at `t`, along the accepted links
/// from one to the other (breadth first), with the slack the path allows
/// (its tails and drift error); `None` when not connected.
fn path_difference(
    links: &[Link],
    edges: &std::collections::HashMap<usize, Vec<usize>>,
    from: usize,
    to: usize,
    t: i64,
) -> Option<(f64, f64)> {
    let mut seen: std::collections::HashMap<usize, (f64, f64)> = Default::default();
    seen.insert(from, (0.0, 0.0));
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(d) = queue.pop_front() {
        let (here, slack) = seen[&d];
        if d == to {
            return Some((here, slack));
        }
        for &e in edges.get(&d).into_iter().flatten() {
            let l = &links[e];
            let step = l.difference_at(t);
            let (next, diff) = if l.domains.0 == d {
                (l.domains.1, step)
            } else {
                (l.domains.0, -step)
            };
            if seen.contains_key(&next) {
                continue;
            }
            let away = (t - l.span.0)
                .unsigned_abs()
                .min((t - l.span.1).unsigned_abs());
            let s = slack + l.tail_ns + DRIFT_ERROR * away as f64;
            seen.insert(next, (here + diff, s));
            queue.push_back(next);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use CollOp::*;

    const MS: i64 = 1_000_000;

    /// A schedule of `n` collectives with irregular gaps, ends `shift` ns
    /// later, with one instance `late` ns late at `at`.
    fn job(n: usize, shift: i64, at: Option<(usize, i64)>) -> Series {
        let mut t = 0;
        let mut ends = Vec::new();
        for i in 0..n {
            let jitter = ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as i64;
            t += 3 * MS + jitter * 200_000;
            let late = at.filter(|a| a.0 == i).map_or(0, |a| a.1);
            ends.push(t + shift + late);
        }
        Series {
            ops: vec![AllReduce; n],
            ends,
        }
    }

    #[test]
    fn partners_differ_by_one_offset_and_siblings_wander() {
        let x = job(40, 0, None);
        // A partner 4 ms off by its clock: linked at shift 0.
        let y = job(40, 4 * MS, None);
        let l = best_alignment(&x, &y, UTC_ERROR_NS).unwrap();
        assert_eq!(l.pairing, Pairing::Shift(0));
        assert!((l.lag_ns - 4e6).abs() < 1.0, "{l:?}");
        assert!(partners(&l));
        // A sibling that was late once by 20 ms: the same offset, not a partner.
        let y = job(40, 4 * MS, Some((17, 20 * MS)));
        let s = best_alignment(&x, &y, UTC_ERROR_NS).unwrap();
        assert_eq!(s.pairing, Pairing::Shift(0));
        assert!(!partners(&s), "{s:?}");
        // A partner whose capture started 3 collectives later.
        let later = Series {
            ops: x.ops[3..].to_vec(),
            ends: job(40, 2 * MS, None).ends[3..].to_vec(),
        };
        let l = best_alignment(&x, &later, UTC_ERROR_NS).unwrap();
        assert_eq!(l.pairing, Pairing::Shift(-3));
        assert!(partners(&l));
    }
}
