//! End to end: the real binary in a pseudo-terminal, its screen read by a
//! terminal emulator (vt100). Open the fixture, jump to the next big event,
//! open the skew panel, read the answer, quit.

mod common;

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Session {
    screen: Arc<Mutex<vt100::Parser>>,
    /// Every byte the program wrote, for sequences the screen does not
    /// keep (OSC 52).
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Session {
    fn start(args: &[&str], cols: u16, rows: u16) -> Session {
        Session::start_with(args, &[], cols, rows)
    }

    /// [`Session::start`] with `env` set.
    fn start_with(args: &[&str], env: &[(&str, &str)], cols: u16, rows: u16) -> Session {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_rankline"));
        cmd.args(args);
        cmd.cwd(env!("CARGO_MANIFEST_DIR"));
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("NO_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache-home"),
        );
        let child = pair.slave.spawn_command(cmd).expect("spawn rankline");
        drop(pair.slave);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(rows).unwrap(),
            std::num::NonZeroU16::new(cols).unwrap(),
            0,
        )));
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let sink = screen.clone();
        let raw = Arc::new(Mutex::new(Vec::new()));
        let raw_sink = raw.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                raw_sink.lock().unwrap().extend_from_slice(&buf[..n]);
                sink.lock().unwrap().process(&buf[..n]);
            }
        });
        let writer = pair.master.take_writer().expect("pty writer");
        // Keep the master open for the session's life.
        std::mem::forget(pair.master);
        Session {
            screen,
            raw,
            writer,
            child,
        }
    }

    fn text(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows `needle` (at most 20 s).
    fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let t = self.text();
            if t.contains(needle) {
                return t;
            }
            assert!(
                Instant::now() < deadline,
                "screen never showed {needle:?}:\n{t}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the timeline is drawn and the cross-rank analyses are
    /// done (they finish after the first frame).
    fn wait_ready(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let t = self.text();
            if t.contains("S20 NCCL") && !t.contains("matching collectives") {
                return t;
            }
            assert!(Instant::now() < deadline, "never ready:\n{t}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// The terminal is back to normal: main screen, cursor shown. Waits a
    /// little for the last bytes to arrive after the exit.
    fn assert_restored(&self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let (alternate, hidden) = {
                let p = self.screen.lock().unwrap();
                (p.screen().alternate_screen(), p.screen().hide_cursor())
            };
            if !alternate && !hidden {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "terminal not restored (alternate screen {alternate}, cursor hidden {hidden})"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "rankline did not exit; its screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn open_jump_to_big_event_read_skew_panel_and_quit() {
    let mut s = Session::start(&["fixtures/megatron_tp8.sqlite"], 160, 48);
    s.wait_ready();
    s.send("]");
    s.wait_for("instance 55/225");
    s.send("1");
    let screen = s.wait_for("start+ms");
    assert!(
        screen.contains("s20 · instance 55/225 · AllGather · late D2 +31.9 ms · cpu-late"),
        "{screen}"
    );
    assert!(screen.contains("LATE"), "{screen}");
    // The late rank has the short kernel; the others waited.
    let late_row = screen.lines().find(|l| l.contains("LATE")).unwrap();
    assert!(
        late_row.contains("D2") && late_row.contains("0.641"),
        "{late_row}"
    );
    s.send("q");
    let status = s.wait_exit();
    assert!(status.success(), "{status:?}");
}

#[test]
fn demo_profile_opens_without_arguments_at_80x24() {
    let mut s = Session::start(&[], 80, 24);
    s.wait_for("demo profile (embedded)");
    s.send("\x03");
    let status = s.wait_exit();
    assert!(status.success(), "{status:?}");
}

#[test]
fn goto_opens_with_the_instance_selected() {
    let mut s = Session::start(
        &["fixtures/megatron_tp8.sqlite", "--goto", "s20:100"],
        160,
        48,
    );
    s.wait_for("s20 · instance 100/225");
    s.send("q");
    assert!(s.wait_exit().success());
}

#[test]
fn baseline_loads_beside_the_capture_and_b_switches_to_it() {
    let mut s = Session::start(
        &[
            "fixtures/diff/no_big_skew.sqlite",
            "--baseline",
            "fixtures/megatron_tp8.sqlite",
        ],
        160,
        48,
    );
    // The after capture numbers its main NCCL stream 21, the baseline 20.
    s.wait_for("S21 NCCL");
    s.send("6");
    s.wait_for("s20→s21");
    s.send("B");
    let screen = s.wait_for("BASELINE");
    assert!(screen.contains("megatron_tp8.sqlite"), "{screen}");
    s.wait_for("S20 NCCL");
    s.send("q");
    assert!(s.wait_exit().success());
}

#[test]
fn a_baseline_that_cannot_be_read_is_said_and_exits_1() {
    let mut s = Session::start(
        &[
            "fixtures/megatron_tp8.sqlite",
            "--baseline",
            "no/such.sqlite",
        ],
        160,
        48,
    );
    s.wait_for("S20 NCCL");
    s.send("6");
    s.wait_for("The baseline could not be opened");
    s.send("q");
    assert_eq!(s.wait_exit().exit_code(), 1);
}

#[test]
fn a_bad_file_is_shown_and_the_others_still_open() {
    let mut s = Session::start(&["fixtures/megatron_tp8.sqlite", "no/such.sqlite"], 160, 48);
    // The title keeps the count; the status line names the file, also
    // after keys that say nothing else.
    let screen = s.wait_for("1 file(s) failed");
    let screen = if screen.contains("no/such.sqlite: no such file") {
        screen
    } else {
        s.wait_for("no/such.sqlite: no such file")
    };
    assert!(screen.contains("megatron_tp8.sqlite"), "{screen}");
    s.send("ww");
    s.wait_for("window 279");
    assert!(s.text().contains("no/such.sqlite: no such file"));
    s.send("q");
    // Exit 1 (an input failed), the failure said again once the terminal
    // is back.
    assert_eq!(s.wait_exit().exit_code(), 1);
    s.wait_for("rankline: no/such.sqlite: no such file");
    s.assert_restored();
}

#[test]
fn when_no_file_opens_the_timeline_leaves_and_says_why() {
    let mut s = Session::start(&["Cargo.toml", "no/such.sqlite"], 100, 24);
    // No key: it leaves by itself.
    assert_eq!(s.wait_exit().exit_code(), 1);
    let screen = s.wait_for("rankline: no/such.sqlite: no such file");
    assert!(
        screen.contains("rankline: Cargo.toml: not an SQLite database"),
        "{screen}"
    );
    s.assert_restored();
}

#[test]
fn signals_restore_the_terminal_and_exit_128_plus_the_signal() {
    for (name, code) in [
        ("TERM", 143),
        ("HUP", 129),
        ("QUIT", 131),
        ("INT", 130),
        ("USR1", 138),
        ("USR2", 140),
        ("ALRM", 142),
        ("PIPE", 141),
    ] {
        let mut s = Session::start(&["fixtures/megatron_tp8.sqlite"], 120, 30);
        s.wait_for("S20 NCCL");
        let pid = s.child.process_id().expect("pid").to_string();
        let sent = std::process::Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .expect("run kill");
        assert!(sent.success());
        let status = s.wait_exit();
        assert_eq!(status.exit_code(), code, "SIG{name}: {status:?}");
        s.assert_restored();
    }
}

/// A cache entry cut short under the timeline (made at a fixed point from
/// inside, right after it was checked): one line, exit 1, the terminal
/// back as it was, never SIGBUS with the screen left raw.
#[test]
fn an_entry_cut_short_under_the_timeline_restores_the_terminal() {
    let cache = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-tmp/pty-cut-short");
    let _ = std::fs::remove_dir_all(cache);
    let args = ["fixtures/megatron_tp8.sqlite", "--cache-dir", cache];
    // The entry is made by `index`, whose write is done when it exits: a
    // timeline quit at its first frame may come before its write begins
    // (the write follows the analyses), leaving no entry to cut.
    let index = std::process::Command::new(env!("CARGO_BIN_EXE_rankline"))
        .arg("index")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run rankline index");
    assert!(index.status.success(), "{index:?}");
    let cut = [("RANKLINE_TEST_CUT_ENTRY_AFTER_OPEN", "1")];
    let mut s = Session::start_with(&args, &cut, 120, 30);
    assert_eq!(s.wait_exit().exit_code(), 1);
    s.wait_for("cache entry cut short while in use");
    let raw = String::from_utf8_lossy(&s.raw.lock().unwrap()).into_owned();
    assert!(raw.contains("\x1b[?1049h"), "the screen was taken first");
    s.assert_restored();
    wait_mouse(&s, false);
}

/// `q` while the cache entry is written (held there from inside) says the
/// write is being finished; a second `q` quits at once, and the half-done
/// temp file is removed.
#[test]
fn a_quit_during_the_cache_write_says_so_and_a_second_quits_without_it() {
    let cache = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/test-tmp/pty-quit-writing"
    );
    let _ = std::fs::remove_dir_all(cache);
    std::fs::create_dir_all(cache).unwrap();
    let fifo = format!("{cache}/held");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let args = ["fixtures/megatron_tp8.sqlite", "--cache-dir", cache];
    let hold = [("RANKLINE_TEST_HOLD_CACHE_WRITE", fifo.as_str())];
    let mut s = Session::start_with(&args, &hold, 160, 48);
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(std::fs::File::open(&fifo).unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "writing\n");
    let temps = || {
        std::fs::read_dir(cache)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count()
    };
    assert_eq!(temps(), 1, "the entry is being written");
    s.send("q");
    s.wait_for("finishing the cache entry, then quitting");
    assert!(s.child.try_wait().unwrap().is_none(), "still running");
    s.send("q");
    assert!(s.wait_exit().success());
    s.assert_restored();
    assert_eq!(temps(), 0, "the half-written entry is removed");
}

#[test]
fn a_file_given_twice_is_opened_once_and_said_so() {
    let mut s = Session::start(
        &[
            "fixtures/megatron_tp8.sqlite",
            "./fixtures/megatron_tp8.sqlite",
        ],
        160,
        48,
    );
    // Listed with the load messages; the newest is in the status line.
    s.wait_for("same file as fixtures/megatron_tp8.sqlite, read once");
    s.send("q");
    assert_eq!(s.wait_exit().exit_code(), 0);
    s.wait_for(
        "rankline: ./fixtures/megatron_tp8.sqlite: same file as fixtures/megatron_tp8.sqlite, read once",
    );
    s.assert_restored();
}

/// The first screen names the worst big event; history keys as terminals
/// send them (Backspace is DEL, alt-Left/Right are `CSI 1;3 D/C`) retrace
/// the jumps.
#[test]
fn first_screen_and_jump_history_keys_from_a_real_terminal() {
    let mut s = Session::start(&["fixtures/megatron_tp8.sqlite"], 160, 48);
    s.wait_for("4 big-skew events, worst s20:145 late D4 +46.6 ms — press b");
    s.send("]");
    s.wait_for("instance 55/225");
    s.send("J");
    s.wait_for("cuLaunchKernelEx · T4103");
    s.send("\x7f");
    s.wait_for("instance 55/225");
    s.send("\x1b[1;3C");
    s.wait_for("cuLaunchKernelEx · T4103");
    s.send("\x1b[1;3D");
    s.wait_for("instance 55/225");
    s.send("q");
    assert!(s.wait_exit().success());
}
/// The terminal's mouse reporting as the screen parser saw it.
fn mouse_mode(s: &Session) -> vt100::MouseProtocolMode {
    s.screen.lock().unwrap().screen().mouse_protocol_mode()
}

/// Waits until mouse reporting is on (`on`) or off (at most 10 s).
fn wait_mouse(s: &Session, on: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while (mouse_mode(s) != vt100::MouseProtocolMode::None) != on {
        assert!(Instant::now() < deadline, "mouse capture never became {on}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_mouse_is_captured_while_running_and_released_on_exit() {
    let mut s = Session::start(
        &["fixtures/megatron_tp8.sqlite", "--goto", "s20:55"],
        80,
        24,
    );
    s.wait_for("s20 · instance 55/225");
    assert_ne!(mouse_mode(&s), vt100::MouseProtocolMode::None);
    // The launch panel alone at 80×24 shows its last fact.
    s.send("2");
    s.wait_for("after the first peer's");
    // The wheel over the timeline zooms (SGR: button 64 = wheel up).
    let before = s.text();
    s.send("\x1b[<64;50;5M");
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.text() == before {
        assert!(Instant::now() < deadline, "the wheel changed nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    // `m` releases it for text selection, and again takes it.
    s.send("m");
    wait_mouse(&s, false);
    s.send("m");
    wait_mouse(&s, true);
    s.send("q");
    assert!(s.wait_exit().success());
    s.assert_restored();
    assert_eq!(mouse_mode(&s), vt100::MouseProtocolMode::None);
}

#[test]
fn no_mouse_leaves_the_mouse_to_the_terminal() {
    let mut s = Session::start(&["fixtures/megatron_tp8.sqlite", "--no-mouse"], 120, 30);
    s.wait_ready();
    assert_eq!(mouse_mode(&s), vt100::MouseProtocolMode::None);
    s.send("q");
    assert!(s.wait_exit().success());
}

#[test]
fn a_signal_releases_the_mouse() {
    let mut s = Session::start(&["fixtures/megatron_tp8.sqlite"], 120, 30);
    s.wait_for("S20 NCCL");
    assert_ne!(mouse_mode(&s), vt100::MouseProtocolMode::None);
    let pid = s.child.process_id().expect("pid").to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(s.wait_exit().exit_code(), 143);
    s.assert_restored();
    assert_eq!(mouse_mode(&s), vt100::MouseProtocolMode::None);
}

#[test]
fn y_puts_the_goto_reference_on_the_clipboard_with_osc_52() {
    let mut s = Session::start(&["fixtures/megatron_tp8.sqlite"], 160, 48);
    s.wait_ready();
    s.send("]");
    s.wait_for("instance 55/225");
    s.send("y");
    // Said once the sequence has gone out (the loop writes it first).
    s.wait_for("copied the --goto reference s20:55");
    // base64("s20:55"), worked out by hand.
    let want: &[u8] = b"\x1b]52;c;czIwOjU1\x07";
    let raw = s.raw.lock().unwrap().clone();
    assert!(
        raw.windows(want.len()).any(|w| w == want),
        "no OSC 52 sequence for s20:55 in the output"
    );
    s.send("q");
    assert!(s.wait_exit().success());
}

/// `E` writes the selected instance's trace under $XDG_STATE_HOME, says
/// where, and puts nothing beside the input.
#[test]
fn e_exports_under_the_state_directory_and_says_where() {
    let state = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/test-tmp/pty-export-state"
    );
    let _ = std::fs::remove_dir_all(state);
    let listing = || {
        let mut v: Vec<_> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = listing();
    let env = [("XDG_STATE_HOME", state)];
    let mut s = Session::start_with(
        &["fixtures/megatron_tp8.sqlite", "--no-cache"],
        &env,
        160,
        48,
    );
    s.wait_ready();
    s.send("]");
    s.wait_for("instance 55/225");
    s.send("E");
    s.wait_for("exported /");
    s.send("q");
    assert!(s.wait_exit().success());
    let dir = std::path::Path::new(state).join("rankline/exports");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0].starts_with("megatron_tp8-s20-55-") && files[0].ends_with("Z.json.gz"),
        "{files:?}"
    );
    assert_eq!(listing(), before, "nothing new beside the input");
}

/// A FIFO as the capture's bookmarks file: `'` says it is not a regular
/// file, and `q` quits with the terminal restored (opening it blocked the
/// loop: `q`, Ctrl-C and SIGTERM did nothing, the screen stayed).
#[test]
fn a_fifo_as_the_bookmarks_file_leaves_q_working() {
    let state = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/test-tmp/pty-bookmarks-fifo"
    );
    let _ = std::fs::remove_dir_all(state);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rankline"))
        .args(["report", "bookmarks", "--format", "json", "--no-cache"])
        .arg("fixtures/megatron_tp8.sqlite")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XDG_STATE_HOME", state)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let file = std::path::PathBuf::from(v["file"].as_str().unwrap());
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    common::nodes::mkfifo(&file);
    let env = [("XDG_STATE_HOME", state)];
    let mut s = Session::start_with(
        &["fixtures/megatron_tp8.sqlite", "--no-cache"],
        &env,
        200,
        48,
    );
    s.wait_ready();
    s.send("'");
    s.wait_for("not a regular file");
    s.send("q");
    assert!(s.wait_exit().success());
    s.assert_restored();
}
