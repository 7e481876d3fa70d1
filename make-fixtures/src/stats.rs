//! Small numeric helpers for the truth oracle: interval unions, percentiles, unit conversion.

pub fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Merged, sorted, disjoint intervals.
pub fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort();
    let mut out: Vec<(i64, i64)> = vec![];
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

pub fn length(u: &[(i64, i64)]) -> i64 {
    u.iter().map(|(s, e)| e - s).sum()
}

/// Total length of the intersection of two unions (both merged and sorted).
pub fn intersection(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            total += hi - lo;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// numpy.percentile(values, q) with the default 'linear' method.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    assert!(!values.is_empty());
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pos = (v.len() - 1) as f64 * q / 100.0;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// `{"p50","p90","max"}` of values in ms, or null when there are none.
pub fn p50_p90_max(values_ms: &[f64]) -> serde_json::Value {
    if values_ms.is_empty() {
        return serde_json::Value::Null;
    }
    let max = values_ms.iter().cloned().fold(f64::MIN, f64::max);
    serde_json::json!({
        "p50": percentile(values_ms, 50.0),
        "p90": percentile(values_ms, 90.0),
        "max": max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_linear() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.5);
        assert!((percentile(&v, 90.0) - 3.7).abs() < 1e-12);
        assert_eq!(percentile(&[5.0], 90.0), 5.0);
    }

    #[test]
    fn unions() {
        let a = union(vec![(0, 10), (5, 20), (30, 40)]);
        assert_eq!(a, vec![(0, 20), (30, 40)]);
        let b = union(vec![(15, 35)]);
        assert_eq!(intersection(&a, &b), 10);
        assert_eq!(length(&a), 30);
    }
}
