//! Turning the command line's `FILE|DIR ...` into the list of input files:
//! a directory stands for the `.sqlite` exports and the `.nsys-rep` (or
//! `.qdrep`) reports directly inside it.

use std::path::{Path, PathBuf};

/// The extensions of nsys reports (`.qdrep`: before nsys 2021.3), which
/// rankline reads through an export made with the user's nsys.
const REPORT_EXTENSIONS: [&str; 2] = ["nsys-rep", "qdrep"];

/// Whether `path` names an nsys report rather than an SQLite export.
pub fn is_nsys_report(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| REPORT_EXTENSIONS.iter().any(|r| e.eq_ignore_ascii_case(r)))
}

/// Whether a directory input reads the entry `name`: an export's or a
/// report's name (any case), not hidden.
pub fn is_input_name(name: &std::ffi::OsStr) -> bool {
    let path = Path::new(name);
    let is_export = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("sqlite"));
    (is_export || is_nsys_report(path)) && !name.to_string_lossy().starts_with('.')
}

/// The files `inputs` name, in order (see [`expand_inputs_noting`]).
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    expand_inputs_noting(inputs).map(|(files, _)| files)
}

/// The files `inputs` name, in order, and one line per directory in which
/// a report was passed over for its export. A file is taken as given (the
/// loader reports it if it is missing or not an export); a directory as
/// its entries named like `.sqlite` exports and nsys reports (not
/// recursive, hidden files skipped, not judged here: one that is not a
/// readable file is the loader's error), sorted by name so that the first file, the reference clock,
/// does not depend on the file system's order. Runs of digits compare as
/// numbers (`rank2` before `rank10`), as `nsys -o rank%q{SLURM_PROCID}`
/// names are not zero-padded. A report whose export is beside it
/// (`x.nsys-rep` and `x.sqlite`) is read through that export: it is the
/// same capture, and needs no nsys. A directory that cannot be listed, or
/// holds neither, is an input error (one line).
pub fn expand_inputs_noting(inputs: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            out.push(input.clone());
            continue;
        }
        let (found, passed_over) = exports_in(input)?;
        if found.is_empty() {
            return Err(format!(
                "{}: a directory with no .sqlite exports or .nsys-rep reports in it",
                input.display()
            ));
        }
        if !passed_over.is_empty() {
            notes.push(passed_over_note(input, &passed_over));
        }
        out.extend(found);
    }
    Ok((out, notes))
}

/// The line saying which reports of `dir` were read through the export
/// beside them.
fn passed_over_note(dir: &Path, reports: &[String]) -> String {
    const NAMED: usize = 3;
    let mut named = reports[..reports.len().min(NAMED)].join(", ");
    if reports.len() > NAMED {
        named += &format!(" and {} more", reports.len() - NAMED);
    }
    let (n, have) = match reports.len() {
        1 => ("1 report".to_string(), "has"),
        n => (format!("{n} reports"), "have"),
    };
    format!(
        "{}: {n} {have} a .sqlite export beside {}, read instead ({named})",
        dir.display(),
        if reports.len() == 1 { "it" } else { "them" }
    )
}

