//! Key bindings per [`Mode`]: the embedded `keymaps/default.toml`, with the
//! user's keymap file laid over it one binding at a time.
//!
//! The app asks [`Keymap::action`] what a key event means in the current
//! mode; the help overlay lists [`Keymap::help`]; status hints use
//! [`Keymap::keys_for`] so they follow the user's rebindings.

mod file;
mod key;
#[cfg(test)]
mod tests;

pub use file::KeymapError;
pub use key::Key;

use crate::tui::action::{Action, Mode};
use crossterm::event::{KeyEvent, KeyEventKind};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

const DEFAULT_SOURCE: &str = include_str!("../../keymaps/default.toml");
const DEFAULT_PATH: &str = "keymaps/default.toml";

/// Bindings of every mode.
#[derive(Debug, Clone)]
pub struct Keymap {
    /// Indexed by `Mode as usize`; bindings in file order, which is the help
    /// order.
    modes: [Vec<Binding>; Mode::ALL.len()],
    /// The user's file laid over the defaults, if any (the help names it).
    file: Option<PathBuf>,
}

#[derive(Debug, Clone)]
struct Binding {
    action: Action,
    keys: Vec<Key>,
    desc: String,
}

impl Keymap {
    /// The built-in bindings.
    pub fn default_keymap() -> Keymap {
        let mut keymap = Keymap {
            modes: Default::default(),
            file: None,
        };
        let sections = file::parse(Path::new(DEFAULT_PATH), DEFAULT_SOURCE).unwrap_or_else(|e| {
            panic!("embedded keymap is broken (the unit tests catch this): {e}")
        });
        keymap.apply(sections);
        keymap
    }

    /// The defaults with the user's file applied: `explicit` (`--keymap
    /// FILE`, which must exist), else [`user_keymap_path`] if that file
    /// exists.
    pub fn load(explicit: Option<&Path>) -> Result<Keymap, KeymapError> {
        load_from(explicit, user_keymap_path().as_deref())
    }

    /// What `key` does in `mode`. Release events do nothing, so terminals
    /// that report them do not fire actions twice.
    pub fn action(&self, mode: Mode, key: &KeyEvent) -> Option<Action> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let key = Key::from_event(key);
        self.bindings(mode)
            .iter()
            .find(|b| b.keys.contains(&key))
            .map(|b| b.action)
    }

    /// `(keys, description)` for every bound action of `mode`, in file
    /// order; keys as labels joined by spaces (`"← a"`).
    pub fn help(&self, mode: Mode) -> Vec<(String, String)> {
        self.bindings(mode)
            .iter()
            .filter(|b| !b.keys.is_empty())
            .map(|b| (labels(&b.keys), b.desc.clone()))
            .collect()
    }

    /// The keys bound to `action` in `mode`, as in [`Keymap::help`] (`"]"`
    /// for a status hint); empty when unbound.
    pub fn keys_for(&self, mode: Mode, action: Action) -> String {
        self.bindings(mode)
            .iter()
            .find(|b| b.action == action)
            .map(|b| labels(&b.keys))
            .unwrap_or_default()
    }

    /// Where the bindings come from, for the help: the user's file over
    /// the built-in defaults, or the defaults alone.
    pub fn source(&self) -> String {
        match &self.file {
            Some(f) => format!("{} over the built-in {DEFAULT_PATH}", f.display()),
            None => format!("the built-in {DEFAULT_PATH}"),
        }
    }

    fn bindings(&self, mode: Mode) -> &[Binding] {
        &self.modes[mode as usize]
    }

    /// Each entry replaces the keys (and the desc, if given) of its action
    /// in its mode, and takes its keys away from the mode's other actions.
    fn apply(&mut self, sections: Vec<file::Section>) {
        for section in sections {
            for entry in section.entries {
                let desc = entry.desc.or_else(|| {
                    self.bindings(section.mode)
                        .iter()
                        .find(|b| b.action == entry.action)
                        .map(|b| b.desc.clone())
                });
                let desc = desc.unwrap_or_else(|| self.fallback_desc(entry.action));
                let list = &mut self.modes[section.mode as usize];
                for other in list.iter_mut().filter(|b| b.action != entry.action) {
                    other.keys.retain(|k| !entry.keys.contains(k));
                }
                match list.iter_mut().find(|b| b.action == entry.action) {
                    Some(b) => {
                        b.keys = entry.keys;
                        b.desc = desc;
                    }
                    None => list.push(Binding {
                        action: entry.action,
                        keys: entry.keys,
                        desc,
                    }),
                }
            }
        }
    }

    /// For an action the user binds in a mode where the defaults do not:
    /// its description from another mode, else its name.
    fn fallback_desc(&self, action: Action) -> String {
        self.modes
            .iter()
            .flatten()
            .find(|b| b.action == action)
            .map(|b| b.desc.clone())
            .unwrap_or_else(|| {
                let name = action.name().replace('_', " ");
                let mut chars = name.chars();
                chars
                    .next()
                    .map(|c| c.to_uppercase().chain(chars).collect())
                    .unwrap_or_default()
            })
    }
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap::default_keymap()
    }
}

/// Where the user's keymap lives: `$XDG_CONFIG_HOME/rankline/keymap.toml`,
/// else `~/.config/rankline/keymap.toml`. The file need not exist.
pub fn user_keymap_path() -> Option<PathBuf> {
    resolve_user_path(
        std::env::var_os("XDG_CONFIG_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// The XDG rule without touching the environment, so tests can run in
/// parallel. Per the XDG spec an empty or relative XDG_CONFIG_HOME is
/// ignored.
fn resolve_user_path(xdg_config_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    let config = match xdg_config_home.map(Path::new) {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        _ => Path::new(home.filter(|h| !h.is_empty())?).join(".config"),
    };
    Some(config.join("rankline").join("keymap.toml"))
}

fn load_from(explicit: Option<&Path>, user_path: Option<&Path>) -> Result<Keymap, KeymapError> {
    let mut keymap = Keymap::default_keymap();
    let path = match (explicit, user_path) {
        (Some(path), _) => path,
        (None, Some(path)) if path.exists() => path,
        _ => return Ok(keymap),
    };
    let source = file::read(path)?;
    keymap.apply(file::parse(path, &source)?);
    keymap.file = Some(path.to_path_buf());
    Ok(keymap)
}

fn labels(keys: &[Key]) -> String {
    keys.iter().map(Key::label).collect::<Vec<_>>().join(" ")
}
