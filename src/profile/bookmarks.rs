//! Bookmarks: named places in a capture (a window, and the collective
//! instance selected there), kept per capture under
//! `$XDG_STATE_HOME/rankline/bookmarks/` (default
//! `~/.local/state/rankline/bookmarks/`). Named by the inputs' lasting
//! identity (path, size, content sample) — never by the cache's key, so
//! they outlive the cache's entries and its format; never beside an input.

use super::cache::Key;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One bookmark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bookmark {
    pub name: String,
    /// The collective instance selected when it was made: group key and
    /// 1-based instance number (as `--goto` takes them).
    pub group: Option<String>,
    pub instance: Option<usize>,
    /// The window on the reference clock, ns.
    pub window_ns: [i64; 2],
    /// When it was made, UTC (`2026-12-04T22:15:00Z`).
    pub created: String,
}

/// A capture's bookmarks file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    inputs: Vec<String>,
    bookmarks: Vec<Bookmark>,
}

/// rankline's state directory: `$XDG_STATE_HOME/rankline`, else
/// `~/.local/state/rankline`.
pub fn state_dir() -> Result<PathBuf, String> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })
        .ok_or("no state directory: $HOME and $XDG_STATE_HOME are unset")?;
    Ok(state.join("rankline"))
}

/// The inputs a capture's bookmarks are kept for: the files it was
/// loaded from (the embedded demo has none). The timeline, `report` and
/// `export` name a capture alike, whatever else was given and failed.
pub fn inputs(p: &super::Profile) -> Vec<PathBuf> {
    p.files
        .iter()
        .map(|f| f.path.clone())
        .filter(|path| path.is_file())
        .collect()
}

/// The bookmarks file of the capture made of `inputs` (any order).
pub fn file_of(inputs: &[PathBuf]) -> Result<PathBuf, String> {
    Ok(state_dir()?.join("bookmarks").join(file_name(inputs)?))
}

/// The name of that file in the state directory's `bookmarks/`.
pub fn file_name(inputs: &[PathBuf]) -> Result<String, String> {
    let mut ids = Vec::with_capacity(inputs.len());
    for p in inputs {
        let key = Key::of(p).map_err(|e| format!("{}: {e}", crate::text_safe::path_text(p)))?;
        ids.push(key.lasting_id());
    }
    ids.sort_unstable();
    let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
    Ok(format!("{:016x}.json", xxhash_rust::xxh3::xxh3_64(&bytes)))
}

/// A capture's bookmarks as read, and the line saying which were left
/// out (a window no place can have).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Kept {
    pub marks: Vec<Bookmark>,
    pub left_out: Option<String>,
}

impl Bookmark {
    /// Whether its window is one a place can have: it ends after it
    /// starts, and its length is a number of ns (`[5, 1]` and
    /// `[i64::MIN, i64::MAX]` are not).
    pub fn has_a_window(&self) -> bool {
        let [start, end] = self.window_ns;
        start < end && end.checked_sub(start).is_some()
    }
}

/// The bookmarks kept for `inputs`: none when there is no file yet; a
/// file that cannot be read is said, never overwritten by this read.
pub fn load(inputs: &[PathBuf]) -> Result<Kept, String> {
    let path = file_of(inputs)?;
    let stored = read(&path)?.unwrap_or_default();
    Ok(kept(&path, stored.bookmarks))
}

/// `all` less those without a window, said in one line.
fn kept(path: &Path, all: Vec<Bookmark>) -> Kept {
    let n = all.len();
    let marks: Vec<Bookmark> = all.into_iter().filter(Bookmark::has_a_window).collect();
    let left = n - marks.len();
    let left_out = (left > 0).then(|| {
        format!(
            "{}: {left} bookmark{} left out: a window that ends before it starts, or longer than ns can count",
            crate::text_safe::path_text(path),
            if left == 1 { "" } else { "s" }
        )
    });
    Kept { marks, left_out }
}

