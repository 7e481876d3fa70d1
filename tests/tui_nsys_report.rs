//! The timeline reads an `.nsys-rep` report: the export runs in the
//! background loader, its stage shown in the loading gauge while the UI is
//! up. (Its own test binary: it sets `NSYS` for the process.)

use rankline::analysis::Settings;
use rankline::profile::{CacheDir, Source};
use rankline::tui::data::{self, LoadMsg};
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

#[test]
fn the_export_runs_in_the_loader_and_the_loading_screen_says_so() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let d = root.join("target/test-tmp/tui_nsys_report");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    // A stand-in nsys: the output is the 7th argument of the export.
    let nsys = d.join("nsys");
    std::fs::write(
        &nsys,
        format!(
            "#!/bin/sh\n[ \"$1 $6\" = 'export --output' ] || exit 2\n/bin/cp '{}' \"$7\"\n",
            root.join("fixtures/megatron_tp8.sqlite").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&nsys, std::fs::Permissions::from_mode(0o755)).unwrap();
    // SAFETY: this test binary has this one test: no other thread reads
    // the environment meanwhile.
    unsafe { std::env::set_var("NSYS", &nsys) };
    let report = d.join("job.nsys-rep");
    std::fs::write(&report, b"a report").unwrap();
    let cache = CacheDir {
        dir: d.join("cache"),
        cap_bytes: u64::MAX,
    };
    let mut msgs = Vec::new();
    let opened = data::load(
        &[Source::File(report.clone())],
        Some(&cache),
        &Settings::default(),
        &mut |m| msgs.push(m),
    );
    assert!(opened);
    let stages: Vec<String> = msgs
        .iter()
        .filter_map(|m| match m {
            LoadMsg::Progress { stage, .. } => Some(stage.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        stages.iter().position(|s| s == "exporting with nsys"),
        Some(1),
        "after the cache lookup, before reading: {stages:?}"
    );
    let mut app = App::new(Keymap::default_keymap(), false);
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    let mut exporting = None;
    for m in msgs {
        let is_export =
            matches!(&m, LoadMsg::Progress { stage, .. } if stage == "exporting with nsys");
        app.on_load(m);
        if is_export {
            terminal
                .draw(|f| rankline::tui::ui::draw(f, &mut app))
                .unwrap();
            let buf = terminal.backend().buffer();
            let screen: String = (0..30)
                .flat_map(|y| (0..120).map(move |x| (x, y)))
                .map(|at| buf[at].symbol().to_string())
                .collect();
            exporting = Some(screen);
        }
    }
    let screen = exporting.expect("an export stage");
    assert!(
        screen.contains("exporting with nsys (file 1/1)"),
        "{screen}"
    );
    let p = &app.capture().data.as_ref().expect("loaded").profile;
    assert_eq!(p.files[0].path, report);
    assert_eq!(
        std::fs::read_dir(d.join("cache/exports")).unwrap().count(),
        1
    );
}
