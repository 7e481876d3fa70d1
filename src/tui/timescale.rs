//! The visible time window and the ruler's ticks (1, 2 or 5 × 10ⁿ ns).

/// The visible window, in ns on the reference clock (the first file's
/// capture clock).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    pub t0: f64,
    pub span: f64,
}

impl Default for View {
    /// A window to be fitted to the data.
    fn default() -> Self {
        View { t0: 0.0, span: 1.0 }
    }
}

/// What the ruler reads (`t` cycles through them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ruler {
    /// The capture clock (the reference clock with several files).
    #[default]
    Capture,
    /// Time since the first event.
    Relative,
    /// UTC wall-clock time, from the capture's start stamp.
    Utc,
}

/// The narrowest window: 10 ns across the whole timeline.
pub const MIN_SPAN_NS: f64 = 10.0;

/// Zooming in stops at this many ns per column (timestamps are in ns).
pub const MIN_NS_PER_CELL: f64 = 1.0;

/// Zooming out stops at this multiple of the capture's length.
pub const MAX_SPAN_OF_CAPTURE: f64 = 1.2;

impl View {
    pub fn fit(first: i64, last: i64) -> View {
        // In f64: timestamps at the ends of the i64 range must not wrap.
        let span = (last as f64 - first as f64).max(MIN_SPAN_NS);
        // A little air on both sides so first and last events are visible.
        View {
            t0: first as f64 - span * 0.01,
            span: span * 1.02,
        }
    }

    /// The time under the cursor (the middle of the timeline).
    pub fn center(&self) -> f64 {
        self.t0 + self.span / 2.0
    }

    pub fn end(&self) -> f64 {
        self.t0 + self.span
    }

    /// The window shown, in whole ns: every ns any column covers.
    pub fn window(&self) -> crate::analysis::Window {
        crate::analysis::Window {
            start: self.t0.floor() as i64,
            end: self.end().ceil() as i64,
        }
    }

    pub fn zoom(&mut self, factor: f64) {
        let c = self.center();
        self.span = (self.span * factor).max(MIN_SPAN_NS);
        self.t0 = c - self.span / 2.0;
    }

    pub fn pan(&mut self, fraction: f64) {
        self.t0 += self.span * fraction;
    }

    pub fn center_on(&mut self, t: f64) {
        self.t0 = t - self.span / 2.0;
    }

    /// Keeps the window on the data `[first, last]`: zoomed out at most a
    /// little beyond the whole capture, zoomed in to at most
    /// [`MIN_NS_PER_CELL`] over `cells` columns, and panned no further than
    /// the data's ends plus a margin (half a window, or a tenth of the
    /// capture when zoomed out), so no key leads into empty time.
    pub fn clamp_to(&mut self, first: i64, last: i64, cells: usize) {
        let len = (last as f64 - first as f64).max(MIN_SPAN_NS);
        let min = (cells.max(1) as f64 * MIN_NS_PER_CELL).max(MIN_SPAN_NS);
        let max = (len * MAX_SPAN_OF_CAPTURE).max(min);
        let c = self.center();
        self.span = self.span.clamp(min, max);
        self.t0 = c - self.span / 2.0;
        let margin = (self.span / 2.0).min(len * 0.1);
        let lo = first as f64 - margin;
        let hi = last as f64 + margin - self.span;
        self.t0 = if lo > hi {
            (first as f64 + last as f64 - self.span) / 2.0
        } else {
            self.t0.clamp(lo, hi)
        };
    }

    /// Shows `[a, b]` with a margin.
    pub fn show(&mut self, a: i64, b: i64) {
        let len = (b as f64 - a as f64).max(MIN_SPAN_NS);
        self.span = len * 1.5;
        self.t0 = a as f64 - len * 0.25;
    }
}

/// A tick step of 1, 2 or 5 × 10ⁿ ns giving at least `min_cells` cells
/// between ticks.
pub fn tick_step(ns_per_cell: f64, min_cells: f64) -> f64 {
    let want = (ns_per_cell * min_cells).max(1.0);
    let mut p = 10f64.powf(want.log10().floor());
    loop {
        for m in [1.0, 2.0, 5.0] {
            if m * p >= want {
                return m * p;
            }
        }
        p *= 10.0;
    }
}

/// A duration or time in the unit that suits `step`: ns, µs, ms or s.
pub fn format_time(t: f64, step: f64) -> String {
    let (div, unit) = if step >= 1e8 {
        (1e9, "s")
    } else if step >= 1e5 {
        (1e6, "ms")
    } else if step >= 1e2 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    // Enough decimals to tell neighbouring ticks apart.
    let decimals = ((div / step).log10().ceil()).max(0.0) as usize;
    format!("{}{unit}", fixed(t / div, decimals))
}

/// A time relative to the first event, signed: `+1.5s`, `-20ms`, `0s`.
pub fn format_offset(t: f64, step: f64) -> String {
    let s = format_time(t, step);
    if s.starts_with('-') || is_zero(&s) {
        s
    } else {
        format!("+{s}")
    }
}

