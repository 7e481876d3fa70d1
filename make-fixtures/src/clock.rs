//! Per-file clocks of the multi-file scenarios: the generator's true time mapped to each file's
//! own timestamps, and the session/capture tables that record that clock. The reference (first)
//! file has no drift, so its clock is true time up to a constant (zero for a boot-clock one).
//!
//! Two timebases, as real exports have them (see /work/shared/real-profiles/):
//! - boot clock (nsys 2026.2): timestamps are the host's boot-clock ns; `systemClockNs` is the
//!   boot-clock reading at capture start, `utcEpochNs` the UTC of that timestamp, and
//!   ANALYSIS_DETAILS [startTime, stopTime] brackets the events (startTime = systemClockNs);
//! - session-relative (per-rank 2024.5 exports): timestamp 0 is the capture start and
//!   `utcEpochNs` its UTC; `systemClockNs` is present but is the boot-clock reading, and
//!   ANALYSIS_DETAILS startTime/stopTime are on the boot clock too, so the events lie outside
//!   them (as in the real 2025.5 export, whose events sit far below startTime).
//!
//! One file ns is `1 + drift_ppm·10⁻⁶` true ns: `t_true = session_true + (t_file −
//! session_file)·(1 + drift_ppm·10⁻⁶)`, which is the mapping `t_ref = t_file + offset +
//! drift·(t_file − t_file,0)` with `drift_ppm` exactly as chosen here.

use rusqlite::{Transaction, params};

use crate::ddl::CLOCK_TABLES;
use crate::model::{HOST_FIELD, Profile};
use crate::writer::Strings;

/// UTC (epoch ns) of true time 0: 2026-03-02T08:00:00Z. True times are ~hours of uptime, so
/// stamps land on that day.
pub const UTC_OF_TRUE_ZERO: i64 = 1_772_438_400_000_000_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Timebase {
    Boot,
    Session,
}

