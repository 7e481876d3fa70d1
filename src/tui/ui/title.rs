//! The title bar: what is open and the window width. When the bar is too
//! narrow, items give way in a fixed order; `window <value> <unit>` stays.

use super::super::data::Loaded;
use super::super::state::App;
use super::super::timescale::format_duration;
use crate::text_safe::escape_controls;
use crate::tui::capture::time::hidden_on_row;
use crate::tui::lanes::{LaneKind, streams_under};
use ratatui::text::Line;

/// One title item: its text (with the separator before it), how long it
/// stays when space runs out (higher stays longer), and a shorter text it
/// takes first, if it has one.
struct Item {
    text: String,
    keep: u8,
    short: Option<String>,
}

impl Item {
    fn new(text: impl Into<String>, keep: u8) -> Item {
        Item {
            text: text.into(),
            keep,
            short: None,
        }
    }
}

/// The title for a bar `width` columns wide.
pub fn title_line(app: &App, l: &Loaded, width: u16) -> Line<'static> {
    let p = &l.profile;
    let mut items = vec![Item::new(" rankline", 1)];
    let missing = &l.analysis.completeness.missing;
    if !missing.is_empty() {
        let list: Vec<String> = missing.iter().map(|&d| p.device_label(d).tag()).collect();
        items.push(Item::new(
            format!("  ⚠ no GPU activity on {}", list.join(" ")),
            5,
        ));
    }
    // A rank with no file is missing from the job as a device without
    // activity is: every cross-rank figure covers fewer ranks.
    let c = &l.analysis.completeness;
    if let (Some(world), false) = (c.world_size, c.ranks_missing.is_empty()) {
        items.push(Item::new(
            format!(
                "  ⚠ {} of a world of {world} {} no file",
                rank_list(&c.ranks_missing),
                if c.ranks_missing.len() == 1 {
                    "has"
                } else {
                    "have"
                }
            ),
            5,
        ));
    }
    let failed = app.session().messages.errors().count();
    if failed > 0 {
        items.push(Item::new(format!("  ⚠ {failed} file(s) failed"), 5));
    }
    for f in &p.files {
        if let Some(wal) = &f.wal {
            items.push(Item::new(
                format!("  ⚠ {}", crate::profile::wal_title(&f.path, wal)),
                5,
            ));
        }
    }
    let files: Vec<String> = p.files.iter().map(|f| f.name()).collect();
    items.push(Item::new(format!("  ·  {}", files.join(", ")), 0));
    items.push(Item::new(
        format!(
            "  ·  window {}",
            format_duration(app.capture().view.span as i64)
        ),
        u8::MAX,
    ));
    let clock = match app.utc_origin(l) {
        Some(utc0) => crate::tui::wallclock::date_and_minute(
            utc0.saturating_add(app.capture().view.center() as i64),
        ),
        None if app.chrome().ruler == crate::tui::state::Ruler::Relative => "relative time".into(),
        None => "capture clock".into(),
    };
    items.push(Item::new(format!("  ·  {clock}"), 2));
    let alignment = &l.analysis.clock;
    if alignment.several_domains() {
        // Never dropped without a mark: at 80 columns the figure alone.
        let short = alignment
            .worst_residual_p90()
            .map(|(_, r)| format!("  ·  clocks ±{}", crate::analysis::clock::short_ms(r)))
            .unwrap_or_else(|| "  ·  clocks…".into());
        items.push(Item {
            short: Some(short),
            ..Item::new(
                format!("  ·  clocks: {}", alignment.describe_method_on(p)),
                3,
            )
        });
    }
    // Files left out of cross-file figures are a warning, kept as the
    // others are (it was the clock words' tail, the first thing to go).
    match alignment.left_out() {
        0 => {}
        n => items.push(Item::new(
            format!(
                "  ⚠ {n} {} left out of cross-file figures (clocks)",
                if n == 1 { "file" } else { "files" }
            ),
            5,
        )),
    }
    if app.baseline().is_some_and(|b| b.shown) {
        items.push(Item::new("  ·  BASELINE", 4));
    }
    // A filter hiding events is said at any width, as a warning is: a
    // lane missing its short events must not look like missing data.
    if let Some(at_least) = app.capture().show.filter_label() {
        let hidden = hidden_in_view(app, l);
        items.push(Item {
            short: Some(format!("  ·  {at_least}: {hidden} hidden")),
            ..Item::new(
                format!("  ·  events {at_least} ({hidden} hidden in view)"),
                5,
            )
        });
    }
    if app.capture().lanes.focus {
        items.push(Item::new("  ·  FOCUS", 4));
    }
    let escaped: Vec<Item> = items
        .into_iter()
        .map(|i| Item {
            text: escape_controls(&i.text).into_owned(),
            short: i.short.map(|s| escape_controls(&s).into_owned()),
            ..i
        })
        .collect();
    Line::from(fit(escaped, width as usize))
}

