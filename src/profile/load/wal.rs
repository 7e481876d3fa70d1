//! A write-ahead log beside an export: rankline opens the file immutable
//! and read-only, so rows still in `FILE-wal` are not read. It says so,
//! and how to fold them in on a copy (never beside the input).

use crate::profile::model::FileProfile;
use std::path::{Path, PathBuf};

/// `path-wal`, when it exists and is not empty.
pub fn wal_beside(path: &Path) -> Option<PathBuf> {
    let mut name = path.as_os_str().to_os_string();
    name.push("-wal");
    let wal = PathBuf::from(name);
    let meta = std::fs::metadata(&wal).ok()?;
    (meta.is_file() && meta.len() > 0).then_some(wal)
}

/// Records, per file of a freshly opened single-file profile, the
/// write-ahead log beside it.
pub fn note_wal(p: &mut FileProfile) {
    for f in &mut p.files {
        f.wal = wal_beside(&f.path);
    }
}

/// A word for the shell, single-quoted when it needs to be.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The commands that copy `path` and its `wal` to /tmp and fold the log
/// into the copy; the copy is then a complete export.
pub fn fold_command(path: &Path, wal: &Path) -> (String, PathBuf) {
    let name = path.file_name().map_or_else(
        || std::ffi::OsString::from("export.sqlite"),
        |n| n.to_os_string(),
    );
    let copy = Path::new("/tmp").join(name);
    let command = format!(
        "cp -- {} {} /tmp/ && sqlite3 {} 'PRAGMA wal_checkpoint(TRUNCATE)'",
        shell_word(&path.to_string_lossy()),
        shell_word(&wal.to_string_lossy()),
        shell_word(&copy.to_string_lossy())
    );
    (command, copy)
}

/// The warning for a write-ahead log beside an export.
pub fn wal_warning(path: &Path, wal: &Path) -> String {
    let (command, copy) = fold_command(path, wal);
    format!(
        "{} beside {} holds writes not yet in it, and rankline reads the file alone (read-only): the newest rows may be missing. To fold them in on a copy: {command}, then open {}",
        wal.display(),
        path.display(),
        copy.display()
    )
}

/// The same, short enough for a title bar.
pub fn wal_title(path: &Path, wal: &Path) -> String {
    let (command, _) = fold_command(path, wal);
    format!(
        "{} not read; fold it in on a copy: {command}",
        wal.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fold_command_quotes_paths_and_works_on_a_copy() {
        let (cmd, copy) =
            fold_command(Path::new("run 1/a.sqlite"), Path::new("run 1/a.sqlite-wal"));
        assert_eq!(
            cmd,
            "cp -- 'run 1/a.sqlite' 'run 1/a.sqlite-wal' /tmp/ && sqlite3 /tmp/a.sqlite 'PRAGMA wal_checkpoint(TRUNCATE)'"
        );
        assert_eq!(copy, Path::new("/tmp/a.sqlite"));
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
