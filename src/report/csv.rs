//! CSV for the tabular reports: RFC 4180 quoting, no control characters
//! (a name from the file never reaches a spreadsheet or terminal as one).

use crate::text_safe::escape_controls;

/// One field: quoted when it holds a separator, a quote or a line break.
pub fn field(s: &str) -> String {
    let s = escape_controls(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
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
}
