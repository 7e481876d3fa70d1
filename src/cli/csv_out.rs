//! Where a report's CSV tables go: one table to stdout, or every table
//! (or the one `--table` names) to a file of its own under `--out-dir`.

use super::messages::{fail, say};
use rankline::profile::out_file;
use rankline::report::csv_tables::Table;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `--table` and `--out-dir`, for `--format csv`.
#[derive(clap::Args, Clone, Default)]
pub(super) struct CsvArgs {
    /// CSV: the one table to print, by name or its end (`skew.groups`, `groups`)
    #[arg(long, value_name = "NAME")]
    table: Option<String>,
    /// CSV: write each table to DIR/<name>.csv (made if missing)
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

impl CsvArgs {
    /// The refusal when these are given without `--format csv`.
    pub(super) fn refused_without_csv(&self, csv: bool) -> Option<&'static str> {
        (!csv && (self.table.is_some() || self.out_dir.is_some()))
            .then_some("--table and --out-dir are for --format csv")
    }
}

/// Prints or writes `tables` of the command `what` (`report skew`) on
/// `inputs` (the command line's) as `args` say. A choice the tables
/// cannot meet is a usage error that names them.
pub(super) fn write(
    what: &str,
    tables: &[Table],
    args: &CsvArgs,
    inputs: &[PathBuf],
) -> Result<(), ExitCode> {
    let names = || {
        tables
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let picked: Vec<&Table> = match &args.table {
        Some(name) => {
            // The whole name, or without its section (`files` is
            // `summary.files`, not `summary.clock.files`), or an end that
            // names one table (`ops`).
            let is = |t: &&Table| {
                t.name == *name || t.name.split_once('.').is_some_and(|(_, rest)| rest == name)
            };
            let ends = |t: &&Table| t.name.ends_with(&format!(".{name}"));
            let found: Vec<&Table> = match tables.iter().find(is) {
                Some(t) => vec![t],
                None => tables.iter().filter(ends).collect(),
            };
            match found.len() {
                0 => {
                    return Err(fail(format!(
                        "--table {name}: {what} has no such table (its tables: {})",
                        names()
                    )));
                }
                1 => found,
                _ => {
                    let these: Vec<&str> = found.iter().map(|t| t.name.as_str()).collect();
                    return Err(fail(format!(
                        "--table {name}: names {} tables of {what} ({}): give more of the name",
                        found.len(),
                        these.join(", ")
                    )));
                }
            }
        }
        None => tables.iter().collect(),
    };
    if let Some(dir) = &args.out_dir {
        return write_files(dir, &picked, inputs);
    }
    match picked.as_slice() {
        [] => Err(fail(format!("{what} has no table to write as CSV"))),
        [one] => {
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = std::io::stdout().lock().write_all(one.to_csv().as_bytes());
            Ok(())
        }
        _ => Err(fail(format!(
            "{what} has {} tables ({}): name one with --table NAME, or write each with --out-dir DIR",
            picked.len(),
            names()
        ))),
    }
}

/// Each table to `dir/<name>.csv`, said in a line per file on stdout;
/// none when one of them would be refused (exit 2): never over an input,
/// never through a symbolic link at a table's name.
fn write_files(dir: &Path, tables: &[&Table], inputs: &[PathBuf]) -> Result<(), ExitCode> {
    let shown = rankline::text_safe::path_text(dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        say(format!("{shown}: cannot make the directory: {e}"));
        return Err(ExitCode::FAILURE);
    }
    let paths: Vec<PathBuf> = tables
        .iter()
        .map(|t| dir.join(format!("{}.csv", t.name)))
        .collect();
    for path in &paths {
        if let Err(why) = out_file::check(path, inputs) {
            return Err(fail(format!("--out-dir {why}")));
        }
    }
    let mut out = std::io::stdout().lock();
    for (t, path) in tables.iter().zip(&paths) {
        let csv = t.to_csv();
        match out_file::write(path, inputs, |w| {
            w.write_all(csv.as_bytes()).map_err(|e| e.to_string())
        }) {
            Ok(()) => {}
            Err(out_file::Error::Refused(why)) => return Err(fail(format!("--out-dir {why}"))),
            Err(out_file::Error::Failed(why)) => {
                say(format!("cannot write {why}"));
                return Err(ExitCode::FAILURE);
            }
        }
        let rows = t.rows.len();
        let _ = writeln!(
            out,
            "{} ({rows} row{})",
            rankline::text_safe::path_text(path),
            if rows == 1 { "" } else { "s" }
        );
    }
    Ok(())
}
