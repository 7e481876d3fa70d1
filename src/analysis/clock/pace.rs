//! Whether each file's clock keeps the pace of the others'. Clocks differ
//! by an offset and a few ppm of drift; a file whose timestamps were
//! scaled (a broken conversion, a wrong timer frequency) runs at another
//! pace altogether, and no offset or drift fits it. The pace shows without
//! any alignment: the gaps between one stream's consecutive collectives
//! on two ranks of a synchronous job are the same gaps on both, so their
//! ratio is the ratio of the two clocks' rates — whatever their offset,
//! whichever host they are on.

use crate::analysis::kernel_class::KernelClasses;
use crate::analysis::nccl_name::CollOp;
use crate::analysis::nccl_streams::{Seq, nccl_sequences};
use crate::profile::Profile;

/// A pace this far from another's (fraction) is no clock's drift: real
/// clocks differ by tens of ppm, a scaled one by percent.
const OFF_PACE: f64 = 0.01;
/// Ratios of one lane pair must agree this well (MAD, fraction) to measure
/// a pace: siblings in lockstep do, unrelated streams do not.
const TIGHT: f64 = 0.002;
/// Gaps shorter than this (ns) are mostly jitter.
const MIN_GAP_NS: i64 = 100_000;
/// Fewest gap ratios a lane pair needs.
const MIN_GAPS: usize = 8;
/// Offsets tried between two lanes' sequences (captures that start a few
/// collectives apart).
const SHIFTS: i64 = 4;
/// Files each file is compared with: its host's first, then the files
/// after it.
const PEERS: usize = 8;
/// Gaps compared per lane pair and shift (evenly spaced).
const SAMPLES: usize = 256;

/// A file whose clock runs at another pace than most files it was
/// compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct OffPace {
    pub file: usize,
    /// Its pace over theirs (median over the files it disagrees with).
    pub ratio: f64,
    /// Files it was compared with, and how many of them it disagrees with.
    pub compared: usize,
    pub disagree: usize,
}

impl OffPace {
    /// Why its clock data cannot be right, as `report clock` says it.
    pub fn why(&self) -> String {
        format!(
            "its kernels run at {:.3}× the pace of {} of the {} files compared with (the gaps between one stream's collectives; clocks differ by ppm, not percent): its timestamps cannot be right",
            self.ratio, self.disagree, self.compared
        )
    }
}

/// One NCCL stream as the pace sees it: its ops and kernel ends.
struct Lane {
    ops: Vec<CollOp>,
    /// Sorted op kinds: only lanes of the same kinds are compared.
    kinds: Vec<CollOp>,
    ends: Vec<i64>,
}

fn lane(p: &Profile, s: &Seq) -> Lane {
    let mut kinds = s.ops.clone();
    kinds.sort_by_key(|o| o.name());
    kinds.dedup();
    Lane {
        ops: s.ops.clone(),
        kinds,
        ends: s.rows.iter().map(|&r| p.gpu.end(r as usize)).collect(),
    }
}

/// Files whose clocks run at another pace than most of the files they
/// were compared with. With two files that disagree, the second.
pub fn off_pace(p: &Profile, classes: &KernelClasses) -> Vec<OffPace> {
    let n = p.files.len();
    if n < 2 {
        return Vec::new();
    }
    let mut lanes: Vec<Vec<Lane>> = (0..n).map(|_| Vec::new()).collect();
    for s in nccl_sequences(p, classes) {
        let f = p.lane_file(s.lane);
        lanes[f].push(lane(p, &s));
    }
    // (compared, disagreeing, ratios of those)
    let mut seen: Vec<(usize, usize, Vec<f64>)> = (0..n).map(|_| (0, 0, Vec::new())).collect();
    let mut done = std::collections::HashSet::new();
    for f in 0..n {
        for g in peers(p, f) {
            if !done.insert((f.min(g), f.max(g))) {
                continue;
            }
            let Some(r) = pace(&lanes[f], &lanes[g]) else {
                continue;
            };
            let off = (r.ln()).abs() > (1.0 + OFF_PACE).ln();
            for (x, ratio) in [(f, r), (g, 1.0 / r)] {
                seen[x].0 += 1;
                if off {
                    seen[x].1 += 1;
                    seen[x].2.push(ratio);
                }
            }
        }
    }
    let mut out: Vec<OffPace> = seen
        .into_iter()
        .enumerate()
        .filter(|(_, (compared, disagree, _))| *compared > 0 && 2 * disagree > *compared)
        .map(|(file, (compared, disagree, ratios))| OffPace {
            file,
            ratio: crate::analysis::clock::median(ratios),
            compared,
            disagree,
        })
        .collect();
    // No majority keeps time (two files that disagree): the first file's
    // pace is taken as right.
    if out.len() == n {
        out.remove(0);
    }
    out
}

