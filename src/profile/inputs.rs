//! Turning the command line's `FILE|DIR ...` into the list of export files:
//! a directory stands for the `.sqlite` files directly inside it.

use std::path::{Path, PathBuf};

/// The files `inputs` name, in order: a file as given (the loader reports
/// it if it is missing or not an export), a directory as its `.sqlite`
/// files (not recursive, hidden files skipped), sorted by name so that the
/// first file, the reference clock, does not depend on the file system's
/// order. Runs of digits compare as numbers (`rank2` before `rank10`), as
/// `nsys -o rank%q{SLURM_PROCID}` names are not zero-padded. Only `.sqlite` files: a capture directory also holds the
/// `.nsys-rep` reports and logs, which are not exports. A directory that
/// cannot be listed, or holds no export, is an input error (one line).
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            out.push(input.clone());
            continue;
        }
        let found = exports_in(input)?;
        if found.is_empty() {
            return Err(format!(
                "{}: a directory with no .sqlite exports in it",
                input.display()
            ));
        }
        out.extend(found);
    }
    Ok(out)
}

fn exports_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name();
        let is_export = Path::new(&name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("sqlite"));
        let hidden = name.to_string_lossy().starts_with('.');
        // A symlink to an export counts; `is_file` follows it.
        if is_export && !hidden && entry.path().is_file() {
            found.push(entry.path());
        }
    }
    found.sort_by(|a, b| by_name(a, b));
    Ok(found)
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
            "r.nsys-rep",
            ".hidden.sqlite",
        ] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        std::fs::create_dir_all(d.join("sub.sqlite")).unwrap();
        std::fs::write(d.join("sub.sqlite").join("inner.sqlite"), b"x").unwrap();
        let single = PathBuf::from("/given/first.sqlite");
        let got = expand_inputs(&[single.clone(), d.clone()]).unwrap();
        assert_eq!(
            got,
            vec![
                single,
                d.join("b.SQLITE"),
                d.join("rank2.sqlite"),
                d.join("rank10.sqlite"),
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
            format!("{}: a directory with no .sqlite exports in it", d.display())
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
