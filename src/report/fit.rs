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

/// Each of `cells` in at most `cols` columns, as [`shorten`], except that
/// names the cut would make equal keep what tells them apart: the start,
/// `…`, then the part from where they first differ (from the start of
/// that token), so four GEMMs of one family stay four names. Also whether
/// any had to be numbered (` ~k`) because nothing in the room told it
/// apart, which the caller then explains.
pub fn shorten_apart(cells: &[&str], cols: usize, keep: Keep) -> (Vec<String>, bool) {
    let mut out: Vec<String> = cells.iter().map(|c| shorten(c, cols, keep)).collect();
    // Each round tells apart the names that still print the same, by where
    // those names differ; a few rounds settle families of templates.
    for _ in 0..4 {
        let merged = merged_groups(cells, &out);
        if merged.is_empty() {
            return (out, false);
        }
        for (rows, names) in merged {
            for i in rows {
                out[i] = apart(cells[i], &names, cols);
            }
        }
    }
    // Alike wherever they fit: numbered across the column, so rows stay
    // told apart (the table says what the number means).
    let merged = merged_groups(cells, &out);
    let numbered = !merged.is_empty();
    let mut alike: Vec<&str> = merged.iter().flat_map(|(_, names)| names.clone()).collect();
    alike.sort_unstable();
    alike.dedup();
    for i in merged.into_iter().flat_map(|(rows, _)| rows) {
        let k = alike.binary_search(&cells[i]).unwrap_or(0) + 1;
        let mark = format!(" ~{k}");
        let cut = shorten(cells[i], cols.saturating_sub(width(&mark)), Keep::Middle);
        out[i] = cut + &mark;
    }
    (out, numbered)
}

/// The rows whose different names print the same, per printed text, with
/// those names.
fn merged_groups<'a>(cells: &[&'a str], out: &[String]) -> Vec<(Vec<usize>, Vec<&'a str>)> {
    let mut by_short: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (i, s) in out.iter().enumerate() {
        by_short.entry(s.as_str()).or_default().push(i);
    }
    by_short
        .into_values()
        .filter_map(|rows| {
            let mut names: Vec<&str> = rows.iter().map(|&i| cells[i]).collect();
            names.sort_unstable();
            names.dedup();
            (names.len() > 1).then_some((rows, names))
        })
        .collect()
}

/// `name` cut to `cols` keeping its start and the part where it first
/// differs from each of `others`; the middle cut when that cannot tell it
/// apart (they differ only past the room).
fn apart(name: &str, others: &[&str], cols: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    let differs_at = others
        .iter()
        .filter(|&&o| o != name)
        .map(|o| {
            chars
                .iter()
                .zip(o.chars())
                .take_while(|(a, b)| **a == *b)
                .count()
        })
        .max()
        .unwrap_or(0);
    let head = (cols / 3).min(differs_at);
    let room = cols.saturating_sub(head + 1);
    // From the start of the token that differs when the difference still
    // shows in the room, else from a little before the difference.
    let token = chars[..differs_at]
        .iter()
        .rposition(|c| matches!(c, '_' | ' ' | '<' | '(' | ',' | ':' | '.'))
        .map_or(differs_at, |p| p + 1);
    let from = if differs_at - token + 2 <= room {
        token
    } else {
        differs_at.saturating_sub(room / 3)
    };
    if from <= head + 1 || differs_at >= chars.len() {
        return shorten(name, cols, Keep::Middle);
    }
    let head_text: String = chars[..head].iter().collect();
    let rest: String = chars[from..].iter().collect();
    let room = cols.saturating_sub(width(&head_text) + 1);
    format!("{head_text}…{}", shorten(&rest, room, Keep::Start))
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
    fn names_a_start_cut_would_merge_keep_where_they_differ() {
        let gemms = [
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_kernel",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_kernel",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_kernel",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize1x1x1_kernel",
            "ncclDevKernel_AllGather_RING_LL",
        ];
        let (short, numbered) = shorten_apart(&gemms, 30, Keep::Start);
        assert!(!numbered, "{short:?}");
        let mut distinct = short.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), gemms.len(), "{short:?}");
        assert!(short.iter().all(|s| width(s) <= 30), "{short:?}");
        // A name nothing collides with keeps the plain cut.
        assert_eq!(short[4], shorten(gemms[4], 30, Keep::Start));
        // The differing token is what shows.
        assert!(short[1].contains("tilesize256"), "{}", short[1]);
        assert!(short[0].starts_with("sm90_xmma"), "{}", short[0]);
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
