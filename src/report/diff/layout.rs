//! How wide `diff` text may be and how notes wrap, and the figure rows its tables share:
//! their own file so that the text, overlap and skew parts use them without using each other.

use crate::analysis::diff::{Diff, delta_pct};
use crate::figure_text::fixed;
use crate::report::fit;
use crate::report::fit::Keep;
use crate::report::table::Table;

/// How wide text may be, and how notes wrap.
pub(super) struct Layout<'a> {
    pub diff: &'a Diff,
    pub cols: Option<usize>,
}

impl Layout<'_> {
    pub fn note(&self, text: &str) -> String {
        fit::wrap(text, "  ", self.cols)
    }

    /// "within noise" when a change of `pct` % is smaller than the before
    /// capture's step spread.
    pub fn noise(&self, delta: f64, pct: Option<f64>) -> String {
        if delta != 0.0 && self.diff.within_noise(pct) {
            "within noise".into()
        } else {
            String::new()
        }
    }
}

/// A figure table: figure, before, after, delta, delta_%, note.
pub(super) fn figure_table() -> Table {
    Table::new(&["figure", "before", "after", "delta", "delta_%", "note"]).shorten(0, Keep::Start)
}

/// A row of ms figures; `noisy`: may be marked within noise.
pub(super) fn ms_row(
    l: &Layout,
    name: &str,
    b: Option<f64>,
    a: Option<f64>,
    noisy: bool,
) -> Vec<String> {
    let cell = |v: Option<f64>| v.map_or("-".into(), |v| fixed(v, 3));
    let (delta, pct, note) = match (b, a) {
        (Some(b), Some(a)) => {
            let pct = delta_pct(b, a);
            let note = if noisy {
                l.noise(a - b, pct)
            } else {
                String::new()
            };
            (signed(a - b), signed_pct(pct), note)
        }
        _ => ("-".into(), "-".into(), String::new()),
    };
    vec![name.into(), cell(b), cell(a), delta, pct, note]
}

/// A row of counts.
pub(super) fn count_row(name: &str, b: usize, a: usize) -> Vec<String> {
    let delta = a as i64 - b as i64;
    vec![
        name.into(),
        b.to_string(),
        a.to_string(),
        if delta == 0 {
            "0".into()
        } else {
            format!("{delta:+}")
        },
        signed_pct(delta_pct(b as f64, a as f64)),
        String::new(),
    ]
}

/// A signed change with 3 decimals: `+1.250`, `-0.500`, `0.000`.
pub(super) fn signed(v: f64) -> String {
    if v == 0.0 {
        "0.000".into()
    } else {
        format!("{v:+.3}")
    }
}

/// A signed percentage with one decimal, or `-` when there is none.
pub(super) fn signed_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| {
        if v == 0.0 {
            "0.0".into()
        } else {
            format!("{v:+.1}")
        }
    })
}
