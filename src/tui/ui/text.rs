//! Text the views share: lines with file-derived names made visible
//! (control characters as escapes), and durations in few characters.

use crate::text_safe::escape_controls;
use ratatui::text::Line;
use std::borrow::Cow;

/// The line with control characters (names from the file) shown as
/// visible escapes, styles kept. Applied where lines become widgets, so
/// wrapping measures the escaped text.
pub(super) fn visible(mut line: Line<'static>) -> Line<'static> {
    for span in &mut line.spans {
        let escaped = match escape_controls(&span.content) {
            Cow::Owned(e) => Some(e),
            Cow::Borrowed(_) => None,
        };
        if let Some(e) = escaped {
            span.content = e.into();
        }
    }
    line
}

/// "45.4 ms", "27.3 µs": one decimal, in the unit that suits.
pub(super) fn short_duration(ns: i64) -> String {
    match ns.abs() {
        n if n >= 1_000_000_000 => format!("{:.2} s", ns as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} ms", ns as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{ns} ns"),
    }
}
