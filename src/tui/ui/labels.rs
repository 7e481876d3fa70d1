//! Where the timeline's text labels go: ruler ticks, the selected
//! collective's markers, lane labels and event names. A label that does not
//! fit is dropped (or loses whole words), never cut into something that
//! reads differently.

/// Tick labels, left to right: a label is written after its tick only if
/// it ends before the next tick and inside `width` columns; otherwise the
/// tick stays bare. Returns (first column of the text, text).
pub fn tick_labels(ticks: &[(usize, String)], width: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, (c, text)) in ticks.iter().enumerate() {
        let limit = ticks.get(i + 1).map_or(width, |next| next.0);
        let start = c + 1;
        // One blank column before the next tick keeps neighbours apart.
        let end = start + text.chars().count();
        let room_end = if i + 1 < ticks.len() {
            limit.saturating_sub(1)
        } else {
            limit
        };
        if end <= room_end {
            out.push((start, text.clone()));
        }
    }
    out
}

/// Marker labels: every marker keeps its column, and its tag goes right of
/// it, else left of it, where it crosses no marker, no other tag and none
/// of the `blocked` columns (the cursor's `▼`). Tags are placed in the
/// order given (most important first); one that fits nowhere is dropped.
pub fn marker_labels<'a>(
    markers: &[(usize, &'a str)],
    blocked: &[usize],
    width: usize,
) -> Vec<(usize, &'a str)> {
    let mut taken = vec![false; width];
    for &c in markers.iter().map(|(c, _)| c).chain(blocked) {
        if let Some(t) = taken.get_mut(c) {
            *t = true;
        }
    }
    let mut out = Vec::new();
    for &(c, tag) in markers {
        let n = tag.chars().count();
        let right = c + 1;
        let left = c.checked_sub(n);
        let free = |s: usize, taken: &[bool]| s + n <= width && !taken[s..s + n].iter().any(|&t| t);
        let at = if free(right, &taken) {
            Some(right)
        } else {
            left.filter(|&s| free(s, &taken))
        };
        if let Some(s) = at {
            taken[s..s + n].iter_mut().for_each(|t| *t = true);
            out.push((s, tag));
        }
    }
    out
}

/// A lane label in at most `max` columns whose first `lead` characters
/// name its device or host: whole if it fits; else the lead shortens
/// (`…0:3 S15 NCCL`), then goes (`T41228 nvtx1`), so that what the lane
/// is — its stream or thread and kind — stays; only then the rest is cut,
/// with `…`.
pub fn fit_lane_label(label: &str, lead: usize, max: usize) -> String {
    if label.chars().count() <= max {
        return label.to_string();
    }
    let lead_text: String = label.chars().take(lead).collect();
    let rest: String = label.chars().skip(lead).collect();
    let rest = if lead > 0 {
        rest.trim_start()
    } else {
        rest.as_str()
    };
    let rest_w = rest.chars().count();
    if lead > 0 && rest_w + 1 + 3 <= max {
        return format!("{} {rest}", fit_tail(&lead_text, max - rest_w - 1));
    }
    if rest_w <= max {
        return rest.to_string();
    }
    fit_name(rest, max).unwrap_or_default()
}

/// An event name in at most `max` columns: whole, or cut with `…` so the
/// cut shows; `None` when not even two characters and the `…` fit.
pub fn fit_name(name: &str, max: usize) -> Option<String> {
    let n = name.chars().count();
    if n <= max {
        Some(name.to_string())
    } else if max >= 3 {
        Some(name.chars().take(max - 1).chain(['…']).collect())
    } else {
        None
    }
}

/// A device tag in at most `max` columns, its end kept (`…:3 r4`): the
/// rank at the end tells rows apart, the host is in the heading above.
pub fn fit_tail(tag: &str, max: usize) -> String {
    let n = tag.chars().count();
    if n <= max {
        return tag.to_string();
    }
    let keep = max.saturating_sub(1);
    std::iter::once('…')
        .chain(tag.chars().skip(n - keep))
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_label_gives_up_its_host_before_its_kind() {
        let l = "node00:3 T41228 nvtx1";
        assert_eq!(fit_lane_label(l, 8, 40), l);
        assert_eq!(fit_lane_label(l, 8, 18), "…00:3 T41228 nvtx1");
        assert_eq!(fit_lane_label(l, 8, 14), "T41228 nvtx1");
        assert_eq!(fit_lane_label(l, 8, 12), "T41228 nvtx1");
        assert_eq!(fit_lane_label(l, 8, 9), "T41228 n…");
        assert_eq!(
            fit_lane_label("ault42:2 r2 S15 NCCL", 11, 16),
            "…2:2 r2 S15 NCCL"
        );
        // No lead: cut at the end, with the mark.
        assert_eq!(fit_lane_label("T9 API (link)", 0, 8), "T9 API …");
    }

    #[test]
    fn a_tag_too_long_keeps_its_end_after_an_ellipsis() {
        assert_eq!(fit_tail("node00:3 r3", 11), "node00:3 r3");
        assert_eq!(fit_tail("node00:3 r3", 7), "…0:3 r3");
        assert_eq!(fit_tail("node00:3 r3", 1), "…");
    }

    #[test]
    fn the_last_tick_label_is_dropped_rather_than_cut() {
        let ticks = vec![(0, "1.70s".to_string()), (14, "1.72s".to_string())];
        // 14 + 1 + 5 = 20 columns needed; 18 available.
        assert_eq!(tick_labels(&ticks, 18), vec![(1, "1.70s".to_string())]);
        assert_eq!(tick_labels(&ticks, 20).len(), 2);
    }

    #[test]
    fn a_tick_label_never_runs_into_the_next_tick() {
        let ticks = vec![(0, "5.000000001s".to_string()), (10, "x".to_string())];
        assert_eq!(tick_labels(&ticks, 40), vec![(11, "x".to_string())]);
    }

    #[test]
    fn adjacent_markers_keep_every_tag_whole_or_drop_it() {
        // `first` and `last` one column apart, `end` two further: the old
        // ruler drew `┃┃end` and `┃las┃end`.
        let placed = marker_labels(&[(10, "last"), (9, "first"), (12, "end")], &[], 40);
        assert!(placed.contains(&(13, "end")), "{placed:?}");
        assert!(placed.contains(&(4, "first")), "{placed:?}");
        // `last` fits neither between 10 and 12 nor left of it (9 is a marker).
        assert!(!placed.iter().any(|p| p.1 == "last"), "{placed:?}");
        let placed = marker_labels(&[(10, "last"), (9, "first"), (20, "end")], &[], 40);
        assert_eq!(placed, vec![(11, "last"), (4, "first"), (21, "end")]);
    }

    #[test]
    fn tags_never_overlap_each_other_or_the_cursor() {
        let placed = marker_labels(&[(5, "last"), (0, "first")], &[8], 12);
        // `last` cannot go right (8 is the cursor) so goes left at 1..5,
        // leaving no room for `first`.
        assert_eq!(placed, vec![(1, "last")]);
        // A tag does not run past the right edge.
        assert_eq!(marker_labels(&[(9, "end")], &[], 12), vec![(6, "end")]);
        assert_eq!(marker_labels(&[(1, "end")], &[], 4), vec![]);
    }

    #[test]
    fn event_names_show_their_cut() {
        assert_eq!(fit_name("forward", 7).as_deref(), Some("forward"));
        assert_eq!(fit_name("forward", 5).as_deref(), Some("forw…"));
        assert_eq!(fit_name("nccl", 3).as_deref(), Some("nc…"));
        assert_eq!(fit_name("nccl", 2), None);
    }
}
