//! Where caches go and how large the directory may grow: its own file so that the
//! stored analyses use it without using the cache module.

use std::path::{Path, PathBuf};

/// Where caches go and how large the directory may grow.
#[derive(Debug, Clone)]
pub struct CacheDir {
    pub dir: PathBuf,
    pub cap_bytes: u64,
}

/// The default cache cap: 20 GB.
pub const DEFAULT_CAP: u64 = 20_000_000_000;

impl CacheDir {
    /// `$XDG_CACHE_HOME/rankline`, else `~/.cache/rankline`.
    pub fn default_dir() -> Option<PathBuf> {
        let xdg = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let base =
            xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("rankline"))
    }

    /// Why this cache cannot be used for `inputs`, if it cannot, as one
    /// line naming the directory. Writes can still fail later (permissions,
    /// a full disk); they say so then.
    pub fn unusable(&self, inputs: &[&Path]) -> Option<String> {
        if self.dir.as_os_str().is_empty() {
            return Some(
                "no cache directory: $HOME and $XDG_CACHE_HOME are unset (give --cache-dir DIR)"
                    .into(),
            );
        }
        let dir = self.dir.display();
        if self.dir.exists() && !self.dir.is_dir() {
            return Some(format!("{dir}: cache directory is not a directory"));
        }
        inputs.iter().find(|i| beside(&self.dir, i)).map(|i| {
            format!(
                "{dir}: cache directory is the directory of input {}; rankline never writes beside its input",
                i.display()
            )
        })
    }
}

/// Whether the cache directory is the input's own directory.
fn beside(dir: &Path, input: &Path) -> bool {
    let parent = input
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (std::fs::canonicalize(dir), std::fs::canonicalize(parent)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
