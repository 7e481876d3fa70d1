//! OS runtime calls, CPU samples, the capture's bounds and GPU activity
//! still running when the capture stopped, checked against SQL run here on
//! the exports themselves (real ones from ../shared/real-profiles, read in
//! place, and small synthetic ones).

mod common;
use common::*;
use rankline::profile::{CacheDir, LoadPlan, Need, Profile, Sym};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SINGLE_KERNEL: &str = "nsys2025_5_single_kernel_osrt.sqlite";
const CUTLASS: &str = "nsys2023_2_cutlass_osrt.sqlite";

fn load_with(path: &Path, plan: &LoadPlan) -> Profile {
    let out = rankline::profile::load(
        &rankline::profile::files(&[path.to_path_buf()]),
        plan,
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    out.profile
}

fn load(path: &Path) -> Profile {
    load_with(path, &LoadPlan::default())
}

fn sql(path: &Path) -> Connection {
    rankline::profile::open_readonly(path).expect("open")
}

/// (pid, tid) of a globalTid.
fn pid_tid(g: i64) -> (u32, u32) {
    (((g >> 24) & 0xFF_FFFF) as u32, (g & 0xFF_FFFF) as u32)
}

/// (pid, tid) of a thread of the profile.
fn thread_key(p: &Profile, t: u32) -> (u32, u32) {
    let th = &p.threads[t as usize];
    (p.processes[th.process as usize].pid, th.tid)
}

fn name(p: &Profile, s: Sym) -> String {
    p.strings.get(s).to_string()
}

/// One OS runtime call: (start, end, name).
type Call = (i64, i64, String);

/// Per thread: (count, first call, last call), in (start, rowid) order,
/// of the calls (eventClass 27: nsys's osrt_sum leaves its markers out)
/// whose times can be right.
fn osrt_by_sql(c: &Connection) -> BTreeMap<(u32, u32), (usize, Call, Call)> {
    let mut st = c
        .prepare(&format!(
            "SELECT o.globalTid, o.start, o.end, coalesce(s.value, '')
             FROM OSRT_API o LEFT JOIN StringIds s ON s.id = o.nameId
             WHERE o.globalTid IS NOT NULL AND o.eventClass = 27 AND {}
             ORDER BY o.globalTid, o.start, o.rowid",
            can_be_right(c, "o.start", "o.end")
        ))
        .unwrap();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get(3)?),
            ))
        })
        .unwrap();
    let mut out: BTreeMap<(u32, u32), (usize, Call, Call)> = BTreeMap::new();
    for row in rows {
        let (g, call): (i64, Call) = row.unwrap();
        out.entry(pid_tid(g))
            .and_modify(|e| {
                e.0 += 1;
                e.2 = call.clone();
            })
            .or_insert((1, call.clone(), call));
    }
    out
}

fn osrt_by_model(p: &Profile) -> BTreeMap<(u32, u32), (usize, Call, Call)> {
    let mut out = BTreeMap::new();
    for (t, rows) in p.osrt_by_thread.iter().enumerate() {
        if rows.is_empty() {
            continue;
        }
        let call = |r: usize| (p.osrt.start(r), p.osrt.end(r), name(p, p.osrt.name(r)));
        assert!(rows.clone().all(|r| p.osrt.thread(r) == t as u32));
        assert!(p.osrt.starts(rows.clone()).is_sorted());
        out.insert(
            thread_key(p, t as u32),
            (rows.len(), call(rows.start), call(rows.end - 1)),
        );
    }
    out
}

