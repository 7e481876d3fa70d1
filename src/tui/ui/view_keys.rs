//! The keys of whatever has them, for the status line: a popup's or a
//! focused panel's main actions, each by a short word, its keys the
//! keymap's. The timeline's own hints stay with the status line.

use crate::tui::action::{Action, Mode};
use crate::tui::keymap::Keymap;
use crate::tui::state::{App, Overlay};
use unicode_width::UnicodeWidthStr;

/// Actions named together (`↑ k ↓ j row`) and the word they go by.
type Group = (&'static [Action], &'static str);

use Action::*;

const LIST: Group = (&[Up, Down], "row");
const SCROLL: Group = (&[Up, Down], "scroll");
const GO: Group = (&[Accept], "go");
const ZOOM: Group = (&[Accept], "zoom");
const CLOSE: Group = (&[Cancel], "close");
const HELP: Group = (&[Help], "help");

/// The view that has the keys, when it is not the timeline: its name,
/// its keymap mode and its main actions, most wanted first.
fn open(app: &App) -> Option<(&'static str, Mode, &'static [Group])> {
    let mode = app.mode();
    let (name, groups): (&str, &[Group]) = match &app.chrome().overlay {
        Overlay::None => {
            let panel = app.chrome().panels.focused()?;
            let groups: &[Group] = if mode == Mode::Range {
                &[
                    LIST,
                    GO,
                    (&[CopyReference], "copy --window"),
                    (&[FocusPanel], "next panel"),
                    (&[Cancel], "back"),
                ]
            } else {
                &[LIST, GO, (&[FocusPanel], "next panel"), (&[Cancel], "back")]
            };
            (panel.name(), groups)
        }
        Overlay::Help(..) => ("help", &[SCROLL, (&[PageUp, PageDown], "page"), CLOSE]),
        Overlay::Legend(_) => ("legend", &[SCROLL, (&[Cancel, Legend], "close")]),
        Overlay::Finder { .. } => ("find", &[(&[Up, Down], "result"), GO, CLOSE]),
        Overlay::GotoTime { .. } => ("go to time", &[GO, CLOSE]),
        Overlay::BookmarkName { .. } => ("bookmark", &[(&[Accept], "keep"), (&[Cancel], "drop")]),
        Overlay::Stats(st) if st.typing => {
            ("stats filter", &[(&[Accept], "keep"), (&[Cancel], "clear")])
        }
        Overlay::Stats(_) => (
            "stats",
            &[
                LIST,
                ZOOM,
                (&[SortPrev, SortNext], "sort"),
                (&[NextTable], "table"),
                (&[Filter], "filter"),
                CLOSE,
                HELP,
            ],
        ),
        Overlay::NvtxTree(_) => (
            "NVTX tree",
            &[LIST, ZOOM, (&[NextThread], "next thread"), CLOSE, HELP],
        ),
        Overlay::Bookmarks(_) => ("bookmarks", &[LIST, GO, CLOSE, HELP]),
        Overlay::Behind(_) => ("who is behind", &[LIST, (&[Accept], "open"), CLOSE, HELP]),
        Overlay::BigEvents(_) => (
            "largest skews",
            &[LIST, GO, (&[SortList], "sort"), CLOSE, HELP],
        ),
        Overlay::Messages(_) => ("messages", &[SCROLL, CLOSE, HELP]),
    };
    Some((name, mode, groups))
}

/// `NVTX tree: ↑ k ↓ j row · Enter go · …` for the view that has the
/// keys, in at most `width` columns (the least wanted keys give way); None
/// on the timeline.
pub fn line(app: &App, width: usize) -> Option<String> {
    let (name, mode, groups) = open(app)?;
    Some(hints(&app.session().keymap, name, mode, groups, width))
}

fn hints(keymap: &Keymap, name: &str, mode: Mode, groups: &[Group], width: usize) -> String {
    let mut out = format!("{name}:");
    let mut first = true;
    for (actions, word) in groups {
        let keys: Vec<String> = actions
            .iter()
            .map(|&a| keymap.keys_for(mode, a))
            .filter(|k| !k.is_empty())
            .collect();
        if keys.is_empty() {
            continue;
        }
        let part = format!(
            "{}{} {word}",
            if first { " " } else { " · " },
            keys.join(" ")
        );
        if out.width() + part.width() > width {
            break;
        }
        out.push_str(&part);
        first = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_the_keymap_and_the_last_give_way_to_the_width() {
        let km = Keymap::default_keymap();
        let groups = [LIST, GO, CLOSE];
        assert_eq!(
            hints(&km, "bookmarks", Mode::Bookmarks, &groups, 80),
            "bookmarks: ↑ k ↓ j row · Enter go · Esc q ' close"
        );
        assert_eq!(
            hints(&km, "bookmarks", Mode::Bookmarks, &groups, 36),
            "bookmarks: ↑ k ↓ j row · Enter go"
        );
        // An action the mode does not bind is left out, not shown bare.
        assert_eq!(
            hints(&km, "x", Mode::Bookmarks, &[(&[SortList], "sort"), GO], 80),
            "x: Enter go"
        );
    }
}