/// The exports and reports in `dir` (sorted), and the names of the
/// reports left out because their export is there too.
fn exports_in(dir: &Path) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut found = Vec::new();
    let mut reports = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name();
        // Whatever it is: a broken symlink, a FIFO or a subdirectory named
        // like an export is a rank's file missing, which the loader says
        // (one line each) while the rest still loads.
        if is_input_name(&name) {
            if is_nsys_report(Path::new(&name)) {
                reports.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    let mut passed_over = Vec::new();
    for report in reports {
        let export = report.with_extension("sqlite");
        if found.iter().any(|f| same_stem(f, &export)) {
            passed_over.push(report);
        } else {
            found.push(report);
        }
    }
    found.sort_by(|a, b| by_name(a, b));
    passed_over.sort_by(|a, b| by_name(a, b));
    let names = passed_over
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    Ok((found, names))
}

/// Whether `export` is the export named like `wanted` (`x.sqlite` or
/// `x.SQLITE`).
fn same_stem(export: &Path, wanted: &Path) -> bool {
    export.file_stem() == wanted.file_stem()
}

/// File names in natural order: digit runs by value, the rest by bytes.
fn by_name(a: &Path, b: &Path) -> std::cmp::Ordering {
    let name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    let (a, b) = (name(a), name(b));
    natural_key(&a)
        .cmp(&natural_key(&b))
        .then_with(|| a.cmp(&b))
}

/// Text runs, and digit runs as (length without leading zeros, digits):
/// comparing those compares the numbers, however long.
fn natural_key(s: &str) -> Vec<(bool, usize, &str)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let digit = c.is_ascii_digit();
        let end = rest
            .find(|x: char| x.is_ascii_digit() != digit)
            .unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        if digit {
            let n = run.trim_start_matches('0');
            out.push((true, n.len(), n));
        } else {
            out.push((false, 0, run));
        }
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rankline-inputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_directory_is_its_sqlite_files_in_natural_name_order_not_recursive() {
        let d = dir("order");
        for f in [
            "rank10.sqlite",
            "rank2.sqlite",
            "b.SQLITE",
            "log.txt",
            "notes.nsys-rep.txt",
            ".hidden.sqlite",
        ] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        std::fs::create_dir_all(d.join("sub.sqlite")).unwrap();
        std::fs::write(d.join("sub.sqlite").join("inner.sqlite"), b"x").unwrap();
        std::os::unix::fs::symlink(d.join("moved-away"), d.join("rank3.sqlite")).unwrap();
        let single = PathBuf::from("/given/first.sqlite");
        let got = expand_inputs(&[single.clone(), d.clone()]).unwrap();
        assert_eq!(
            got,
            vec![
                single,
                d.join("b.SQLITE"),
                d.join("rank2.sqlite"),
                d.join("rank3.sqlite"),
                d.join("rank10.sqlite"),
                d.join("sub.sqlite"),
            ]
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_directory_without_exports_is_an_input_error() {
        let d = dir("empty");
        std::fs::write(d.join("notes.txt"), b"x").unwrap();
        let err = expand_inputs(std::slice::from_ref(&d)).unwrap_err();
        assert_eq!(
            err,
            format!(
                "{}: a directory with no .sqlite exports or .nsys-rep reports in it",
                d.display()
            )
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_directory_holds_reports_too_and_an_export_beside_its_report_is_read_instead() {
        let d = dir("reports");
        for f in [
            "rank0.nsys-rep",
            "rank0.sqlite",
            "rank1.nsys-rep",
            "rank2.qdrep",
            "rank10.NSYS-REP",
            "rank10.sqlite",
        ] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        let (got, notes) = expand_inputs_noting(std::slice::from_ref(&d)).unwrap();
        assert_eq!(
            got,
            vec![
                d.join("rank0.sqlite"),
                d.join("rank1.nsys-rep"),
                d.join("rank2.qdrep"),
                d.join("rank10.sqlite"),
            ]
        );
        assert_eq!(
            notes,
            vec![format!(
                "{}: 2 reports have a .sqlite export beside them, read instead (rank0.nsys-rep, rank10.NSYS-REP)",
                d.display()
            )]
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_note_names_three_reports_at_most() {
        let names: Vec<String> = (0..5).map(|i| format!("r{i}.nsys-rep")).collect();
        assert_eq!(
            passed_over_note(Path::new("run"), &names),
            "run: 5 reports have a .sqlite export beside them, read instead (r0.nsys-rep, r1.nsys-rep, r2.nsys-rep and 2 more)"
        );
        assert_eq!(
            passed_over_note(Path::new("run"), &names[..1]),
            "run: 1 report has a .sqlite export beside it, read instead (r0.nsys-rep)"
        );
    }
}
