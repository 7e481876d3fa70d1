//! Reading one keymap file into per-mode entries, keeping source lines so
//! that every mistake can be reported at its line.

use super::key::Key;
use crate::tui::action::{Action, Mode};
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A keymap file that could not be used, as one line:
/// `<path>:<line>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeymapError {
    pub path: PathBuf,
    /// 1-based; `None` when the file could not be read at all.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for KeymapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for KeymapError {}

/// One `action = { keys = [...], desc = "..." }` line.
#[derive(Debug)]
pub(super) struct Entry {
    pub action: Action,
    pub keys: Vec<Key>,
    pub desc: Option<String>,
}

/// One `[mode]` table, entries in file order.
#[derive(Debug)]
pub(super) struct Section {
    pub mode: Mode,
    pub entries: Vec<Entry>,
}

const SHAPE: &str = r#"{ keys = ["..."], desc = "..." }"#;

/// A keymap is a few hundred lines; one far larger is not a keymap, and
/// reading it whole would take seconds and gigabytes first.
const MAX_KEYMAP_BYTES: u64 = 1 << 20;

/// The text of the keymap file at `path`, which must be a regular file: a
/// FIFO or device would block the read forever.
pub(super) fn read(path: &Path) -> Result<String, KeymapError> {
    let unreadable = |message: String| KeymapError {
        path: path.to_path_buf(),
        line: None,
        message,
    };
    let meta =
        std::fs::metadata(path).map_err(|e| unreadable(format!("cannot read keymap: {e}")))?;
    if !meta.is_file() {
        return Err(unreadable("the keymap is not a regular file".into()));
    }
    if meta.len() > MAX_KEYMAP_BYTES {
        return Err(unreadable(format!(
            "the keymap is {} bytes, over the 1 MiB a keymap can be",
            meta.len()
        )));
    }
    // Read at most one byte past the limit: the file may grow after the stat.
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_KEYMAP_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| unreadable(format!("cannot read keymap: {e}")))?;
    if text.len() as u64 > MAX_KEYMAP_BYTES {
        return Err(unreadable("the keymap grew past 1 MiB while read".into()));
    }
    Ok(text)
}

pub(super) fn parse(path: &Path, src: &str) -> Result<Vec<Section>, KeymapError> {
    let at = |span: Range<usize>, message: String| KeymapError {
        path: path.to_path_buf(),
        line: Some(line_of(src, span.start)),
        message,
    };

    let doc = DeTable::parse(src).map_err(|e| KeymapError {
        path: path.to_path_buf(),
        line: e.span().map(|s| line_of(src, s.start)),
        message: one_line(e.message()),
    })?;

    let mut sections = Vec::new();
    // Without toml's `preserve_order` the maps are sorted by name; spans
    // give back the file order that help lists rely on.
    for (name, value) in in_file_order(doc.get_ref()) {
        let mode = Mode::ALL
            .into_iter()
            .find(|m| m.name() == name.get_ref().as_ref())
            .ok_or_else(|| {
                if Action::from_name(name.get_ref()).is_some() {
                    return at(
                        name.span(),
                        format!(
                            "`{}` must be inside a mode table such as [timeline]",
                            name.get_ref()
                        ),
                    );
                }
                let known: Vec<_> = Mode::ALL
                    .iter()
                    .map(|m| format!("[{}]", m.name()))
                    .collect();
                at(
                    name.span(),
                    format!(
                        "unknown mode `{}` (expected one of {})",
                        name.get_ref(),
                        known.join(", ")
                    ),
                )
            })?;
        let DeValue::Table(table) = value.get_ref() else {
            return Err(at(
                name.span(),
                format!("`{}` must be a table: [{}]", name.get_ref(), mode.name()),
            ));
        };

        let mut owner: HashMap<Key, Action> = HashMap::new();
        let mut entries = Vec::new();
        for (action_name, value) in in_file_order(table) {
            let entry_at = |message: String| at(action_name.span(), message);
            let action = Action::from_name(action_name.get_ref()).ok_or_else(|| {
                entry_at(format!(
                    "unknown action `{}` in [{}]",
                    action_name.get_ref(),
                    mode.name()
                ))
            })?;
            let DeValue::Table(fields) = value.get_ref() else {
                return Err(entry_at(format!(
                    "`{}` must look like {SHAPE}",
                    action.name()
                )));
            };

            let mut keys = None;
            let mut desc = None;
            for (field, fv) in in_file_order(fields) {
                match (field.get_ref().as_ref(), fv.get_ref()) {
                    ("keys", DeValue::Array(items)) => {
                        let mut parsed: Vec<Key> = Vec::new();
                        for item in items.iter() {
                            let DeValue::String(text) = item.get_ref() else {
                                return Err(at(
                                    item.span(),
                                    format!("`{}`: keys must be strings", action.name()),
                                ));
                            };
                            let key = Key::parse(text).map_err(|e| {
                                at(
                                    item.span(),
                                    format!("`{}`: bad key \"{text}\": {e}", action.name()),
                                )
                            })?;
                            if let Some(&other) = owner.get(&key)
                                && other != action
                            {
                                return Err(at(
                                    item.span(),
                                    format!(
                                        "key \"{text}\" is bound to both `{}` and `{}` in [{}]",
                                        other.name(),
                                        action.name(),
                                        mode.name()
                                    ),
                                ));
                            }
                            owner.insert(key, action);
                            if !parsed.contains(&key) {
                                parsed.push(key);
                            }
                        }
                        keys = Some(parsed);
                    }
                    ("desc", DeValue::String(text)) => desc = Some(text.to_string()),
                    ("keys" | "desc", _) => {
                        return Err(at(
                            field.span(),
                            format!("`{}` must look like {SHAPE}", action.name()),
                        ));
                    }
                    (other, _) => {
                        return Err(at(
                            field.span(),
                            format!(
                                "`{}`: unknown field `{other}` (only `keys` and `desc`)",
                                action.name()
                            ),
                        ));
                    }
                }
            }
            let keys = keys.ok_or_else(|| {
                entry_at(format!(
                    "`{}` has no `keys`: it must look like {SHAPE}",
                    action.name()
                ))
            })?;
            entries.push(Entry { action, keys, desc });
        }
        sections.push(Section { mode, entries });
    }
    Ok(sections)
}

type Item<'a, 'i> = (
    &'a Spanned<std::borrow::Cow<'i, str>>,
    &'a Spanned<DeValue<'i>>,
);

fn in_file_order<'a, 'i>(table: &'a DeTable<'i>) -> Vec<Item<'a, 'i>> {
    let mut items: Vec<_> = table.iter().collect();
    items.sort_by_key(|(k, _)| k.span().start);
    items
}

/// 1-based line of a byte offset.
fn line_of(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    src.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The error must stay one line in a terminal.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
