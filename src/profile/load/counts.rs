//! Runtime calls and NVTX events counted per thread instead of loaded
//! ([`super::Need::Counts`], what `report summary` reads): per thread, the
//! rows a full load would keep, and their first start and last end as the
//! loaded rows would have them. Of the other CPU-side tables and the CUDA
//! sync and event records, only the rows a load would leave out.
//!
//! The rows are those the loader's SELECT sees (same declaration in
//! `spec.rs`, so same table, filter and required columns, and rowid
//! range), with only the columns that decide whether a row is kept and
//! where it lies; each is judged by the loader's own rules (`Row::int`,
//! then what `raw::read_runtime`, `raw::read_nvtx` and `convert.rs` do
//! with it), so the counts are those of a full load whatever the export
//! holds. They are summed here in one pass, not by a SQL `GROUP BY
//! globalTid`: without an index on globalTid SQLite sorts
//! every row for it, 1.3-1.9 s on the 1 M-call runtime table of
//! `scale_1m.sqlite` against 0.25 s for a plain scan, which made a summary
//! read that way slower than loading everything.

use super::suspect::{self, Candidates, Times};
use crate::profile::model::{SuspectRows, SuspectTable};
use crate::profile::open::{LoadError, Schema};
use crate::profile::progress::LoadStage;
use crate::profile::raw::{self, Rows, Selection};
use crate::profile::spec::{self, NvtxColumn as N};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::Path;

/// One thread's counted rows.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Runtime calls, or NVTX ranges.
    pub rows: usize,
    /// First start and last end of its calls, or of its NVTX ranges and
    /// marks (the NVTX rows a load keeps).
    pub span: Option<(i64, i64)>,
}

