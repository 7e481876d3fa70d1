//! Small statistics helpers.

/// Percentile with linear interpolation between closest ranks (numpy's
/// default): `q` in 0–100 over already sorted values.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let pos = (q / 100.0) * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Like [`percentile_sorted`] on an unsorted, non-empty sample (reorders it).
pub fn percentile_select(v: &mut [f64], q: f64) -> f64 {
    let pos = (q / 100.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - lo as f64;
    let (_, &mut a, right) = v.select_nth_unstable_by(lo, f64::total_cmp);
    let b = if frac > 0.0 {
        right.iter().copied().fold(f64::INFINITY, f64::min)
    } else {
        a
    };
    a + (b - a) * frac
}

/// p50, p90 and max of a sample.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Spread {
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
}

impl Spread {
    /// `None` for an empty sample. Linear time: selects the ranks the
    /// percentiles need instead of sorting millions of values.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut v: Vec<f64> = values.into_iter().collect();
        if v.is_empty() {
            return None;
        }
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Spread {
            p50: percentile_select(&mut v, 50.0),
            p90: percentile_select(&mut v, 90.0),
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4], [50, 90]) == [2.5, 3.7]
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&v, 50.0), Some(2.5));
        assert!((percentile_sorted(&v, 90.0).unwrap() - 3.7).abs() < 1e-12);
        assert_eq!(percentile_sorted(&[7.0], 90.0), Some(7.0));
        assert_eq!(percentile_sorted(&[], 50.0), None);
        let s = Spread::of([4.0, 1.0, 3.0, 2.0, 10.0]).unwrap();
        // numpy.percentile([1,2,3,4,10], 90) == 7.6
        assert_eq!(s.p50, 3.0);
        assert!((s.p90 - 7.6).abs() < 1e-12);
        assert_eq!(s.max, 10.0);
        // Selection agrees with sorting on a larger, shuffled sample.
        let mut x: Vec<f64> = (0..1001)
            .map(|i| ((i * 7919) % 1001) as f64 * 0.5)
            .collect();
        let mut sorted = x.clone();
        sorted.sort_by(f64::total_cmp);
        for q in [0.0, 10.0, 50.0, 90.0, 99.9, 100.0] {
            assert_eq!(
                percentile_select(&mut x, q),
                percentile_sorted(&sorted, q).unwrap(),
                "q {q}"
            );
        }
    }
}
