//! A file read in many small ranges by several readers gives the model one
//! scan per table gives, on the fixtures and on the real exports.

use super::*;
use crate::profile::FileProfile;
use crate::profile::load::load_file_planned;
use std::path::PathBuf;

/// Everything of a loaded profile, columns as bytes.
fn contents(p: &FileProfile) -> (String, Vec<(&'static str, Vec<u8>)>) {
    let tables = format!(
        "{:?}",
        (
            &p.files,
            &p.hosts,
            (0..p.strings.len() as u32)
                .map(|s| p.strings.get(s))
                .collect::<Vec<_>>(),
            &p.processes,
            &p.threads,
            &p.devices,
            &p.contexts,
            &p.lanes,
            &p.nccl_api,
            &p.nccl_ops,
            (&p.runtime_by_thread, &p.nvtx_by_thread, &p.osrt_by_thread),
            (
                &p.samples_by_thread,
                &p.sched_by_thread,
                &p.syncs_by_process
            ),
        )
    );
    let columns = crate::profile::cache::columns(p)
        .into_iter()
        .map(|(name, bytes)| (name, bytes.to_vec()))
        .collect();
    (tables, columns)
}

fn load(path: &Path, plan: ReadPlan) -> FileProfile {
    let source = Source::File(path.to_path_buf());
    load_file_planned(&source, 0, &mut |_, _, _| {}, &plan).unwrap_or_else(|e| panic!("{e}"))
}

/// One scan per table on one connection: the sequential load.
const SEQUENTIAL: ReadPlan = ReadPlan {
    readers: 1,
    rows_per_range: 0,
    need: Need::All,
};

fn assert_ranges_change_nothing(files: &[PathBuf]) {
    assert!(!files.is_empty());
    for f in files {
        let sequential = load(f, SEQUENTIAL);
        let events = sequential.gpu.len() + sequential.runtime.len() + sequential.nvtx.len();
        assert!(events > 0, "{f:?} has no rows");
        let want = contents(&sequential);
        for plan in [
            ReadPlan {
                readers: 1,
                rows_per_range: 3,
                need: Need::All,
            },
            ReadPlan {
                readers: 4,
                rows_per_range: 5,
                need: Need::All,
            },
            ReadPlan {
                readers: 3,
                rows_per_range: 64,
                need: Need::All,
            },
        ] {
            let got = contents(&load(f, plan));
            assert!(got.0 == want.0, "{f:?} with {plan:?}: tables differ");
            for (g, w) in got.1.iter().zip(&want.1) {
                assert!(g == w, "{f:?} with {plan:?}: column {} differs", w.0);
            }
        }
    }
}

fn sqlite_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    files.sort();
    files
}

#[test]
fn fixtures_read_in_small_ranges_by_several_readers_load_as_one_scan_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    assert_ranges_change_nothing(&sqlite_files(&dir));
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn real_exports_read_in_small_ranges_by_several_readers_load_as_one_scan_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-profiles");
    assert_ranges_change_nothing(&sqlite_files(&dir));
}

#[test]
fn a_table_is_split_into_bounded_ranges_that_cover_its_rowids() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite");
    let conn = crate::profile::open_readonly(&path).unwrap();
    let schema = Schema::read(&conn, &path).unwrap();
    let plan = ReadPlan {
        readers: 2,
        rows_per_range: 100,
        need: Need::All,
    };
    // As `raw::row_hint` gives them: none for a table the export lacks
    // (the fixture has no OS runtime calls or samples).
    let hints: Vec<usize> = TABLES
        .iter()
        .map(|t| {
            if schema.has_table(t.name()) {
                1_000_000
            } else {
                0
            }
        })
        .collect();
    let jobs = jobs(&conn, &schema, &hints, &plan);
    let kernels: Vec<Rows> = jobs
        .iter()
        .filter(|j| j.table == 0)
        .map(|j| j.rows)
        .collect();
    let (lo, hi) = rowid_bounds(&conn, &schema, spec::KERNEL.table).unwrap();
    assert!(hi - lo > 300, "the fixture has enough kernels to split");
    assert_eq!(kernels.first(), Some(&Rows::Between(lo, lo + 99)));
    for w in kernels.windows(2) {
        let (Rows::Between(_, a), Rows::Between(b, _)) = (w[0], w[1]) else {
            panic!("{w:?}")
        };
        assert_eq!(a + 1, b);
    }
    assert!(matches!(kernels.last(), Some(Rows::Between(_, h)) if *h == hi));
    assert!(
        jobs.iter().all(|j| j.hint <= 100),
        "hints bounded by the range"
    );
    // Every table has a job, in table order; a missing one reads nothing.
    let tables: Vec<usize> = jobs.iter().map(|j| j.table).collect();
    assert!(tables.is_sorted());
    assert_eq!(
        tables
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        TABLES.len()
    );
}
