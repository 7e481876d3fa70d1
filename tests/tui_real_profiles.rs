//! Every real export survives a tour of the UI: all panels, the finder,
//! focus, stepping and jumping — on odd data (no kernels, no GPU table,
//! windows with orphans) as on good.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn every_real_export_survives_a_tour_of_the_ui() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/real-profiles");
    assert!(dir.is_dir(), "../shared/real-profiles is missing");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sqlite"))
        .collect();
    files.sort();
    assert!(files.len() >= 8);
    for f in files {
        for (w, h) in [(160, 48), (80, 24)] {
            let mut app = App::new(Keymap::default_keymap(), false);
            app.load_now(&[Source::File(f.clone())], None, &Settings::default());
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
            let tour = "]]12345jjjj\t\t\n\x1bJFF[b\n/a\n nzswwwwwwwdafgt?\x1bL\x1bkkkk \x7f";
            for c in tour.chars() {
                let code = match c {
                    '\n' => KeyCode::Enter,
                    '\x1b' => KeyCode::Esc,
                    '\t' => KeyCode::Tab,
                    '\x7f' => KeyCode::BackTab,
                    c => KeyCode::Char(c),
                };
                app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
                terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
            }
            assert!(!app.session().quit, "{}: the tour quit", f.display());
        }
    }
}
