//! Bookmarks: `M` keeps the place (the instance selected, the window)
//! under a name; after a restart `'` lists them and Enter goes back there
//! (one jump in the history); they outlive the cache (its entries gone,
//! the input touched); `report bookmarks` lists them; `export` marks them.
//! One test: the state directory is this process's environment.

mod common;

use common::tui::*;
use crossterm::event::KeyCode;
use rankline::profile::Source;
use rankline::tui::state::Overlay;
use std::process::Command;

#[test]
fn bookmarks_survive_a_restart_and_the_cache_and_travel_to_report_and_export() {
    let dir = common::temp_dir("bookmarks");
    let state = dir.join("state");
    // SAFETY: the only test in this binary; nothing else reads the env.
    unsafe { std::env::set_var("XDG_STATE_HOME", &state) };
    let input = dir.join("capture.sqlite");
    std::fs::copy(common::root().join("fixtures/megatron_tp8.sqlite"), &input).unwrap();
    let src = [Source::File(input.clone())];

    let (mut app, mut t) = open_at(&src, Some("s20:55"), 160, 48);
    let view = app.capture().view;
    press(&mut app, &mut t, "M");
    assert!(matches!(app.chrome().overlay, Overlay::BookmarkName { .. }));
    // Typed letters go to the name, not to the keys (w zooms, d pans).
    press(&mut app, &mut t, "slow gather wd");
    key(&mut app, &mut t, KeyCode::Backspace);
    key(&mut app, &mut t, KeyCode::Backspace);
    key(&mut app, &mut t, KeyCode::Backspace);
    key(&mut app, &mut t, KeyCode::Enter);
    assert!(
        app.answer().unwrap().starts_with("bookmarked slow gather"),
        "{:?}",
        app.answer()
    );
    assert_eq!(app.capture().view, view, "typing did not move the view");
    // Unnamed, away from the instance: the window's own name.
    key(&mut app, &mut t, KeyCode::Esc);
    press(&mut app, &mut t, "ddM");
    key(&mut app, &mut t, KeyCode::Enter);
    let away = app.capture().view;
    assert!(app.answer().unwrap().starts_with("bookmarked window "));
    drop(app);

    // The cache's entries gone and the input touched (another cache key):
    // the bookmarks stay.
    let cache = dir.join("cache");
    let o = Command::new(env!("CARGO_BIN_EXE_rankline"))
        .args([
            "index",
            input.to_str().unwrap(),
            "--cache-dir",
            cache.to_str().unwrap(),
        ])
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    assert!(o.status.success());
    std::fs::remove_dir_all(&cache).unwrap();
    let f = std::fs::File::options().append(true).open(&input).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    drop(f);

    // A restart: the list, and Enter goes back to the instance and window.
    let (mut app, mut t) = open_at(&src, None, 160, 48);
    let start = app.capture().view;
    press(&mut app, &mut t, "'");
    assert!(
        matches!(app.chrome().overlay, Overlay::Bookmarks(_)),
        "{:?}",
        app.answer()
    );
    // Kept in whole ns.
    let near = |a: rankline::tui::timescale::View, b: rankline::tui::timescale::View| {
        (a.t0 - b.t0).abs() <= 1.0 && (a.span - b.span).abs() <= 2.0
    };
    let s = screen(&t);
    assert!(s.contains("slow gather") && s.contains("s20:55"), "{s}");
    key(&mut app, &mut t, KeyCode::Enter);
    let l = app.capture().data().unwrap();
    let g = l.analysis.matching.group("s20").unwrap();
    assert_eq!(app.capture().instance(), Some((g, 54)));
    assert!(
        near(app.capture().view, view),
        "{:?} {view:?}",
        app.capture().view
    );
    press(&mut app, &mut t, "'");
    key(&mut app, &mut t, KeyCode::Down);
    key(&mut app, &mut t, KeyCode::Enter);
    assert!(near(app.capture().view, away));
    assert_eq!(app.capture().instance(), None);
    // Two jumps, two steps back.
    key(&mut app, &mut t, KeyCode::Backspace);
    key(&mut app, &mut t, KeyCode::Backspace);
    assert_eq!(app.capture().view, start);

    // report bookmarks, JSON and text.
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rankline"))
            .args(args)
            .env("XDG_STATE_HOME", &state)
            .env("XDG_CACHE_HOME", dir.join("cache2"))
            .output()
            .unwrap()
    };
    let o = run(&[
        "report",
        "bookmarks",
        input.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let marks = v["bookmarks"].as_array().unwrap();
    assert_eq!(marks.len(), 2);
    assert_eq!(marks[0]["name"], "slow gather");
    assert_eq!(marks[0]["group"], "s20");
    assert_eq!(marks[0]["instance"], 55);
    assert_eq!(marks[0]["window_ns"][0], view.t0 as i64);
    assert!(marks[1]["group"].is_null());
    assert!(marks[0]["created"].as_str().unwrap().ends_with('Z'));
    let o = run(&["report", "bookmarks", input.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("slow gather") && text.contains("s20:55"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // export marks them.
    let out = dir.join("t.json");
    let o = run(&[
        "export",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let names = common::bookmark_markers(&out);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().any(|n| n == "bookmark slow gather"));
    // Never beside the input.
    let beside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        beside
            .iter()
            .all(|n| ["capture.sqlite", "state", "cache2", "t.json"].contains(&n.as_str())),
        "{beside:?}"
    );
}
