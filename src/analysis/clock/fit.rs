//! A robust straight-line fit of per-instance clock offsets: median-based
//! (Theil–Sen slope over pairs across the two halves, median intercept),
//! outliers rejected, then refitted on the rest.

/// The fitted line `y = offset + slope · x` and how well it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct LineFit {
    pub offset: f64,
    /// 0 when the slope was not fitted.
    pub slope: f64,
    /// Points kept after rejecting outliers.
    pub kept: usize,
    /// Median absolute deviation of all points from the fit (outliers
    /// included): how much the per-instance offsets disagree.
    pub mad_all: f64,
}

/// Residuals further than this many scaled MADs (or `floor`) are outliers.
const REJECT_MADS: f64 = 3.0;
/// MAD → standard deviation for normal noise.
const MAD_SCALE: f64 = 1.4826;

/// How far from a fit a residual may lie before it is an outlier, for
/// residuals whose median absolute deviation is `mad`: 3 scaled MADs, or
/// `floor`. Every clock fit rejects by this one rule.
pub fn outlier_limit(mad: f64, floor: f64) -> f64 {
    (REJECT_MADS * MAD_SCALE * mad).max(floor)
}

/// Fits `ys` against `xs` (same length, at least one point); the slope
/// only when `fit_slope`. A residual beyond max(3 scaled MADs, `floor`)
/// is rejected before the refit.
pub fn robust_line(xs: &[f64], ys: &[f64], fit_slope: bool, floor: f64) -> Option<LineFit> {
    if xs.is_empty() || xs.len() != ys.len() {
        return None;
    }
    let all: Vec<usize> = (0..xs.len()).collect();
    let (offset, slope) = line_through(xs, ys, &all, fit_slope);
    let residuals: Vec<f64> = all
        .iter()
        .map(|&i| ys[i] - offset - slope * xs[i])
        .collect();
    let mad_all = median(residuals.iter().map(|r| r.abs()).collect());
    let limit = outlier_limit(mad_all, floor);
    let kept: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| residuals[i].abs() <= limit)
        .collect();
    if kept.is_empty() {
        return None;
    }
    let (offset, slope) = line_through(xs, ys, &kept, fit_slope);
    Some(LineFit {
        offset,
        slope,
        kept: kept.len(),
        mad_all,
    })
}

/// Theil–Sen over the points `idx` (sorted by x): slopes of the pairs
/// (i, i + n/2), whose x are far apart, so the median slope is robust in
/// O(n); the offset is the median of `y − slope · x`. Only pairs at least
/// a quarter of the span apart count: where instances come in bursts (a
/// capture of two steps), a pair inside one burst is ms apart and its
/// slope is the ends' jitter over ms — hundreds of ppm.
fn line_through(xs: &[f64], ys: &[f64], idx: &[usize], fit_slope: bool) -> (f64, f64) {
    let slope = if fit_slope && idx.len() >= 2 {
        let mut sorted = idx.to_vec();
        // `idx` ascends: by (x, index) is the stable order by x, unstably
        // sorted (a fit per host and instance set: it adds up).
        sorted.sort_unstable_by(|&a, &b| xs[a].total_cmp(&xs[b]).then(a.cmp(&b)));
        let half = sorted.len() / 2;
        let span = xs[sorted[sorted.len() - 1]] - xs[sorted[0]];
        let slopes: Vec<f64> = (0..half)
            .filter_map(|i| {
                let (a, b) = (sorted[i], sorted[i + half + sorted.len() % 2]);
                let dx = xs[b] - xs[a];
                (dx > 0.0 && dx >= span / 4.0).then(|| (ys[b] - ys[a]) / dx)
            })
            .collect();
        if slopes.is_empty() {
            0.0
        } else {
            median(slopes)
        }
    } else {
        0.0
    };
    let offset = median(idx.iter().map(|&i| ys[i] - slope * xs[i]).collect());
    (offset, slope)
}

/// The median (mean of the middle two for an even count); 0 when empty.
/// By selection, not a sort: the clock fits take thousands of medians.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let n = v.len();
    let (below, &mut upper, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let lower = below
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(upper);
        (lower + upper) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic jitter in [-1, 1).
    fn jitter(i: usize) -> f64 {
        ((i as u64).wrapping_mul(2654435761) % 2000) as f64 / 1000.0 - 1.0
    }

    #[test]
    fn the_median_by_selection_is_the_sorted_one() {
        for n in 1..40 {
            let v: Vec<f64> = (0..n).map(|i| jitter(i * 7 + n) * 1e3).collect();
            let mut s = v.clone();
            s.sort_by(f64::total_cmp);
            let want = if n % 2 == 1 {
                s[n / 2]
            } else {
                (s[n / 2 - 1] + s[n / 2]) / 2.0
            };
            assert_eq!(median(v), want, "n {n}");
        }
    }

    #[test]
    fn recovers_offset_and_slope_through_outliers() {
        // 200 instances over 100 s, offset 3.6e12 ns, drift 4 ppm, ±5 µs
        // jitter, every tenth instance 3 ms off (a late-leaving rank).
        let xs: Vec<f64> = (0..200).map(|i| i as f64 * 0.5e9).collect();
        let ys: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let out = if i % 10 == 3 { 3e6 } else { 0.0 };
                3.6e12 + 4e-6 * x + 5e3 * jitter(i) + out
            })
            .collect();
        let f = robust_line(&xs, &ys, true, 20e3).unwrap();
        assert!((f.offset - 3.6e12).abs() < 5e3, "offset {}", f.offset);
        assert!(((f.slope - 4e-6) * 100e9).abs() < 10e3, "slope {}", f.slope);
        assert_eq!(f.kept, 180);
        assert!(f.mad_all < 5e3, "mad {}", f.mad_all);
    }

    #[test]
    fn bursts_of_unequal_size_give_the_slope_between_them() {
        // Two steps 5 s apart: 6 instances in the first, 40 in the
        // second, ends jittering by µs; a clock 5 ppm fast.
        let xs: Vec<f64> = (0..46)
            .map(|i| {
                if i < 6 {
                    i as f64 * 1e6
                } else {
                    5e9 + i as f64 * 1e6
                }
            })
            .collect();
        let ys: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| 5e-6 * x + 3e3 * jitter(i))
            .collect();
        let f = robust_line(&xs, &ys, true, 20e3).unwrap();
        assert!((f.slope * 1e6 - 5.0).abs() < 1.0, "{} ppm", f.slope * 1e6);
    }

    #[test]
    fn offset_only_is_the_median() {
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        let ys = [10.0, 11.0, 9.0, 10.0, 1e6];
        let f = robust_line(&xs, &ys, false, 0.5).unwrap();
        assert_eq!(f.slope, 0.0);
        assert_eq!(f.kept, 4, "the far point is rejected");
        assert_eq!(f.offset, 10.0);
        assert_eq!(f.mad_all, 1.0);
    }

    #[test]
    fn disagreeing_points_show_a_large_mad() {
        let xs: Vec<f64> = (0..20).map(f64::from).collect();
        let ys: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 0.0 } else { 10e6 })
            .collect();
        let f = robust_line(&xs, &ys, false, 20e3).unwrap();
        assert!(f.mad_all >= 5e6, "mad {}", f.mad_all);
        assert_eq!(robust_line(&[], &[], true, 1.0), None);
    }
}
