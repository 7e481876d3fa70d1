//! Copying to the terminal's clipboard with OSC 52, which also reaches the
//! local clipboard over SSH. The payload is base64 of text that went
//! through `escape_controls`, so bytes from a file never reach an escape
//! sequence raw.

use crate::text_safe::escape_controls;

/// The sequence that puts `text` (control characters shown as escapes)
/// on the clipboard.
pub fn copy_sequence(text: &str) -> String {
    let safe = escape_controls(text);
    format!("\x1b]52;c;{}\x07", base64(safe.as_bytes()))
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_test_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn the_sequence_carries_base64_of_the_text() {
        assert_eq!(copy_sequence("s20:55"), "\x1b]52;c;czIwOjU1\x07");
    }

    #[test]
    fn control_characters_from_a_file_are_escaped_before_encoding() {
        let seq = copy_sequence("gemm\x1b]0;pwned\x07");
        // The payload is the visible escape, never the raw bytes.
        assert_eq!(
            seq,
            format!("\x1b]52;c;{}\x07", base64(b"gemm\\x1b]0;pwned\\x07"))
        );
        let payload = &seq["\x1b]52;c;".len()..seq.len() - 1];
        assert!(
            payload
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        );
    }
}
