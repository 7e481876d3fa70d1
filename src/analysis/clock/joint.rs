//! Every host's clock fitted at once, over every instance that links two
//! hosts.
//!
//! Hosts are first fitted one by one ([`super::ends`]), each against the
//! hosts aligned before it, so the error of a chain of hosts adds up along
//! it; and a host's fit is a median, which its most frequent partner
//! decides. On a 3D job that is a pipeline: the stages of one pipeline
//! meet hundreds of times, the pipelines meet each other only in the few
//! data-parallel reductions of a step, and the whole pipeline floats
//! against the others by what its first host's fit got wrong. Here each
//! instance says only that its hosts' aligned ends agree: least squares
//! over all of them at once moves a whole pipeline as readily as one host,
//! and every link weighs what its instances weigh.

use super::fit::{median, outlier_limit};

/// One host's end in one instance: its domain, the time since the
/// domain's first timestamp (s, on its own clock: drift grows with it) and
/// its end on the reference clock as aligned so far (ns, from any base the
/// instance shares).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostEnd {
    pub domain: usize,
    pub since_s: f64,
    pub end_ns: f64,
}

/// What each unknown host's line needs added: offset (ns) and drift (ns
/// per s of its own clock).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Correction {
    pub offset_ns: f64,
    pub ns_per_s: f64,
}

/// The unknowns: each fitted host's offset, and its drift where one was
/// fitted; the reference host (and any host not listed) stays fixed.
pub struct Unknowns {
    /// Per domain: its offset's index, and its drift's when free.
    index: Vec<Option<(usize, Option<usize>)>>,
    count: usize,
}

impl Unknowns {
    /// `hosts`: (domain, whether its drift is free).
    pub fn new(domains: usize, hosts: impl IntoIterator<Item = (usize, bool)>) -> Self {
        let mut index = vec![None; domains];
        let mut count = 0;
        for (d, drift) in hosts {
            if d < domains && index[d].is_none() {
                let o = count;
                count += 1;
                let s = drift.then(|| {
                    count += 1;
                    count - 1
                });
                index[d] = Some((o, s));
            }
        }
        Unknowns { index, count }
    }

    /// The unknowns' coefficients in host end `e`'s aligned end.
    fn row(&self, e: &HostEnd) -> ([(usize, f64); 2], usize) {
        match self.index.get(e.domain).copied().flatten() {
            None => ([(0, 0.0); 2], 0),
            Some((o, None)) => ([(o, 1.0), (0, 0.0)], 1),
            Some((o, Some(s))) => ([(o, 1.0), (s, e.since_s)], 2),
        }
    }

    fn shift(&self, e: &HostEnd, x: &[f64]) -> f64 {
        let (row, n) = self.row(e);
        row[..n].iter().map(|&(j, c)| c * x[j]).sum()
    }
}

/// Solves after which outliers are no longer dropped.
const ROUNDS: usize = 4;

/// The corrections (per domain; zero for the fixed ones) that make the
/// hosts' aligned ends of each instance agree best (least squares, each
/// instance's own time a free unknown), dropping ends further than
/// max(3 scaled MADs, `floor_ns`) from their instance's consensus and
/// solving again. `None` when the instances do not determine every unknown
/// (a host linked to no fixed one, a drift over one time only).
pub fn solve(u: &Unknowns, instances: &[Vec<HostEnd>], floor_ns: f64) -> Option<Vec<Correction>> {
    let mut kept: Vec<Vec<bool>> = instances.iter().map(|i| vec![true; i.len()]).collect();
    // The alignment so far (no correction) is already robust: its
    // outliers are dropped before the first solve, so that a rank leaving
    // ms late never pulls the least squares.
    let mut x = vec![0.0; u.count];
    for round in 0..=ROUNDS {
        if round > 0 {
            x = solve_kept(u, instances, &kept)?;
        }
        let residuals = residuals(u, instances, &kept, &x);
        let all: Vec<f64> = residuals
            .iter()
            .flatten()
            .flatten()
            .map(|r| r.abs())
            .collect();
        let limit = outlier_limit(median(all), floor_ns);
        let mut dropped = false;
        for (k, r) in kept.iter_mut().zip(&residuals) {
            for (keep, r) in k.iter_mut().zip(r) {
                if r.is_some_and(|r| r.abs() > limit) {
                    *keep = false;
                    dropped = true;
                }
            }
        }
        if !dropped && round > 0 {
            break;
        }
    }
    Some(
        u.index
            .iter()
            .map(|ix| match *ix {
                None => Correction::default(),
                Some((o, s)) => Correction {
                    offset_ns: x[o],
                    ns_per_s: s.map_or(0.0, |s| x[s]),
                },
            })
            .collect(),
    )
}

