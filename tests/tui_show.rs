//! `x` hides short events (1 µs, 10 µs, 100 µs, 1 ms, off) and the title
//! counts what it hides in view; `K` switches kernel names between short
//! and demangled in lanes, panels, the status line and the finder.

mod common;

use common::tui::*;
use rankline::profile::names::KernelNames;
use rankline::tui::capture::time;
use rankline::tui::lanes::{LaneKind, streams_under};
use rankline::tui::selection::EventRef;
use std::collections::HashSet;

const MEGATRON: &str = "megatron_tp8.sqlite";

/// Events shorter than `min` starting in the view, on the rows on screen
/// (a header's streams once), by a plain scan of each row's events.
fn hidden_by_scan(app: &rankline::tui::state::App, min: i64) -> u64 {
    let l = app.capture().data().unwrap();
    let c = &app.capture();
    let mut kinds = HashSet::new();
    for row in &c.lanes.rows[c.lanes.on_screen()] {
        match row.kind {
            LaneKind::Host(_) | LaneKind::Device(_) => {
                kinds.extend(streams_under(&l.profile, row.kind).map(LaneKind::Stream))
            }
            k => {
                kinds.insert(k);
            }
        }
    }
    let w = c.view.window();
    kinds
        .into_iter()
        .filter_map(|k| time::track(&l, k).map(|(t, _)| (k, t)))
        .map(|(k, t)| {
            // One file: the row's clock is the view's.
            assert_eq!(time::row_file(&l, k), 0);
            (0..t.len())
                .filter(|&i| t.start[i] >= w.start && t.start[i] < w.end)
                .filter(|&i| t.end[i] - t.start[i] < min)
                .count() as u64
        })
        .sum()
}

fn duration(app: &rankline::tui::state::App, e: EventRef) -> i64 {
    let l = app.capture().data().unwrap();
    let (a, b) = time::event_span(&l, e);
    b - a
}

/// At 80 columns, beside a warning, the title still says the filter is on
/// (short), and how many events it hides.
#[test]
fn the_filter_is_said_at_80_columns() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 80, 24);
    press(&mut app, &mut t, "xx");
    let want = hidden_by_scan(&app, 10_000);
    let title = screen(&t).lines().next().unwrap().to_string();
    assert!(title.contains("⚠ no GPU activity"), "{title}");
    assert!(
        title.contains(&format!("≥ 10 µs: {want} hidden")),
        "{title}"
    );
}

#[test]
fn the_filter_cycles_counts_what_it_hides_and_skips_it() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    assert!(!screen(&t).contains("hidden in view"));
    let steps = [1_000, 10_000, 100_000, 1_000_000];
    let labels = ["1 µs", "10 µs", "100 µs", "1 ms"];
    let mut counts = Vec::new();
    for (min, label) in steps.into_iter().zip(labels) {
        press(&mut app, &mut t, "x");
        assert_eq!(app.capture().show.min_dur, min);
        let want = hidden_by_scan(&app, min);
        let title = screen(&t).lines().next().unwrap().to_string();
        assert!(
            title.contains(&format!("events ≥ {label} ({want} hidden in view)")),
            "{title}"
        );
        counts.push(want);
    }
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    // Nothing in the fixture is under 1 µs; thousands are under 10 µs.
    assert!(counts[3] > counts[1] && counts[1] > 0, "{counts:?}");
    // At 1 ms, Tab on a compute stream steps only to events of 1 ms or
    // longer, and Enter picks none shorter.
    let compute = app
        .capture()
        .lanes
        .rows
        .iter()
        .position(|r| r.label.ends_with("S7 compute"))
        .expect("a compute stream");
    app.put_cursor(compute);
    press(&mut app, &mut t, "z");
    for _ in 0..6 {
        key(&mut app, &mut t, crossterm::event::KeyCode::Tab);
        let e = app.capture().selection.expect("a long event");
        assert!(duration(&app, e) >= 1_000_000, "{e:?}");
    }
    key(&mut app, &mut t, crossterm::event::KeyCode::Enter);
    if let Some(e) = app.capture().selection {
        assert!(duration(&app, e) >= 1_000_000);
    }
    // The fifth press: every event again.
    press(&mut app, &mut t, "x");
    assert_eq!(app.capture().show.min_dur, 0);
    assert!(!screen(&t).contains("hidden in view"), "{}", screen(&t));
}

#[test]
fn hidden_events_are_not_drawn() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    // Zoomed in on a step: a compute stream has short kernels.
    press(&mut app, &mut t, "wwwww");
    let busy = |t: &ratatui::Terminal<ratatui::backend::TestBackend>| {
        screen(t)
            .lines()
            .filter(|l| l.contains("S7 compute"))
            .map(|l| l.chars().skip(33).filter(|c| !c.is_whitespace()).count())
            .sum::<usize>()
    };
    let all = busy(&t);
    press(&mut app, &mut t, "xxxx");
    let long = busy(&t);
    assert!(long < all, "{long} < {all}");
    press(&mut app, &mut t, "x");
    assert_eq!(busy(&t), all);
}

#[test]
fn k_switches_kernel_names_in_lanes_status_details_and_finder() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    // An AllGather instance, zoomed to: its kernels wide enough for names.
    press(&mut app, &mut t, "/AllGather_RING_LL (kernel)");
    key(&mut app, &mut t, crossterm::event::KeyCode::Enter);
    press(&mut app, &mut t, "z");
    let demangled = "ncclDevKernel_AllGather_RING_LL(";
    assert!(
        screen(&t).contains("ncclDevKernel_AllGather_RING_LL"),
        "{}",
        screen(&t)
    );
    assert!(!screen(&t).contains(demangled));
    press(&mut app, &mut t, "K");
    assert_eq!(app.capture().show.names, KernelNames::Demangled);
    assert!(screen(&t).contains(demangled), "{}", screen(&t));
    let l = app.capture().data().unwrap();
    let found = |names| {
        rankline::tui::finder::search(&l.entries, "ArgsStorage", 50, names)
            .into_iter()
            .filter(|&e| l.entries[e].label.ends_with("(kernel)"))
            .count()
    };
    assert!(found(KernelNames::Demangled) > 0);
    assert_eq!(found(KernelNames::Short), 0);
    // The finder as the user opens it lists the demangled names.
    press(&mut app, &mut t, "/ArgsStorage");
    assert!(screen(&t).contains("ArgsStorage"), "{}", screen(&t));
    key(&mut app, &mut t, crossterm::event::KeyCode::Enter);
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("the finder selected a kernel")
    };
    let p = &l.profile;
    assert!(p.strings.get(p.gpu.long_name(r)).contains("ArgsStorage"));
    // Details: the name shown first, the other below it.
    press(&mut app, &mut t, "5");
    let s = screen(&t);
    assert!(s.contains("short name: "), "{s}");
    press(&mut app, &mut t, "K");
    let s = screen(&t);
    assert!(s.contains("demangled name: "), "{s}");
}
