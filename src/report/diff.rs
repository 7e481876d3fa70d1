//! `rankline diff`: a [`Diff`] as text (100 columns unless `--wide`) or
//! JSON, and the regression gate's lines.

mod bytes_text;
mod json;
mod layout;
mod options;
mod overlap_text;
mod skew_text;
mod text;

pub use options::DiffOptions;

use super::Format;
use crate::analysis::diff::{Diff, Regression};
use crate::figure_text::given;

/// The diff in the chosen format.
pub fn render(d: &Diff, o: &DiffOptions) -> String {
    let regressions = o.gate.map(|g| d.regressions(g)).unwrap_or_default();
    match o.format {
        Format::Json => {
            let mut s = crate::text_safe::to_json_pretty(&json::to_json(d, &regressions))
                .unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Text | Format::Csv => {
            let text = text::to_text(d, o, &regressions);
            crate::text_safe::escape_controls_keep_newlines(&text).into_owned()
        }
    }
}

/// The diff's CSV tables, read off its JSON (see
/// [`super::csv_tables`]).
pub fn tables(d: &Diff, o: &DiffOptions) -> Vec<super::csv_tables::Table> {
    let regressions = o.gate.map(|g| d.regressions(g)).unwrap_or_default();
    super::csv_tables::tables("diff", &json::to_json(d, &regressions))
}

/// The gate's verdict for CI logs: one summary line, then one line per
/// figure that regressed.
pub fn gate_lines(pct: f64, regressions: &[Regression]) -> Vec<String> {
    if regressions.is_empty() {
        return vec![format!(
            "regression gate passed: nothing grew by more than {}%",
            given(pct)
        )];
    }
    let mut out = vec![format!(
        "regression gate failed: {} figure{} grew by more than {}%",
        regressions.len(),
        if regressions.len() == 1 { "" } else { "s" },
        given(pct)
    )];
    out.extend(
        regressions
            .iter()
            .map(|r| format!("regressed: {}", r.phrase())),
    );
    out
}