/// Each kept end's distance from its instance's consensus (the mean of its
/// kept ends after the corrections `x`); `None` for ends not kept or in an
/// instance with fewer than two.
fn residuals(
    u: &Unknowns,
    instances: &[Vec<HostEnd>],
    kept: &[Vec<bool>],
    x: &[f64],
) -> Vec<Vec<Option<f64>>> {
    instances
        .iter()
        .zip(kept)
        .map(|(inst, k)| {
            let ends: Vec<Option<f64>> = inst
                .iter()
                .zip(k)
                .map(|(e, &keep)| keep.then(|| e.end_ns + u.shift(e, x)))
                .collect();
            let n = ends.iter().flatten().count();
            if n < 2 {
                return vec![None; inst.len()];
            }
            let mean = ends.iter().flatten().sum::<f64>() / n as f64;
            ends.into_iter().map(|e| e.map(|e| e - mean)).collect()
        })
        .collect()
}

/// The least-squares corrections over the kept ends: with each instance's
/// time eliminated (its ends centred on their mean), the normal equations
/// `AᵀPA x = −AᵀP c`.
fn solve_kept(u: &Unknowns, instances: &[Vec<HostEnd>], kept: &[Vec<bool>]) -> Option<Vec<f64>> {
    let n = u.count;
    let mut a = vec![0.0; n * n];
    let mut b = vec![0.0; n];
    for (inst, k) in instances.iter().zip(kept) {
        let ends: Vec<&HostEnd> = inst
            .iter()
            .zip(k)
            .filter(|(_, k)| **k)
            .map(|(e, _)| e)
            .collect();
        if ends.len() < 2 {
            continue;
        }
        let m = ends.len() as f64;
        // Base the ends on their mean: the instance's time drops out, and
        // the figures stay small.
        let mean = ends.iter().map(|e| e.end_ns).sum::<f64>() / m;
        let mut sum_row: Vec<(usize, f64)> = Vec::new();
        for e in &ends {
            let (row, len) = u.row(e);
            let c = e.end_ns - mean;
            for &(i, ci) in &row[..len] {
                b[i] -= ci * c;
                for &(j, cj) in &row[..len] {
                    a[i * n + j] += ci * cj;
                }
                match sum_row.iter_mut().find(|(j, _)| *j == i) {
                    Some(s) => s.1 += ci,
                    None => sum_row.push((i, ci)),
                }
            }
        }
        // −(ΣA)(ΣA)ᵀ/m: the centring (Σc is 0 about the mean).
        for &(i, gi) in &sum_row {
            for &(j, gj) in &sum_row {
                a[i * n + j] -= gi * gj / m;
            }
        }
    }
    gauss(a, b, n)
}

