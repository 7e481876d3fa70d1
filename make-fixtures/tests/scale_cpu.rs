//! `make-fixtures scale --cpu` writes the same bytes every time, and its CPU, synchronization
//! and CUDA event rows hold together: each links to its runtime call, samples fall where their
//! thread runs, callchains are whole. Without `--cpu` none of those tables exist.

mod common;
use common::*;

use rusqlite::Connection;

fn q(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[test]
fn scale_cpu_is_deterministic_and_consistent() {
    let dir = temp_dir("scale_cpu");
    let run = |name: &str, cpu: bool| {
        let out = dir.join(name);
        let path = out.to_str().expect("UTF-8 temp path");
        let mut args = vec!["scale", "--kernels", "30k", "--devices", "4", "--out", path];
        if cpu {
            args.push("--cpu");
        }
        make_fixtures(&args, &[]);
        out
    };
    let (a, b, plain) = (
        run("a.sqlite", true),
        run("b.sqlite", true),
        run("plain.sqlite", false),
    );
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());

    let p = Connection::open(&plain).unwrap();
    for t in [
        "OSRT_API",
        "SCHED_EVENTS",
        "COMPOSITE_EVENTS",
        "SAMPLING_CALLCHAINS",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
    ] {
        let n = q(
            &p,
            &format!("SELECT count(*) FROM sqlite_master WHERE name = '{t}'"),
        );
        assert_eq!(n, 0, "{t} without --cpu");
    }

    let c = Connection::open(&a).unwrap();
    let steps = q(
        &c,
        "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'train_step'",
    );
    let nccl = q(
        &c,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE streamId IN (20, 28)",
    );
    assert!(steps >= 4 * 10 && nccl > 0);
    // correlation ids are unique per process
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM (SELECT globalTid >> 24, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1, 2 HAVING count(*) > 1)"
        ),
        0
    );
    // a wait per NCCL launch and a synchronize per step, inside their calls
    let linked = |table: &str, cond: &str, name: &str| {
        q(
            &c,
            &format!(
                "SELECT count(*) FROM {table} s JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
                   ON r.correlationId = s.correlationId AND r.globalTid >> 24 = s.globalPid >> 24
                 JOIN StringIds n ON n.id = r.nameId
                 WHERE n.value = '{name}' AND {cond}"
            ),
        )
    };
    let sync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    let waits = linked(
        sync,
        "syncType = 2 AND s.streamId IN (20, 28) AND r.start <= s.start AND s.end <= r.end",
        "cudaStreamWaitEvent_v3020",
    );
    let syncs = linked(
        sync,
        "syncType = 3 AND s.eventId = 4294967295 AND s.streamId = 7 AND r.start <= s.start AND s.end <= r.end",
        "cudaStreamSynchronize_v3020",
    );
    assert_eq!(waits, nccl);
    assert_eq!(syncs, steps);
    assert_eq!(
        q(&c, &format!("SELECT count(*) FROM {sync}")),
        waits + syncs
    );
    // an event record per NCCL launch, on the compute stream, completed after its call
    let events = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
    let records = linked(
        events,
        "s.streamId = 7 AND s.timestamp > r.end",
        "cudaEventRecord_v3020",
    );
    assert_eq!(records, nccl);
    assert_eq!(q(&c, &format!("SELECT count(*) FROM {events}")), records);
    // every wait but the first of each stream waits for a record of the same event
    let unmatched = q(
        &c,
        &format!(
            "SELECT count(*) FROM {sync} s WHERE syncType = 2 AND NOT EXISTS (SELECT 1 FROM {events} e
               WHERE e.globalPid = s.globalPid AND e.eventId = s.eventId AND e.eventSyncId = s.eventSyncId)"
        ),
    );
    assert_eq!(unmatched, 4 * 2);

    // callchains: depths 0..n-1 with 10 <= n <= 30, kernel frames only on top
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM (SELECT id, count(*) n, max(stackDepth) m FROM SAMPLING_CALLCHAINS GROUP BY id)
             WHERE n < 10 OR n > 30 OR m != n - 1"
        ),
        0
    );
    assert_eq!(
        q(&c, "SELECT count(DISTINCT id) FROM SAMPLING_CALLCHAINS"),
        q(&c, "SELECT count(*) FROM COMPOSITE_EVENTS")
    );
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM SAMPLING_CALLCHAINS k JOIN SAMPLING_CALLCHAINS u
               ON u.id = k.id AND u.stackDepth < k.stackDepth
             WHERE k.kernelMode = 1 AND u.kernelMode = 0"
        ),
        0
    );
    assert!(
        q(
            &c,
            "SELECT count(DISTINCT id) FROM SAMPLING_CALLCHAINS WHERE kernelMode = 1"
        ) > 0
    );

    // scheduling alternates in and out per thread; each sample falls while its thread runs,
    // on the CPU it was scheduled in on
    c.execute_batch("CREATE INDEX sched_by_thread ON SCHED_EVENTS (globalTid, start)")
        .unwrap();
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM (SELECT isSchedIn, lag(isSchedIn) OVER (PARTITION BY globalTid ORDER BY start) prev FROM SCHED_EVENTS)
             WHERE isSchedIn = prev"
        ),
        0
    );
    assert_eq!(
        q(
            &c,
            "SELECT count(*) FROM COMPOSITE_EVENTS c WHERE NOT EXISTS (
               SELECT 1 FROM (SELECT start, isSchedIn, cpu FROM SCHED_EVENTS s
                              WHERE s.globalTid = c.globalTid AND s.start <= c.start
                              ORDER BY s.start DESC LIMIT 1) l
               WHERE l.isSchedIn = 1 AND l.cpu = c.cpu)"
        ),
        0
    );
    // about 1 kHz on each main thread
    let secs = q(
        &c,
        "SELECT max(end) - min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
    ) as f64
        / 1e9;
    let main = q(
        &c,
        "SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid % 16777216 = (globalTid >> 24) % 16777216",
    ) as f64;
    let hz = main / 4.0 / secs;
    assert!((900.0..1100.0).contains(&hz), "{hz} Hz");
    // OS runtime calls on the main, pin-memory, proxy and watchdog threads
    assert!(
        q(
            &c,
            "SELECT count(DISTINCT globalTid % 16777216 - (globalTid >> 24) % 16777216) FROM OSRT_API"
        ) >= 5
    );
}
