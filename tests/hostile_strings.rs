//! Strings from a file never reach the terminal as control characters:
//! kernel names, NVTX text, GPU and host names and paths carrying ESC ]0;…
//! BEL (sets the window title), DEL and C1 U+009B (CSI) are shown as
//! visible escapes in text and the timeline, and as `\u00XX` in JSON.

mod common;
use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rusqlite::Connection;
use std::path::PathBuf;

/// What every name in the hostile copies ends with.
const PAYLOAD: &str = "\x1b]0;PWNED\x07\x7f\u{9b}";
const PAYLOAD_SQL: &str = "char(27) || ']0;PWNED' || char(7) || char(127) || char(155)";
/// How the payload looks once escaped for a terminal.
const SHOWN: &str = "\\x1b]0;PWNED\\x07\\x7f\\u{9b}";

/// Copies of the two-node fixture (two hosts, so host names are in every
/// device label) whose strings, GPU names, host names and NVTX texts all
/// end with the payload.
fn hostile_copies(test: &str) -> Vec<PathBuf> {
    let dir = temp_dir(test);
    ["two_node_a", "two_node_b"]
        .iter()
        .map(|name| {
            let path = dir.join(format!("{name}.sqlite"));
            std::fs::copy(root().join(format!("fixtures/{name}.sqlite")), &path).unwrap();
            let c = Connection::open(&path).unwrap();
            c.execute_batch(&format!(
                "UPDATE StringIds SET value = value || {PAYLOAD_SQL};
                 UPDATE TARGET_INFO_GPU SET name = name || {PAYLOAD_SQL};
                 UPDATE TARGET_INFO_SYSTEM_ENV SET value = value || {PAYLOAD_SQL}
                   WHERE name = 'Hostname';
                 UPDATE NVTX_EVENTS SET text = text || {PAYLOAD_SQL} WHERE text IS NOT NULL;"
            ))
            .unwrap();
            path
        })
        .collect()
}

fn report(files: &[PathBuf], format: &str) -> std::process::Output {
    report_with(files, format, &[])
}

