//! What the user asked of `diff`: its own file so that the text rendering uses it without
//! using the diff report's module.

use crate::analysis::diff::Gate;
use crate::report::Format;

/// What the user asked of `diff`.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// Text or JSON (CSV is refused before here).
    pub format: Format,
    /// Text: long names and paths whole instead of fitting 100 columns.
    pub wide: bool,
    /// `--fail-on-regression PCT` (and `--gate`).
    pub gate: Option<Gate>,
}
