//! Thread scheduling events, CUDA synchronization and event records, and
//! the samples' top frames, checked against SQL run here on the exports
//! themselves (real ones from ../shared/real-profiles, read in place, and
//! small synthetic ones).

mod common;
use common::*;
use rankline::profile::{CacheDir, LoadPlan, Need, Profile};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The real exports with `SCHED_EVENTS`, and its rows in each.
const SCHED_FILES: [(&str, usize); 4] = [
    ("nsys2023_1_tensorrt_nvtx_domain.sqlite", 628),
    ("nsys2023_2_cutlass_osrt.sqlite", 310),
    ("nsys2023_3_wsl_no_kernels.sqlite", 2262),
    ("nsys2025_5_single_kernel_osrt.sqlite", 1232),
];

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

/// One value of `q`, `None` when it has none or its table is missing.
fn one(c: &Connection, q: &str) -> Option<i64> {
    c.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
        .ok()
        .flatten()
}

/// One scheduling event: (time, cpu, scheduled in).
type Sched = (i64, u16, bool);

/// Per thread, its events in (start, rowid) order.
fn sched_by_sql(c: &Connection) -> BTreeMap<(u32, u32), Vec<Sched>> {
    let mut st = c
        .prepare(
            "SELECT globalTid, start, cpu, isSchedIn FROM SCHED_EVENTS
             WHERE globalTid IS NOT NULL ORDER BY globalTid, start, rowid",
        )
        .unwrap();
    let mut out: BTreeMap<(u32, u32), Vec<Sched>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (g, start, cpu, sched_in) = row.unwrap();
        out.entry(pid_tid(g))
            .or_default()
            .push((start, cpu as u16, sched_in != 0));
    }
    out
}