/// A bookmarks file is a few kilobytes; one far larger is not one, and
/// reading it whole would take seconds and gigabytes first.
const MAX_BOOKMARKS_BYTES: u64 = 16 << 20;

/// The file at `path` (`None`: there is none yet). Only a regular file is
/// read, opened without blocking (a FIFO there would wait for a writer
/// forever) and only up to [`MAX_BOOKMARKS_BYTES`] (`/dev/zero` never ends).
fn read(path: &Path) -> Result<Option<Stored>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = crate::text_safe::path_text(path);
    let file = match std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let meta = file.metadata().map_err(|e| format!("{shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{shown}: not a regular file: bookmarks are read from one only"
        ));
    }
    if meta.len() > MAX_BOOKMARKS_BYTES {
        return Err(format!(
            "{shown}: the bookmarks file is {} bytes, over the 16 MiB a bookmarks file can be",
            meta.len()
        ));
    }
    // At most one byte past the limit: the file may grow after the stat.
    let mut text = String::new();
    file.take(MAX_BOOKMARKS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{shown}: {e}"))?;
    if text.len() as u64 > MAX_BOOKMARKS_BYTES {
        return Err(format!(
            "{shown}: the bookmarks file grew past 16 MiB while read"
        ));
    }
    serde_json::from_str::<Stored>(&text)
        .map(Some)
        .map_err(|e| format!("{shown}: not a bookmarks file ({e})"))
}

/// Adds `b` to the bookmarks of `inputs` (written whole under a temporary
/// name beside it, then renamed; what is at the name is replaced, never
/// written through): the file's path, and the bookmarks now kept. Those
/// left out when read stay in the file as they were.
pub fn add(inputs: &[PathBuf], b: Bookmark) -> Result<(PathBuf, Kept), String> {
    let path = file_of(inputs)?;
    add_to(&path, inputs, b).map(|kept| (path, kept))
}

fn add_to(path: &Path, inputs: &[PathBuf], b: Bookmark) -> Result<Kept, String> {
    let shown = crate::text_safe::path_text(path);
    if !b.has_a_window() {
        return Err(format!("{}: a bookmark needs a window", b.name));
    }
    let mut bookmarks = read(path)?.unwrap_or_default().bookmarks;
    bookmarks.push(b);
    let stored = Stored {
        inputs: inputs.iter().map(|p| p.display().to_string()).collect(),
        bookmarks,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{shown}: {e}"))?;
    }
    let text = serde_json::to_string_pretty(&stored).map_err(|e| e.to_string())?;
    super::out_file::write(path, inputs, |w| {
        w.write_all(text.as_bytes()).map_err(|e| e.to_string())
    })
    .map_err(|e| e.to_string())?;
    Ok(kept(path, stored.bookmarks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(name: &str, window_ns: [i64; 2]) -> Bookmark {
        Bookmark {
            name: name.into(),
            group: None,
            instance: None,
            window_ns,
            created: "2026-12-04T22:15:00Z".into(),
        }
    }

    /// A symbolic link at the file's name is read through (it may be the
    /// user's own) but replaced by the write, never written through.
    #[test]
    fn an_add_replaces_a_symlink_and_leaves_its_target() {
        let d = std::env::temp_dir().join(format!("rankline-bookmarks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let other = d.join("other.json");
        let before = serde_json::to_string(&Stored {
            inputs: vec![],
            bookmarks: vec![mark("theirs", [1, 2])],
        })
        .unwrap();
        std::fs::write(&other, &before).unwrap();
        let path = d.join("ours.json");
        std::os::unix::fs::symlink(&other, &path).unwrap();
        let kept = add_to(&path, &[], mark("ours", [3, 4])).unwrap();
        assert_eq!(kept.marks.len(), 2);
        assert_eq!(std::fs::read_to_string(&other).unwrap(), before);
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        let e = add_to(&path, &[], mark("reversed", [4, 3])).unwrap_err();
        assert!(e.contains("needs a window"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
