//! The time window a report or a view covers (`--window`), on the
//! reference clock (the first file's capture clock; `analysis::clock`
//! places it in each file).

/// A closed time window in ns. Counts use events wholly inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
}

impl Default for Window {
    fn default() -> Self {
        Window::ALL
    }
}

impl Window {
    /// No trimming.
    pub const ALL: Window = Window {
        start: i64::MIN,
        end: i64::MAX,
    };

    /// From seconds on the reference clock (rounded to the nearest ns).
    pub fn from_seconds(start_s: f64, end_s: f64) -> Window {
        Window {
            start: (start_s * 1e9).round() as i64,
            end: (end_s * 1e9).round() as i64,
        }
    }

    pub fn is_all(&self) -> bool {
        *self == Window::ALL
    }

    /// The event lies wholly inside the window.
    pub fn contains(&self, start: i64, end: i64) -> bool {
        start >= self.start && end <= self.end
    }

    /// The part of `[start, end)` inside the window, if any.
    pub fn clip(&self, start: i64, end: i64) -> Option<(i64, i64)> {
        let (s, e) = (start.max(self.start), end.min(self.end));
        (e > s || (e == s && start == end && self.contains(start, end))).then_some((s, e))
    }
}

/// Of `rows`, whose starts (`starts`, sorted, one per row) and ends (`end`
/// of a row) are on the window's clock, those that may reach into `w`:
/// found by search, looking back past the few rows still running at its
/// start — work that runs in order (a stream, a thread's calls) has only a
/// few; a run of eight that ended before it ends the look.
pub fn rows_reaching(
    rows: std::ops::Range<usize>,
    starts: &[i64],
    end: impl Fn(usize) -> i64,
    w: Window,
) -> std::ops::Range<usize> {
    if w.is_all() {
        return rows;
    }
    let hi = rows.start + starts.partition_point(|&s| s <= w.end);
    let mut lo = rows.start + starts.partition_point(|&s| s < w.start);
    let mut misses = 0;
    let mut k = lo;
    while k > rows.start && misses < 8 {
        k -= 1;
        if end(k) > w.start {
            lo = k;
            misses = 0;
        } else {
            misses += 1;
        }
    }
    lo..hi.max(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_and_clip() {
        let w = Window::from_seconds(1.0, 2.0);
        assert_eq!(
            w,
            Window {
                start: 1_000_000_000,
                end: 2_000_000_000
            }
        );
        assert!(w.contains(1_000_000_000, 2_000_000_000));
        assert!(!w.contains(999_999_999, 1_500_000_000));
        assert_eq!(
            w.clip(900_000_000, 1_100_000_000),
            Some((1_000_000_000, 1_100_000_000))
        );
        assert_eq!(w.clip(0, 10), None);
        assert!(Window::ALL.contains(i64::MIN, i64::MAX));
    }
}