/// Every sample whose time can be right as (pid, tid, time, leaf
/// symbol), sorted.
fn samples_by_sql(c: &Connection) -> Vec<(u32, u32, i64, String)> {
    let mut st = c
        .prepare(&format!(
            "SELECT e.globalTid, e.start, coalesce((
                 SELECT group_concat(v, '|') FROM (
                     SELECT coalesce(s.value, '') AS v
                     FROM SAMPLING_CALLCHAINS f
                     LEFT JOIN StringIds s ON s.id = f.symbol
                     WHERE f.id = e.id
                       AND coalesce(f.kernelMode, 0) = 0
                       AND coalesce(f.originalIP, 0) >= 0
                     ORDER BY f.stackDepth LIMIT 8)), '')
             FROM COMPOSITE_EVENTS e
             WHERE e.globalTid IS NOT NULL AND {}",
            can_be_right(c, "e.start", "e.start")
        ))
        .unwrap();
    let mut v: Vec<(u32, u32, i64, String)> = st
        .query_map([], |r| {
            let (pid, tid) = pid_tid(r.get(0)?);
            Ok((pid, tid, r.get(1)?, r.get(2)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    v.sort();
    v
}

fn samples_by_model(p: &Profile) -> Vec<(u32, u32, i64, String)> {
    let mut v = Vec::new();
    for (t, rows) in p.samples_by_thread.iter().enumerate() {
        assert!(p.samples.starts(rows.clone()).is_sorted());
        for r in rows.clone() {
            assert_eq!(p.samples.thread(r), t as u32);
            let (pid, tid) = thread_key(p, t as u32);
            let frames: Vec<String> = p.samples.frames(r).map(|f| name(p, f)).collect();
            v.push((pid, tid, p.samples.start(r), frames.join("|")));
        }
    }
    v.sort();
    v
}

/// One value of `q`, `None` when it has none or its table is missing.
fn one(c: &Connection, q: &str) -> Option<i64> {
    c.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
        .ok()
        .flatten()
}

/// The first start and last end of the events whose times can be right,
/// over the tables rankline loads.
fn event_bounds_by_sql(c: &Connection) -> (i64, i64) {
    let mut lo = i64::MAX;
    let mut hi = i64::MIN;
    for (t, end) in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", "end"),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", "end"),
        ("CUPTI_ACTIVITY_KIND_MEMSET", "end"),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", "end"),
        ("OSRT_API", "end"),
        ("COMPOSITE_EVENTS", "start"),
    ] {
        let right = can_be_right(c, "start", end);
        if let Some(v) = one(c, &format!("SELECT min(start) FROM {t} WHERE {right}")) {
            lo = lo.min(v);
        }
        if let Some(v) = one(c, &format!("SELECT max({end}) FROM {t} WHERE {right}")) {
            hi = hi.max(v);
        }
    }
    (lo, hi)
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn os_runtime_calls_equal_sql_per_thread() {
    for f in [SINGLE_KERNEL, CUTLASS] {
        let path = real_profiles().join(f);
        let p = load(&path);
        let c = sql(&path);
        let count = |right: &str| {
            let q = format!(
                "SELECT count(*) FROM OSRT_API WHERE globalTid IS NOT NULL AND eventClass = 27 AND {right}"
            );
            one(&c, &q).unwrap() as usize
        };
        let total = count(&can_be_right(&c, "start", "end"));
        assert!(total > 0, "{f}");
        assert_eq!(p.osrt.len(), total, "{f}");
        // the others are counted, left out
        let left_out = p.files[0].suspect_rows.os_runtime_calls.total();
        assert_eq!(left_out as usize, count("1") - total, "{f}");
        assert_eq!(osrt_by_model(&p), osrt_by_sql(&c), "{f}");
        assert_eq!(p.osrt_by_thread.len(), p.threads.len(), "{f}");
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn cpu_samples_and_their_innermost_user_frames_equal_sql() {
    for f in [SINGLE_KERNEL, CUTLASS] {
        let path = real_profiles().join(f);
        let p = load(&path);
        let c = sql(&path);
        let want = samples_by_sql(&c);
        assert!(!want.is_empty(), "{f}");
        assert_eq!(p.samples.len(), want.len(), "{f}");
        let all = one(
            &c,
            "SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid IS NOT NULL",
        );
        let left_out = p.files[0].suspect_rows.cpu_samples.total();
        assert_eq!(left_out as i64, all.unwrap() - want.len() as i64, "{f}");
        let got = samples_by_model(&p);
        // A few with call stacks spelled out, then all of them.
        let stacked: Vec<usize> = (0..want.len()).filter(|&k| !want[k].3.is_empty()).collect();
        let n = stacked.len();
        for k in [stacked[0], stacked[n / 2], stacked[n - 1]] {
            assert_eq!(got[k], want[k], "{f}: sample {k}");
            assert!(!got[k].3.is_empty(), "{f}: sample {k} has no leaf");
        }
        assert!(
            got.iter().any(|g| g.3.contains('|')),
            "{f}: frames above the leaf"
        );
        assert_eq!(got, want, "{f}");
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn capture_bounds_are_the_window_widened_to_the_events() {
    for (f, window_on_the_files_clock) in [(CUTLASS, true), (SINGLE_KERNEL, false)] {
        let path = real_profiles().join(f);
        let p = load(&path);
        let c = sql(&path);
        let (lo, hi) = event_bounds_by_sql(&c);
        let start = one(&c, "SELECT startTime FROM ANALYSIS_DETAILS").unwrap();
        let stop = one(&c, "SELECT stopTime FROM ANALYSIS_DETAILS").unwrap();
        // The 2025.5 export's window lies seconds after every event (it is
        // on another clock): only the events bound that capture.
        assert_eq!(start <= hi && lo <= stop, window_on_the_files_clock, "{f}");
        let want = if window_on_the_files_clock {
            (start.min(lo), stop.max(hi))
        } else {
            (lo, hi)
        };
        let file = &p.files[0];
        assert_eq!(
            (file.capture_start_ns, file.capture_end_ns),
            (Some(want.0), Some(want.1)),
            "{f}"
        );
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn os_runtime_calls_and_samples_come_back_from_the_cache() {
    let path = real_profiles().join(CUTLASS);
    let plan = LoadPlan::cached(Some(&CacheDir {
        dir: temp_dir("osrt_samples_cache"),
        cap_bytes: rankline::profile::cache::DEFAULT_CAP,
    }));
    let fresh = load_with(&path, &plan);
    let cached = load_with(&path, &plan);
    assert_eq!(osrt_by_model(&cached), osrt_by_model(&fresh));
    assert_eq!(samples_by_model(&cached), samples_by_model(&fresh));
    assert_eq!(
        cached.files[0].capture_end_ns,
        fresh.files[0].capture_end_ns
    );
    assert_eq!(
        cached.files[0].capture_start_ns,
        fresh.files[0].capture_start_ns
    );
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn several_files_number_their_calls_and_samples_in_file_order() {
    let a = real_profiles().join(SINGLE_KERNEL);
    let b = real_profiles().join(CUTLASS);
    let (pa, pb) = (load(&a), load(&b));
    let out = rankline::profile::load(
        &rankline::profile::files(&[a, b]),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let p = out.profile;
    assert_eq!(p.osrt.len(), pa.osrt.len() + pb.osrt.len());
    assert_eq!(p.samples.len(), pa.samples.len() + pb.samples.len());
    assert_eq!(p.osrt_by_thread.len(), p.threads.len());
    // The second file's rows follow the first's, on its own threads.
    let first = pa.osrt.len();
    assert_eq!(p.osrt.start(first), pb.osrt.start(0));
    assert_eq!(p.thread_file(p.osrt.thread(first)), 1);
    assert_eq!(name(&p, p.osrt.name(first)), name(&pb, pb.osrt.name(0)));
    let first = pa.samples.len();
    assert_eq!(p.thread_file(p.samples.thread(first)), 1);
    assert_eq!(
        name(&p, p.samples.leaf(first)),
        name(&pb, pb.samples.leaf(0))
    );
    for (t, rows) in p.osrt_by_thread.iter().enumerate() {
        assert!(rows.clone().all(|r| p.osrt.thread(r) == t as u32));
    }
}

/// A small export: kernels and OS runtime calls some of which the capture
/// stopped before they ended (`end` NULL), and the capture window when
/// given. Columns as nsys 2025.5 declares them, `end` left nullable.
fn unfinished_export(dir: &Path, window: Option<(i64, i64)>) -> PathBuf {
    let path = dir.join("unfinished.sqlite");
    let c = Connection::open(&path).unwrap();
    c.execute_batch(
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL,
           startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER,
           deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
           streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
           demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
           registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
           gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
           blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
           dynamicSharedMemory INTEGER NOT NULL, graphNodeId INTEGER);
         CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER, eventClass INTEGER NOT NULL,
           globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
           nestingLevel INTEGER, callchainId INTEGER NOT NULL);
         INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'allreduce'), (3, 'poll'), (4, 'read');
         -- pid 100: stream 7 runs gemm, then allreduce until the capture stops;
         -- stream 8 one gemm.
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
           (300, NULL, 0, 1, NULL, 7, 3, 1677721600, 2, 2, NULL, 32, 1,1,1, 128,1,1, 0, 0, NULL),
           (100, 200, 0, 1, NULL, 7, 1, 1677721600, 1, 1, NULL, 32, 1,1,1, 128,1,1, 0, 0, NULL),
           (50, 400, 0, 1, NULL, 8, 2, 1677721600, 1, 1, NULL, 32, 1,1,1, 128,1,1, 0, 0, NULL);
         -- thread 101 of pid 100: a read, then a poll never returning; a row
         -- without a thread is skipped.
         INSERT INTO OSRT_API VALUES
           (600, NULL, 27, 1677721701, 3, 0, 0, 0),
           (20, 80, 27, 1677721701, 4, 0, 0, 0),
           (30, 40, 27, NULL, 4, 0, 0, 0);",
    )
    .unwrap();
    if let Some((a, b)) = window {
        c.execute(
            "INSERT INTO ANALYSIS_DETAILS VALUES (0, ?2 - ?1, ?1, ?2)",
            (a, b),
        )
        .unwrap();
    }
    path
}

#[test]
fn gpu_activity_the_capture_stopped_is_kept_and_ends_at_the_capture_end() {
    let dir = temp_dir("osrt_samples_unfinished");
    let path = unfinished_export(&dir, Some((0, 1000)));
    let p = load(&path);
    let file = &p.files[0];
    assert_eq!(
        (file.capture_start_ns, file.capture_end_ns),
        (Some(0), Some(1000))
    );
    assert_eq!(p.gpu.len(), 3);
    let unfinished: Vec<usize> = p.gpu.unfinished().collect();
    assert_eq!(unfinished.len(), 1);
    let r = unfinished[0];
    assert_eq!((p.gpu.start(r), p.gpu.end(r)), (300, 1000));
    assert_eq!(name(&p, p.gpu.name(r)), "allreduce");
    assert!(p.gpu.is_unfinished(r));
    assert_eq!((0..3).filter(|&r| p.gpu.is_unfinished(r)).count(), 1);
    // Its lane stays sorted, the unfinished kernel last.
    let lane = p.gpu.lane(r) as usize;
    let rows = p.lanes[lane].rows.clone();
    assert_eq!(p.gpu.starts(rows.clone()), &[100, 300]);
    assert_eq!(p.gpu.ends(rows), &[200, 1000]);
    // The open OS runtime call ends there too; the row without a thread
    // is not kept.
    assert_eq!(p.osrt.len(), 2);
    assert_eq!((p.osrt.start(1), p.osrt.end(1)), (600, 1000));
    assert_eq!(name(&p, p.osrt.name(1)), "poll");
    assert_eq!((p.osrt.start(0), p.osrt.end(0)), (20, 80));
    assert_eq!(thread_key(&p, p.osrt.thread(0)), (100, 101));
    assert!(p.samples.is_empty());
}

#[test]
fn without_a_window_the_capture_ends_at_the_last_event() {
    let dir = temp_dir("osrt_samples_no_window");
    let path = unfinished_export(&dir, None);
    let p = load(&path);
    let file = &p.files[0];
    // The open poll started at 600: the last instant any row gives.
    assert_eq!(
        (file.capture_start_ns, file.capture_end_ns),
        (Some(20), Some(600))
    );
    let r = p.gpu.unfinished().next().unwrap();
    assert_eq!((p.gpu.start(r), p.gpu.end(r)), (300, 600));
    assert_eq!((p.osrt.start(1), p.osrt.end(1)), (600, 600));
}

#[test]
fn unfinished_rows_come_back_from_the_cache() {
    let dir = temp_dir("osrt_samples_unfinished_cache");
    let path = unfinished_export(&dir, Some((0, 1000)));
    let (fresh, cached) = fresh_then_cached(&path, dir.join("cache"));
    let rows = |p: &Profile| p.gpu.unfinished().collect::<Vec<_>>();
    assert_eq!(rows(&cached), rows(&fresh));
    assert_eq!(cached.files[0].capture_end_ns, Some(1000));
    assert_eq!(cached.osrt.end(1), 1000);
}

#[test]
fn a_gpu_only_read_keeps_unfinished_kernels_and_reads_no_os_runtime_calls() {
    let dir = temp_dir("osrt_samples_gpu_only");
    let path = unfinished_export(&dir, Some((0, 1000)));
    let plan = LoadPlan {
        need: Need::Gpu,
        ..LoadPlan::default()
    };
    let p = load_with(&path, &plan);
    assert!(p.osrt.is_empty());
    let r = p.gpu.unfinished().next().unwrap();
    assert_eq!(p.gpu.end(r), 1000);
    let o = rankline(&["report", "all", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn an_os_runtime_table_without_its_name_column_is_an_error_naming_the_file() {
    let dir = temp_dir("osrt_samples_bad_osrt");
    let path = dir.join("bad.sqlite");
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER, globalTid INTEGER);
             INSERT INTO OSRT_API VALUES (1, 2, 1677721701);",
        )
        .unwrap();
    let out = rankline::profile::load(
        &rankline::profile::files(std::slice::from_ref(&path)),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert_eq!(out.errors.len(), 1);
    let e = &out.errors[0];
    assert_eq!(e.path, path.display().to_string());
    assert!(
        e.problem.contains("OSRT_API lacks its column nameId"),
        "{e}"
    );
}

/// Callchain rows in no order the exports use (depths shuffled, samples
/// interleaved, kernel-mode frames inside): each sample still gets its
/// user-mode frames innermost first, at most 8, and a sample without a
/// call stack none.
#[test]
fn a_samples_frames_are_put_in_depth_order_and_kernel_frames_left_out() {
    let dir = temp_dir("osrt_samples_callchains");
    let path = unfinished_export(&dir, Some((0, 1000)));
    let c = Connection::open(&path).unwrap();
    c.execute_batch(
        "CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL,
           cpu INTEGER, threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);
         CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL,
           module INTEGER NOT NULL, kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER,
           specialEntry INTEGER, originalIP INTEGER, unwindMethod INTEGER,
           stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
         INSERT INTO StringIds VALUES (10, 'syscall'), (11, 'leaf'), (12, 'loop'),
           (13, 'main'), (14, 'f4'), (15, 'f5'), (16, 'f6'), (17, 'f7'), (18, 'f8'),
           (19, 'f9');
         INSERT INTO COMPOSITE_EVENTS VALUES (1, 100, 0, 1, 1677721701, 1),
           (2, 200, 0, 1, 1677721701, 1), (3, 300, 0, 1, 1677721701, 1);",
    )
    .unwrap();
    // sample 1: kernel frame at depth 0, then leaf, loop, main (rows
    // shuffled, sample 2's rows between them); sample 2: eleven user
    // frames deep; sample 3: no call stack.
    let mut rows: Vec<(i64, i64, i64, i64)> = vec![(1, 13, 0, 3), (1, 10, 1, 0)];
    rows.extend((0..11).rev().map(|d| (2, 11 + d.min(8), 0, d)));
    rows.extend([(1, 12, 0, 2), (1, 11, 0, 1)]);
    for (id, sym, kernel, depth) in rows {
        c.execute(
            "INSERT INTO SAMPLING_CALLCHAINS VALUES (?1, ?2, 0, ?3, 0, 0, NULL, 0, 7, ?4)",
            (id, sym, kernel, depth),
        )
        .unwrap();
    }
    drop(c);
    let p = load(&path);
    let frames = |r: usize| -> Vec<String> { p.samples.frames(r).map(|f| name(&p, f)).collect() };
    assert_eq!(p.samples.len(), 3);
    assert_eq!(frames(0), ["leaf", "loop", "main"]);
    assert_eq!(name(&p, p.samples.leaf(0)), "leaf");
    assert_eq!(
        frames(1),
        ["leaf", "loop", "main", "f4", "f5", "f6", "f7", "f8"]
    );
    assert!(frames(2).is_empty());
    assert_eq!(p.samples.leaf(2), Sym::default());
}