fn report_with(files: &[PathBuf], format: &str, more: &[&str]) -> std::process::Output {
    let mut args = vec!["report", "all", "--no-cache", "--format", format];
    args.extend(more);
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let o = rankline(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// Control characters in `s`, apart from the line breaks the output is
/// made of.
fn controls(s: &str) -> Vec<char> {
    s.chars().filter(|&c| c.is_control() && c != '\n').collect()
}

#[test]
fn report_text_shows_escapes_and_holds_no_control_character() {
    let files = hostile_copies("hostile_report_text");
    // Shortened names (the default) and whole ones (`--wide`) alike.
    let o = report(&files, "text");
    for b in [0x1b, 0x07, 0x7f] {
        assert!(!o.stdout.contains(&b), "raw byte {b:#04x} in the report");
    }
    assert_eq!(controls(&stdout(&o)), [], "{}", stdout(&o));
    let o = report_with(&files, "text", &["--wide"]);
    for b in [0x1b, 0x07, 0x7f] {
        assert!(!o.stdout.contains(&b), "raw byte {b:#04x} in the report");
    }
    let out = stdout(&o);
    assert_eq!(controls(&out), [], "{out}");
    // Host and GPU names are in the summary, host names in device labels.
    assert!(out.contains(&format!("node-a{SHOWN}")), "{out}");
    assert!(
        out.contains(&format!("NVIDIA H100 80GB HBM3{SHOWN}")),
        "{out}"
    );
    assert!(out.contains(&format!("node-b{SHOWN}:0")), "{out}");
}

#[test]
fn report_json_escapes_every_control_character_and_round_trips() {
    let files = hostile_copies("hostile_report_json");
    let o = report(&files, "json");
    let out = stdout(&o);
    // Only JSON's own layout: no raw control character at all, DEL and C1
    // included (serde_json leaves those raw by default).
    assert_eq!(controls(&out), [], "{out}");
    for e in ["\\u001b", "\\u0007", "\\u007f", "\\u009b"] {
        assert!(out.contains(e), "{e} missing");
    }
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let summary = &v["summary"];
    assert_eq!(
        summary["files"][0]["host"].as_str(),
        Some(format!("node-a{PAYLOAD}").as_str())
    );
    assert_eq!(
        summary["devices"][0]["name"].as_str(),
        Some(format!("NVIDIA H100 80GB HBM3{PAYLOAD}").as_str())
    );
}

#[test]
fn an_error_naming_a_hostile_path_is_escaped() {
    let dir = temp_dir("hostile_path");
    let path = dir.join(format!("x{PAYLOAD}.sqlite"));
    std::fs::write(&path, "not a database").unwrap();
    let o = rankline(&["report", "summary", "--no-cache", path.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(controls(&err), [], "{err}");
    assert!(err.contains(&format!("x{SHOWN}.sqlite")), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The whole app drawn into a TestBackend after `typed` keys.
fn screen(files: &[PathBuf], typed: &str) -> Vec<String> {
    let sources: Vec<Source> = files.iter().cloned().map(Source::File).collect();
    let mut app = App::new(Keymap::default_keymap(), false);
    app.load_now(&sources, None, &Settings::default());
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    for c in typed.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            c => KeyCode::Char(c),
        };
        app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    }
    let buf = terminal.backend().buffer();
    let cells: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
    let bad: Vec<&&str> = cells.iter().filter(|s| !controls(s).is_empty()).collect();
    assert!(bad.is_empty(), "cells holding control characters: {bad:?}");
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn timeline_shows_escapes_and_no_cell_holds_a_control_character() {
    let files = hostile_copies("hostile_timeline");
    let lines = screen(&files, "");
    let text = lines.join("\n");
    // Lane labels carry host and GPU names, cut after escaping.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("▾node-a\\x1b]0;PWNED\\")),
        "{text}"
    );
    // Kernel names on wide events.
    assert!(text.contains("PWNED\\x07"), "{text}");
}

#[test]
fn finder_status_line_and_panels_show_escapes() {
    let files = hostile_copies("hostile_finder");
    // The finder lists kernel names.
    let text = screen(&files, "/nccl").join("\n");
    assert!(
        text.contains(&format!("ncclDevKernel_Broadcast_RING_LL{SHOWN} (kernel)")),
        "{text}"
    );
    // Enter selects the first occurrence: its name is on the status line;
    // the summary and details panels name hosts and the kernel.
    let lines = screen(&files, "/nccl\n45");
    let text = lines.join("\n");
    let status = lines.last().unwrap();
    assert!(
        status.contains(&format!("late node-a{SHOWN}:0")),
        "{status}"
    );
    assert!(
        text.contains(&format!("expected: node-a{SHOWN}:0")),
        "{text}"
    );
    assert!(text.contains(&format!("NVTX: iteration{SHOWN}")), "{text}");
}

/// The real binary in a pseudo-terminal: the bytes it sends never carry the
/// file's escape sequence, so the window title stays as it was.
#[test]
fn the_terminal_never_receives_the_files_escape_sequences() {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::io::{Read, Write};
    use std::sync::mpsc;
    use std::time::Duration;

    let files = hostile_copies("hostile_pty");
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 48,
            cols: 160,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_rankline"));
    cmd.arg("--no-cache");
    cmd.args(files.iter().map(|f| f.as_os_str()));
    cmd.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut writer = pair.master.take_writer().unwrap();
    let mut seen = Vec::new();
    let size = |n| std::num::NonZeroU16::new(n).unwrap();
    let mut screen = vt100::Parser::new(size(48), size(160), 0);
    // Until the timeline with the names and the status line is on screen
    // (the bytes alone split words with cursor moves).
    loop {
        let text = screen.screen().contents();
        if text.contains("PWNED") && text.contains("/ find") {
            break;
        }
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(chunk) => {
                screen.process(&chunk);
                seen.extend(chunk);
            }
            Err(_) => panic!("never drawn:\n{text}"),
        }
    }
    writer.write_all(b"q").unwrap();
    writer.flush().unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || done_tx.send(child.wait()));
    let status = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("rankline did not exit")
        .unwrap();
    assert!(status.success(), "{status:?}");
    while let Ok(chunk) = rx.try_recv() {
        seen.extend(chunk);
    }
    let has = |needle: &[u8]| seen.windows(needle.len()).any(|w| w == needle);
    assert!(!has(b"\x1b]0;PWNED"), "the window title was set");
    assert!(!has(b"\x07") && !has(b"\x7f") && !has("\u{9b}".as_bytes()));
    assert!(has(b"\\x1b]0;PWNED"), "the escape is not shown");
    drop(pair.master);
}
