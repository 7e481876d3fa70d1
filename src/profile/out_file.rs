//! Writing a file rankline makes (a trace, CSV tables, bookmarks) so that
//! nothing else is lost by it: never over one of the inputs or where a
//! directory input would read it back as one, never through a symbolic
//! link at the name (a temp beside it, made with no-follow, renamed over
//! the name), and a FIFO or character device written in place, never
//! renamed over (`--out /dev/null`, `--out >(gzip …)`).

use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file was not written: refused before a byte was written (exit 2
/// for a command line's `--out`), or failed while writing (exit 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    Refused(String),
    Failed(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Refused(s) | Error::Failed(s) => f.write_str(s),
        }
    }
}

/// How `path` is written.
enum How {
    /// A temp beside it renamed over it (whatever was at the name, a
    /// symbolic link included, is replaced and never written through).
    Replace,
    /// Opened and written in place: a FIFO or character device, at the
    /// name or where a symbolic link at the name points.
    Stream { follow: bool },
}

/// Whether `path` may be written while `inputs` (the command line's files
/// and directories) are read: `Err` is the refusal, one line naming it.
pub fn check(path: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    how(path, inputs).map(|_| ())
}

/// Writes `path` with `body`, as [`check`] allows: a regular file (or a
/// new one) is made whole under a temp name beside it and renamed over it
/// when `body` succeeds, so a refusal or failure leaves what was there.
pub fn write<T>(
    path: &Path,
    inputs: &[PathBuf],
    body: impl FnOnce(&mut dyn Write) -> Result<T, String>,
) -> Result<T, Error> {
    let shown = crate::text_safe::path_text(path);
    let failed = |why: String| Error::Failed(format!("{shown}: {why}"));
    match how(path, inputs).map_err(Error::Refused)? {
        How::Stream { follow } => {
            let file = open_stream(path, follow).map_err(|e| match e {
                Opened::Refused(why) => Error::Refused(format!("{shown}: {why}")),
                Opened::Io(e) => failed(e.to_string()),
            })?;
            let mut out = std::io::BufWriter::new(file);
            let n = body(&mut out).map_err(failed)?;
            out.flush().map_err(|e| failed(e.to_string()))?;
            Ok(n)
        }
        How::Replace => {
            let (temp, file) = create_temp(path).map_err(|e| failed(e.to_string()))?;
            let mut out = std::io::BufWriter::new(file);
            let n = body(&mut out).map_err(failed)?;
            out.flush().map_err(|e| failed(e.to_string()))?;
            drop(out);
            std::fs::rename(temp.path(), path).map_err(|e| failed(e.to_string()))?;
            Ok(n)
        }
    }
}

/// What is at `path` decides how it is written, or that it is not.
fn how(path: &Path, inputs: &[PathBuf]) -> Result<How, String> {
    let shown = crate::text_safe::path_text(path);
    let refuse = |why: &str| Err(format!("{shown}: {why}"));
    let at = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return not_reread(path, inputs).map(|()| How::Replace);
        }
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let kind = at.file_type();
    // What would be written: the link itself when it is replaced, else
    // the file it leads to.
    let (how, written) = if kind.is_symlink() {
        match std::fs::metadata(path) {
            Ok(t) if t.file_type().is_fifo() || t.file_type().is_char_device() => {
                (How::Stream { follow: true }, t)
            }
            _ => (How::Replace, at),
        }
    } else if kind.is_fifo() || kind.is_char_device() {
        (How::Stream { follow: false }, at)
    } else if kind.is_block_device() {
        return refuse(
            "is a block device: rankline writes files, FIFOs and character devices, never a disk",
        );
    } else if kind.is_dir() {
        return refuse("is a directory");
    } else if !kind.is_file() {
        return refuse("is not a regular file, a FIFO or a character device");
    } else {
        (How::Replace, at)
    };
    if read_files(inputs).contains(&(written.dev(), written.ino())) {
        return refuse("is one of the inputs: rankline never writes over a file it reads");
    }
    not_reread(path, inputs).map(|()| how)
}

/// Refuses `path` where an input directory would read it back.
fn not_reread(path: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    match reread_in(path, inputs) {
        None => Ok(()),
        Some(dir) => Err(format!(
            "{}: is in the input directory {}, where rankline would read it as an input",
            crate::text_safe::path_text(path),
            crate::text_safe::path_text(&dir)
        )),
    }
}

