//! Key syntax of keymap files: parsing, the canonical spelling, and the
//! short label shown in help.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt;
use std::str::FromStr;

/// One key with its modifiers, as written in a keymap file.
///
/// Stored normalised, so that a parsed key and the crossterm event it names
/// compare equal: characters carry no SHIFT (the case already says it, and
/// terminals disagree on whether they report it), and shift-Tab is always
/// `BackTab` without SHIFT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    code: KeyCode,
    mods: KeyModifiers,
}

/// Named keys: canonical spelling first, aliases after; matched
/// case-insensitively.
const NAMES: &[(KeyCode, &[&str])] = &[
    (KeyCode::Left, &["Left", "←"]),
    (KeyCode::Right, &["Right", "→"]),
    (KeyCode::Up, &["Up", "↑"]),
    (KeyCode::Down, &["Down", "↓"]),
    (KeyCode::Home, &["Home"]),
    (KeyCode::End, &["End"]),
    (KeyCode::PageUp, &["PageUp", "PgUp"]),
    (KeyCode::PageDown, &["PageDown", "PgDn"]),
    (KeyCode::Tab, &["Tab"]),
    (KeyCode::BackTab, &["BackTab"]),
    (KeyCode::Enter, &["Enter", "Return"]),
    (KeyCode::Esc, &["Esc", "Escape"]),
    (KeyCode::Backspace, &["Backspace"]),
    (KeyCode::Delete, &["Delete", "Del"]),
    (KeyCode::Insert, &["Insert"]),
    (KeyCode::Char(' '), &["Space"]),
];

const PREFIXES: [(&str, KeyModifiers); 3] = [
    ("ctrl-", KeyModifiers::CONTROL),
    ("alt-", KeyModifiers::ALT),
    ("shift-", KeyModifiers::SHIFT),
];

impl Key {
    /// Parses `ctrl-c`, `N`, `PageUp`, `shift-Tab`, `F5`, ... The error is
    /// a short sentence for [`super::KeymapError`].
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut rest = text;
        let mut mods = KeyModifiers::NONE;
        // `rest.len() > n` keeps "ctrl--" (ctrl + '-') and "-" working.
        'strip: loop {
            for (prefix, m) in PREFIXES {
                let n = prefix.len();
                if rest.len() > n
                    && rest
                        .get(..n)
                        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
                {
                    if mods.contains(m) {
                        return Err(format!("`{text}` repeats a modifier"));
                    }
                    mods |= m;
                    rest = &rest[n..];
                    continue 'strip;
                }
            }
            break;
        }

        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (None, _) => return Err("empty key".to_string()),
            (Some(c), None) => named(rest).unwrap_or(KeyCode::Char(c)),
            _ => named(rest).or_else(|| function_key(rest)).ok_or_else(|| {
                format!("unknown key `{rest}` (a single character, or a name like Left, PageUp, Enter, Esc, Space, F1)")
            })?,
        };
        if let KeyCode::Char(c) = code
            && c.is_control()
        {
            return Err(format!(
                "`{}` is a control character; write the key's name",
                c.escape_default()
            ));
        }

        let code = if mods.contains(KeyModifiers::SHIFT) {
            match code {
                KeyCode::Char(c) if c.is_alphabetic() => {
                    KeyCode::Char(c.to_uppercase().next().unwrap_or(c))
                }
                KeyCode::Char(_) => {
                    return Err(format!(
                        "`{text}`: shift- only goes with letters and named keys; write the shifted character itself"
                    ));
                }
                other => other,
            }
        } else {
            code
        };
        Ok(Key::normalised(code, mods))
    }

    /// The key a crossterm event stands for, to look up in a keymap.
    pub fn from_event(event: &KeyEvent) -> Key {
        Key::normalised(event.code, event.modifiers)
    }

    fn normalised(mut code: KeyCode, mut mods: KeyModifiers) -> Key {
        match code {
            KeyCode::Char(_) | KeyCode::BackTab => mods.remove(KeyModifiers::SHIFT),
            // Some terminals (kitty protocol) report shift-Tab this way.
            KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => {
                code = KeyCode::BackTab;
                mods.remove(KeyModifiers::SHIFT);
            }
            _ => {}
        }
        Key { code, mods }
    }

    /// Short form for help and status hints: `←`, `PgUp`, `ctrl-c`,
    /// `shift-Tab`. It parses back to the same key.
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Delete => "Del".to_string(),
            KeyCode::BackTab => "shift-Tab".to_string(),
            _ => code_name(self.code),
        };
        format!("{}{name}", modifier_prefixes(self.mods))
    }
}

/// The canonical keymap-file spelling (`ctrl-c`, `PageUp`, `BackTab`).
impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            modifier_prefixes(self.mods),
            code_name(self.code)
        )
    }
}

impl FromStr for Key {
    type Err = String;

    fn from_str(s: &str) -> Result<Key, String> {
        Key::parse(s)
    }
}

fn named(name: &str) -> Option<KeyCode> {
    NAMES
        .iter()
        .find(|(_, names)| names.iter().any(|n| n.eq_ignore_ascii_case(name)))
        .map(|&(code, _)| code)
}

fn function_key(name: &str) -> Option<KeyCode> {
    let digits = name.strip_prefix(['F', 'f'])?;
    if digits.starts_with('0') {
        return None;
    }
    let n: u8 = digits.parse().ok()?;
    (1..=12).contains(&n).then_some(KeyCode::F(n))
}

fn code_name(code: KeyCode) -> String {
    match code {
        KeyCode::Char(' ') => "Space".to_string(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::F(n) => format!("F{n}"),
        _ => match NAMES.iter().find(|&&(c, _)| c == code) {
            Some((_, names)) => names[0].to_string(),
            // Only reachable for event keys no file can name (media keys…).
            None => format!("{code:?}"),
        },
    }
}

fn modifier_prefixes(mods: KeyModifiers) -> String {
    let mut out = String::new();
    for (name, m) in [
        ("ctrl-", KeyModifiers::CONTROL),
        ("alt-", KeyModifiers::ALT),
        ("shift-", KeyModifiers::SHIFT),
        ("super-", KeyModifiers::SUPER),
        ("hyper-", KeyModifiers::HYPER),
        ("meta-", KeyModifiers::META),
    ] {
        if mods.contains(m) {
            out.push_str(name);
        }
    }
    out
}
