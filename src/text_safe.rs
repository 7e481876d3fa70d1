//! Control characters in strings from files, made visible before they reach
//! a terminal (text) or a JSON consumer (`\u00XX` escapes).
//!
//! A kernel name, NVTX text, host name or path comes from whoever wrote the
//! file: printed raw, an ESC or C1 byte lets it set the window title, clear
//! the screen or worse. Every control character — C0 (U+0000–U+001F), DEL
//! (U+007F) and C1 (U+0080–U+009F), exactly `char::is_control` — is shown
//! as an escape instead: `\x1b`, `\x7f` for the one-byte ones, `\u{9b}` for
//! C1 (they are two bytes in UTF-8, so `\x9b` would name the wrong thing).
//! The model keeps the raw strings (searches must still match them); this
//! is applied where text leaves the program. Depends on no layer, so the
//! loader's errors, the report and the UI share it.

use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;

/// Whether `c` is shown as an escape: C0, DEL and C1.
pub fn is_escaped(c: char) -> bool {
    c.is_control()
}

/// `s` with every control character shown as `\xHH` (C0, DEL) or `\u{HH}`
/// (C1). Borrows when there is nothing to escape.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    escape_where(s, is_escaped)
}

/// Like [`escape_controls`] but keeps line breaks: for whole multi-line
/// outputs whose newlines are the program's own.
pub fn escape_controls_keep_newlines(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c != '\n' && is_escaped(c))
}

/// A path as text: bytes that are not UTF-8 shown as `\xHH` (a lossy
/// `display` would turn them into U+FFFD, naming no file). Control
/// characters stay for [`escape_controls`] at the output.
pub fn path_text(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = s.find(&escape) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if escape(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn push_escape(out: &mut String, c: char) {
    let n = c as u32;
    let _ = if n < 0x80 {
        write!(out, "\\x{n:02x}")
    } else {
        write!(out, "\\u{{{n:x}}}")
    };
}

/// Pretty JSON in which DEL and C1 are `\u00XX` escapes too (serde_json
/// escapes only C0), so the output holds no raw control character yet
/// parses back to the same strings.
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, EscapingPretty::default());
    value.serialize(&mut ser)?;
    // The serializer writes only valid UTF-8.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// serde_json's pretty formatter, with DEL and C1 escaped in strings.
#[derive(Default)]
struct EscapingPretty {
    pretty: serde_json::ser::PrettyFormatter<'static>,
}

impl serde_json::ser::Formatter for EscapingPretty {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Fragments never hold C0, quotes or backslashes: serde_json has
        // split those off already.
        let mut rest = fragment;
        while let Some(i) = rest.find(is_escaped) {
            w.write_all(&rest.as_bytes()[..i])?;
            let c = rest[i..].chars().next().unwrap_or_default();
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[i + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_array(w)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_array(w)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.pretty.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_array_value(w)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_object(w)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_object(w)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.pretty.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_not_utf8_shows_its_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let p = std::path::Path::new(std::ffi::OsStr::from_bytes(b"r\xc3\xa4nk\xff\xfe.sqlite"));
        assert_eq!(path_text(p), "r\u{e4}nk\\xff\\xfe.sqlite");
    }

    #[test]
    fn clean_strings_are_borrowed() {
        assert!(matches!(
            escape_controls("ncclKernel_AllReduce · µs"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn c0_del_and_c1_become_visible() {
        assert_eq!(
            escape_controls("a\x1b]0;PWNED\x07b\x7fc\u{9b}d\ne"),
            "a\\x1b]0;PWNED\\x07b\\x7fc\\u{9b}d\\x0ae"
        );
        // U+00A0 and beyond are printable: left alone.
        assert_eq!(escape_controls("\u{a0}é"), "\u{a0}é");
    }

    #[test]
    fn newlines_can_be_kept() {
        assert_eq!(
            escape_controls_keep_newlines("a\x1b\nb\r\n"),
            "a\\x1b\nb\\x0d\n"
        );
    }

    #[test]
    fn json_escapes_every_control_and_round_trips() {
        let raw = "k\x1b]0;PWNED\x07\x7f\u{9b}\u{85}é\"\\";
        let v = serde_json::json!({ raw: [raw, 1] });
        let s = to_json_pretty(&v).unwrap();
        assert!(!s.chars().any(|c| c.is_control() && c != '\n'));
        for e in ["\\u001b", "\\u0007", "\\u007f", "\\u009b", "\\u0085"] {
            assert!(s.contains(e), "{e} missing in {s}");
        }
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
        // Same layout as serde_json's own pretty printer.
        let clean = serde_json::json!({"a": [1, {"b": "c"}], "d": []});
        assert_eq!(
            to_json_pretty(&clean).unwrap(),
            serde_json::to_string_pretty(&clean).unwrap()
        );
    }
}
