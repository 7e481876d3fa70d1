//! Exports moved onto other clocks: a file's timestamps shifted by hours
//! and drifting by ppm, its UTC stamp a few ms off, its rows cut down to
//! some processes; and [`split_per_process`], which makes one file per
//! process of a single-clock capture, each on a clock of its own, with the
//! true mapping of each so that figures can be compared with the original.

use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// UTC (epoch ns) given to timestamp 0 of a capture that records none.
pub const UTC0: i64 = 1_780_000_000_000_000_000;

/// One file's clock against the capture it was made from: timestamp `t` of
/// the original becomes `t + shift_ns + drift_ppm·10⁻⁶·(t − t0)`, rounded
/// to the ns (the mapping, run backwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mapping {
    pub shift_ns: i64,
    pub drift_ppm: f64,
    pub t0: i64,
}

impl Mapping {
    fn k(&self) -> f64 {
        self.drift_ppm * 1e-6
    }

    /// The file's timestamp of original timestamp `t`, as [`shift`] writes it.
    pub fn apply(&self, t: i64) -> i64 {
        t + self.shift_ns + (self.k() * (t - self.t0) as f64).round() as i64
    }

    /// The same, unrounded.
    pub fn apply_f(&self, t: f64) -> f64 {
        t + self.shift_ns as f64 + self.k() * (t - self.t0 as f64)
    }

    /// The original timestamp of the file's timestamp `t` (unrounded).
    pub fn original(&self, t: f64) -> f64 {
        (t - self.shift_ns as f64 + self.k() * self.t0 as f64) / (1.0 + self.k())
    }
}

/// Copies `src` into `dir` as `name`.
pub fn copy(src: &Path, dir: &Path, name: &str) -> PathBuf {
    let dst = dir.join(name);
    std::fs::copy(src, &dst).unwrap();
    dst
}

/// (table, column) of every table having one of `names`.
fn columns_named(db: &Connection, names: &[&str]) -> Vec<(String, String)> {
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    let mut stmt = db
        .prepare(&format!(
            "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p \
             WHERE m.type = 'table' AND p.name IN ({list})"
        ))
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn has_table(db: &Connection, table: &str) -> bool {
    db.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

/// Moves every timestamp of the file (every `start`, `end` and `timestamp`
/// column, and the analysis window) by `m`.
pub fn shift(path: &Path, m: &Mapping) {
    let db = Connection::open(path).unwrap();
    let mut cols = columns_named(&db, &["start", "end", "timestamp"]);
    if db.prepare("SELECT startTime FROM ANALYSIS_DETAILS").is_ok() {
        cols.push(("ANALYSIS_DETAILS".into(), "startTime".into()));
        cols.push(("ANALYSIS_DETAILS".into(), "stopTime".into()));
    }
    let (shift, k, t0) = (m.shift_ns, m.k(), m.t0);
    for (table, col) in cols {
        db.execute(
            &format!(
                "UPDATE \"{table}\" SET \"{col}\" = \"{col}\" + {shift} + \
                 CAST(round({k:e} * (\"{col}\" - {t0})) AS INTEGER) WHERE \"{col}\" IS NOT NULL"
            ),
            [],
        )
        .unwrap();
    }
}

/// Writes the session's start row (creating the table when missing).
pub fn set_session(path: &Path, utc: i64, system_clock: Option<i64>) {
    let db = Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE IF NOT EXISTS TARGET_INFO_SESSION_START_TIME \
         (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER); \
         DELETE FROM TARGET_INFO_SESSION_START_TIME;",
    )
    .unwrap();
    db.execute(
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?1, '', '', ?2)",
        rusqlite::params![utc, system_clock],
    )
    .unwrap();
}

