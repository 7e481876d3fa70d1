//! Interval arithmetic on half-open `[start, end)` nanosecond intervals.
//! Busy time is always a union: summed durations double-count overlap.

/// An interval `[start, end)` in ns.
pub type Span = (i64, i64);

/// Sorted, disjoint union of `spans` (empty ones dropped).
pub fn union(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|s| s.1 > s.0);
    // Callers pass a few already sorted runs (one per stream): the stable
    // sort finds and merges runs in near-linear time.
    spans.sort();
    // Merged in place: a union is never longer than its spans, and a
    // second buffer the size of a device's kernels is memory touched anew.
    let mut kept = 0usize;
    for i in 0..spans.len() {
        let s = spans[i];
        match kept.checked_sub(1).map(|k| &mut spans[k]) {
            Some(last) if s.0 <= last.1 => last.1 = last.1.max(s.1),
            _ => {
                spans[kept] = s;
                kept += 1;
            }
        }
    }
    spans.truncate(kept);
    spans
}

/// Total length of disjoint spans; saturates instead of wrapping on
/// timestamps at the ends of the i64 range.
pub fn total(spans: &[Span]) -> i64 {
    spans
        .iter()
        .fold(0i64, |sum, s| sum.saturating_add(s.1.saturating_sub(s.0)))
}

/// Length of the intersection of two sorted, disjoint unions.
pub fn intersection_len(a: &[Span], b: &[Span]) -> i64 {
    let (mut i, mut j, mut len) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            len = hi.saturating_sub(lo).saturating_add(len);
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    len
}

/// `a` without `b`: both sorted, disjoint unions; so is the result.
pub fn subtract(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = Vec::with_capacity(a.len());
    let mut j = 0;
    for &(mut lo, hi) in a {
        // Skip the parts of `b` wholly before this span.
        while j < b.len() && b[j].1 <= lo {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < hi {
            if b[k].0 > lo {
                out.push((lo, b[k].0));
            }
            lo = lo.max(b[k].1);
            k += 1;
        }
        if lo < hi {
            out.push((lo, hi));
        }
    }
    out
}

/// The parts of a sorted, disjoint union inside `w`: the spans that
/// reach into it found by search, so a window costs its own spans only.
pub fn clip(spans: &[Span], w: Span) -> Vec<Span> {
    let from = spans.partition_point(|s| s.1 <= w.0);
    spans[from..]
        .iter()
        .take_while(|s| s.0 < w.1)
        .map(|&(a, b)| (a.max(w.0), b.min(w.1)))
        .filter(|s| s.1 > s.0)
        .collect()
}

/// The first of `rows` for which `at` holds (it holds for every row after).
pub fn first_at(rows: std::ops::Range<usize>, at: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (rows.start, rows.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if at(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_overlapping_and_touching() {
        let u = union(vec![(5, 8), (0, 2), (1, 3), (3, 4), (10, 10), (7, 9)]);
        assert_eq!(u, vec![(0, 4), (5, 9)]);
        assert_eq!(total(&u), 8);
        assert!(union(vec![]).is_empty());
    }

    #[test]
    fn intersection_of_unions() {
        let a = union(vec![(0, 10), (20, 30)]);
        let b = union(vec![(5, 25), (28, 40)]);
        // [5,10) + [20,25) + [28,30)
        assert_eq!(intersection_len(&a, &b), 5 + 5 + 2);
        assert_eq!(intersection_len(&a, &[]), 0);
        assert_eq!(intersection_len(&[(0, 5)], &[(5, 9)]), 0);
    }

    #[test]
    fn subtract_leaves_what_the_other_does_not_cover() {
        let a = [(0, 10), (20, 30)];
        let b = [(2, 4), (8, 22), (25, 26), (40, 50)];
        assert_eq!(subtract(&a, &b), vec![(0, 2), (4, 8), (22, 25), (26, 30)]);
        assert_eq!(subtract(&a, &[]), a.to_vec());
        assert_eq!(subtract(&a, &[(-5, 100)]), vec![]);
        assert_eq!(clip(&a, (5, 25)), vec![(5, 10), (20, 25)]);
    }

    #[test]
    fn nested_spans() {
        let a = union(vec![(0, 100), (10, 20), (30, 40)]);
        assert_eq!(a, vec![(0, 100)]);
        assert_eq!(intersection_len(&a, &[(10, 20), (30, 40)]), 20);
    }
}
