//! Text the views share: lines with file-derived names made visible
//! (control characters as escapes).

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
