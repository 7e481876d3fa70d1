//! Damaged, changing and unusual exports: a damaged file is one line and
//! exit 1, never an abort; a file changed while it is read is refused, never
//! a SIGBUS; a write-ahead log beside the input is reported, never created;
//! schema objects rankline does not read do not matter.

mod common;
use common::*;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// Kernels per device of `report summary --format json` (exit 0 asserted).
fn kernels(f: &Path) -> (u64, serde_json::Value) {
    let o = rankline(&["report", "summary", "--format", "json", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let n = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kernels"].as_u64().unwrap())
        .sum();
    (n, v)
}

fn fixture_kernels(fixture: &str) -> u64 {
    let c = Connection::open_with_flags(
        root().join("fixtures").join(fixture),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    c.query_row("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", [], |r| {
        r.get::<_, i64>(0)
    })
    .unwrap() as u64
}

#[test]
fn one_damaged_byte_is_one_line_and_exit_1_not_an_abort() {
    let f = copy_fixture("damaged_cell_pointer", "two_node_b.sqlite");
    let mut bytes = std::fs::read(&f).unwrap();
    // A cell pointer of the runtime table: its last row reads as rowid
    // 14 446 364 032, which sized a 32 GiB reservation.
    assert_eq!(bytes[90123], 0xBE, "the fixture changed; find another byte");
    bytes[90123] = 0xEB;
    std::fs::write(&f, &bytes).unwrap();
    let o = rankline(&["report", "all", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_one_line_error(&o, f.to_str().unwrap(), "corrupted");
}

#[test]
fn a_huge_rowid_in_a_valid_file_loads_without_reserving_for_it() {
    let f = copy_fixture("huge_rowid", "two_node_b.sqlite");
    Connection::open(&f)
        .unwrap()
        .execute_batch(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 4294967296
             WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);",
        )
        .unwrap();
    // The file is valid: every kernel is there, the big rowid included.
    assert_eq!(kernels(&f).0, fixture_kernels("two_node_b.sqlite"));
}

/// Loads `f` through the library, truncating it to half its size when the
/// loader reports the first row of `at`; returns the load errors.
fn load_truncating_at(f: &Path, at: rankline::profile::LoadStage) -> Vec<String> {
    let len = std::fs::metadata(f).unwrap().len();
    let mut done = false;
    let sources = rankline::profile::files(&[f.to_path_buf()]);
    let plan = rankline::profile::LoadPlan::default();
    let out = rankline::profile::load(&sources, &plan, &mut |_, stage, rows| {
        if stage == at && rows == 1 && !done {
            done = true;
            std::fs::OpenOptions::new()
                .write(true)
                .open(f)
                .unwrap()
                .set_len(len / 2)
                .unwrap();
        }
    });
    assert!(done, "the loader never reported the first row of {at:?}");
    out.errors.iter().map(|e| e.to_string()).collect()
}

#[test]
fn a_file_truncated_while_read_is_an_error_not_sigbus() {
    use rankline::profile::LoadStage;
    // Strings are read on this thread: with enough of them their pages lie
    // past the cut, and reading on after the first row is what faulted
    // (SIGBUS) when the input was memory-mapped. Kernels are read on
    // another thread, which may be anywhere in the table at the cut.
    for (n, at) in [LoadStage::Strings, LoadStage::Kernels]
        .into_iter()
        .enumerate()
    {
        let f = copy_fixture(&format!("truncated_while_read_{n}"), "megatron_tp8.sqlite");
        Connection::open(&f)
            .unwrap()
            .execute_batch(
                "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20000)
                 INSERT INTO StringIds SELECT 1000000 + i, printf('unused string %d', i) FROM k;",
            )
            .unwrap();
        let len = std::fs::metadata(&f).unwrap().len();
        let errors = load_truncating_at(&f, at);
        let want = format!(
            "{}: changed while it was read (size {len} -> {} bytes)",
            f.display(),
            len / 2
        );
        assert_eq!(errors, [want], "truncated at {at:?}");
    }
}

/// A WAL-mode copy of a fixture with rows only in its `-wal`, as copied off
/// a machine where nsys or another tool was still writing it: the database
/// and its log, no `-shm`.
fn export_with_wal(test: &str, extra_kernels: u32) -> (PathBuf, PathBuf) {
    let src = copy_fixture(&format!("{test}_writer"), "two_node_b.sqlite");
    let scratch = src.parent().unwrap().to_path_buf();
    let c = Connection::open(&src).unwrap();
    c.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    c.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT ?1",
        [extra_kernels],
    )
    .unwrap();
    let d = temp_dir(test);
    let f = d.join("job.sqlite");
    std::fs::copy(&src, &f).unwrap();
    std::fs::copy(
        scratch.join("two_node_b.sqlite-wal"),
        d.join("job.sqlite-wal"),
    )
    .unwrap();
    drop(c);
    (d, f)
}

fn listing(d: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                m.len(),
                m.modified().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_wal_beside_the_input_is_reported_and_never_touched() {
    let (d, f) = export_with_wal("wal_beside", 5);
    let before = listing(&d);
    assert!(before.iter().any(|e| e.0 == "job.sqlite-wal" && e.1 > 0));
    let wal = format!("{}-wal", f.display());
    // Twice: the second run comes from the cache and must still say it.
    for _ in 0..2 {
        let (n, v) = kernels(&f);
        assert_eq!(
            n,
            fixture_kernels("two_node_b.sqlite"),
            "the WAL is not read"
        );
        let warnings = v["warnings"].to_string();
        assert!(warnings.contains(&format!("{wal} beside")), "{warnings}");
        assert!(
            warnings.contains("PRAGMA wal_checkpoint(TRUNCATE)"),
            "{warnings}"
        );
        let text = rankline(&["report", "all", f.to_str().unwrap()]);
        assert!(stdout(&text).contains(&wal), "{}", stdout(&text));
    }
    assert_eq!(
        listing(&d),
        before,
        "files appeared or changed beside the input"
    );
}

#[test]
fn the_wal_warnings_command_folds_the_log_in_on_a_copy() {
    if std::process::Command::new("sqlite3")
        .arg("-version")
        .output()
        .is_err()
    {
        eprintln!("NOTE: no sqlite3 shell; the fold command was not run");
        return;
    }
    let (d, f) = export_with_wal("wal_fold", 5);
    // A name of its own in /tmp, where the command puts the copy.
    let name = format!("rankline-wal-fold-{}.sqlite", std::process::id());
    let g = d.join(&name);
    std::fs::rename(&f, &g).unwrap();
    std::fs::rename(d.join("job.sqlite-wal"), d.join(format!("{name}-wal"))).unwrap();
    let (_, v) = kernels(&g);
    let warning = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.contains("-wal beside"))
        .expect("a WAL warning")
        .to_string();
    let command = warning
        .split("on a copy: ")
        .nth(1)
        .and_then(|s| s.split(", then open ").next())
        .expect("a command");
    let o = std::process::Command::new("sh")
        .args(["-c", command])
        .output()
        .unwrap();
    assert!(o.status.success(), "{command}: {}", stderr(&o));
    let copy = Path::new("/tmp").join(&name);
    let (n, v) = kernels(&copy);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
    }
    assert_eq!(n, fixture_kernels("two_node_b.sqlite") + 5);
    assert!(
        !v["warnings"].to_string().contains("-wal"),
        "{}",
        v["warnings"]
    );
}

#[test]
fn schema_objects_rankline_does_not_read_do_not_matter() {
    let want = fixture_kernels("two_node_b.sqlite");
    let quoted = "CREATE TABLE \"my\"\"notes\" (a INTEGER);";
    let broken_view = "CREATE TABLE scratch (a INTEGER);
         CREATE VIEW scratch_view AS SELECT a FROM scratch;
         DROP TABLE scratch;";
    for (n, sql) in [quoted, broken_view].into_iter().enumerate() {
        let f = copy_fixture(&format!("schema_objects_{n}"), "two_node_b.sqlite");
        Connection::open(&f).unwrap().execute_batch(sql).unwrap();
        assert_eq!(kernels(&f).0, want, "{sql}");
    }
    // A table whose name is not UTF-8 (rusqlite takes only &str: raw API).
    let f = copy_fixture("schema_objects_non_utf8", "two_node_b.sqlite");
    let c = Connection::open(&f).unwrap();
    let sql = b"CREATE TABLE \"t\xff\xfe\" (a INTEGER);\0";
    // SAFETY: a valid handle and a NUL-terminated statement.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_exec(
            c.handle(),
            sql.as_ptr().cast(),
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, rusqlite::ffi::SQLITE_OK);
    drop(c);
    assert_eq!(kernels(&f).0, want, "non-UTF-8 table name");
}

#[test]
fn bench_writes_nothing_beside_a_wal_input() {
    if std::process::Command::new("sqlite3")
        .arg("-version")
        .output()
        .is_err()
    {
        eprintln!("NOTE: no sqlite3 shell, which bench needs; see bench's unit test");
        return;
    }
    let (d, f) = export_with_wal("wal_bench", 5);
    let before = listing(&d);
    let o = rankline(&["bench", "--rounds", "2", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listing(&d), before, "bench wrote beside its input");
    // The shell and the first open alternate, and the median is the figure.
    let out = stdout(&o);
    let rounds: Vec<&str> = out.lines().filter(|l| l.contains("  round ")).collect();
    assert_eq!(rounds.len(), 2, "{out}");
    assert!(
        rounds
            .iter()
            .all(|l| l.contains("sqlite3 shell") && l.contains("first open"))
    );
    assert!(out.contains("median of 2 rounds"), "{out}");
    let o = rankline(&["bench", "--rounds", "0", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn an_export_too_large_for_ulimit_v_is_refused_not_killed() {
    // 600 000 kernels: about 57 MiB estimated, in a 64 MiB address space
    // that rankline itself needs only about 20 MiB of to start.
    let d = temp_dir("too_large_for_ulimit");
    let f = d.join("big.sqlite");
    Connection::open(&f)
        .unwrap()
        .execute_batch(
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO StringIds VALUES (1, 'gemm');
             CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
               deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
               correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
               shortName INTEGER NOT NULL);
             WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 600000)
             INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
               SELECT i * 1000, i * 1000 + 500, 0, 1, 7, i, 16777216, 1, 1 FROM k;",
        )
        .unwrap();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 65536 && exec "$0" report summary --no-cache "$1""#)
        .arg(env!("CARGO_BIN_EXE_rankline"))
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_one_line_error(
        &o,
        f.to_str().unwrap(),
        "too large for this process's memory limit: its 600000 rows need about",
    );
    assert!(
        stderr(&o).contains("but ulimit -v leaves"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_timeline_title_names_the_wal_and_the_command() {
    use rankline::tui::data::{self, LoadMsg};
    let (_d, f) = export_with_wal("wal_title", 5);
    let mut app =
        rankline::tui::state::App::new(rankline::tui::keymap::Keymap::default_keymap(), true);
    let mut msgs = Vec::new();
    let source = rankline::profile::Source::File(f.clone());
    data::load(&[source], None, &Default::default(), &mut |m| msgs.push(m));
    for m in msgs {
        if !matches!(m, LoadMsg::Progress { .. }) {
            app.on_load(m);
        }
    }
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(500, 24)).unwrap();
    term.draw(|fr| rankline::tui::ui::draw(fr, &mut app))
        .unwrap();
    let buf = term.backend().buffer();
    let title: String = (0..buf.area.width)
        .map(|x| buf[(x, 0)].symbol().to_string())
        .collect();
    let wal = format!("{}-wal", f.display());
    assert!(
        title.contains(&format!("⚠ {wal} not read; fold it in on a copy: cp -- ")),
        "{title}"
    );
    assert!(
        title.contains("'PRAGMA wal_checkpoint(TRUNCATE)'"),
        "{title}"
    );
    // The whole warning, too long for any title, is in the messages `!`
    // lists, and the newest in the status line.
    let warning = rankline::profile::wal_warning(&f, std::path::Path::new(&wal));
    let listed: Vec<&str> = app
        .session()
        .messages
        .all()
        .iter()
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(listed, [warning.as_str()]);
    assert_eq!(
        app.session().messages.newest().unwrap().level,
        rankline::tui::messages::Level::Warn
    );
}
