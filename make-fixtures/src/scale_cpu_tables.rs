//! `scale --cpu`: writing the tables, one per pass (scale_cpu.rs has the thread model,
//! scale_sync.rs the synchronization and event rows, scale_frames.rs the callchains).

use rusqlite::{Statement, Transaction, params};

use super::super::sync::{self, SyncGen};
use super::super::{Plan, ScaleWriter};
use super::{CpuGen, Ids};
use crate::scale_step::{Spec, Template};

/// A table's INSERT: the columns, and one row's VALUES with `?` for each bound value.
struct Sql {
    table: Table,
    name: &'static str,
    cols: &'static str,
    row: &'static str,
}

const TABLES: [Sql; 6] = [
    Sql {
        table: Table::Osrt,
        name: "OSRT_API",
        cols: "start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId, argumentsId",
        row: "(?, ?, 27, ?, ?, 0, 0, 0, 0)",
    },
    Sql {
        table: Table::Sched,
        name: "SCHED_EVENTS",
        cols: "start, cpu, isSchedIn, globalTid, threadState, threadBlock",
        row: "(?, ?, ?, ?, 0, NULL)",
    },
    Sql {
        table: Table::Composite,
        name: "COMPOSITE_EVENTS",
        cols: "id, start, cpu, threadState, globalTid, cpuCycles",
        row: "(?, ?, ?, 1, ?, 1)",
    },
    Sql {
        table: Table::Callchains,
        name: "SAMPLING_CALLCHAINS",
        cols: "id, symbol, module, kernelMode, thumbCode, unresolved, specialEntry, originalIP, unwindMethod, stackDepth",
        row: "(?, ?, ?, ?, 0, ?, NULL, ?, ?, ?)",
    },
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
    Osrt,
    Sched,
    Composite,
    Callchains,
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

/// Creates and fills the CPU, synchronization and CUDA event tables; returns their row counts.
/// Each table is one pass: a thread simulates and generates the rows step by step while
/// this one inserts them.
pub fn write(
    tx: &Transaction,
    ids: &Ids,
    tpl: &Template,
    specs: &[Spec],
    plan: &Plan,
    t0: std::time::Instant,
) -> rusqlite::Result<Vec<(&'static str, u64)>> {
    for (_, ddl) in crate::ddl::OSRT_TABLES
        .iter()
        .chain(crate::ddl::SYNC_SCHED_TABLES)
    {
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
            scope.spawn(|| produce(sql.table, ids, tpl, specs, plan, send));
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
    counts.push(("OSRT_CALLCHAINS", 0));
    Ok(counts)
}

/// Sends the rows of `table`, one step at a time, flat (the values of each row in turn).
fn produce(
    table: Table,
    ids: &Ids,
    tpl: &Template,
    specs: &[Spec],
    plan: &Plan,
    send: std::sync::mpsc::SyncSender<Vec<i64>>,
) {
    let mut sim = ScaleWriter::new(tpl, specs, plan);
    let mut cpu = CpuGen::new(plan.devices);
    let mut sync = SyncGen::new(plan.devices);
    let frames = &ids.frames;
    let mut stack = vec![];
    for s in 0..plan.steps {
        sim.step(s);
        let mut v = vec![];
        match table {
            Table::Sync => {
                sync.step(&sim);
                sync.sync_rows(&mut v);
            }
            Table::Event => {
                sync.step(&sim);
                sync.event_rows(&mut v);
            }
            _ => {
                cpu.step(&sim);
                let rows = &cpu.rows;
                let id0 = cpu.next_id;
                match table {
                    Table::Osrt => {
                        for r in &rows.osrt {
                            v.extend([r.start, r.end, r.gtid, ids.osrt[r.name as usize]]);
                        }
                    }
                    Table::Sched => {
                        for r in &rows.sched {
                            v.extend([r.t, r.cpu as i64, r.sched_in as i64, r.gtid]);
                        }
                    }
                    Table::Composite => {
                        for (k, r) in rows.samples.iter().enumerate() {
                            v.extend([id0 + k as i64, r.t, r.cpu as i64, r.gtid]);
                        }
                    }
                    _ => {
                        for (k, r) in rows.samples.iter().enumerate() {
                            let id = id0 + k as i64;
                            frames.stack(id, r.kind, &mut stack);
                            for (depth, &f) in stack.iter().rev().enumerate() {
                                let fr = &frames.frames[f as usize];
                                let ip = if depth == 0 {
                                    frames.leaf_ip(f, id)
                                } else {
                                    fr.ip
                                };
                                v.extend([
                                    id,
                                    fr.symbol,
                                    fr.module,
                                    fr.kernel as i64,
                                    fr.unresolved as i64,
                                    ip,
                                    fr.unwind,
                                    depth as i64,
                                ]);
                            }
                        }
                    }
                }
                cpu.next_id += rows.samples.len() as i64;
                cpu.clear();
            }
        }
        if send.send(v).is_err() {
            return; // the writer failed
        }
    }
}
