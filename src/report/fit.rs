//! Report text within 100 columns: long names shortened with `…`, notes
//! wrapped. Widths are display columns (wide characters count two).

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Text output fits this many columns unless `--wide`; no terminal
/// detection, so a pipe or a file gets the same text as a terminal.
pub const TEXT_WIDTH: usize = 100;

/// Display columns of `s`.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Which part of a long cell survives shortening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Kernel, API, GPU and group names: they differ at the start.
    Start,
    /// Paths: the file name at the end tells them apart.
    End,
    /// Device labels (`host:id`): the host's start and the id.
    Middle,
}

/// `s` in at most `cols` columns: whole when it fits, else the kept part
/// and `…` where the rest was.
pub fn shorten(s: &str, cols: usize, keep: Keep) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    if keep == Keep::Middle {
        let room = cols.saturating_sub(1);
        let head = shorten(s, room.div_ceil(2) + 1, Keep::Start);
        let tail = shorten(s, room / 2 + 1, Keep::End);
        return format!(
            "{}…{}",
            head.trim_end_matches('…'),
            tail.trim_start_matches('…')
        );
    }
    let room = cols.saturating_sub(1);
    let mut kept = Vec::new();
    let mut used = 0;
    let chars: Box<dyn Iterator<Item = char>> = match keep {
        Keep::Start | Keep::Middle => Box::new(s.chars()),
        Keep::End => Box::new(s.chars().rev()),
    };
    for c in chars {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        kept.push(c);
    }
    match keep {
        Keep::Start | Keep::Middle => kept.into_iter().chain(['…']).collect(),
        Keep::End => std::iter::once('…').chain(kept.into_iter().rev()).collect(),
    }
}

/// `text` wrapped at word boundaries into lines of at most `cols` columns
/// (`None`: one line), each starting with `indent`; later lines add two
/// spaces. A word longer than a line is broken, never cut: notes lose
/// nothing.
pub fn wrap(text: &str, indent: &str, cols: Option<usize>) -> String {
    let Some(cols) = cols else {
        return format!("{indent}{text}\n");
    };
    let rest_indent = format!("{indent}  ");
    let mut out = String::new();
    let mut line = indent.to_string();
    let mut fresh = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let need = if fresh { width(word) } else { width(word) + 1 };
        if !fresh && width(&line) + need > cols {
            out += &line;
            out.push('\n');
            line = rest_indent.clone();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        // A word wider than a whole line goes in pieces.
        for c in word.chars() {
            if width(&line) + c.width().unwrap_or(0) > cols && width(&line) > width(&rest_indent) {
                out += &line;
                out.push('\n');
                line = rest_indent.clone();
            }
            line.push(c);
        }
        fresh = false;
    }
    out += &line;
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_their_start_and_paths_their_end() {
        assert_eq!(
            shorten("ncclDevKernel_AllGather", 10, Keep::Start),
            "ncclDevKe…"
        );
        assert_eq!(
            shorten("/a/b/run/rank3.sqlite", 14, Keep::End),
            "…/rank3.sqlite"
        );
        assert_eq!(shorten("short", 10, Keep::Start), "short");
        assert_eq!(
            shorten("nvdl-a112-asus02:0", 12, Keep::Middle),
            "nvdl-a…s02:0"
        );
        // Wide characters count two columns.
        assert_eq!(width(&shorten("核函数核函数", 5, Keep::Start)), 5);
    }

    #[test]
    fn notes_wrap_within_the_width_and_keep_every_word() {
        let text = "one two three four five six seven eight nine ten";
        let w = wrap(text, "  ", Some(20));
        assert!(w.lines().all(|l| width(l) <= 20), "{w}");
        assert_eq!(w.split_whitespace().collect::<Vec<_>>().join(" "), text);
        assert!(w.lines().skip(1).all(|l| l.starts_with("    ")), "{w}");
        let long = "x".repeat(50);
        let w = wrap(&long, "  ", Some(20));
        assert!(w.lines().all(|l| width(l) <= 20), "{w}");
        assert_eq!(w.split_whitespace().collect::<String>(), long);
        assert_eq!(wrap(text, "  ", None), format!("  {text}\n"));
    }
}