/// Solves `a x = b` (`a` n×n, row-major) by elimination with partial
/// pivoting; `None` when `a` is singular to working precision.
fn gauss(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Option<Vec<f64>> {
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if n == 0 {
        return Some(Vec::new());
    }
    if scale == 0.0 {
        return None;
    }
    for col in 0..n {
        let pivot =
            (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))?;
        if a[pivot * n + col].abs() <= scale * 1e-12 {
            return None;
        }
        if pivot != col {
            for k in 0..n {
                a.swap(pivot * n + k, col * n + k);
            }
            b.swap(pivot, col);
        }
        for row in col + 1..n {
            let f = a[row * n + col] / a[col * n + col];
            if f != 0.0 {
                for k in col..n {
                    a[row * n + k] -= f * a[col * n + k];
                }
                b[row] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row * n + k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row * n + row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic jitter in [-1, 1).
    fn jitter(i: usize) -> f64 {
        ((i as u64).wrapping_mul(2654435761) % 2000) as f64 / 1000.0 - 1.0
    }

    /// The ends of `hosts` in one instance at `t` (ns), the `j`-th jitter
    /// on.
    fn ends_of(
        hosts: &[usize],
        t: f64,
        j: &mut usize,
        end: &dyn Fn(usize, f64, usize) -> f64,
    ) -> Vec<HostEnd> {
        hosts
            .iter()
            .map(|&h| {
                *j += 1;
                HostEnd {
                    domain: h,
                    since_s: t / 1e9,
                    end_ns: end(h, t, *j),
                }
            })
            .collect()
    }

    /// Two pipelines of two hosts (0–1, 2–3): each pipeline's hosts meet
    /// in 200 instances, the pipelines only in 6 reductions of all four.
    /// Host 2 starts 12 µs off and host 3 follows it (its fit against 2
    /// was right): the pipeline 2–3 floats as a whole. The joint fit puts
    /// every host within the ends' jitter.
    #[test]
    fn a_pipeline_that_floats_as_a_whole_is_placed_by_the_few_instances_linking_it() {
        let truth = [0.0, 3e3, -5e3, 8e3];
        let drift = [0.0, 100.0, -200.0, 300.0]; // ns per s
        // what the one-by-one fits left: host 2 and 3 both 12 µs off
        let now = [0.0, 3e3, -5e3 - 12e3, 8e3 - 12e3];
        let end = |h: usize, t: f64, j: usize| {
            // aligned end so far = true end + (truth error not corrected)
            t + (now[h] - truth[h]) - drift[h] * t / 1e9 + 2e3 * jitter(j)
        };
        let mut instances: Vec<Vec<HostEnd>> = Vec::new();
        let mut j = 0;
        for i in 0..200 {
            let t = i as f64 * 50e6;
            for pair in [[0, 1], [2, 3]] {
                instances.push(ends_of(&pair, t, &mut j, &end));
            }
        }
        for i in 0..6 {
            let t = i as f64 * 2e9;
            instances.push(ends_of(&[0, 1, 2, 3], t, &mut j, &end));
        }
        // one end 5 ms late: dropped
        instances[7][1].end_ns += 5e6;
        let u = Unknowns::new(4, [(1, true), (2, true), (3, true)]);
        let c = solve(&u, &instances, 20e3).unwrap();
        for h in 1..4 {
            let want_offset = truth[h] - now[h];
            assert!(
                (c[h].offset_ns - want_offset).abs() < 2e3,
                "host {h}: {:?}",
                c[h]
            );
            assert!(
                (c[h].ns_per_s - drift[h]).abs() < 200.0,
                "host {h}: {:?}",
                c[h]
            );
        }
        assert_eq!(c[0], Correction::default());
    }

    #[test]
    fn a_host_linked_to_no_fixed_one_is_not_solved() {
        let inst = |t: f64| {
            vec![
                HostEnd {
                    domain: 1,
                    since_s: t,
                    end_ns: 0.0,
                },
                HostEnd {
                    domain: 2,
                    since_s: t,
                    end_ns: 1e3,
                },
            ]
        };
        let u = Unknowns::new(3, [(1, false), (2, false)]);
        assert_eq!(solve(&u, &[inst(0.0), inst(1.0)], 5e3), None);
        // with host 0 in one instance, both are placed
        let mut linked = inst(2.0);
        linked.push(HostEnd {
            domain: 0,
            since_s: 2.0,
            end_ns: 0.0,
        });
        let c = solve(&u, &[inst(0.0), linked], 5e3).unwrap();
        assert!(
            (c[2].offset_ns - c[1].offset_ns + 1e3).abs() < 1e-6,
            "{c:?}"
        );
    }

    #[test]
    fn elimination_solves_a_small_system() {
        let x = gauss(vec![2.0, 1.0, 1.0, 3.0], vec![3.0, 5.0], 2).unwrap();
        assert!(
            (x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12,
            "{x:?}"
        );
        assert_eq!(gauss(vec![1.0, 2.0, 2.0, 4.0], vec![1.0, 2.0], 2), None);
    }
}
