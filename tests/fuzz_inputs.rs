//! Bounded, deterministic fuzzing of damaged exports: byte- and page-level
//! mutations of the small fixtures, and rows given times that cannot be
//! right, each opened by the real binary in a child process (an abort must
//! not take the harness down).
//!
//! Every run must end with exit 0, or exit 1 and one line naming the file:
//! no panic, no signal, no hang, and the input unchanged with nothing written
//! beside it. `RANKLINE_FUZZ_ITERS=N cargo test --test fuzz_inputs` is the
//! maintainers' long run (the default keeps `cargo test` under a minute).
//! Damaged exports also meet hostile outputs and bookmarks files: the
//! input as `--out`, a FIFO, a symbolic link at a CSV table's name, a FIFO,
//! a huge file or /dev/zero where the bookmarks are kept; and NCCL payloads
//! damaged (schema entries moved, records cut, rows copied or lost) give no
//! impossible size or bandwidth.

mod common;

use common::{root, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Fixtures small enough (≤ 100 KB) to mutate thousands of times.
const SEEDS: &[&str] = &[
    "fixtures/stream_ids_differ.sqlite",
    "fixtures/two_node_a.sqlite",
    "fixtures/two_node_b.sqlite",
];
const DEFAULT_ITERS: usize = 800;
const PAGE: usize = 4096;
/// Far above a normal run (tens of ms): only a hang gets near it.
const HANG_AFTER: Duration = Duration::from_secs(60);
/// Children running at once (the machine has 2 cores).
const PARALLEL: usize = 2;

/// splitmix64: small, seedable, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of `bytes`, chosen by the seed; returns what it did.
fn mutate(bytes: &mut Vec<u8>, rng: &mut Rng) -> String {
    let pages = bytes.len() / PAGE;
    // Once truncated short, only byte-level mutations apply.
    let kinds = if pages >= 2 { 7 } else { 3 };
    match rng.below(kinds) {
        0 => {
            let at = rng.below(bytes.len());
            let v = rng.next() as u8;
            bytes[at] = v;
            format!("byte {at} = {v:#04x}")
        }
        1 => {
            let n = 1 + rng.below(16);
            let mut said = Vec::new();
            for _ in 0..n {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
                said.push(at.to_string());
            }
            format!("bit flips at {}", said.join(","))
        }
        2 => {
            // Integers in cells and headers: big values are the interesting ones.
            let at = rng.below(bytes.len().saturating_sub(8));
            let n = (1 + rng.below(8)).min(bytes.len() - at);
            let v: [u8; 8] = match rng.below(3) {
                0 => [0xFF; 8],
                1 => [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
                _ => [0x80, 0, 0, 0, 0, 0, 0, 0],
            };
            bytes[at..at + n].copy_from_slice(&v[..n]);
            format!("{n} bytes at {at} = {:02x?}", &v[..n])
        }
        3 => {
            let p = 1 + rng.below(pages - 1);
            bytes[p * PAGE..(p + 1) * PAGE].fill(0);
            format!("page {p} zeroed")
        }
        4 => {
            let (a, b) = (rng.below(pages), rng.below(pages));
            let src = bytes[a * PAGE..(a + 1) * PAGE].to_vec();
            bytes[b * PAGE..(b + 1) * PAGE].copy_from_slice(&src);
            format!("page {a} copied over page {b}")
        }
        5 => {
            let keep = 100 + rng.below(bytes.len() - 100);
            bytes.truncate(keep);
            format!("truncated to {keep} bytes")
        }
        _ => cell_pointer(bytes, rng),
    }
}

/// Points one cell of a B-tree page elsewhere in its page: the rows behind
/// it then decode from the wrong bytes (huge rowids, lengths and counts).
fn cell_pointer(bytes: &mut [u8], rng: &mut Rng) -> String {
    let pages = bytes.len() / PAGE;
    for _ in 0..16 {
        let p = 1 + rng.below(pages - 1);
        let at = p * PAGE;
        let header = match bytes[at] {
            0x0D | 0x0A => 8,
            0x05 | 0x02 => 12,
            _ => continue,
        };
        let cells = u16::from_be_bytes([bytes[at + 3], bytes[at + 4]]) as usize;
        if cells == 0 || at + header + 2 * cells > bytes.len() {
            continue;
        }
        let slot = at + header + 2 * rng.below(cells);
        let to = (header + 2 * cells + rng.below(PAGE - header - 2 * cells)) as u16;
        bytes[slot..slot + 2].copy_from_slice(&to.to_be_bytes());
        return format!("page {p} cell pointer at {slot} = {to}");
    }
    "no B-tree page found".to_string()
}

/// Mutations that once took rankline down, replayed on every run.
const KNOWN: &[(&str, usize, u8)] = &[
    // A cell pointer of the runtime table: a 32 GiB column reservation.
    ("fixtures/two_node_b.sqlite", 90123, 0xEB),
];

struct Run {
    what: String,
    /// The files read (a directory's, or both sides of a diff), each with
    /// its bytes before, and whether it was mutated (only those may fail).
    inputs: Vec<(PathBuf, Vec<u8>, bool)>,
    child: Child,
    started: Instant,
    /// An output refused (exit 2, one line naming `--out`) is the outcome.
    refused: bool,
    /// The mutated files' directories and how many entries each had.
    dirs: Vec<(PathBuf, usize)>,
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

fn start(what: String, input: PathBuf, bytes: Vec<u8>, cache: Option<&Path>) -> Run {
    let args = vec![
        "report".into(),
        "all".into(),
        "--format".into(),
        "json".into(),
        input.clone().into(),
    ];
    start_with(what, args, vec![(input, bytes, true)], cache)
}

fn start_with(
    what: String,
    args: Vec<std::ffi::OsString>,
    inputs: Vec<(PathBuf, Vec<u8>, bool)>,
    cache: Option<&Path>,
) -> Run {
    start_in(what, args, inputs, cache, None)
}

/// [`start_with`], with `state` as the state directory (bookmarks).
fn start_in(
    what: String,
    args: Vec<std::ffi::OsString>,
    inputs: Vec<(PathBuf, Vec<u8>, bool)>,
    cache: Option<&Path>,
    state: Option<&Path>,
) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rankline"));
    cmd.args(args);
    if let Some(state) = state {
        cmd.env("XDG_STATE_HOME", state);
    }
    match cache {
        Some(dir) => cmd.arg("--cache-dir").arg(dir),
        None => cmd.arg("--no-cache"),
    };
    let child = cmd
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rankline");
    let mut dirs: Vec<PathBuf> = inputs
        .iter()
        .filter(|i| i.2)
        .filter_map(|i| i.0.parent().map(Path::to_path_buf))
        .collect();
    dirs.dedup();
    let dirs = dirs
        .into_iter()
        .map(|d| {
            let n = entries(&d);
            (d, n)
        })
        .collect();
    Run {
        what,
        inputs,
        child,
        started: Instant::now(),
        refused: false,
        dirs,
    }
}

/// Waits for a run and returns what was wrong with it, if anything.
fn finish(mut run: Run) -> Option<String> {
    let status = loop {
        if let Some(s) = run.child.try_wait().expect("wait") {
            break s;
        }
        if run.started.elapsed() > HANG_AFTER {
            let _ = run.child.kill();
            let _ = run.child.wait();
            return Some(format!("{}: hung for {HANG_AFTER:?}", run.what));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut err = String::new();
    if let Some(mut s) = run.child.stderr.take() {
        use std::io::Read;
        let _ = s.read_to_string(&mut err);
    }
    // Each line names a mutated file, each such file at most once.
    let mutated: Vec<String> = run
        .inputs
        .iter()
        .filter(|i| i.2)
        .map(|i| i.0.display().to_string())
        .collect();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.contains("same content as"))
        .collect();
    let each_names_one = !lines.is_empty()
        && lines.len() <= mutated.len()
        && lines.iter().all(|l| {
            mutated
                .iter()
                .any(|m| l.contains(&format!("{m}:")) || l.contains(&format!("{m} ")))
        });
    let problem = match status.code() {
        None => Some(format!("killed by a signal ({status})")),
        Some(_) if err.contains("panicked") || err.contains("internal error") => {
            Some("panicked".to_string())
        }
        Some(0) if !run.refused => None,
        Some(1) if each_names_one && !run.refused => None,
        Some(2) if run.refused && lines.len() == 1 && lines[0].contains("--out") => None,
        Some(1) => Some("exit 1 without one line per failing file naming it".to_string()),
        Some(c) => Some(format!("exit {c}")),
    };
    let changed = run
        .inputs
        .iter()
        .any(|(p, before, _)| std::fs::read(p).ok().as_deref() != Some(&before[..]));
    let beside = run.dirs.iter().any(|(d, n)| entries(d) != *n);
    let problem = problem
        .or_else(|| changed.then(|| "the input changed".to_string()))
        .or_else(|| beside.then(|| "a file appeared beside the input".to_string()));
    problem.map(|p| format!("{}: {p}; stderr: {}", run.what, err.trim()))
}

#[test]
fn damaged_exports_end_cleanly() {
    let iters = std::env::var("RANKLINE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_ITERS);
    let base = temp_dir("fuzz_inputs");
    let cache = base.join("cache");
    std::fs::create_dir_all(&cache).expect("cache dir");
    let seeds: Vec<Vec<u8>> = SEEDS
        .iter()
        .map(|s| std::fs::read(root().join(s)).expect("read fixture"))
        .collect();
    let mut failures = Vec::new();
    for (k, &(seed, at, value)) in KNOWN.iter().enumerate() {
        let mut bytes = std::fs::read(root().join(seed)).expect("read fixture");
        bytes[at] = value;
        let dir = base.join(format!("known{k}"));
        std::fs::create_dir_all(&dir).expect("run dir");
        let input = dir.join("export.sqlite");
        std::fs::write(&input, &bytes).expect("write mutated export");
        let what = format!("known {seed} byte {at} = {value:#04x}");
        failures.extend(finish(start(what, input, bytes, None)));
    }
    let mut running: Vec<Run> = Vec::new();
    for i in 0..iters {
        let mut rng = Rng(0x5EED_0000 + i as u64);
        let which = i % SEEDS.len();
        let mut bytes = seeds[which].clone();
        let mut said = Vec::new();
        for _ in 0..1 + rng.below(3) {
            said.push(mutate(&mut bytes, &mut rng));
        }
        let what = format!("#{i} {} ({})", SEEDS[which], said.join("; "));
        let dir = base.join(format!("run{i}"));
        std::fs::create_dir_all(&dir).expect("run dir");
        // Every fourth run goes through the cache: written, then read back.
        let cached = i % 4 == 3;
        let input = dir.join("export.sqlite");
        std::fs::write(&input, &bytes).expect("write mutated export");
        if running.len() == PARALLEL {
            failures.extend(finish(running.remove(0)));
        }
        if cached {
            let first = start(what.clone(), input.clone(), bytes.clone(), Some(&cache));
            failures.extend(finish(first));
        }
        running.push(start(what, input, bytes, cached.then_some(cache.as_path())));
    }
    for run in running {
        failures.extend(finish(run));
    }
    failures.extend(directory_runs(&base, iters / 10));
    assert!(
        failures.is_empty(),
        "{} of {iters} damaged exports did not end cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// The job's files: one bad file among good ones is how one panic once
/// took down whole runs.
const JOB: &str = "fixtures/multinode";

/// `n` runs on a copy of [`JOB`] with one, two or all of its files
/// mutated (as a directory), and a mutated file against a fixture (`diff`).
fn directory_runs(base: &Path, n: usize) -> Vec<String> {
    let job = common::sqlite_files(&root().join(JOB));
    let seeds: Vec<Vec<u8>> = job
        .iter()
        .map(|f| std::fs::read(f).expect("read"))
        .collect();
    let mut failures = Vec::new();
    for i in 0..n {
        let mut rng = Rng(0xD1_0000 + i as u64);
        let dir = base.join(format!("dir{i}"));
        std::fs::create_dir_all(&dir).expect("run dir");
        let how_many = [1, 2, job.len()][i % 3];
        let first = rng.below(job.len());
        let mut inputs = Vec::new();
        let mut said = Vec::new();
        for (k, (file, seed)) in job.iter().zip(&seeds).enumerate() {
            let mutated = (k + job.len() - first) % job.len() < how_many;
            let mut bytes = seed.clone();
            if mutated {
                said.push(format!("{}: {}", k, mutate(&mut bytes, &mut rng)));
            }
            let path = dir.join(file.file_name().expect("name"));
            std::fs::write(&path, &bytes).expect("write");
            inputs.push((path, bytes, mutated));
        }
        let what = format!("dir #{i} {JOB} ({})", said.join("; "));
        let args = vec![
            "report".into(),
            "all".into(),
            "--format".into(),
            "json".into(),
            dir.clone().into(),
        ];
        failures.extend(finish(start_with(what, args, inputs.clone(), None)));
        // The first mutated file against its own fixture.
        let (bad, bytes, _) = inputs[first].clone();
        let good = job[first].clone();
        let good_bytes = seeds[first].clone();
        let args = vec!["diff".into(), good.clone().into(), bad.clone().into()];
        let what = format!("diff #{i} {} vs mutated", good.display());
        let both = vec![(good, good_bytes, false), (bad, bytes, true)];
        failures.extend(finish(start_with(what, args, both, None)));
    }
    failures
}

/// What rankline writes or reads beside a damaged input: the input as
/// `--out`, a FIFO as `--out`, a symbolic link to the input at a CSV
/// table's name; a FIFO, a 20 MiB file or a link to /dev/zero as the
/// capture's bookmarks file. Each run ends as [`finish`] wants (an `--out`
/// that is the input refused with exit 2), the input unchanged.
#[test]
fn hostile_outputs_and_bookmarks_end_cleanly() {
    let base = temp_dir("fuzz_outputs");
    let mut failures = Vec::new();
    let cases = 24;
    for i in 0..cases {
        let mut rng = Rng(0x0A7_0000 + i as u64);
        let which = i % SEEDS.len();
        let mut bytes = std::fs::read(root().join(SEEDS[which])).expect("read fixture");
        let said = if i % 4 == 0 {
            "intact".to_string()
        } else {
            mutate(&mut bytes, &mut rng)
        };
        let dir = base.join(format!("run{i}"));
        let out = base.join(format!("out{i}"));
        let state = base.join(format!("state{i}"));
        for d in [&dir, &out] {
            std::fs::create_dir_all(d).expect("run dir");
        }
        let input = dir.join("export.sqlite");
        std::fs::write(&input, &bytes).expect("write export");
        let inputs = vec![(input.clone(), bytes.clone(), true)];
        let arg = |p: &Path| std::ffi::OsString::from(p);
        let export_to = |to: &Path| -> Vec<std::ffi::OsString> {
            vec!["export".into(), "--out".into(), arg(to), arg(&input)]
        };
        let case = i % 6;
        let what = format!("output case {case} #{i} {} ({said})", SEEDS[which]);
        match case {
            0 => {
                let mut run = start_with(what, export_to(&input), inputs, None);
                run.refused = true;
                failures.extend(finish(run));
            }
            1 => {
                let fifo = out.join("pipe.json");
                common::nodes::mkfifo(&fifo);
                let (failed, _) = common::nodes::reading_fifo(&fifo, || {
                    finish(start_with(what.clone(), export_to(&fifo), inputs, None))
                });
                failures.extend(failed);
                let kind = std::fs::symlink_metadata(&fifo).map(|m| m.file_type());
                if !kind.is_ok_and(|k| std::os::unix::fs::FileTypeExt::is_fifo(&k)) {
                    failures.push(format!("{what}: the FIFO was replaced"));
                }
            }
            2 => {
                let link = out.join("skew.groups.csv");
                std::os::unix::fs::symlink(&input, &link).expect("symlink");
                let args = vec![
                    "report".into(),
                    "all".into(),
                    "--format".into(),
                    "csv".into(),
                    "--out-dir".into(),
                    arg(&out),
                    arg(&input),
                ];
                failures.extend(finish(start_with(what, args, inputs, None)));
            }
            _ => {
                let name = rankline::profile::bookmarks::file_name(std::slice::from_ref(&input))
                    .expect("a bookmarks file name");
                let file = state.join("rankline/bookmarks").join(name);
                std::fs::create_dir_all(file.parent().unwrap()).expect("state dir");
                match case {
                    3 => common::nodes::mkfifo(&file),
                    4 => std::fs::File::create(&file)
                        .and_then(|f| f.set_len(20 << 20))
                        .expect("a sparse file"),
                    _ => std::os::unix::fs::symlink("/dev/zero", &file).expect("symlink"),
                }
                let report = vec!["report".into(), "bookmarks".into(), arg(&input)];
                let trace = export_to(&out.join("t.json"));
                for args in [report, trace] {
                    let run = start_in(what.clone(), args, inputs.clone(), None, Some(&state));
                    failures.extend(finish(run));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} hostile outputs did not end cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// How a row's times are made impossible, as `SET` clauses: for calls
/// (two times) and for instants (one), and whether rankline can tell
/// without a capture window (far outside it and longer than it need one).
const BAD_TIMES: &[(&str, &str, bool)] = &[
    (
        "end = 9223372036854775807",
        "start = 9223372036854775807",
        true,
    ),
    (
        "start = -9223372036854775808",
        "start = -9223372036854775808",
        true,
    ),
    ("start = 0", "start = 0", true),
    ("end = start - 1", "start = 0", true),
    // just past the largest time a row may carry, and at it
    (
        "start = 2305843009213693953",
        "start = 2305843009213693953",
        true,
    ),
    (
        "start = 2305843009213693952, end = 2305843009213693952",
        "start = 2305843009213693952",
        false,
    ),
    ("start = -1, end = -1", "start = -1", false),
    (
        "start = start + 1000000000000000, end = end + 1000000000000000",
        "start = start + 1000000000000000",
        false,
    ),
    (
        "end = start + 1000000000000000",
        "start = start - 1000000000000000",
        false,
    ),
];

/// The tables whose rows get [`BAD_TIMES`], their key in
/// `suspect_events_by_table`, and whether a row has two times.
const TIMED_TABLES: [(&str, &str, bool); 3] = [
    ("OSRT_API", "os_runtime_calls", true),
    ("SCHED_EVENTS", "scheduling_events", false),
    ("COMPOSITE_EVENTS", "cpu_samples", false),
];

/// OS runtime, scheduling and sample rows of fixtures/why.sqlite given
/// impossible times (issue 41): one row, or a few of several tables, in
/// the file as it is and with a capture window recorded. Each run ends
/// with exit 0 and nothing on stderr, a summary's count-only read and a
/// full load (written to the cache, then read back) count alike, and each
/// row rankline can judge is counted in its table.
#[test]
fn rows_with_impossible_times_end_cleanly_and_are_counted() {
    let base = temp_dir("fuzz_rows");
    let cache = base.join("cache");
    let seed = root().join("fixtures/why.sqlite");
    let mut cases: Vec<Vec<(usize, usize)>> = Vec::new();
    for t in 0..TIMED_TABLES.len() {
        cases.extend((0..BAD_TIMES.len()).map(|b| vec![(t, b)]));
    }
    let mut rng = Rng(0x7155_0041);
    for _ in 0..8 {
        cases.push(
            (0..TIMED_TABLES.len())
                .map(|t| (t, rng.below(BAD_TIMES.len())))
                .collect(),
        );
    }
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        for window in [false, true] {
            let dir = base.join(format!("rows{i}{}", if window { "w" } else { "" }));
            std::fs::create_dir_all(&dir).expect("run dir");
            let input = dir.join("why.sqlite");
            std::fs::copy(&seed, &input).expect("copy fixture");
            let c = rusqlite::Connection::open(&input).expect("open copy");
            if window {
                c.execute_batch(
                    "CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL,
                       duration INTEGER NOT NULL, startTime INTEGER NOT NULL,
                       stopTime INTEGER NOT NULL);
                     INSERT INTO ANALYSIS_DETAILS VALUES (0, 1000000000, 4900000000, 5900000000);",
                )
                .expect("window");
            }
            let mut said = Vec::new();
            let mut want = std::collections::BTreeMap::new();
            for &(t, b) in case {
                let (table, key, calls) = TIMED_TABLES[t];
                let (call, instant, always) = BAD_TIMES[b];
                let rows: i64 = c
                    .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                    .expect("count");
                let row = 1 + rng.below(rows as usize) as i64;
                let set = if calls { call } else { instant };
                let q = format!(
                    "UPDATE {table} SET {set} WHERE rowid = (SELECT rowid FROM {table} LIMIT 1 OFFSET {})",
                    row - 1
                );
                c.execute(&q, []).expect("damage a row");
                said.push(format!("{table} row {row}: {set}"));
                *want.entry(key).or_insert(0u64) += u64::from(always || window);
            }
            drop(c);
            let what = format!(
                "rows #{i}{} ({})",
                if window { " with a window" } else { "" },
                said.join("; ")
            );
            let input = input.to_str().expect("utf-8 path");
            // Each run: exit 0, nothing on stderr, JSON on stdout.
            let run = |args: &[&str]| -> Result<serde_json::Value, String> {
                let o = common::rankline(args);
                let err = String::from_utf8_lossy(&o.stderr).into_owned();
                if !o.status.success() || !err.is_empty() {
                    return Err(format!("{}: {err}", o.status));
                }
                serde_json::from_slice(&o.stdout).map_err(|e| e.to_string())
            };
            let c = cache.to_str().expect("utf-8 path");
            let all = ["report", "all", "--format", "json", "--cache-dir", c, input];
            let runs = (
                run(&["report", "summary", "--format", "json", "--no-cache", input]),
                run(&all),
                run(&all),
            );
            let (counted, loaded, reread) = match runs {
                (Ok(a), Ok(b), Ok(c)) => (a, b, c),
                (a, b, c) => {
                    let why = [a.err(), b.err(), c.err()].into_iter().flatten();
                    failures.push(format!("{what}: {}", why.collect::<Vec<_>>().join("; ")));
                    continue;
                }
            };
            let file = &counted["files"][0];
            for (k, v) in [("full load", &loaded), ("cached load", &reread)] {
                if v["summary"]["files"][0] != *file {
                    failures.push(format!("{what}: the {k} counts otherwise"));
                }
            }
            for (key, n) in &want {
                let by = &file["suspect_events_by_table"][key];
                let got: u64 = by
                    .as_object()
                    .map_or(0, |o| o.values().filter_map(|x| x.as_u64()).sum());
                if got != *n {
                    failures.push(format!("{what}: {key} counts {got}, not {n}: {by}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs with impossible times went wrong:\n{}",
        failures.len(),
        2 * cases.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// One damage to NCCL's payloads in a copy of `fixtures/payloads.sqlite`,
/// as SQL: a schema entry moved (overlapping another, or past the payload
/// size), records cut short, payload rows copied, an NCCL range or its
/// payload lost, bytes of the payloads flipped.
fn payload_damage(rng: &mut Rng) -> String {
    let entry = rng.below(40);
    let at = rng.below(33);
    let cut = 1 + rng.below(40);
    let every = 1 + rng.below(4);
    match rng.below(7) {
        0 => format!(
            "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = {at}
             WHERE rowid = (SELECT rowid FROM NVTX_PAYLOAD_SCHEMA_ENTRIES LIMIT 1 OFFSET {entry})"
        ),
        1 => format!("UPDATE NVTX_PAYLOAD_SCHEMAS SET payloadSize = {at}"),
        2 => format!(
            "UPDATE NVTX_EVENTS SET binaryData = substr(binaryData, 1, max(0, length(binaryData) - {cut}))
             WHERE binaryData IS NOT NULL AND rowid % {every} = 0"
        ),
        3 => format!(
            "INSERT INTO NVTX_EVENTS SELECT * FROM NVTX_EVENTS
             WHERE binaryData IS NOT NULL AND rowid % {every} = 0"
        ),
        4 => format!(
            "DELETE FROM NVTX_EVENTS WHERE rowid = (SELECT rowid FROM NVTX_EVENTS
             WHERE binaryData IS NOT NULL LIMIT 1 OFFSET {entry})"
        ),
        5 => format!(
            "UPDATE NVTX_EVENTS SET binaryData = NULL WHERE rowid = (SELECT rowid FROM NVTX_EVENTS
             WHERE binaryData IS NOT NULL LIMIT 1 OFFSET {entry})"
        ),
        _ => format!(
            "UPDATE NVTX_EVENTS SET binaryData = CAST(substr(binaryData, 1, {at})
               || x'ff7f' || substr(binaryData, {at} + 3) AS BLOB)
             WHERE binaryData IS NOT NULL AND rowid % {every} = 0"
        ),
    }
}

/// Every figure in `v` named like a size or a bandwidth is a finite number
/// no payload can exceed, or null.
fn sizes_can_be_right(v: &serde_json::Value, at: &str, bad: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let named = k.contains("bytes") || k.ends_with("_gbps");
                if named
                    && let Some(n) = x.as_f64()
                    && (!n.is_finite() || n < 0.0 || n > (1u64 << 48) as f64 * 1024.0)
                {
                    bad.push(format!("{at}.{k} = {n}"));
                }
                sizes_can_be_right(x, &format!("{at}.{k}"), bad);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                sizes_can_be_right(x, &format!("{at}[{i}]"), bad);
            }
        }
        _ => {}
    }
}

/// Damaged payloads end cleanly and give no impossible figure: each run
/// (one to three damages) ends with exit 0, prints JSON, and every size
/// and bandwidth in it is finite and within what a payload can say.
#[test]
fn damaged_payloads_give_no_impossible_figure() {
    let runs = std::env::var("RANKLINE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(40, |n| n / 10);
    let base = temp_dir("fuzz_payloads");
    let mut failures = Vec::new();
    for i in 0..runs {
        let mut rng = Rng(0x9A71_0000 + i as u64);
        let f = base.join(format!("run{i}.sqlite"));
        std::fs::copy(root().join("fixtures/payloads.sqlite"), &f).unwrap();
        let c = rusqlite::Connection::open(&f).unwrap();
        let mut said = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let sql = payload_damage(&mut rng);
            c.execute_batch(&sql).unwrap();
            said.push(sql.split_whitespace().take(6).collect::<Vec<_>>().join(" "));
        }
        drop(c);
        let o = common::rankline(&[
            "report",
            "all",
            "--no-cache",
            "--format",
            "json",
            f.to_str().unwrap(),
        ]);
        let what = format!("payloads #{i} ({})", said.join("; "));
        if o.status.code() != Some(0) {
            failures.push(format!(
                "{what}: exit {:?}: {}",
                o.status,
                common::stderr(&o)
            ));
            continue;
        }
        match serde_json::from_slice::<serde_json::Value>(&o.stdout) {
            Ok(v) => {
                let mut bad = Vec::new();
                sizes_can_be_right(&v, "", &mut bad);
                if !bad.is_empty() {
                    failures.push(format!("{what}: {}", bad.join(", ")));
                }
            }
            Err(e) => failures.push(format!("{what}: not JSON: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} damaged payloads went wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&base);
}