fn sched_by_model(p: &Profile) -> BTreeMap<(u32, u32), Vec<Sched>> {
    let mut out = BTreeMap::new();
    for (t, rows) in p.sched_by_thread.iter().enumerate() {
        if rows.is_empty() {
            continue;
        }
        assert!(p.sched.starts(rows.clone()).is_sorted());
        let events: Vec<Sched> = rows
            .clone()
            .map(|r| {
                assert_eq!(p.sched.thread(r), t as u32);
                (p.sched.start(r), p.sched.cpu(r), p.sched.sched_in(r))
            })
            .collect();
        out.insert(thread_key(p, t as u32), events);
    }
    out
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn scheduling_events_equal_sql_per_thread() {
    for (f, rows) in SCHED_FILES {
        let path = real_profiles().join(f);
        let p = load(&path);
        let c = sql(&path);
        assert_eq!(
            one(&c, "SELECT count(*) FROM SCHED_EVENTS"),
            Some(rows as i64),
            "{f}"
        );
        let want = sched_by_sql(&c);
        let total: usize = want.values().map(Vec::len).sum();
        assert!(total > 0, "{f}");
        assert_eq!(p.sched.len(), total, "{f}");
        assert_eq!(p.sched_by_thread.len(), p.threads.len(), "{f}");
        let got = sched_by_model(&p);
        // Counts, first and last events, then every in/out sequence.
        let ends = |m: &BTreeMap<(u32, u32), Vec<Sched>>| {
            m.iter()
                .map(|(k, v)| (*k, v.len(), v[0], v[v.len() - 1]))
                .collect::<Vec<_>>()
        };
        assert_eq!(ends(&got), ends(&want), "{f}");
        assert_eq!(got, want, "{f}");
        // Both directions occur: the sequence is not all one value.
        assert!(want.values().flatten().any(|e| e.2), "{f}");
        assert!(want.values().flatten().any(|e| !e.2), "{f}");
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn a_partial_read_reads_no_scheduling_events() {
    let path = real_profiles().join(SCHED_FILES[1].0);
    for need in [Need::Gpu, Need::Counts] {
        let p = load_with(
            &path,
            &LoadPlan {
                need,
                ..LoadPlan::default()
            },
        );
        assert!(p.sched.is_empty(), "{need:?}");
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn scheduling_events_come_back_from_the_cache() {
    let path = real_profiles().join(SCHED_FILES[3].0);
    let plan = LoadPlan::cached(Some(&CacheDir {
        dir: temp_dir("sched_syncs_cache"),
        cap_bytes: rankline::profile::cache::DEFAULT_CAP,
    }));
    let fresh = load_with(&path, &plan);
    let out = rankline::profile::load(
        &rankline::profile::files(std::slice::from_ref(&path)),
        &plan,
        &mut |_, _, _| {},
    );
    assert!(
        out.errors.is_empty() && out.notes.is_empty(),
        "{:?}",
        out.notes
    );
    assert!(matches!(
        out.cache_use[..],
        [rankline::profile::CacheUse::Opened(_)]
    ));
    let cached = out.profile;
    assert!(!cached.sched.is_empty());
    assert_eq!(sched_by_model(&cached), sched_by_model(&fresh));
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn several_files_number_their_scheduling_events_in_file_order() {
    let a = real_profiles().join(SCHED_FILES[0].0);
    let b = real_profiles().join(SCHED_FILES[3].0);
    let (pa, pb) = (load(&a), load(&b));
    let out = rankline::profile::load(
        &rankline::profile::files(&[a, b]),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let p = out.profile;
    assert_eq!(p.sched.len(), pa.sched.len() + pb.sched.len());
    assert_eq!(p.sched_by_thread.len(), p.threads.len());
    let first = pa.sched.len();
    assert_eq!(p.sched.start(first), pb.sched.start(0));
    assert_eq!(p.thread_file(p.sched.thread(first)), 1);
    assert_eq!(
        thread_key(&p, p.sched.thread(first)),
        thread_key(&pb, pb.sched.thread(0))
    );
    for (t, rows) in p.sched_by_thread.iter().enumerate() {
        assert!(rows.clone().all(|r| p.sched.thread(r) == t as u32));
    }
}

/// A small export of the tables of this file, columns as nsys 2025.5
/// declares them, with `rest` run after the DDL.
fn small_export(dir: &Path, rest: &str) -> PathBuf {
    let path = dir.join("small.sqlite");
    let c = Connection::open(&path).unwrap();
    c.execute_batch(&format!(
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE SCHED_EVENTS (start INTEGER NOT NULL, cpu INTEGER NOT NULL,
           isSchedIn INTEGER NOT NULL, globalTid INTEGER, threadState INTEGER,
           threadBlock INTEGER);
         {rest}"
    ))
    .unwrap();
    path
}

#[test]
fn scheduling_events_keep_file_order_at_one_instant_and_saturate_the_cpu() {
    let dir = temp_dir("sched_syncs_small_sched");
    // Thread 101 of pid 100: out and in at one instant (file order kept),
    // an event at an earlier time after them; a CPU id past u16, a
    // negative one; a row without a thread (skipped).
    let path = small_export(
        &dir,
        "INSERT INTO SCHED_EVENTS VALUES
           (50, 3, 0, 1677721701, NULL, NULL),
           (50, 4, 1, 1677721701, NULL, NULL),
           (10, 70000, 7, 1677721701, NULL, NULL),
           (60, -2, 0, 1677721701, NULL, NULL),
           (20, 1, 1, NULL, NULL, NULL),
           (30, 2, 1, 1677721702, NULL, NULL);",
    );
    let p = load(&path);
    assert_eq!(p.sched.len(), 5);
    let got = sched_by_model(&p);
    assert_eq!(
        got[&(100, 101)],
        [
            (10, u16::MAX, true),
            (50, 3, false),
            (50, 4, true),
            (60, 0, false)
        ]
    );
    assert_eq!(got[&(100, 102)], [(30, 2, true)]);
}