impl Timebase {
    pub fn name(self) -> &'static str {
        match self {
            Timebase::Boot => "boot-clock",
            Timebase::Session => "session-relative",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct FileClock {
    pub timebase: Timebase,
    /// True time at which this file's capture started.
    pub session_true: i64,
    /// The file's timestamp at capture start: its boot-clock reading (Boot) or 0 (Session).
    pub session_file: i64,
    /// The host's boot-clock reading at capture start (`systemClockNs`; equal to
    /// `session_file` for Boot).
    pub boot_at_session: i64,
    /// Drift of the mapping file → true time (ppm, exact).
    pub drift_ppm: f64,
    /// Error of this file's UTC stamp (ns): recorded utcEpochNs − true UTC.
    pub utc_error_ns: i64,
    /// True time at which the capture stopped.
    pub stop_true: i64,
    /// File ns per ns of the host's clock: 1 but for a file whose clock ran wrong.
    pub scale: f64,
}

impl FileClock {
    /// Boot-clock file whose host booted `boot_offset` ns before the reference host (its
    /// boot clock reads `t_true + boot_offset` at capture start).
    pub fn boot(session_true: i64, boot_offset: i64, drift_ppm: f64, utc_error_ns: i64) -> Self {
        FileClock {
            timebase: Timebase::Boot,
            session_true,
            session_file: session_true + boot_offset,
            boot_at_session: session_true + boot_offset,
            drift_ppm,
            utc_error_ns,
            stop_true: 0,
            scale: 1.0,
        }
    }

    /// Session-relative file; `boot_at_session` is the host's uptime then (written as
    /// systemClockNs, not the timebase of the events).
    pub fn session(
        session_true: i64,
        boot_at_session: i64,
        drift_ppm: f64,
        utc_error_ns: i64,
    ) -> Self {
        FileClock {
            timebase: Timebase::Session,
            session_true,
            session_file: 0,
            boot_at_session,
            drift_ppm,
            utc_error_ns,
            stop_true: 0,
            scale: 1.0,
        }
    }

    fn rate(&self) -> f64 {
        1.0 + self.drift_ppm * 1e-6
    }

    pub fn file_time(&self, t_true: i64) -> i64 {
        let host = (t_true - self.session_true) as f64 / self.rate();
        self.session_file + (host * self.scale).round() as i64
    }

    /// True time of file timestamp `t_file`, unrounded.
    pub fn true_time(&self, t_file: i64) -> f64 {
        self.session_true as f64 + (t_file - self.session_file) as f64 / self.scale * self.rate()
    }

    /// The recorded `utcEpochNs`: UTC of timestamp `session_file`, off by `utc_error_ns`.
    pub fn utc_epoch_ns(&self) -> i64 {
        UTC_OF_TRUE_ZERO + self.session_true + self.utc_error_ns
    }

    /// UTC epoch ns of file timestamp 0 as the stamps say (what a UTC alignment shifts by).
    pub fn utc_of_zero(&self) -> i64 {
        self.utc_epoch_ns() - self.session_file
    }

    /// Moves every timestamp of `p` (written in true time) onto this clock.
    pub fn apply(&self, p: &mut Profile) {
        let f = |t: &mut i64| *t = self.file_time(*t);
        for k in &mut p.kernels {
            f(&mut k.start);
            f(&mut k.end);
        }
        for m in &mut p.memcpys {
            f(&mut m.start);
            f(&mut m.end);
        }
        for m in &mut p.memsets {
            f(&mut m.start);
            f(&mut m.end);
        }
        for c in &mut p.calls {
            f(&mut c.start);
            f(&mut c.end);
        }
        for e in &mut p.nvtx {
            f(&mut e.start);
            if let Some(end) = &mut e.end {
                f(end);
            }
        }
    }
}

/// Earliest start and latest end of any event of `p` (on whatever clock `p` is written in).
pub fn event_span(p: &Profile) -> (i64, i64) {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    let mut see = |s: i64, e: i64| {
        lo = lo.min(s);
        hi = hi.max(e);
    };
    p.kernels.iter().for_each(|x| see(x.start, x.end));
    p.memcpys.iter().for_each(|x| see(x.start, x.end));
    p.memsets.iter().for_each(|x| see(x.start, x.end));
    p.calls.iter().for_each(|x| see(x.start, x.end));
    p.nvtx
        .iter()
        .for_each(|x| see(x.start, x.end.unwrap_or(x.start)));
    (lo, hi)
}

/// `2026-03-02T09:14:07` for epoch ns (seconds truncated, as nsys writes utcTime).
pub fn iso_utc(epoch_ns: i64) -> String {
    let secs = epoch_ns.div_euclid(1_000_000_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil_from_days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// What the capture recorded about the launched process (META_DATA_CAPTURE).
pub struct Capture {
    pub command: &'static str,
    pub arguments: Vec<String>,
    /// (name, value) written as `PROCESS_0:ENVIRONMENT_VARIABLE | NAME="value"`, the layout of
    /// the real 2026.2 export's META_DATA_CAPTURE.
    pub environment: Vec<(String, String)>,
    pub session_uuid: String,
}

/// Creates CLOCK_TABLES and writes the session start, the analysis window and the capture
/// metadata of a file on clock `c`.
pub fn write_tables(tx: &Transaction, c: &FileClock, cap: &Capture) -> rusqlite::Result<()> {
    for (_, ddl) in CLOCK_TABLES {
        tx.execute_batch(ddl)?;
    }
    let utc = c.utc_epoch_ns();
    tx.execute(
        "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime, systemClockNs) VALUES (?1, ?2, ?2, ?3)",
        params![utc, iso_utc(utc), c.boot_at_session],
    )?;
    let stop_file = c.file_time(c.stop_true);
    let (start, stop) = match c.timebase {
        Timebase::Boot => (c.session_file, stop_file),
        Timebase::Session => (c.boot_at_session, c.boot_at_session + stop_file),
    };
    tx.execute(
        "INSERT INTO ANALYSIS_DETAILS (globalVid, duration, startTime, stopTime) VALUES (?1, ?2, ?3, ?4)",
        params![HOST_FIELD, stop - start, start, stop],
    )?;
    let mut meta = tx.prepare("INSERT INTO META_DATA_CAPTURE (name, value) VALUES (?1, ?2)")?;
    let mut row = |k: &str, v: &str| meta.execute(params![k, v]).map(|_| ());
    row("DEVICE_ID", "Local (CLI)")?;
    row("CAPTURE_EVENT_TYPE", "NvtxEvents")?;
    row("CAPTURE_EVENT_TYPE", "Cuda")?;
    row("START_TRIGGER", "Immediate")?;
    row("DEVICE_TYPE", "Unix")?;
    row("CUDA_TRACE_SCOPE", "ProcessTree")?;
    row("PROCESS_0:HOW_TO_ATTACH", "LaunchAnother")?;
    row("PROCESS_0:COMMAND", cap.command)?;
    for (i, a) in cap.arguments.iter().enumerate() {
        row(&format!("PROCESS_0:ARGUMENT_{i}"), a)?;
    }
    row("PROCESS_0:WORKING_DIR", "/scratch/train")?;
    row("PROCESS_0:PID", "0")?;
    for (k, v) in &cap.environment {
        row("PROCESS_0:ENVIRONMENT_VARIABLE", &format!("{k}=\"{v}\""))?;
    }
    row("PROFILING_SESSION_UUID", &cap.session_uuid)?;
    row(
        "RUN_DURATION_MS",
        &((c.stop_true - c.session_true) / 1_000_000).to_string(),
    )?;
    row("DISABLE_TIME_SYNC", "false")?;
    Ok(())
}

/// Writes `p` (already on its own clock) with its clock tables; prints its size like the
/// single-file fixtures.
pub fn write_file(root: &std::path::Path, p: &Profile, c: &FileClock, cap: &Capture) {
    write_file_with(root, p, c, cap, &|_, _| Ok(()));
}

/// `write_file`, plus the rows `extra` writes after the clock tables (same transaction).
pub fn write_file_with(
    root: &std::path::Path,
    p: &Profile,
    c: &FileClock,
    cap: &Capture,
    extra: crate::writer::Extra,
) {
    let path = root.join(&p.path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("cannot create the scenario directory");
    }
    let hook = |tx: &Transaction, st: &mut Strings| {
        write_tables(tx, c, cap)?;
        extra(tx, st)
    };
    let counts = crate::writer::write_with(p, &path, &hook)
        .unwrap_or_else(|e| panic!("writing {}: {e}", p.path));
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("{} ({} KiB)", p.path, size.div_ceil(1024));
    let line: Vec<String> = counts.iter().map(|(t, n)| format!("{t}={n}")).collect();
    println!("  {}", line.join(" "));
}