/// The session's (utcEpochNs, systemClockNs), when recorded.
pub fn session(path: &Path) -> Option<(i64, Option<i64>)> {
    let db = Connection::open(path).unwrap();
    if !has_table(&db, "TARGET_INFO_SESSION_START_TIME") {
        return None;
    }
    db.query_row(
        "SELECT utcEpochNs, systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .ok()
}

/// Renames the host (TARGET_INFO_SYSTEM_ENV Hostname), when it has one.
pub fn set_host(path: &Path, host: &str) {
    let db = Connection::open(path).unwrap();
    db.execute(
        "UPDATE TARGET_INFO_SYSTEM_ENV SET value = ?1 WHERE name = 'Hostname'",
        [host],
    )
    .unwrap();
}

/// The host name the file records.
pub fn host(path: &Path) -> Option<String> {
    let db = Connection::open(path).unwrap();
    db.query_row(
        "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
        [],
        |r| r.get(0),
    )
    .ok()
}

/// Keeps only these processes' rows: in every table keyed by `globalPid`
/// or `globalTid` (pid in bits 24–47), and in the per-process TARGET_INFO
/// tables (`pid`, `processId`); TARGET_INFO_GPU keeps the GPUs they opened.
pub fn keep_pids(path: &Path, pids: &[u32]) {
    let list = pids
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let db = Connection::open(path).unwrap();
    for (table, col) in columns_named(&db, &["globalPid", "globalTid"]) {
        db.execute(
            &format!(
                "DELETE FROM \"{table}\" WHERE \"{col}\" IS NOT NULL \
                 AND ((\"{col}\" >> 24) & 16777215) NOT IN ({list})"
            ),
            [],
        )
        .unwrap();
    }
    for (table, col) in columns_named(&db, &["pid", "processId"]) {
        if table.starts_with("TARGET_INFO_") {
            db.execute(
                &format!("DELETE FROM \"{table}\" WHERE \"{col}\" NOT IN ({list})"),
                [],
            )
            .unwrap();
        }
    }
    if has_table(&db, "TARGET_INFO_GPU") {
        // Which GPUs the processes opened, else which their kernels ran on.
        let opened = if has_table(&db, "TARGET_INFO_CUDA_DEVICE") {
            "SELECT gpuId FROM TARGET_INFO_CUDA_DEVICE"
        } else {
            "SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"
        };
        db.execute(
            &format!("DELETE FROM TARGET_INFO_GPU WHERE id NOT IN ({opened})"),
            [],
        )
        .unwrap();
    }
}

/// The processes with kernels, by pid.
pub fn kernel_pids(path: &Path) -> Vec<u32> {
    let db = Connection::open(path).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT DISTINCT (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL \
             ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The earliest GPU start of a file.
pub fn gpu_start(path: &Path) -> i64 {
    let db = Connection::open(path).unwrap();
    db.query_row(
        "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// The GPU activity tables the file has (kernels, memcpy, memset).
fn gpu_tables(db: &Connection) -> Vec<String> {
    ["KERNEL", "MEMCPY", "MEMSET"]
        .iter()
        .map(|t| format!("CUPTI_ACTIVITY_KIND_{t}"))
        .filter(|t| has_table(db, t))
        .collect()
}

/// The earliest start of any GPU activity: the `t0` of rankline's
/// mapping of the file.
pub fn gpu_first(path: &Path) -> i64 {
    let db = Connection::open(path).unwrap();
    gpu_tables(&db)
        .iter()
        .filter_map(|t| {
            db.query_row(&format!("SELECT min(start) FROM {t}"), [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .unwrap()
        })
        .min()
        .expect("GPU activity")
}

/// Whether any GPU activity starts or ends within `margin_ns` of `t`.
pub fn gpu_edge_near(path: &Path, t: i64, margin_ns: i64) -> bool {
    let db = Connection::open(path).unwrap();
    gpu_tables(&db).iter().any(|table| {
        let sql = format!(
            "SELECT count(*) FROM {table} WHERE abs(start - ?1) < ?2 OR abs(end - ?1) < ?2"
        );
        db.query_row(&sql, [t, margin_ns], |r| r.get::<_, i64>(0))
            .unwrap()
            > 0
    })
}

/// The latest GPU end of a file.
pub fn gpu_end(path: &Path) -> i64 {
    let db = Connection::open(path).unwrap();
    db.query_row("SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL", [], |r| {
        r.get(0)
    })
    .unwrap()
}

/// One file of a split: the process it holds and its true clock.
#[derive(Debug, Clone)]
pub struct SplitFile {
    pub path: PathBuf,
    pub pid: u32,
    /// Original timestamp → this file's timestamp.
    pub clock: Mapping,
    /// Recorded UTC stamp − the true UTC of the same instant.
    pub utc_error_ns: i64,
}

/// A capture split per process.
#[derive(Debug, Clone)]
pub struct Split {
    /// The capture with only the split processes' rows, on its one clock:
    /// what every figure of the split is compared with.
    pub original: PathBuf,
    /// The directory holding the split files only (`rank0.sqlite` …).
    pub dir: PathBuf,
    /// In pid order, which is also file (command-line) order: the first is
    /// the reference clock.
    pub files: Vec<SplitFile>,
}

impl Split {
    /// The reference clock's timestamp of original timestamp `t`
    /// (unrounded).
    pub fn on_reference(&self, t: f64) -> f64 {
        self.files[0].clock.apply_f(t)
    }
}

/// File `i`'s clock: hours apart from every other (a different boot of a
/// different host), a few ppm of drift either way, a UTC stamp a few ms
/// off. The first (the reference) drifts too: nothing may assume the
/// reference clock is the original's.
fn clock_of(i: usize, t0: i64) -> (Mapping, i64) {
    const HOUR: i64 = 3_600_000_000_000;
    const DRIFT_PPM: [f64; 8] = [1.5, 4.0, -3.0, 2.5, -1.5, -4.0, 3.0, -2.5];
    const UTC_ERROR_NS: [i64; 8] = [
        1_300_000, -2_700_000, 3_900_000, -4_400_000, 2_200_000, -1_900_000, 4_800_000, -3_300_000,
    ];
    let n = i as i64;
    let m = Mapping {
        shift_ns: (2 + 3 * n) * HOUR + (n + 1) * 17_123_456_789,
        drift_ppm: DRIFT_PPM[i % 8],
        t0,
    };
    (m, UTC_ERROR_NS[i % 8])
}

/// Writes `target/test-tmp/<name>/original.sqlite` (`src` with only the
/// processes that have kernels) and one file per such process into
/// `target/test-tmp/<name>/split/`: its rows alone, its host renamed
/// `<host>-r<i>`, every timestamp moved by its own [`Mapping`], and its
/// session start (UTC and, on a boot clock, `systemClockNs`) rewritten to
/// match, the UTC off by a few ms. Each file is thus its own clock domain:
/// another host, and on a boot clock another boot instant.
pub fn split_per_process(src: &Path, name: &str) -> Split {
    let dir = super::temp_dir(name);
    let original = copy(src, &dir, "original.sqlite");
    let pids = kernel_pids(&original);
    assert!(pids.len() >= 2, "{}: one process", src.display());
    keep_pids(&original, &pids);
    let t0 = gpu_start(&original);
    let recorded = session(&original);
    if let Some((_, Some(system))) = recorded {
        // systemClockNs read as the timebase: only right when the events
        // are on that boot clock (the analysis window starts at it).
        let db = Connection::open(&original).unwrap();
        let start: i64 = db
            .query_row("SELECT startTime FROM ANALYSIS_DETAILS", [], |r| r.get(0))
            .unwrap();
        assert_eq!(start, system, "{}: not on its boot clock", src.display());
    }
    let host = host(&original).unwrap_or_else(|| "host".into());
    let split = dir.join("split");
    std::fs::create_dir_all(&split).unwrap();
    let files = pids
        .iter()
        .enumerate()
        .map(|(i, &pid)| {
            let path = copy(&original, &split, &format!("rank{i:02}.sqlite"));
            keep_pids(&path, &[pid]);
            let (clock, utc_error_ns) = clock_of(i, t0);
            shift(&path, &clock);
            match recorded {
                // A boot clock: the session started at the same instant,
                // now read `apply(systemClockNs)` on this host's clock.
                Some((utc, Some(system))) => {
                    set_session(&path, utc + utc_error_ns, Some(clock.apply(system)))
                }
                // Counting from the session start (or unknown): the UTC of
                // this file's timestamp 0, `utc` or UTC0 at original 0.
                other => {
                    let utc = other.map_or(UTC0, |s| s.0);
                    let zero = clock.original(0.0).round() as i64;
                    set_session(&path, utc + zero + utc_error_ns, None)
                }
            }
            set_host(&path, &format!("{host}-r{i}"));
            SplitFile {
                path,
                pid,
                clock,
                utc_error_ns,
            }
        })
        .collect();
    Split {
        original,
        dir: split,
        files,
    }
}