impl Tally {
    fn add(&mut self, rows: usize, span: Option<(i64, i64)>) {
        self.rows += rows;
        if let Some((lo, hi)) = span {
            self.span = Some(self.span.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
}

/// What one range (or several, appended) of the runtime or NVTX table
/// counted, per globalTid.
#[derive(Debug, Default)]
pub struct Counted {
    /// Per candidate window ([`Candidates`]): the calls a load would keep
    /// once the window is known, and the rows of every table counted that
    /// it would leave out.
    pub runtime: [BTreeMap<i64, Tally>; 3],
    pub suspect: [SuspectRows; 3],
    /// Also the threads of NVTX rows a load reads but does not keep
    /// (domain creations): a load makes their threads all the same.
    pub nvtx: BTreeMap<i64, Tally>,
    /// An NVTX range carries a payload: perhaps an NCCL communicator id,
    /// which the clock's collective matching reads from loaded rows.
    pub nvtx_payloads: bool,
}

impl Counted {
    pub fn append(&mut self, other: Counted) {
        let [r0, r1, r2] = other.runtime;
        let [m0, m1, m2] = &mut self.runtime;
        for (s, o) in self.suspect.iter_mut().zip(&other.suspect) {
            s.add(o);
        }
        for (mine, theirs) in [(m0, r0), (m1, r1), (m2, r2), (&mut self.nvtx, other.nvtx)] {
            for (g, t) in theirs {
                mine.entry(g).or_default().add(t.rows, t.span);
            }
        }
        self.nvtx_payloads |= other.nvtx_payloads;
    }
}

/// Per-thread tallies as rows arrive, the current thread's kept aside:
/// rows often come in runs of one thread, which then need no lookup.
#[derive(Default)]
struct Tallies {
    done: BTreeMap<i64, Tally>,
    run: Option<(i64, Tally)>,
}

impl Tallies {
    fn add(&mut self, g: i64, rows: usize, span: Option<(i64, i64)>) {
        match &mut self.run {
            Some((rg, t)) if *rg == g => t.add(rows, span),
            _ => {
                self.flush();
                let mut t = Tally::default();
                t.add(rows, span);
                self.run = Some((g, t));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((g, t)) = self.run.take() {
            self.done.entry(g).or_default().add(t.rows, t.span);
        }
    }

    fn finish(mut self) -> BTreeMap<i64, Tally> {
        self.flush();
        self.done
    }
}

/// Counts `rows` of the runtime/driver API table. A call is kept when its
/// start, end and globalTid read as integers and its times can be right
/// (`suspect.rs`, against each candidate window); it spans start to end.
pub fn runtime(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    candidates: &Candidates,
    report: &mut raw::Report<'_>,
) -> Result<Counted, LoadError> {
    let mut out = Counted::default();
    let read = Selection::only(&spec::RUNTIME, raw::CALL_COLUMNS);
    let mut tallies: [Tallies; 3] = Default::default();
    raw::scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Runtime,
        report,
        |r| {
            if let Some(c) = raw::kept_call(&r) {
                let readings = candidates.windows.len();
                for (k, tally) in tallies.iter_mut().enumerate().take(readings) {
                    match suspect::judge(c.start, c.end, candidates.judging(k)) {
                        Some(why) => suspect::count(&mut out.suspect[k].gpu_or_cuda_calls, why),
                        None => tally.add(c.global_tid, 1, Some((c.start, c.end))),
                    }
                }
            }
            Ok(())
        },
    )?;
    out.runtime = tallies.map(Tallies::finish);
    Ok(out)
}

/// The rows of `table` (read as a load reads them, their times `times`)
/// that a load would leave out, per candidate window.
pub fn left_out(table: SuspectTable, times: Times, candidates: &Candidates) -> Counted {
    let mut out = Counted::default();
    for k in 0..candidates.windows.len() {
        times.count_into(candidates.judging(k), out.suspect[k].of_mut(table));
    }
    out
}

/// Counts `rows` of the NVTX events the loader reads (`spec::NVTX`'s
/// filter). A row is read when its start, eventType and globalTid read as
/// integers; of those, push/pop (59) and start/end (60) rows are ranges,
/// and they and marks (34) are kept, ending at their start when a mark or
/// when the end is NULL, else at max(end, start). Domain creations (75)
/// only name a thread.
pub fn nvtx(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    report: &mut raw::Report<'_>,
) -> Result<Counted, LoadError> {
    let mut out = Counted::default();
    // Whether a payload is there, not the payload.
    let read = Selection::only(&spec::NVTX, raw::EVENT_COLUMNS.union(N::set(&[N::End])))
        .with_presence(N::set(&[N::BinaryData]));
    let mut tallies = Tallies::default();
    raw::scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Nvtx,
        report,
        |r| {
            let Some(raw::NvtxEvent {
                start: s,
                event_type: et,
                global_tid: g,
            }) = raw::read_event(&r)
            else {
                return Ok(());
            };
            let end = r.int(N::End).unwrap_or(i64::MIN);
            // As `convert.rs` judges a row's kind: by its eventType as a byte.
            let (ranges, span) = match et as u8 {
                59 | 60 => (1, Some((s, if end == i64::MIN { s } else { end.max(s) }))),
                34 => (0, Some((s, s))),
                _ => (0, None),
            };
            out.nvtx_payloads |= ranges > 0 && r.present(N::BinaryData);
            tallies.add(g, ranges, span);
            Ok(())
        },
    )?;
    out.nvtx = tallies.finish();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::analysis::completeness::completeness;
    use crate::analysis::window::Window;
    use crate::profile::{CacheDir, LoadPlan, Need, Opened, Profile, Source, cache};

    fn load_needed(sources: &[Source], cache: Option<&CacheDir>, need: Need) -> Opened {
        let plan = LoadPlan {
            need,
            ..LoadPlan::cached(cache)
        };
        crate::profile::load(sources, &plan, &mut |_, _, _| {})
    }
    use std::path::{Path, PathBuf};

    fn copy(test: &str, fixture: &str) -> PathBuf {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("target/test-tmp").join(test);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(fixture);
        std::fs::copy(root.join("fixtures").join(fixture), &f).unwrap();
        f
    }

    fn nvtx_ranges(p: &Profile) -> usize {
        (0..p.nvtx.len()).filter(|&i| p.nvtx.is_range(i)).count()
    }

    /// (pid, tid) of every thread, sorted: ids may differ, threads do not.
    fn threads(p: &Profile) -> Vec<(u32, u32)> {
        let mut t: Vec<(u32, u32)> = p
            .threads
            .iter()
            .map(|t| (p.processes[t.process as usize].pid, t.tid))
            .collect();
        t.sort_unstable();
        t
    }

    #[test]
    fn a_counts_load_reads_no_cpu_rows_counts_them_and_writes_no_cache() {
        let f = copy("counts-load", "megatron_tp8.sqlite");
        let sources = [Source::File(f.clone())];
        let cache = CacheDir {
            dir: f.with_file_name("cache"),
            cap_bytes: cache::DEFAULT_CAP,
        };
        let counted = load_needed(&sources, Some(&cache), Need::Counts);
        let full = load_needed(&sources, None, Need::All);
        assert!(counted.errors.is_empty());
        let (c, p) = (&counted.profile, &full.profile);
        assert!(c.runtime.is_empty() && c.nvtx.is_empty() && c.nccl_api.thread.is_empty());
        let n = &c.cpu_counts;
        assert_eq!(n.runtime_calls.iter().sum::<usize>(), p.runtime.len());
        assert_eq!(n.nvtx_ranges.iter().sum::<usize>(), nvtx_ranges(p));
        assert!(!p.runtime.is_empty() && nvtx_ranges(p) > 0);
        assert!(p.cpu_counts.is_empty());
        assert_eq!(c.raw_span(), p.raw_span());
        assert_eq!(threads(c), threads(p));
        let json = |p: &Profile| {
            let clock = crate::analysis::clock::from_utc(p, Default::default());
            serde_json::to_string(&completeness(p, &clock, Window::ALL)).unwrap()
        };
        assert_eq!(json(c), json(p));
        assert!(counted.cache_use.is_empty() && counted.analyses_slot("s").is_none());
        assert!(!cache.dir.exists() || std::fs::read_dir(&cache.dir).unwrap().count() == 0);
    }

    #[test]
    fn nvtx_ranges_with_payloads_are_read_not_counted() {
        let f = copy("counts-payloads", "shared_stream_two_comms.sqlite");
        let c = rusqlite::Connection::open(&f).unwrap();
        c.execute_batch(include_str!(
            "../../../make-fixtures/src/nccl_payload_schemas.sql"
        ))
        .unwrap();
        c.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, binaryData)
               SELECT start, end, 59, 'ncclAllReduce', globalTid, 1, '4444333322221111'
               FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1",
            [],
        )
        .unwrap();
        drop(c);
        let sources = [Source::File(f)];
        let loaded = load_needed(&sources, None, Need::Counts);
        let p = &loaded.profile;
        assert!(loaded.errors.is_empty());
        assert!(!p.runtime.is_empty() && !p.nccl_api.thread.is_empty());
        assert!(p.cpu_counts.is_empty());
    }

    #[test]
    fn kernels_keep_their_correlation_ids_when_operation_ids_match_collectives() {
        let f = copy("counts-operation-ids", "megatron_tp8.sqlite");
        let load = |need| {
            let sources = [Source::File(f.clone())];
            load_needed(&sources, None, need).profile
        };
        let correlation = |p: &Profile| {
            (0..p.gpu.len())
                .map(|r| p.gpu.correlation(r))
                .collect::<Vec<_>>()
        };
        // Without operation ids, kernels' correlation ids are not read.
        let full = correlation(&load(Need::All));
        assert_ne!(correlation(&load(Need::Counts)), full);
        let c = rusqlite::Connection::open(&f).unwrap();
        c.execute_batch(
            "CREATE TABLE NCCL_GPU_OPERATIONS (operationId INTEGER, globalPid INTEGER, correlationId INTEGER)",
        )
        .unwrap();
        drop(c);
        assert_eq!(correlation(&load(Need::Counts)), full);
    }
}
