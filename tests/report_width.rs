//! Every text report fits 100 columns (display columns: wide characters
//! count two) on every bundled fixture and every real export: tables
//! shorten names with `…`, notes wrap. `report all` is every section in a
//! row, so each section is checked on its own to name the one that spills.

mod common;

use common::*;
use std::path::PathBuf;
use unicode_width::UnicodeWidthStr;

const SECTIONS: &[&[&str]] = &[
    &["summary"],
    &["nccl"],
    &["overlap"],
    &["skew"],
    &["launch"],
    &["anomalies"],
    &["stragglers"],
    &["clock"],
    &["behind"],
    &["why"],
    &["stats"],
    &["stats", "--by", "stream"],
    &["stats", "--of", "nvtx"],
    &["stats", "--of", "api"],
    &["stats", "--of", "osrt"],
    &["stats", "--of", "copies", "--by", "device"],
];

/// The scenario jobs of `fixtures/jobs/` (each a capture of its own)
/// checked here: one of each shape of communicator (3D with payloads, a
/// four-stage pipeline, CUDA graphs); the others print the same tables.
const JOBS: [&str; 3] = ["3d_dedicated_payloads", "pp4", "cuda_graphs"];

/// Each fixture file and fixture directory (a job's files), the jobs
/// above, then each real export.
fn inputs() -> Vec<PathBuf> {
    let fixtures = root().join("fixtures");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("jobs"))
        .collect();
    dirs.sort();
    let mut all = sqlite_files(&fixtures);
    all.extend(dirs);
    all.extend(
        JOBS.iter()
            .map(|j| fixtures.join("jobs").join(format!("{j}.sqlite"))),
    );
    all.extend(sqlite_files(&real_profiles()));
    all
}

#[test]
fn every_text_report_fits_100_columns_on_every_fixture_and_real_export() {
    let mut wide = Vec::new();
    for input in inputs() {
        for section in SECTIONS {
            let mut args = vec!["report"];
            args.extend(section.iter());
            args.extend(["--no-cache", input.to_str().unwrap()]);
            let o = rankline(&args);
            let section = section.join(" ");
            for line in stdout(&o).lines() {
                if line.width() > 100 {
                    wide.push(format!(
                        "{section} {} ({} cols): {line}",
                        input.display(),
                        line.width()
                    ));
                }
            }
        }
    }
    assert!(
        wide.is_empty(),
        "{} lines over 100 columns:\n{}",
        wide.len(),
        wide.join("\n")
    );
}
