//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod graph_job;
pub mod instances;
pub mod nodes;
pub mod split;
pub mod trace;
pub mod tui;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the real `rankline` binary.
pub fn rankline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rankline"))
        .args(args)
        // Tests never touch the user's cache, bookmarks or exports.
        .env("XDG_CACHE_HOME", test_cache_home())
        .env("XDG_STATE_HOME", root().join("target/test-state-home"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run rankline")
}

/// `report summary` (JSON, no cache) of `input`: the run, and the paths
/// of the files it loaded, in its order (none when it printed no JSON).
pub fn summary_paths(input: &Path) -> (Output, Vec<String>) {
    let o = rankline(&[
        "report",
        "summary",
        "--no-cache",
        "--format",
        "json",
        input.to_str().expect("a UTF-8 test path"),
    ]);
    let paths = serde_json::from_str::<serde_json::Value>(&stdout(&o))
        .ok()
        .and_then(|v| v["files"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|f| f["path"].as_str().expect("a file's path").to_string())
        .collect();
    (o, paths)
}

/// A copy of the 8-GPU fixture in a fresh test directory, and a cache
/// directory beside it (not yet made): (input, cache).
pub fn megatron_and_cache(test: &str) -> (PathBuf, PathBuf) {
    let d = temp_dir(test);
    let f = d.join("input").join("megatron.sqlite");
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::copy(root().join("fixtures/megatron_tp8.sqlite"), &f).unwrap();
    (f, d.join("cache"))
}

/// The name in `cache` of a temp file that a killed rankline of this host
/// left (its pid is above pid_max, so never a live process).
pub fn dead_temp_of_this_host(cache: &Path) -> PathBuf {
    let host = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    cache.join(format!(
        ".rankline-0123456789abcdef.rlcache.4294967294@{}.tmp",
        host.trim()
    ))
}

/// Runs rankline, which must succeed, and returns its stdout.
pub fn text(args: &[&str]) -> String {
    let o = rankline(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// Runs rankline, which must succeed, and parses its stdout as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&text(args)).expect("json")
}

/// `args` followed by the paths of `files`.
pub fn args_on(args: &[&str], files: &[PathBuf]) -> Vec<String> {
    let paths = files.iter().map(|p| p.display().to_string());
    args.iter().map(|a| a.to_string()).chain(paths).collect()
}

/// [`text`] of `args` on `files`.
pub fn text_on(args: &[&str], files: &[PathBuf]) -> String {
    let all = args_on(args, files);
    text(&all.iter().map(String::as_str).collect::<Vec<_>>())
}

/// [`json`] of `args` on `files`.
pub fn json_on(args: &[&str], files: &[PathBuf]) -> serde_json::Value {
    serde_json::from_str(&text_on(args, files)).expect("json")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A cache home under `target/`, shared by the tests' runs.
pub fn test_cache_home() -> PathBuf {
    root().join("target/test-cache-home")
}

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/real-profiles`. Tests that read it carry
/// `#[cfg_attr(no_real_profiles, ignore = …)]` (set by build.rs when it is
/// absent outside CI), so reaching here without it is a failure.
pub fn real_profiles() -> PathBuf {
    let dir = root().join("../shared/real-profiles");
    assert!(
        dir.is_dir(),
        "../shared/real-profiles is missing beside the checkout (CI must have it)"
    );
    dir
}

/// Every `.sqlite` in a directory, sorted.
pub fn sqlite_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sqlite"))
        .collect();
    v.sort();
    v
}

/// A fresh empty directory under `target/`, named for the test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = root().join("target/test-tmp").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// A copy of fixture `fixture` in a fresh directory named for `test`
/// (the fixtures themselves are never modified).
pub fn copy_fixture(test: &str, fixture: &str) -> PathBuf {
    let f = temp_dir(test).join(fixture);
    std::fs::copy(root().join("fixtures").join(fixture), &f).expect("copy fixture");
    f
}

/// Asserts the run failed with exactly one clear line naming `path`.
pub fn assert_one_line_error(o: &Output, path: &str, problem: &str) {
    let err = stderr(o);
    assert!(
        !o.status.success(),
        "expected failure for {path}, got success"
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "panic: {err}"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {err}");
    assert!(lines[0].contains(path), "line does not name {path}: {err}");
    assert!(
        lines[0].contains(problem),
        "line does not say '{problem}': {err}"
    );
}

/// The parts of a device's span in `report overlap`.
pub const OVERLAP_PARTS_MS: [&str; 5] = [
    "compute_only_ms",
    "nccl_only_ms",
    "overlap_ms",
    "copy_only_ms",
    "idle_ms",
];

/// Compute-only, NCCL-only, overlap, copy-only and idle split the span.
pub fn assert_parts_sum_to_span(d: &serde_json::Value) {
    let parts: f64 = OVERLAP_PARTS_MS
        .iter()
        .map(|k| d[k].as_f64().unwrap())
        .sum();
    assert!((parts - d["span_ms"].as_f64().unwrap()).abs() < 1e-6, "{d}");
    for k in ["copy_only_ms", "idle_ms"] {
        assert!(d[k].as_f64().unwrap() >= 0.0, "{k}: {d}");
    }
}

/// `path` read fresh, writing its cache entry under `cache`, then
/// reopened from that entry with no error or note: (fresh, cached).
pub fn fresh_then_cached(
    path: &Path,
    cache: PathBuf,
) -> (rankline::profile::Profile, rankline::profile::Profile) {
    use rankline::profile::{CacheDir, CacheUse, LoadPlan};
    let plan = LoadPlan::cached(Some(&CacheDir {
        dir: cache,
        cap_bytes: rankline::profile::cache::DEFAULT_CAP,
    }));
    let load = || {
        rankline::profile::load(
            &rankline::profile::files(std::slice::from_ref(&path.to_path_buf())),
            &plan,
            &mut |_, _, _| {},
        )
    };
    let fresh = load();
    assert!(fresh.errors.is_empty(), "{:?}", fresh.errors);
    let out = load();
    assert!(
        out.errors.is_empty() && out.notes.is_empty(),
        "{:?}",
        out.notes
    );
    assert!(matches!(out.cache_use[..], [CacheUse::Opened(_)]));
    (fresh.profile, out.profile)
}

/// The rows plain SQL gives on a file under the root (`fixtures/…`),
/// opened read-only.
pub fn sql_rows<T>(
    file: &str,
    sql: &str,
    row: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Vec<T> {
    let c = rusqlite::Connection::open_with_flags(
        root().join(file),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = c.prepare(sql).unwrap();
    stmt.query_map([], row)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// First kernel start and last kernel end of an export, by SQL (its own
/// capture clock): where a test places a `--window`.
pub fn kernel_span(db: &rusqlite::Connection) -> (i64, i64) {
    db.query_row(
        "SELECT min(start), max(\"end\") FROM CUPTI_ACTIVITY_KIND_KERNEL",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// ns as the seconds `--window` takes, every ns kept.
pub fn window_seconds(ns: i64) -> String {
    format!("{:.9}", ns as f64 / 1e9)
}

/// `report nvtx-tree` JSON's ranges in pre-order (a parent before its
/// children), nesting dropped.
pub fn nvtx_ranges(v: &serde_json::Value) -> Vec<serde_json::Value> {
    fn walk(v: &[serde_json::Value], out: &mut Vec<serde_json::Value>) {
        for r in v {
            out.push(r.clone());
            walk(r["children"].as_array().map_or(&[], Vec::as_slice), out);
        }
    }
    let mut out = Vec::new();
    walk(v["ranges"].as_array().map_or(&[], Vec::as_slice), &mut out);
    out
}

/// Every line the README shows after `cmd` up to `until` (blank lines and
/// a lone `…` or `...`, which mark cuts, aside) is a line of `real`, in
/// order. Returns the README from `until` on.
pub fn assert_readme_shows(cmd: &str, until: &str, real: &str) -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find(cmd).expect("README example") + cmd.len();
    let end = start + readme[start..].find(until).unwrap();
    let shown: Vec<&str> = readme[start..end]
        .lines()
        .filter(|l| !l.is_empty() && !matches!(l.trim(), "…" | "..."))
        .collect();
    assert!(shown.len() >= 3, "{shown:?}");
    let mut lines = real.lines();
    for l in shown {
        assert!(
            lines.any(|r| r == l),
            "README line not in the output (in order): {l:?}"
        );
    }
    readme[end..].to_string()
}

/// The names of the bookmark markers (`cat: bookmark`) of the trace at `path`.
pub fn bookmark_markers(path: &Path) -> Vec<String> {
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("the trace")).expect("JSON");
    trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["cat"] == "bookmark")
        .map(|e| e["name"].as_str().expect("a name").to_string())
        .collect()
}

/// SQL true of a row whose times `start` and `end` (one column twice for
/// an instant) can be right in the export `c`, as rankline judges them
/// (src/profile/load/suspect.rs): both nonzero and within ±2⁶¹ ns, the end
/// not before the start, and, when the export's GPU rows keep to its
/// `ANALYSIS_DETAILS` window as recorded (no more than 1 % wholly
/// outside), inside the session: from its start (`systemClockNs` when
/// recorded, else 0; never after `startTime`, which is when analysis
/// began) to `stopTime`. (The window shifted onto another clock is not
/// looked for: no export the tests read this way needs it.)
pub fn can_be_right(c: &rusqlite::Connection, start: &str, end: &str) -> String {
    let lim = 1i64 << 61;
    let mut sql = format!(
        "({start} <> 0 AND {end} <> 0 AND {start} BETWEEN -{lim} AND {lim}
          AND {end} BETWEEN -{lim} AND {lim} AND {end} >= {start}"
    );
    if let Some((a, b)) = gpu_window(c) {
        let session: i64 = c
            .query_row(
                "SELECT systemClockNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
                [],
                |r| r.get::<_, Option<i64>>(0),
            )
            .ok()
            .flatten()
            .unwrap_or(0);
        let a = session.min(a);
        sql += &format!(" AND {end} - {start} <= {b} - {a} AND {end} >= {a} AND {start} <= {b}");
    }
    sql + ")"
}

/// The `ANALYSIS_DETAILS` window of `c` when its GPU rows keep to it (see
/// [`can_be_right`]).
fn gpu_window(c: &rusqlite::Connection) -> Option<(i64, i64)> {
    let (a, b): (i64, i64) = c
        .query_row(
            "SELECT startTime, stopTime FROM ANALYSIS_DETAILS LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok()?;
    let (mut rows, mut outside) = (0i64, 0i64);
    for t in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ] {
        let q = format!("SELECT count(*), total(end < {a} OR start > {b}) FROM {t}");
        if let Ok((n, out)) =
            c.query_row(&q, [], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))
        {
            rows += n;
            outside += out as i64;
        }
    }
    (a < b && rows > 0 && outside * 100 <= rows).then_some((a, b))
}

/// `report clock --format json --no-cache --align ALIGN` of `files`.
pub fn clock_json(align: &str, files: &[PathBuf]) -> serde_json::Value {
    let args = [
        "report",
        "clock",
        "--format",
        "json",
        "--no-cache",
        "--align",
        align,
    ];
    json_on(&args, files)
}
