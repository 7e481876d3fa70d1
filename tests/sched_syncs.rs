//! Thread scheduling events, CUDA synchronization and event records, and
//! the samples' top frames, checked against SQL run here on the exports
//! themselves (real ones from ../shared/real-profiles, read in place, and
//! small synthetic ones).

mod common;
use common::*;
use rankline::profile::names::strip_api_version;
use rankline::profile::{LoadPlan, NONE, Need, Profile, Sym};
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

fn name(p: &Profile, s: Sym) -> String {
    p.strings.get(s).to_string()
}

/// The real exports with `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`.
const SYNC_FILES: [&str; 8] = [
    "nsys2022_1_dlprof_altered.sqlite",
    "nsys2023_1_tensorrt_nvtx_domain.sqlite",
    "nsys2023_2_cutlass_osrt.sqlite",
    "nsys2023_3_wsl_no_kernels.sqlite",
    "nsys2024_6_fuser_matmul.sqlite",
    "nsys2025_5_single_kernel_osrt.sqlite",
    "nsys2026_2gpu_h100_nvtx.sqlite",
    "nsys2026_2gpu_nccl_sendrecv.sqlite",
];

/// `EXISTS` a GPU row (kernel, copy, set) of `alias`'s process, context
/// and stream, over the GPU tables `c` has; `0` when it has none.
fn gpu_row_exists(c: &Connection, alias: &str) -> String {
    let has = |t: &str| one(c, &format!("SELECT count(*) FROM {t}")).is_some();
    let tables: Vec<String> = [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ]
    .into_iter()
    .filter(|t| has(t))
    .map(|t| {
        format!(
            "EXISTS (SELECT 1 FROM {t} g WHERE (g.globalPid >> 24) & 16777215 = ({alias}.globalPid >> 24) & 16777215
               AND g.contextId = {alias}.contextId AND g.streamId = {alias}.streamId)"
        )
    })
    .collect();
    if tables.is_empty() {
        "0".to_string()
    } else {
        tables.join(" OR ")
    }
}

/// The name of the runtime/driver call of `alias`'s process and
/// correlation id (`''` when none), asserting there is at most one.
fn call_name_sql(alias: &str) -> String {
    format!(
        "(SELECT coalesce(max(v.value), '') || CASE WHEN count(*) > 1 THEN ' (ambiguous)' ELSE '' END
          FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds v ON v.id = r.nameId
          WHERE r.correlationId = {alias}.correlationId
            AND (r.globalTid >> 24) & 16777215 = ({alias}.globalPid >> 24) & 16777215)"
    )
}

/// One sync record: (start, end, eventId, syncType, its call's name
/// without the `_v<N>` suffix, whether a GPU row ran on its stream).
type Sync = (i64, i64, u32, u8, String, bool);

/// Per pid, its sync records in (start, rowid) order.
fn syncs_by_sql(c: &Connection) -> BTreeMap<u32, Vec<Sync>> {
    let q = format!(
        "SELECT s.globalPid, s.start, s.end, s.eventId, s.syncType, {}, {}
         FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s WHERE s.globalPid IS NOT NULL AND {}
         ORDER BY (s.globalPid >> 24) & 16777215, s.start, s.rowid",
        call_name_sql("s"),
        gpu_row_exists(c, "s"),
        can_be_right(c, "s.start", "s.end")
    );
    let mut st = c.prepare(&q).unwrap();
    let mut out: BTreeMap<u32, Vec<Sync>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            let name: String = r.get(5)?;
            Ok((
                pid_tid(r.get(0)?).0,
                (
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)? as u32,
                    r.get::<_, i64>(4)? as u8,
                    strip_api_version(&name).to_string(),
                    r.get::<_, i64>(6)? != 0,
                ),
            ))
        })
        .unwrap();
    for row in rows {
        let (pid, sync) = row.unwrap();
        out.entry(pid).or_default().push(sync);
    }
    out
}

/// The name of runtime row `call` ([`NONE`]: `""`), checked to be a call
/// of process `process`.
fn call_name(p: &Profile, call: u32, process: u32) -> String {
    if call == NONE {
        return String::new();
    }
    let call = call as usize;
    assert_eq!(p.thread_process(p.runtime.thread(call)), process);
    name(p, p.runtime.name(call))
}

