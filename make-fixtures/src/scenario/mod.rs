//! The scenario engine: plays every `make-fixtures/scenarios/*.toml` (spec.rs) into
//! `fixtures/jobs/<name>.sqlite` (one host) or `fixtures/jobs/<name>/node<k>.sqlite` /
//! `rank<k>.sqlite` (several, each file on its host's clock), and `<name>.truth.json`. One
//! pipeline for all of them: layout (ranks → communicators) → program (each rank's ops) →
//! streams (the policy's ids) → simulate (a dependency graph) → graph (times) → emit (the
//! nsys rows, per file) → hosts (each file's clock) → truth.

mod emit;
mod graph;
mod hosts;
mod keyed;
mod layout;
mod payload;
mod program;
pub mod scale;
mod simulate;
mod spec;
mod streams;
mod truth;
mod truth_steps;

use std::path::{Path, PathBuf};

use rusqlite::{Transaction, params};

use crate::model::global_tid;
use crate::writer::{self, Strings};

/// Where the scenario files are (read at run time: adding one needs no code).
fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Writes every scenario's jobs, in file name order.
pub fn write_all() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("make-fixtures/scenarios")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    std::fs::create_dir_all(crate::root().join("fixtures/jobs")).expect("fixtures/jobs");
    for f in files {
        for job in spec::load(&f) {
            play(&job.name, &job.spec);
        }
    }
}

fn play(name: &str, spec: &spec::Spec) {
    play_into(name, spec, &format!("fixtures/jobs/{name}"));
}

/// Plays `spec` into `<stem>.sqlite` (one host) or `<stem>/node<k>.sqlite` /
/// `<stem>/rank<k>.sqlite`, and `<stem>.truth.json`; `stem` is relative to the root (a
/// fixture) or absolute.
fn play_into(name: &str, spec: &spec::Spec, stem: &str) {
    let layout = layout::Layout::new(spec);
    let programs = program::build(spec, &layout);
    let first_use: Vec<_> = programs.iter().map(|p| program::first_use(p)).collect();
    let streams = streams::Streams::new(spec.streams, &layout, &first_use);
    let sim = simulate::run(spec, &layout, &streams, &programs);
    let times = sim.graph.eval(simulate::ORIGIN, &[]);
    let comm_ids: Vec<u64> = layout
        .comms
        .iter()
        .map(|c| keyed::rng(spec.seed, &[keyed::label("comm"), keyed::label(&c.name)]).next_u64())
        .collect();
    let files = hosts::files(spec, stem);
    let out = emit::emit(spec, &layout, &streams, &sim, &times, &comm_ids, &files);
    let clocks = (spec.files != spec::Files::Job).then(|| {
        let spans: Vec<_> = out
            .files
            .iter()
            .map(|f| crate::clock::event_span(&f.profile))
            .collect();
        hosts::clocks(spec, &files, &spans)
    });
    for (i, mut f) in out.files.into_iter().enumerate() {
        if !files[i].written {
            continue;
        }
        if let Some(c) = &clocks {
            // the file's own clock: every timestamp, the payloads' and waits' too
            let c = &c.files[i];
            c.apply(&mut f.profile);
            f.blobs.iter_mut().for_each(|b| b.0 = c.file_time(b.0));
            for o in &mut f.osrt {
                (o.2, o.3) = (c.file_time(o.2), c.file_time(o.3));
            }
        }
        let extra = |tx: &Transaction, st: &mut Strings| {
            if spec.payloads {
                crate::payloads::extra(&f.blobs, tx)?;
            }
            if spec.payload_tables {
                crate::payload_tables::convert(tx, st)?;
            }
            write_osrt(tx, st, &f.osrt)
        };
        let path = &f.profile.path;
        match &clocks {
            None => {
                let file = crate::root().join(path);
                writer::write_with(&f.profile, &file, &extra)
                    .unwrap_or_else(|e| panic!("writing {path}: {e}"));
                let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
                println!("{path} ({} KiB)", size.div_ceil(1024));
            }
            Some(c) => {
                let cap = hosts::capture(spec, &files[i]);
                crate::clock::write_file_with(
                    &crate::root(),
                    &f.profile,
                    &c.files[i],
                    &cap,
                    &extra,
                );
            }
        }
    }
    let t = truth::truth(&truth::Input {
        name,
        spec,
        layout: &layout,
        streams: &streams,
        sim: &sim,
        times: &times,
        comm_ids: &comm_ids,
        corr: &out.corr,
        files: &files,
        clocks: clocks.as_ref(),
    });
    crate::save_at(&crate::root().join(format!("{stem}.truth.json")), &t);
}

/// The OS runtime trace's tables and its waits (none: no tables, as nsys without
/// `--trace osrt`).
fn write_osrt(
    tx: &Transaction,
    st: &mut Strings,
    rows: &[(u32, u32, i64, i64)],
) -> rusqlite::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    // the OS runtime trace's own tables (no CPU sampling: not its tables either)
    for (_, ddl) in crate::ddl::OSRT_TABLES
        .iter()
        .filter(|(name, _)| name.starts_with("OSRT_"))
    {
        tx.execute_batch(ddl)?;
    }
    for &(pid, tid, s, e) in rows {
        tx.execute(
            "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId, argumentsId) VALUES (?1, ?2, 27, ?3, ?4, 0, 0, 0, 0)",
            params![s, e, global_tid(pid, tid), st.id(emit::COND_WAIT)],
        )?;
    }
    Ok(())
}
