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
    &["stats", "--by", "device"],
    &["stats", "--by", "stream"],
    &["stats", "--of", "nvtx"],
    &["stats", "--of", "api"],
    &["stats", "--of", "osrt"],
    &["stats", "--of", "copies", "--by", "device"],
];

/// Each fixture file and fixture directory (a job's files), every
/// scenario job of `fixtures/jobs/` (files and directories), then each
/// real export.
fn inputs() -> Vec<PathBuf> {
    let fixtures = root().join("fixtures");
    let mut all = sqlite_files(&fixtures);
    all.extend(
        dirs_in(&fixtures)
            .into_iter()
            .filter(|p| !p.ends_with("jobs")),
    );
    let jobs = fixtures.join("jobs");
    all.extend(sqlite_files(&jobs));
    all.extend(dirs_in(&jobs));
    all.extend(sqlite_files(&real_profiles()));
    all
}

fn dirs_in(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
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

/// The row's key (device, when rows come per device in the columns) and
/// name cell: what follows the eight figures.
fn stats_row(line: &str) -> Option<(String, String)> {
    let mut words: Vec<&str> = line.split_whitespace().collect();
    fn number(w: &&str) -> bool {
        w.parse::<f64>().is_ok() || *w == "-"
    }
    let key = if words.len() > 9 && words[1..9].iter().all(number) {
        words.remove(0).to_string()
    } else {
        String::new()
    };
    let figures = words.iter().take_while(|w| number(w)).count();
    (figures == 8 && words.len() > figures).then(|| (key, words[figures..].join(" ")))
}

/// Names cut to fit stay distinct: four GEMMs of one family never print
/// as one name (per device when rows come per device).
#[test]
fn shortened_names_in_stats_tables_stay_distinct() {
    let mut merged = Vec::new();
    for input in inputs() {
        for by in ["name", "device"] {
            let o = rankline(&[
                "report",
                "stats",
                "--by",
                by,
                "--no-cache",
                input.to_str().unwrap(),
            ]);
            let text = stdout(&o);
            // Rows under a device heading line: each heading starts afresh.
            let mut seen = std::collections::HashSet::new();
            for line in text.lines() {
                match stats_row(line) {
                    Some(row) if !seen.insert(row.clone()) => {
                        merged.push(format!("{} --by {by}: {row:?}", input.display()));
                    }
                    Some(_) => {}
                    None if line.starts_with("  ") && !line.starts_with("    ") => seen.clear(),
                    None => {}
                }
            }
        }
    }
    assert!(
        merged.is_empty(),
        "names printed twice in one table:\n{}",
        merged.join("\n")
    );
}