fn syncs_by_model(p: &Profile) -> BTreeMap<u32, Vec<Sync>> {
    let mut out = BTreeMap::new();
    for (pr, rows) in p.syncs_by_process.iter().enumerate() {
        if rows.is_empty() {
            continue;
        }
        let y = &p.syncs;
        assert!(y.starts(rows.clone()).is_sorted());
        let v: Vec<Sync> = rows
            .clone()
            .map(|r| {
                assert_eq!(y.process(r), pr as u32);
                let lane = y.lane(r);
                if lane != NONE {
                    let l = &p.lanes[lane as usize];
                    assert_eq!((l.process, l.stream), (pr as u32, y.stream(r)));
                    assert_eq!(y.device(r), l.device);
                }
                (
                    y.start(r),
                    y.end(r),
                    y.event(r),
                    y.sync_type(r),
                    call_name(p, y.call(r), pr as u32),
                    lane != NONE,
                )
            })
            .collect();
        out.insert(p.processes[pr].pid, v);
    }
    out
}

/// One value of `q`, `None` when it has none or its table is missing.
fn one(c: &Connection, q: &str) -> Option<i64> {
    c.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
        .ok()
        .flatten()
}

/// One scheduling event: (time, cpu, scheduled in).
type Sched = (i64, u16, bool);

