//! CSV for the tabular reports: RFC 4180 quoting, no control characters
//! (a name from the file never reaches a spreadsheet or terminal as one),
//! and no formulas: names come from the profiled program and profiles are
//! shared, so a text cell a spreadsheet would evaluate (`=HYPERLINK(…)`,
//! `@SUM(…)`, `-2+3`) gets a leading `'`, as OWASP recommends against CSV
//! injection. Numbers stay numbers (`-0.25`).

use crate::text_safe::escape_controls;
use std::borrow::Cow;

/// The first characters that make a spreadsheet read a cell as a formula.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// One field: a formula made text, then quoted when it holds a
/// separator, a quote or a line break.
pub fn field(s: &str) -> String {
    let s = not_a_formula(escape_controls(s));
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}

/// `s`, with a leading `'` when a spreadsheet would evaluate it: text
/// starting with one of [`FORMULA_STARTS`]. A number (as JSON writes one)
/// is kept as it is.
fn not_a_formula(s: Cow<'_, str>) -> Cow<'_, str> {
    if s.starts_with(FORMULA_STARTS) && !is_number(&s) {
        Cow::Owned(format!("'{s}"))
    } else {
        s
    }
}

/// A decimal number: an optional sign, digits, an optional fraction and
/// exponent (`-12`, `+0.5`, `-1.5e-7`), never `-inf` or `-1+2`.
fn is_number(s: &str) -> bool {
    let digits = s.trim_start_matches(['-', '+']);
    digits.len() + 1 >= s.len()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && s.parse::<f64>().is_ok()
}

/// One record of fields, ended by a newline.
pub fn record(fields: &[String]) -> String {
    let mut out = fields
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn csv_fields_are_quoted_when_they_hold_separators_and_never_carry_controls() {
        assert_eq!(field("s20"), "s20");
        assert_eq!(field("node,1:0"), "\"node,1:0\"");
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
        assert_eq!(field("k\x1b[2J"), "k\\x1b[2J");
    }

    #[test]
    fn text_a_spreadsheet_would_evaluate_gets_a_quote_and_numbers_stay() {
        assert_eq!(
            field("=HYPERLINK(\"http://x\",\"y\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""
        );
        assert_eq!(
            field("@SUM(1+1)*cmd|' /C calc'!A0"),
            "'@SUM(1+1)*cmd|' /C calc'!A0"
        );
        assert_eq!(field("+1+2"), "'+1+2");
        assert_eq!(field("-2+3"), "'-2+3");
        assert_eq!(field("-inf"), "'-inf");
        assert_eq!(field("--"), "'--");
        assert_eq!(field("-"), "'-");
        // Controls are escapes by then: the tab is text already.
        assert_eq!(field("\t=1"), "\\x09=1");
        for n in ["-0.25", "-12", "+3", "-1.5e-7", "1e+20", "0"] {
            assert_eq!(field(n), n);
        }
        assert_eq!(field("ncclKernel_AllReduce"), "ncclKernel_AllReduce");
    }
}