/// An absolute capture-clock time in seconds, with the decimals `step` needs.
pub fn format_abs(t: f64, step: f64) -> String {
    let decimals = ((1e9 / step).log10().ceil()).clamp(0.0, 9.0) as usize;
    format!("{}s", fixed(t / 1e9, decimals))
}

/// `x` with `decimals` decimals, never `-0` or `-0.0` (a value that rounds
/// to zero has no sign).
fn fixed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if is_zero(rest) => rest.to_string(),
        _ => s,
    }
}

/// Whether a formatted number (unit allowed) is zero.
fn is_zero(s: &str) -> bool {
    !s.chars().any(|c| c.is_ascii_digit() && c != '0')
}

/// Human duration for panels: "45.4 ms", "812 µs".
pub fn format_duration(ns: i64) -> String {
    let a = ns.abs() as f64;
    if a >= 1e9 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// "45.4 ms", "27.3 µs": one decimal, in the unit that suits.
pub fn short_duration(ns: i64) -> String {
    match ns.abs() {
        n if n >= 1_000_000_000 => format!("{:.2} s", ns as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} ms", ns as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{ns} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_1_2_5() {
        assert_eq!(tick_step(1.0, 10.0), 10.0);
        assert_eq!(tick_step(1.5, 10.0), 20.0);
        assert_eq!(tick_step(30.0, 10.0), 500.0);
        assert_eq!(tick_step(700_000.0, 12.0), 10_000_000.0);
        assert_eq!(tick_step(0.001, 10.0), 1.0);
    }

    #[test]
    fn formats_in_the_step_unit() {
        assert_eq!(format_time(5_243_000_000.0, 1e9), "5s");
        assert_eq!(format_time(5_243_000_000.0, 1e8), "5.2s");
        assert_eq!(format_time(2_000_000.0, 1e6), "2ms");
        assert_eq!(format_time(2_500_000.0, 5e5), "2.5ms");
        assert_eq!(format_time(1500.0, 500.0), "1.5µs");
        assert_eq!(format_time(20.0, 10.0), "20ns");
        assert_eq!(format_duration(45_400_000), "45.40 ms");
        assert_eq!(format_abs(5_243_000_000.0, 1e6), "5.243s");
        assert_eq!(format_abs(5_243_010_000.0, 1e4), "5.24301s");
        assert_eq!(format_duration(812_000), "812.0 µs");
    }

    #[test]
    fn zero_has_no_sign_and_offsets_have_one() {
        assert_eq!(format_time(-40_000_000.0, 1e8), "0.0s");
        assert_eq!(format_abs(-1.0, 1e9), "0s");
        assert_eq!(format_abs(-400_000_000.0, 1e9), "0s");
        assert_eq!(format_offset(-1e9, 1e9), "-1s");
        assert_eq!(format_offset(1.5e9, 5e8), "+1.5s");
        assert_eq!(format_offset(-1e3, 1e8), "0.0s");
        assert_eq!(format_offset(0.0, 1e9), "0s");
        assert_eq!(format_offset(-2e7, 1e7), "-20ms");
    }

    /// Far more zoom-outs, zoom-ins and pans than anyone presses stay on the
    /// data: a capture of 1 s from t = 5 s, 100 columns.
    #[test]
    fn zoom_and_pan_stop_near_the_data() {
        let (a, b) = (5_000_000_000, 6_000_000_000);
        let mut v = View::fit(a, b);
        for _ in 0..30 {
            v.zoom(2.0);
            v.clamp_to(a, b, 100);
        }
        assert_eq!(v.span, 1e9 * MAX_SPAN_OF_CAPTURE);
        assert!(
            v.t0 >= a as f64 - 1e8 - 1.0 && v.end() <= b as f64 + 1e8 + 1.0,
            "{v:?}"
        );
        for _ in 0..60 {
            v.zoom(0.5);
            v.clamp_to(a, b, 100);
        }
        assert_eq!(v.span, 100.0 * MIN_NS_PER_CELL);
        // A pan of a million windows (the far right, in one step).
        v.pan(1e8);
        v.clamp_to(a, b, 100);
        // Zoomed in, the view stops half a window past the last event.
        assert_eq!(v.center(), b as f64);
        let mut v = View::fit(a, b);
        for _ in 0..1000 {
            v.pan(-0.25);
            v.clamp_to(a, b, 100);
        }
        assert!(v.t0 >= a as f64 - 1e8 - 1.0, "{v:?}");
    }

    #[test]
    fn zoom_keeps_center() {
        let mut v = View {
            t0: 0.0,
            span: 100.0,
        };
        v.zoom(0.5);
        assert_eq!(v.center(), 50.0);
        assert_eq!(v.span, 50.0);
        v.zoom(1e-9);
        assert_eq!(v.span, MIN_SPAN_NS);
    }
}
