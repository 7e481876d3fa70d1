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
    let mut ids = Vec::with_capacity(inputs.len());
    for p in inputs {
        let key = Key::of(p).map_err(|e| format!("{}: {e}", crate::text_safe::path_text(p)))?;
        ids.push(key.lasting_id());
    }
    ids.sort_unstable();
    let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
    let name = format!("{:016x}.json", xxhash_rust::xxh3::xxh3_64(&bytes));
    Ok(state_dir()?.join("bookmarks").join(name))
}

/// The bookmarks kept for `inputs`: none when there is no file yet; a
/// file that cannot be read is said, never overwritten by this read.
pub fn load(inputs: &[PathBuf]) -> Result<Vec<Bookmark>, String> {
    let path = file_of(inputs)?;
    read(&path)
}

fn read(path: &Path) -> Result<Vec<Bookmark>, String> {
    let shown = crate::text_safe::path_text(path);
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    serde_json::from_str::<Stored>(&text)
        .map(|s| s.bookmarks)
        .map_err(|e| format!("{shown}: not a bookmarks file ({e})"))
}

/// Adds `b` to the bookmarks of `inputs` (written whole under a temporary
/// name, then renamed): the file's path.
pub fn add(inputs: &[PathBuf], b: Bookmark) -> Result<PathBuf, String> {
    let path = file_of(inputs)?;
    let shown = crate::text_safe::path_text(&path);
    let mut bookmarks = read(&path)?;
    bookmarks.push(b);
    let stored = Stored {
        inputs: inputs.iter().map(|p| p.display().to_string()).collect(),
        bookmarks,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{shown}: {e}"))?;
    }
    let temp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let text = serde_json::to_string_pretty(&stored).map_err(|e| e.to_string())?;
    std::fs::write(&temp, text)
        .and_then(|()| std::fs::rename(&temp, &path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("{shown}: {e}")
        })?;
    Ok(path)
}