/// The files `f` is compared with: its host's other files, then the files
/// after it, up to [`PEERS`].
fn peers(p: &Profile, f: usize) -> Vec<usize> {
    let n = p.files.len();
    let host = &p.files[f].host;
    let mut out: Vec<usize> = (0..n)
        .filter(|&g| g != f && host.is_some() && &p.files[g].host == host)
        .take(PEERS)
        .collect();
    for k in 1..n {
        if out.len() >= PEERS {
            break;
        }
        let g = (f + k) % n;
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// The pace of file `a`'s clock over `b`'s: the median over their lane
/// pairs that measure one; `None` when none does.
fn pace(a: &[Lane], b: &[Lane]) -> Option<f64> {
    let mut rates = Vec::new();
    for x in a {
        for y in b.iter().filter(|y| y.kinds == x.kinds) {
            if let Some(r) = lane_pace(x, y) {
                rates.push(r);
            }
        }
    }
    (!rates.is_empty()).then(|| crate::analysis::clock::median(rates))
}

/// The ratio of `x`'s gaps to `y`'s at the offset where they agree best,
/// when tight.
fn lane_pace(x: &Lane, y: &Lane) -> Option<f64> {
    let mut best: Option<(f64, f64)> = None;
    for shift in -SHIFTS..=SHIFTS {
        let lo = 0.max(-shift) as usize;
        let hi = (x.ops.len() as i64).min(y.ops.len() as i64 - shift);
        if hi <= lo as i64 + 1 {
            continue;
        }
        let hi = hi as usize;
        let at = |i: usize| (i as i64 + shift) as usize;
        let agree = (lo..hi).filter(|&i| x.ops[i] == y.ops[at(i)]).count();
        if 10 * agree < 9 * (hi - lo) {
            continue;
        }
        let step = (hi - lo).div_ceil(SAMPLES).max(1);
        let ratios: Vec<f64> = (lo..hi - 1)
            .step_by(step)
            .filter(|&i| x.ops[i] == y.ops[at(i)] && x.ops[i + 1] == y.ops[at(i + 1)])
            .filter_map(|i| {
                let gx = x.ends[i + 1] - x.ends[i];
                let gy = y.ends[at(i + 1)] - y.ends[at(i)];
                (gx >= MIN_GAP_NS && gy >= MIN_GAP_NS).then(|| gx as f64 / gy as f64)
            })
            .collect();
        if ratios.len() < MIN_GAPS {
            continue;
        }
        let m = crate::analysis::clock::median(ratios.clone());
        let mad = crate::analysis::clock::median(ratios.iter().map(|r| (r - m).abs()).collect());
        if mad <= TIGHT * m && best.is_none_or(|(_, b)| mad < b) {
            best = Some((m, mad));
        }
    }
    best.map(|(m, _)| m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CollOp::*;

    fn lane(gaps: &[i64], scale: f64) -> Lane {
        let mut t = 0;
        let mut ends = Vec::new();
        for g in gaps {
            t += g;
            ends.push((t as f64 * scale) as i64);
        }
        Lane {
            ops: vec![AllReduce; gaps.len()],
            kinds: vec![AllReduce],
            ends,
        }
    }

    #[test]
    fn a_scaled_clock_shows_its_pace_and_a_drifting_one_does_not() {
        let gaps: Vec<i64> = (0..40)
            .map(|i| 2_000_000 + (i * 7919 % 13) * 300_000)
            .collect();
        let x = lane(&gaps, 1.5);
        let r = lane_pace(&x, &lane(&gaps, 1.0)).unwrap();
        assert!((r - 1.5).abs() < 1e-3, "{r}");
        // 20 ppm of drift: one pace
        let r = lane_pace(&lane(&gaps, 1.000_02), &lane(&gaps, 1.0)).unwrap();
        assert!((r - 1.0).abs() < OFF_PACE, "{r}");
        // a capture that starts two collectives later still measures
        let later = Lane {
            ops: x.ops[2..].to_vec(),
            kinds: x.kinds.clone(),
            ends: x.ends[2..].to_vec(),
        };
        let r = lane_pace(&later, &lane(&gaps, 1.0)).unwrap();
        assert!((r - 1.5).abs() < 1e-3, "{r}");
    }
}
