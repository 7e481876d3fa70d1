//! `make-fixtures scale --cpu`: the tables `--cpu` adds, derived from the simulation's calls
//! and kernels step by step, and written after the GPU and runtime tables, one table per pass
//! so that each is contiguous in the file. Each pass runs the simulation again, on a thread of
//! its own that hands the rows of each step to the writer; the generators are seeded and
//! consume the same draws in every pass, so the passes agree.

use rusqlite::{Statement, Transaction, params};

use super::sync::{self, SyncGen};
use super::{Plan, Sim};
use crate::scale_step::{Spec, Template};

/// A table's INSERT: the columns, and one row's VALUES with `?` for each bound value.
struct Sql {
    table: Table,
    name: &'static str,
    cols: &'static str,
    row: &'static str,
}

const TABLES: [Sql; 2] = [
    Sql {
        table: Table::Sync,
        name: "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        cols: sync::SYNC_COLS,
        row: sync::SYNC_ROW,
    },
    Sql {
        table: Table::Event,
        name: "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
        cols: sync::EVENT_COLS,
        row: sync::EVENT_ROW,
    },
];

/// Rows per multi-row INSERT.
const BATCH: usize = 64;

/// Inserts rows given as `width` values each, BATCH rows per statement.
struct Inserter<'c> {
    many: Statement<'c>,
    one: Statement<'c>,
    width: usize,
    rows: u64,
}

impl<'c> Inserter<'c> {
    fn new(tx: &'c Transaction, sql: &Sql) -> rusqlite::Result<Self> {
        let head = format!("INSERT INTO {} ({}) VALUES ", sql.name, sql.cols);
        Ok(Inserter {
            many: tx.prepare(&format!("{head}{}", vec![sql.row; BATCH].join(", ")))?,
            one: tx.prepare(&format!("{head}{}", sql.row))?,
            width: sql.row.matches('?').count(),
            rows: 0,
        })
    }

    fn insert(&mut self, values: &[i64]) -> rusqlite::Result<()> {
        debug_assert_eq!(values.len() % self.width, 0);
        let mut chunks = values.chunks_exact(self.width * BATCH);
        for c in &mut chunks {
            for (i, &v) in c.iter().enumerate() {
                self.many.raw_bind_parameter(i + 1, v)?;
            }
            self.many.raw_execute()?;
        }
        for r in chunks.remainder().chunks_exact(self.width) {
            for (i, &v) in r.iter().enumerate() {
                self.one.raw_bind_parameter(i + 1, v)?;
            }
            self.one.raw_execute()?;
        }
        self.rows += (values.len() / self.width) as u64;
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Sync,
    Event,
}

const ENUM_SYNC: [(i64, &str, &str); 5] = [
    (0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"),
    (
        1,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE",
        "Event sync",
    ),
    (
        2,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT",
        "Stream wait sync",
    ),
    (
        3,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE",
        "Stream sync",
    ),
    (
        4,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE",
        "Context sync",
    ),
];

/// Creates the synchronization and scheduling tables (SCHED_EVENTS stays empty) and fills the
/// synchronization and CUDA event tables; returns their row counts.
/// Each table is one pass: a thread simulates and generates the rows step by step while
/// this one inserts them.
pub fn write(
    tx: &Transaction,
    tpl: &Template,
    specs: &[Spec],
    plan: &Plan,
    t0: std::time::Instant,
) -> rusqlite::Result<Vec<(&'static str, u64)>> {
    for (_, ddl) in crate::ddl::SYNC_SCHED_TABLES {
        tx.execute_batch(ddl)?;
    }
    let mut en =
        tx.prepare("INSERT INTO ENUM_CUPTI_SYNC_TYPE (id, name, label) VALUES (?1, ?2, ?3)")?;
    for (id, name, label) in ENUM_SYNC {
        en.execute(params![id, name, label])?;
    }
    let mut counts = vec![];
    for sql in &TABLES {
        let mut ins = Inserter::new(tx, sql)?;
        let (send, recv) = std::sync::mpsc::sync_channel::<Vec<i64>>(4);
        std::thread::scope(|scope| {
            scope.spawn(|| produce(sql.table, tpl, specs, plan, send));
            for buf in recv {
                ins.insert(&buf)?;
            }
            Ok::<_, rusqlite::Error>(())
        })?;
        eprintln!(
            "  {} written ({:.1} s)",
            sql.name,
            t0.elapsed().as_secs_f64()
        );
        counts.push((sql.name, ins.rows));
    }
    counts.push(("ENUM_CUPTI_SYNC_TYPE", ENUM_SYNC.len() as u64));
    counts.push(("SCHED_EVENTS", 0));
    Ok(counts)
}

/// Sends the rows of `table`, one step at a time, flat (the values of each row in turn).
fn produce(
    table: Table,
    tpl: &Template,
    specs: &[Spec],
    plan: &Plan,
    send: std::sync::mpsc::SyncSender<Vec<i64>>,
) {
    let mut sim = Sim::new(tpl, specs, plan);
    let mut sync = SyncGen::new(plan.devices);
    for s in 0..plan.steps {
        sim.step(s);
        let mut v = vec![];
        sync.step(&sim);
        match table {
            Table::Sync => sync.sync_rows(&mut v),
            Table::Event => sync.event_rows(&mut v),
        }
        if send.send(v).is_err() {
            return; // the writer failed
        }
    }
}