/// (device, inode) of every file `inputs` read, those given and those in
/// the directories given, by the name given (a symbolic link) and the
/// file it leads to.
fn read_files(inputs: &[PathBuf]) -> Vec<(u64, u64)> {
    let mut files: Vec<PathBuf> = inputs.to_vec();
    for dir in inputs.iter().filter(|i| i.is_dir()) {
        if let Ok(found) = super::inputs::expand_inputs(std::slice::from_ref(dir)) {
            files.extend(found);
        }
    }
    files
        .iter()
        .flat_map(|f| [std::fs::symlink_metadata(f), std::fs::metadata(f)])
        .filter_map(Result::ok)
        .filter(|m| !m.is_dir())
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

/// The input directory that would read `path` back as an input (its
/// name is an export's or a report's, and it is directly inside one).
fn reread_in(path: &Path, inputs: &[PathBuf]) -> Option<PathBuf> {
    let name = path.file_name()?;
    if !super::inputs::is_input_name(name) {
        return None;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let here = std::fs::metadata(parent).ok()?;
    inputs
        .iter()
        .find(|i| {
            std::fs::metadata(i)
                .is_ok_and(|m| m.is_dir() && (m.dev(), m.ino()) == (here.dev(), here.ino()))
        })
        .cloned()
}

enum Opened {
    Refused(String),
    Io(std::io::Error),
}

/// The FIFO or character device at `path`, opened to write in place;
/// checked again once open, so that a regular file swapped in meanwhile
/// is never written through.
fn open_stream(path: &Path, follow: bool) -> Result<std::fs::File, Opened> {
    let flags = if follow { 0 } else { libc::O_NOFOLLOW };
    let file = std::fs::File::options()
        .write(true)
        .custom_flags(flags)
        .open(path)
        .map_err(Opened::Io)?;
    let kind = file.metadata().map_err(Opened::Io)?.file_type();
    if kind.is_fifo() || kind.is_char_device() {
        Ok(file)
    } else {
        Err(Opened::Refused(
            "changed while opened: no longer a FIFO or character device".into(),
        ))
    }
}

/// A new temp file beside `path`, made exclusively and never through a
/// symbolic link, removed on an ending signal or when dropped unrenamed.
fn create_temp(path: &Path) -> std::io::Result<(super::scratch::TempFile, std::fs::File)> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = parent.join(format!(".{name}.rankline-{}-{n}.tmp", std::process::id()));
        let opened = std::fs::File::options()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp);
        match opened {
            Ok(f) => return Ok((super::scratch::TempFile::registered(temp), f)),
            // A dead run of this pid left it: the next number.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rankline-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn put(path: &Path, text: &str) -> Result<(), Error> {
        write(path, &[], |w| {
            w.write_all(text.as_bytes()).map_err(|e| e.to_string())
        })
    }

    #[test]
    fn a_symlink_at_the_name_is_replaced_and_its_target_untouched() {
        let d = dir("symlink");
        std::fs::write(d.join("victim"), "kept").unwrap();
        std::os::unix::fs::symlink(d.join("victim"), d.join("out.csv")).unwrap();
        put(&d.join("out.csv"), "new").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("victim")).unwrap(), "kept");
        assert!(
            std::fs::symlink_metadata(d.join("out.csv"))
                .unwrap()
                .is_file()
        );
        assert_eq!(std::fs::read_to_string(d.join("out.csv")).unwrap(), "new");
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert_eq!(left.len(), 2, "no temp left");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_failed_body_leaves_the_old_file_and_no_temp() {
        let d = dir("failed");
        std::fs::write(d.join("t.json"), "old").unwrap();
        let e = write(&d.join("t.json"), &[], |w| {
            w.write_all(b"half").unwrap();
            Err::<(), _>("too many events".into())
        })
        .unwrap_err();
        assert!(matches!(e, Error::Failed(ref s) if s.ends_with("t.json: too many events")));
        assert_eq!(std::fs::read_to_string(d.join("t.json")).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_input_by_any_name_and_a_name_an_input_directory_reads_are_refused() {
        let d = dir("inputs");
        let input = d.join("in.sqlite");
        std::fs::write(&input, "x").unwrap();
        std::fs::hard_link(&input, d.join("other-name.json")).unwrap();
        let inputs = [input.clone()];
        for out in [input.clone(), d.join("other-name.json")] {
            let why = check(&out, &inputs).unwrap_err();
            assert!(
                why.ends_with("is one of the inputs: rankline never writes over a file it reads"),
                "{why}"
            );
        }
        let job = d.join("job");
        std::fs::create_dir_all(&job).unwrap();
        std::fs::write(job.join("node0.sqlite"), "x").unwrap();
        let inputs = [job.clone()];
        assert!(check(&job.join("node0.sqlite"), &inputs).is_err());
        // Not there yet, but the next run of the directory would read it.
        let why = check(&job.join("node9.NSYS-REP"), &inputs).unwrap_err();
        assert!(why.contains("is in the input directory"), "{why}");
        check(&job.join("trace.json"), &inputs).unwrap();
        check(&job.join(".hidden.sqlite"), &inputs).unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_directory_is_refused() {
        let d = dir("directory");
        let e = put(&d, "x").unwrap_err();
        assert!(
            matches!(e, Error::Refused(ref s) if s.ends_with("is a directory")),
            "{e:?}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
