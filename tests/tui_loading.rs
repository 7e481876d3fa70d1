//! The UI stays interactive while loading: the real event loop runs with a
//! loader the test holds paused; keys are handled meanwhile.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use rankline::tui::data::LoadMsg;
use rankline::tui::keymap::Keymap;
use rankline::tui::run::{Msg, drive};
use rankline::tui::state::{App, Overlay};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::mpsc as std_mpsc;
use tokio::sync::mpsc;

fn key(c: KeyCode) -> Msg {
    Msg::Input(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)))
}

#[test]
fn keys_are_handled_while_the_loader_is_held() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    // The loader: reports one stage, then waits until the test releases it.
    let (release, held) = std_mpsc::channel::<()>();
    let load_tx = tx.clone();
    let loader = std::thread::spawn(move || {
        let _ = load_tx.send(Msg::Load(LoadMsg::Progress {
            stage: "reading kernels".into(),
            file: 0,
            files: 1,
            rows: 65536,
        }));
        let _ = held.recv();
    });
    let mut app = App::new(Keymap::default_keymap(), false);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    // Open a panel, open and close help, open help again, then quit.
    for m in [
        key(KeyCode::Char('1')),
        key(KeyCode::Char('?')),
        key(KeyCode::Esc),
        key(KeyCode::Char('j')),
    ] {
        tx.send(m).unwrap();
    }
    let mut seen_help = false;
    rt.block_on(async {
        // Drive until the queued keys are handled, then check, then quit.
        tokio::time::timeout(
            std::time::Duration::from_millis(300),
            drive(&mut terminal, &mut app, &mut rx),
        )
        .await
        .ok();
        assert_eq!(app.session().progress.stage, "reading kernels");
        let screen: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        assert!(
            screen.contains("reading kernels") && screen.contains("65536 rows"),
            "progress not drawn"
        );
        tx.send(key(KeyCode::Char('?'))).unwrap();
        tokio::time::timeout(
            std::time::Duration::from_millis(100),
            drive(&mut terminal, &mut app, &mut rx),
        )
        .await
        .ok();
        seen_help = matches!(app.chrome().overlay, Overlay::Help { .. });
        tx.send(key(KeyCode::Esc)).unwrap();
        tx.send(key(KeyCode::Char('q'))).unwrap();
        drive(&mut terminal, &mut app, &mut rx).await.unwrap();
    });
    assert!(seen_help, "help did not open while loading");
    assert!(app.session().quit, "q was not handled while loading");
    assert!(app.capture().data.is_none(), "the loader was still held");
    release.send(()).unwrap();
    loader.join().unwrap();
}

/// The 8-GPU fixture with its first frame in and the analyses held back
/// (returned, for the test to hand over when it wants).
fn first_frame_only() -> (App, Terminal<TestBackend>, Option<LoadMsg>) {
    use rankline::analysis::Settings;
    use rankline::profile::Source;
    use rankline::tui::data;
    let file =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite");
    let mut msgs = Vec::new();
    data::load(
        &[Source::File(file)],
        None,
        &Settings::default(),
        &mut |m| msgs.push(m),
    );
    let mut app = App::new(Keymap::default_keymap(), false);
    let terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    let mut analysed = None;
    for m in msgs {
        match m {
            LoadMsg::Progress { .. } => {}
            LoadMsg::Analysed(_) => analysed = Some(m),
            m => app.on_load(m),
        }
    }
    (app, terminal, analysed)
}

/// A key that needs the cross-rank analyses, pressed after the first frame
/// but before they are done, is done when they arrive (not lost).
#[test]
fn a_key_pressed_before_the_analyses_is_done_when_they_arrive() {
    let (mut app, mut terminal, analysed) = first_frame_only();
    app.on_key(KeyEvent::new(KeyCode::Char(']'), KeyModifiers::NONE));
    terminal
        .draw(|f| rankline::tui::ui::draw(f, &mut app))
        .unwrap();
    assert!(app.capture().selection.is_none(), "nothing to jump to yet");
    assert!(
        app.answer().unwrap_or("").contains("a moment"),
        "{:?}",
        app.answer()
    );
    app.on_load(analysed.expect("the loader sends the analyses"));
    terminal
        .draw(|f| rankline::tui::ui::draw(f, &mut app))
        .unwrap();
    let status: String = (0..160)
        .map(|x| terminal.backend().buffer()[(x, 47)].symbol().to_string())
        .collect();
    assert!(status.contains("instance 55/225"), "{status}");
}

/// `q` while the loader writes the cache lets the write finish, saying so,
/// and quits when it is done; a second `q` (or Ctrl-C) quits at once.
#[test]
fn a_quit_while_the_cache_is_written_waits_for_the_write_unless_asked_twice() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctrl_c = Msg::Input(Event::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    for second in [None, Some(key(KeyCode::Char('q'))), Some(ctrl_c)] {
        let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
        let mut app = App::new(Keymap::default_keymap(), false);
        let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
        tx.send(Msg::Load(LoadMsg::Writing)).unwrap();
        tx.send(key(KeyCode::Char('q'))).unwrap();
        let asked_twice = second.is_some();
        rt.block_on(async {
            let waited = tokio::time::timeout(
                std::time::Duration::from_millis(300),
                drive(&mut terminal, &mut app, &mut rx),
            )
            .await;
            assert!(waited.is_err(), "quit before the write was done");
            assert!(!app.session().quit);
            let said = app.session().messages.answered().map(|m| m.text.clone());
            assert!(
                said.as_deref()
                    .is_some_and(|t| t.starts_with("finishing the cache entry, then quitting")),
                "{said:?}"
            );
            tx.send(second.unwrap_or(Msg::Load(LoadMsg::Finished)))
                .unwrap();
            let ended = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                drive(&mut terminal, &mut app, &mut rx),
            )
            .await;
            assert!(
                ended.is_ok() && app.session().quit,
                "asked twice: {asked_twice}"
            );
        });
    }
}

/// Keys typed behind one that waits for the analyses wait behind it, in
/// order: `/AllGather⏎` typed before the analyses are done finds an
/// AllGather when they arrive — the query's letters do not go to the
/// timeline (`t` switched its clock, `a` panned) while the finder waits.
#[test]
fn keys_typed_behind_a_waiting_key_are_applied_after_it_in_order() {
    use rankline::tui::state::EventRef;
    let (mut app, mut terminal, analysed) = first_frame_only();
    let view = app.capture().view;
    let ruler = app.chrome().ruler;
    for c in "/AllGather".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    terminal
        .draw(|f| rankline::tui::ui::draw(f, &mut app))
        .unwrap();
    assert_eq!(
        app.chrome().ruler,
        ruler,
        "t of the query switched the clock"
    );
    assert_eq!(app.capture().view, view, "a of the query panned");
    app.on_load(analysed.expect("the loader sends the analyses"));
    terminal
        .draw(|f| rankline::tui::ui::draw(f, &mut app))
        .unwrap();
    let l = app.data().unwrap();
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("nothing selected: {:?}", app.capture().selection)
    };
    let name = l.profile.strings.get(l.profile.gpu.name(r));
    assert!(name.contains("AllGather"), "{name}");
    assert_eq!(app.chrome().ruler, ruler);
}