/// Per thread, its events whose times can be right in (start, rowid)
/// order.
fn sched_by_sql(c: &Connection) -> BTreeMap<(u32, u32), Vec<Sched>> {
    let mut st = c
        .prepare(&format!(
            "SELECT globalTid, start, cpu, isSchedIn FROM SCHED_EVENTS
             WHERE globalTid IS NOT NULL AND {}
             ORDER BY globalTid, start, rowid",
            can_be_right(c, "start", "start")
        ))
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
        // the others are counted, left out (every row here has a thread)
        let left_out = p.files[0].suspect_rows.scheduling_events.total();
        assert_eq!(left_out as usize, rows - total, "{f}");
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
    let (fresh, cached) = fresh_then_cached(&path, temp_dir("sched_syncs_cache"));
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

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn sync_records_and_their_calls_equal_sql_per_process() {
    let mut linked = 0;
    for f in SYNC_FILES {
        let path = real_profiles().join(f);
        let p = load(&path);
        let c = sql(&path);
        let want = syncs_by_sql(&c);
        let total: usize = want.values().map(Vec::len).sum();
        assert!(total > 0, "{f}");
        assert_eq!(p.syncs.len(), total, "{f}");
        assert_eq!(p.syncs_by_process.len(), p.processes.len(), "{f}");
        let got = syncs_by_model(&p);
        assert_eq!(got, want, "{f}");
        assert!(
            want.values().flatten().all(|s| !s.4.contains("ambiguous")),
            "{f}"
        );
        linked += want.values().flatten().filter(|s| !s.4.is_empty()).count();
    }
    // Nearly every record has its call (one 2023.1 record has none).
    assert!(linked > 700, "{linked}");
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn sync_types_are_kept_as_recorded_even_where_they_are_wrong() {
    // nsys 2022.1 records cudaEventSynchronize (and cudaEventQuery) with
    // syncType 2, cudaStreamWaitEvent with 3; 2026.2 the reverse; 2024.6 a
    // cudaStreamSynchronize with 2. The records keep what was recorded.
    let kinds = |f: &str| -> Vec<(u8, String)> {
        let p = load(&real_profiles().join(f));
        let mut v: Vec<(u8, String)> = (0..p.syncs.len())
            .map(|r| {
                let process = p.syncs.process(r);
                (
                    p.syncs.sync_type(r),
                    call_name(&p, p.syncs.call(r), process),
                )
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let pairs = |v: &[(u8, &str)]| -> Vec<(u8, String)> {
        v.iter().map(|&(t, n)| (t, n.to_string())).collect()
    };
    assert_eq!(
        kinds(SYNC_FILES[0]),
        pairs(&[
            (1, "cudaDeviceSynchronize"),
            (2, "cudaEventQuery"),
            (2, "cudaEventSynchronize"),
            (3, "cudaStreamSynchronize"),
            (3, "cudaStreamWaitEvent"),
        ])
    );
    assert_eq!(
        kinds(SYNC_FILES[7]),
        pairs(&[
            (1, "cudaEventQuery"),
            (2, "cudaStreamWaitEvent"),
            (3, "cudaStreamSynchronize"),
        ])
    );
    assert_eq!(kinds(SYNC_FILES[4]), pairs(&[(2, "cudaStreamSynchronize")]));
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn a_sync_record_is_on_its_processs_gpu_whatever_device_it_names() {
    // nsys 2026.2 records deviceId 0 on every sync of the process whose
    // kernels all ran on GPU 1: the records of a process are on the GPU of
    // its kernels, streams without kernels included.
    for f in [SYNC_FILES[6], SYNC_FILES[7]] {
        let path = real_profiles().join(f);
        let p = load(&path);
        let c = sql(&path);
        let mut st = c
            .prepare(
                "SELECT DISTINCT (globalPid >> 24) & 16777215, deviceId
                 FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY 1",
            )
            .unwrap();
        let gpus: Vec<(u32, u32)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(gpus.len(), 2, "{f}: one GPU per process");
        assert!(
            one(
                &c,
                "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE deviceId != 0"
            ) == Some(0),
            "{f}"
        );
        let mut got: Vec<(u32, u32)> = (0..p.syncs.len())
            .map(|r| {
                let pid = p.processes[p.syncs.process(r) as usize].pid;
                (pid, p.devices[p.syncs.device(r) as usize].id)
            })
            .collect();
        got.sort();
        got.dedup();
        assert_eq!(got, gpus, "{f}");
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn several_files_number_their_sync_records_in_file_order() {
    let a = real_profiles().join(SYNC_FILES[6]);
    let b = real_profiles().join(SYNC_FILES[7]);
    let (pa, pb) = (load(&a), load(&b));
    let out = rankline::profile::load(
        &rankline::profile::files(&[a, b]),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let p = out.profile;
    assert_eq!(p.syncs.len(), pa.syncs.len() + pb.syncs.len());
    assert_eq!(p.syncs_by_process.len(), p.processes.len());
    // The second file's records, as that file alone gives them, on its
    // processes, lanes, devices and calls.
    let shown = |p: &Profile, r: usize| {
        let y = &p.syncs;
        let lane = y.lane(r);
        (
            y.start(r),
            y.end(r),
            p.processes[y.process(r) as usize].pid,
            call_name(p, y.call(r), y.process(r)),
            (lane != NONE).then(|| p.lanes[lane as usize].stream),
            p.devices.get(y.device(r) as usize).map(|d| d.id),
        )
    };
    let base = pa.syncs.len();
    for r in 0..pb.syncs.len() {
        assert_eq!(shown(&p, base + r), shown(&pb, r), "row {r}");
        assert_eq!(p.process_file(p.syncs.process(base + r)), 1);
    }
    for r in 0..pa.syncs.len() {
        assert_eq!(shown(&p, r), shown(&pa, r), "row {r}");
    }
    assert!((0..pb.syncs.len()).any(|r| pb.syncs.lane(r) != NONE));
    for (pr, rows) in p.syncs_by_process.iter().enumerate() {
        assert!(rows.clone().all(|r| p.syncs.process(r) == pr as u32));
    }
}

/// The real exports with `CUPTI_ACTIVITY_KIND_CUDA_EVENT`, and its rows.
const EVENT_FILES: [(&str, usize); 5] = [
    ("nsys2022_1_dlprof_altered.sqlite", 59),
    ("nsys2023_2_cutlass_osrt.sqlite", 2),
    ("nsys2023_3_wsl_no_kernels.sqlite", 2),
    ("nsys2026_2gpu_h100_nvtx.sqlite", 0),
    ("nsys2026_2gpu_nccl_sendrecv.sqlite", 0),
];

/// One event record: (eventId, streamId, its call's name without the
/// `_v<N>` suffix, its call's start, timestamp, whether a GPU row ran on
/// its stream).
type Event = (u32, u32, String, Option<i64>, i64, bool);

/// Per pid, its event records in (eventId, start of the call (records
/// without one first), rowid) order.
fn events_by_sql(c: &Connection) -> BTreeMap<u32, Vec<Event>> {
    let has_timestamp = c
        .prepare("SELECT timestamp FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT")
        .is_ok();
    let timestamp = if has_timestamp {
        "coalesce(e.timestamp, 0)"
    } else {
        "0"
    };
    let call_start = "(SELECT min(r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r
          WHERE r.correlationId = e.correlationId
            AND (r.globalTid >> 24) & 16777215 = (e.globalPid >> 24) & 16777215)";
    let q = format!(
        "SELECT e.globalPid, e.eventId, e.streamId, {}, {call_start}, {timestamp}, {}
         FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT e WHERE e.globalPid IS NOT NULL
         ORDER BY (e.globalPid >> 24) & 16777215, e.eventId, {call_start} IS NOT NULL,
           {call_start}, e.rowid",
        call_name_sql("e"),
        gpu_row_exists(c, "e")
    );
    let mut st = c.prepare(&q).unwrap();
    let mut out: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            let name: String = r.get(3)?;
            Ok((
                pid_tid(r.get(0)?).0,
                (
                    r.get::<_, i64>(1)? as u32,
                    r.get::<_, i64>(2)? as u32,
                    strip_api_version(&name).to_string(),
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)? != 0,
                ),
            ))
        })
        .unwrap();
    for row in rows {
        let (pid, e) = row.unwrap();
        out.entry(pid).or_default().push(e);
    }
    out
}

fn events_by_model(p: &Profile) -> BTreeMap<u32, Vec<Event>> {
    let mut out = BTreeMap::new();
    let e = &p.cuda_events;
    for (pr, rows) in p.cuda_events_by_process.iter().enumerate() {
        if rows.is_empty() {
            continue;
        }
        let v: Vec<Event> = rows
            .clone()
            .map(|r| {
                assert_eq!(e.process(r), pr as u32);
                let lane = e.lane(r);
                if lane != NONE {
                    let l = &p.lanes[lane as usize];
                    assert_eq!((l.process, l.stream), (pr as u32, e.stream(r)));
                    assert_eq!(e.device(r), l.device);
                }
                let call = e.call(r);
                (
                    e.event(r),
                    e.stream(r),
                    call_name(p, call, pr as u32),
                    (call != NONE).then(|| p.runtime.start(call as usize)),
                    e.timestamp(r),
                    lane != NONE,
                )
            })
            .collect();
        out.insert(p.processes[pr].pid, v);
    }
    out
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn event_records_and_their_record_calls_equal_sql_per_process() {
    for (f, rows) in EVENT_FILES {
        let path = real_profiles().join(f);
        let p = load(&path);
        let c = sql(&path);
        assert_eq!(
            one(&c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT"),
            Some(rows as i64),
            "{f}"
        );
        let want = events_by_sql(&c);
        assert_eq!(want.values().map(Vec::len).sum::<usize>(), rows, "{f}");
        assert_eq!(p.cuda_events.len(), rows, "{f}");
        assert_eq!(p.cuda_events_by_process.len(), p.processes.len(), "{f}");
        assert_eq!(events_by_model(&p), want, "{f}");
        // Each has its call, a cudaEventRecord (cuEventRecord in the
        // driver-API capture).
        for e in want.values().flatten() {
            assert!(
                ["cudaEventRecord", "cuEventRecord"].contains(&e.2.as_str()),
                "{f}: {e:?}"
            );
        }
    }
    // The 2022.1 records: 15 events, most recorded more than once.
    let p = load(&real_profiles().join(EVENT_FILES[0].0));
    let mut ids: Vec<u32> = (0..p.cuda_events.len())
        .map(|r| p.cuda_events.event(r))
        .collect();
    assert!(ids.is_sorted());
    ids.dedup();
    assert_eq!(ids.len(), 15);
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

/// Sync and event records of pid 100 (thread 101) around one kernel on
/// stream 7: records on stream 9 (no GPU row there), records without a
/// call or a process, values out of range, a sync ending before it starts,
/// events recorded twice (their calls in the file in the other order). Columns as nsys declares them
/// (2022.1 syncs, 2026.2 events with `timestamp`).
fn stream_export(dir: &Path) -> PathBuf {
    small_export(
        dir,
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
           deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
           correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
           shortName INTEGER NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
           eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
           nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
         CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL,
           end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
           streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
           syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (timestamp INTEGER,
           deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
           streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
           eventId INTEGER NOT NULL, eventSyncId INTEGER);
         INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'cudaStreamSynchronize_v3020'),
           (3, 'cudaEventRecord_v3020'), (4, 'cudaEventSynchronize_v3020');
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 3, 1, 7, 1, 1677721600, 1, 1);
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
           (300, 400, 0, 1677721701, 10, 2, 0, NULL),
           (500, 510, 0, 1677721701, 11, 3, 0, NULL),
           (450, 460, 0, 1677721701, 12, 3, 0, NULL),
           (600, 700, 0, 1677721701, 13, 4, 0, NULL);
         INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES
           (310, 390, 3, 1, 7, 10, 1677721600, 3, 4294967295),
           (610, 615, 0, 1, 9, 13, 1677721600, 300, 5),
           (620, 605, 3, 1, 7, 10, 1677721600, 3, 4294967295),
           (10, 20, 3, 1, 7, NULL, 1677721600, 1, 4294967295),
           (30, 40, 3, 1, 7, 10, NULL, 1, 4294967295);
         INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES
           (NULL, 3, 1, NULL, 7, 11, 1677721600, 5, NULL),
           (480, 0, 1, NULL, 9, 12, 1677721600, 5, NULL),
           (0, 3, 1, NULL, 7, 99, 1677721600, 5, NULL),
           (700, 3, 1, NULL, 7, 11, NULL, 6, NULL),
           (0, 3, 1, NULL, 7, NULL, 1677721600, 99999999999, NULL);",
    )
}

#[test]
fn sync_and_event_records_link_their_calls_and_keep_what_was_recorded() {
    use rankline::analysis::clock::Alignment;
    let dir = temp_dir("sched_syncs_small_streams");
    let p = load(&stream_export(&dir));
    let stream7 = p.gpu.lane(0);
    let gpu = p.lanes[stream7 as usize].device;
    assert_eq!(p.devices[gpu as usize].id, 3);
    // Syncs by start; the one without a process is skipped, the one
    // ending before it starts left out and counted.
    let y = &p.syncs;
    let got: Vec<_> = (0..y.len())
        .map(|r| {
            (
                (y.start(r), y.end(r)),
                (y.sync_type(r), y.event(r), y.stream(r)),
                call_name(&p, y.call(r), y.process(r)),
                (y.lane(r), y.device(r)),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ((10, 20), (1, u32::MAX, 7), String::new(), (stream7, gpu)),
            (
                (310, 390),
                (3, u32::MAX, 7),
                "cudaStreamSynchronize".into(),
                (stream7, gpu)
            ),
            // syncType saturated; no lane on stream 9, its GPU its
            // context's (not the device 0 it names).
            (
                (610, 615),
                (255, 5, 9),
                "cudaEventSynchronize".into(),
                (NONE, gpu)
            ),
        ]
    );
    assert_eq!(p.syncs_by_process.len(), 1);
    assert_eq!(p.syncs_by_process[0], 0..3);
    let left_out = p.files[0].suspect_rows.cuda_syncs;
    assert_eq!((left_out.end_before_start, left_out.total()), (1, 1));
    // Events by (event, start of the call; none first); the one without a
    // process is skipped; an eventId past u32 saturates.
    let e = &p.cuda_events;
    let got: Vec<_> = (0..e.len())
        .map(|r| {
            let call = e.call(r);
            (
                e.event(r),
                (call != NONE).then(|| p.runtime.start(call as usize)),
                e.timestamp(r),
                (e.lane(r), e.device(r)),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (5, None, 0, (stream7, gpu)),
            (5, Some(450), 480, (NONE, gpu)),
            (5, Some(500), 0, (stream7, gpu)),
            (u32::MAX, None, 0, (stream7, gpu)),
        ]
    );
    assert_eq!(call_name(&p, e.call(1), e.process(1)), "cudaEventRecord");
    assert_eq!(p.cuda_events_by_process.len(), 1);
    assert_eq!(p.cuda_events_by_process[0], 0..4);
    // One file: its times are the reference clock's; a timestamp of 0 was
    // not collected.
    let clock = Alignment::default();
    assert_eq!(clock.sync_span(&p, 2), (610, 615));
    assert_eq!(clock.cuda_event_time(&p, 1), Some(480));
    assert_eq!(clock.cuda_event_time(&p, 0), None);
    // Nothing was made for the records: one lane, the GPU of the kernel.
    assert_eq!((p.lanes.len(), p.devices.len()), (1, 1));
}

#[test]
fn sync_and_event_records_come_back_from_the_cache() {
    let dir = temp_dir("sched_syncs_small_streams_cache");
    let path = stream_export(&dir);
    let (fresh, cached) = fresh_then_cached(&path, dir.join("cache"));
    assert_eq!(syncs_by_model(&cached), syncs_by_model(&fresh));
    assert_eq!(events_by_model(&cached), events_by_model(&fresh));
    assert_eq!(cached.syncs.len(), 3);
    assert_eq!(cached.cuda_events.len(), 4);
    let devices = |p: &Profile| {
        (0..p.syncs.len())
            .map(|r| p.syncs.device(r))
            .chain((0..p.cuda_events.len()).map(|r| p.cuda_events.device(r)))
            .collect::<Vec<_>>()
    };
    assert_eq!(devices(&cached), devices(&fresh));
}