/// Events the minimum-duration filter hides on the rows on screen, in the
/// window: a device or host row's streams counted once, whether drawn on
/// their own rows or merged into the header's.
fn hidden_in_view(app: &App, l: &Loaded) -> u64 {
    let c = &app.capture();
    let p = &l.profile;
    let mut kinds = std::collections::HashSet::new();
    for row in &c.lanes.rows[c.lanes.on_screen()] {
        match row.kind {
            LaneKind::Host(_) | LaneKind::Device(_) => {
                kinds.extend(streams_under(p, row.kind).map(LaneKind::Stream));
            }
            k => {
                kinds.insert(k);
            }
        }
    }
    kinds
        .into_iter()
        .map(|k| hidden_on_row(l, k, c.view, c.show.min_dur))
        .sum()
}

/// Joins the items until the text fits `width` columns: items with a
/// short form take it first, then the least kept go first (what is kept is
/// never cut here).
fn fit(mut items: Vec<Item>, width: usize) -> String {
    let cols = |items: &[Item]| -> usize {
        items
            .iter()
            .map(|i| Line::from(i.text.as_str()).width())
            .sum()
    };
    // The least kept item gives way first: shortened when it has a short
    // form, else dropped (the last of equals first).
    while cols(&items) > width {
        let Some(at) = items
            .iter()
            .enumerate()
            .filter(|(_, it)| it.keep < u8::MAX || it.short.is_some())
            .min_by_key(|(i, it)| (it.keep, usize::MAX - i))
            .map(|(i, _)| i)
        else {
            break;
        };
        match items[at].short.take() {
            Some(short) => items[at].text = short,
            None => {
                items.remove(at);
            }
        }
    }
    let mut s: String = items.into_iter().map(|i| i.text).collect();
    // The first item kept may have lost the separator's partner.
    if let Some(rest) = s.strip_prefix("  ·  ") {
        s = format!(" {rest}");
    }
    s
}

/// `rank 4`, `ranks 4 5 6`, `ranks 4 5 … (12; panel 4 lists them)`: a
/// few named, the count for many.
pub fn rank_list(ranks: &[u32]) -> String {
    match ranks {
        [one] => format!("rank {one}"),
        few if few.len() <= 6 => format!(
            "ranks {}",
            few.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
        ),
        many => format!(
            "ranks {} {} … ({}; panel 4 lists them)",
            many[0],
            many[1],
            many.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{Item, fit};

    fn item(text: &str, keep: u8) -> Item {
        Item::new(text, keep)
    }

    fn items() -> Vec<Item> {
        vec![
            item(" rankline", 1),
            item("  ⚠ no GPU activity on D0", 5),
            item("  ·  megatron_tp8.sqlite", 0),
            item("  ·  window 1.117 s", u8::MAX),
            item("  ·  capture clock", 2),
        ]
    }

    #[test]
    fn missing_ranks_are_named_when_few_and_counted_when_many() {
        assert_eq!(super::rank_list(&[4]), "rank 4");
        assert_eq!(super::rank_list(&[4, 5]), "ranks 4 5");
        let many: Vec<u32> = (10..22).collect();
        assert_eq!(
            super::rank_list(&many),
            "ranks 10 11 … (12; panel 4 lists them)"
        );
    }

    #[test]
    fn everything_fits_when_wide() {
        assert_eq!(
            fit(items(), 200),
            " rankline  ⚠ no GPU activity on D0  ·  megatron_tp8.sqlite  ·  window 1.117 s  ·  capture clock"
        );
    }

    #[test]
    fn files_then_name_then_clock_give_way_and_the_window_stays() {
        assert_eq!(
            fit(items(), 80),
            " rankline  ⚠ no GPU activity on D0  ·  window 1.117 s  ·  capture clock"
        );
        assert_eq!(
            fit(items(), 60),
            "  ⚠ no GPU activity on D0  ·  window 1.117 s"
        );
        assert_eq!(fit(items(), 40), " window 1.117 s");
        assert_eq!(fit(items(), 10), " window 1.117 s");
    }

    #[test]
    fn a_filter_takes_its_short_form_before_anything_gives_way() {
        let mut with_filter = items();
        with_filter.push(Item {
            short: Some("  ·  ≥ 10 µs: 5499 hidden".into()),
            ..item("  ·  events ≥ 10 µs (5499 hidden in view)", 5)
        });
        assert!(fit(with_filter, 200).ends_with("events ≥ 10 µs (5499 hidden in view)"));
        let mut with_filter = items();
        with_filter.push(Item {
            short: Some("  ·  ≥ 10 µs: 5499 hidden".into()),
            ..item("  ·  events ≥ 10 µs (5499 hidden in view)", 5)
        });
        assert_eq!(
            fit(with_filter, 80),
            "  ⚠ no GPU activity on D0  ·  window 1.117 s  ·  ≥ 10 µs: 5499 hidden"
        );
    }
}
