use super::*;
use crossterm::event::{KeyCode, KeyEventState, KeyModifiers};

const VIM_SOURCE: &str = include_str!("../../../keymaps/vim.toml");

fn key(s: &str) -> Key {
    Key::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn press(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn ch(c: char) -> KeyEvent {
    press(KeyCode::Char(c), KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    press(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn with_user(src: &str) -> Keymap {
    let mut keymap = Keymap::default_keymap();
    keymap.apply(file::parse(Path::new("user.toml"), src).unwrap_or_else(|e| panic!("{e}")));
    keymap
}

fn parse_err(src: &str) -> KeymapError {
    file::parse(Path::new("user.toml"), src).expect_err("should not parse")
}

/// Keys of `action` in `mode`, canonical spelling.
fn bound(keymap: &Keymap, mode: Mode, action: Action) -> Vec<String> {
    keymap
        .bindings(mode)
        .iter()
        .find(|b| b.action == action)
        .map(|b| b.keys.iter().map(Key::to_string).collect())
        .unwrap_or_default()
}

/// A unique, empty directory under the target directory.
fn scratch_dir(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/<profile>/deps/<test binary>
    let dir = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("keymap-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---- key syntax ----

#[test]
fn key_parse_round_trip() {
    for (text, canonical, label) in [
        ("Left", "Left", "←"),
        ("left", "Left", "←"),
        ("←", "Left", "←"),
        ("Right", "Right", "→"),
        ("Up", "Up", "↑"),
        ("Down", "Down", "↓"),
        ("Home", "Home", "Home"),
        ("End", "End", "End"),
        ("PageUp", "PageUp", "PgUp"),
        ("pgdn", "PageDown", "PgDn"),
        ("Tab", "Tab", "Tab"),
        ("BackTab", "BackTab", "shift-Tab"),
        ("shift-tab", "BackTab", "shift-Tab"),
        ("Enter", "Enter", "Enter"),
        ("Esc", "Esc", "Esc"),
        ("Backspace", "Backspace", "Backspace"),
        ("Delete", "Delete", "Del"),
        ("Space", "Space", "Space"),
        ("F1", "F1", "F1"),
        ("f12", "F12", "F12"),
        ("a", "a", "a"),
        ("N", "N", "N"),
        ("shift-n", "N", "N"),
        ("+", "+", "+"),
        ("-", "-", "-"),
        ("?", "?", "?"),
        ("/", "/", "/"),
        ("[", "[", "["),
        ("$", "$", "$"),
        ("F", "F", "F"),
        ("ctrl-c", "ctrl-c", "ctrl-c"),
        ("CTRL-c", "ctrl-c", "ctrl-c"),
        ("Ctrl--", "ctrl--", "ctrl--"),
        ("alt-Left", "alt-Left", "alt-←"),
        ("shift-Left", "shift-Left", "shift-←"),
        ("ctrl-alt-x", "ctrl-alt-x", "ctrl-alt-x"),
        ("alt-ctrl-x", "ctrl-alt-x", "ctrl-alt-x"),
    ] {
        let k = key(text);
        assert_eq!(k.to_string(), canonical, "display of {text}");
        assert_eq!(k.label(), label, "label of {text}");
        assert_eq!(key(canonical), k, "canonical {canonical} parses back");
        assert_eq!(key(label), k, "label {label} parses back");
    }
}

#[test]
fn key_parse_errors() {
    for bad in [
        "",
        "ctrl-",
        "Foo",
        "ab",
        "F13",
        "F0",
        "ctrl-ctrl-a",
        "shift-1",
        "shift-Space",
        "\t",
    ] {
        assert!(Key::parse(bad).is_err(), "{bad:?} should not parse");
    }
}

#[test]
fn events_match_parsed_keys() {
    // Terminals report shift+n as 'N' with SHIFT, sometimes without.
    assert_eq!(
        Key::from_event(&press(KeyCode::Char('N'), KeyModifiers::SHIFT)),
        key("N")
    );
    assert_eq!(Key::from_event(&ch('N')), key("N"));
    assert_eq!(
        Key::from_event(&press(KeyCode::Char('?'), KeyModifiers::SHIFT)),
        key("?")
    );
    assert_eq!(
        Key::from_event(&press(KeyCode::BackTab, KeyModifiers::SHIFT)),
        key("BackTab")
    );
    assert_eq!(
        Key::from_event(&press(KeyCode::Tab, KeyModifiers::SHIFT)),
        key("shift-Tab")
    );
    assert_eq!(Key::from_event(&ctrl('c')), key("ctrl-c"));
    assert_eq!(
        Key::from_event(&press(KeyCode::Char(' '), KeyModifiers::NONE)),
        key("Space")
    );
    assert_eq!(
        Key::from_event(&press(KeyCode::F(5), KeyModifiers::NONE)),
        key("F5")
    );
    assert_ne!(Key::from_event(&ch('c')), key("ctrl-c"));
    assert_ne!(Key::from_event(&ch('n')), key("N"));
}

// ---- the embedded presets ----

#[test]
fn default_keymap_binds_the_spec() {
    let km = Keymap::default_keymap();
    use Action::*;
    let spec: &[(Mode, Action, &[&str])] = &[
        (Mode::Timeline, PanLeft, &["Left", "a"]),
        (Mode::Timeline, PanRight, &["Right", "d"]),
        (Mode::Timeline, ZoomIn, &["w", "+", "="]),
        (Mode::Timeline, ZoomOut, &["s", "-"]),
        (Mode::Timeline, LaneUp, &["Up", "k"]),
        (Mode::Timeline, LaneDown, &["Down", "j"]),
        (Mode::Timeline, PageUp, &["PageUp"]),
        (Mode::Timeline, PageDown, &["PageDown"]),
        (Mode::Timeline, FitAll, &["f"]),
        (Mode::Timeline, ZoomToSelection, &["z"]),
        (Mode::Timeline, GotoTime, &["g"]),
        (Mode::Timeline, Home, &["Home"]),
        (Mode::Timeline, End, &["End"]),
        (Mode::Timeline, NextEvent, &["Tab"]),
        (Mode::Timeline, PrevEvent, &["BackTab"]),
        (Mode::Timeline, SelectUnderCursor, &["Enter"]),
        (Mode::Timeline, ClearSelection, &["Esc"]),
        (Mode::Timeline, ToggleRelativeTime, &["t"]),
        (Mode::Timeline, MinDuration, &["x"]),
        (Mode::Timeline, KernelNames, &["K"]),
        (Mode::Timeline, ToggleCollapse, &["Space"]),
        (Mode::Timeline, NextOccurrence, &["n"]),
        (Mode::Timeline, PrevOccurrence, &["N"]),
        (Mode::Timeline, NextBigEvent, &["]"]),
        (Mode::Timeline, PrevBigEvent, &["["]),
        (Mode::Timeline, BigEventList, &["b"]),
        (Mode::Timeline, BehindList, &["W"]),
        (Mode::Timeline, FocusMode, &["F"]),
        (Mode::Timeline, PanelSkew, &["1"]),
        (Mode::Timeline, PanelLaunch, &["2"]),
        (Mode::Timeline, PanelOverlap, &["3"]),
        (Mode::Timeline, PanelSummary, &["4"]),
        (Mode::Timeline, PanelDetails, &["5"]),
        (Mode::Timeline, PanelScrollUp, &["{"]),
        (Mode::Timeline, PanelScrollDown, &["}"]),
        (Mode::Timeline, ToggleMouse, &["m"]),
        (Mode::Timeline, JumpToLaunch, &["J"]),
        (Mode::Timeline, HistoryBack, &["Backspace", "alt-Left"]),
        (Mode::Timeline, HistoryForward, &["alt-Right"]),
        (Mode::Timeline, OpenFinder, &["/"]),
        (Mode::Timeline, CopyReference, &["y"]),
        (Mode::Timeline, ExportTrace, &["E"]),
        (Mode::Timeline, NvtxTree, &["T"]),
        (Mode::Timeline, AddBookmark, &["M"]),
        (Mode::Timeline, Bookmarks, &["'"]),
        (Mode::Timeline, RangeStart, &[","]),
        (Mode::Timeline, RangeEnd, &["."]),
        (Mode::Timeline, PanelRange, &["7"]),
        (Mode::Timeline, StatsView, &["S"]),
        (Mode::Timeline, Messages, &["!"]),
        (Mode::Timeline, Legend, &["L"]),
        (Mode::Timeline, Help, &["?"]),
        (Mode::Timeline, Quit, &["q", "ctrl-c"]),
        (Mode::Timeline, StragglerMap, &["H"]),
        (Mode::Timeline, StepsView, &["P"]),
        (Mode::Timeline, SwitchCapture, &["B"]),
        (Mode::Timeline, PanelDiff, &["6"]),
        (Mode::Timeline, FocusPanel, &["p"]),
        (Mode::Stragglers, Up, &["Up", "k"]),
        (Mode::Stragglers, Down, &["Down", "j"]),
        (Mode::Stragglers, PanLeft, &["Left", "a"]),
        (Mode::Stragglers, PanRight, &["Right", "d"]),
        (Mode::Stragglers, PageUp, &["PageUp"]),
        (Mode::Stragglers, PageDown, &["PageDown"]),
        (Mode::Stragglers, Home, &["Home"]),
        (Mode::Stragglers, End, &["End"]),
        (Mode::Stragglers, Accept, &["Enter"]),
        (Mode::Stragglers, SortList, &["s"]),
        (Mode::Stragglers, ToggleCollapse, &["Space"]),
        (Mode::Stragglers, HistoryBack, &["Backspace", "alt-Left"]),
        (Mode::Stragglers, HistoryForward, &["alt-Right"]),
        (Mode::Stragglers, Cancel, &["Esc", "H", "q"]),
        (Mode::Stragglers, Help, &["?"]),
        (Mode::Stragglers, Quit, &["ctrl-c"]),
        (Mode::Steps, Up, &["Up", "k"]),
        (Mode::Steps, Down, &["Down", "j"]),
        (Mode::Steps, PanLeft, &["Left", "a"]),
        (Mode::Steps, PanRight, &["Right", "d"]),
        (Mode::Steps, PageUp, &["PageUp"]),
        (Mode::Steps, PageDown, &["PageDown"]),
        (Mode::Steps, Home, &["Home"]),
        (Mode::Steps, End, &["End"]),
        (Mode::Steps, NextFigure, &["Tab"]),
        (Mode::Steps, PrevFigure, &["BackTab"]),
        (Mode::Steps, Accept, &["Enter"]),
        (Mode::Steps, ToggleCollapse, &["Space"]),
        (Mode::Steps, HistoryBack, &["Backspace", "alt-Left"]),
        (Mode::Steps, HistoryForward, &["alt-Right"]),
        (Mode::Steps, Cancel, &["Esc", "P", "q"]),
        (Mode::Steps, Help, &["?"]),
        (Mode::Steps, Quit, &["ctrl-c"]),
        (Mode::Finder, Up, &["Up", "ctrl-p"]),
        (Mode::Finder, Down, &["Down", "ctrl-n"]),
        (Mode::Finder, Accept, &["Enter"]),
        (Mode::Finder, Cancel, &["Esc"]),
        (Mode::Finder, Quit, &["ctrl-c"]),
        (Mode::Panel, Up, &["Up", "k"]),
        (Mode::Panel, Down, &["Down", "j"]),
        (Mode::Panel, PageUp, &["PageUp"]),
        (Mode::Panel, PageDown, &["PageDown"]),
        (Mode::Panel, Home, &["Home"]),
        (Mode::Panel, End, &["End"]),
        (Mode::Panel, Accept, &["Enter"]),
        (Mode::Panel, FocusPanel, &["p", "Tab"]),
        (Mode::Panel, Cancel, &["Esc", "q"]),
        (Mode::Panel, PanelScrollUp, &["{"]),
        (Mode::Panel, PanelScrollDown, &["}"]),
        (Mode::Panel, NextOccurrence, &["n"]),
        (Mode::Panel, PrevOccurrence, &["N"]),
        (Mode::Panel, Help, &["?"]),
        (Mode::Panel, Quit, &["ctrl-c"]),
        (Mode::Help, Up, &["Up", "k"]),
        (Mode::Help, Down, &["Down", "j"]),
        (Mode::Help, PageUp, &["PageUp"]),
        (Mode::Help, PageDown, &["PageDown", "Space"]),
        (Mode::Help, Cancel, &["Esc", "q", "?"]),
        (Mode::Help, Legend, &["L"]),
        (Mode::Help, Quit, &["ctrl-c"]),
        (Mode::Stats, Up, &["Up", "k"]),
        (Mode::Stats, Down, &["Down", "j"]),
        (Mode::Stats, PageUp, &["PageUp"]),
        (Mode::Stats, PageDown, &["PageDown"]),
        (Mode::Stats, Home, &["Home"]),
        (Mode::Stats, End, &["End"]),
        (Mode::Stats, SortPrev, &["Left", "<"]),
        (Mode::Stats, SortNext, &["Right", ">"]),
        (Mode::Stats, SortReverse, &["r"]),
        (Mode::Stats, NextTable, &["Tab"]),
        (Mode::Stats, ToggleScope, &["w"]),
        (Mode::Stats, Filter, &["/"]),
        (Mode::Stats, KernelNames, &["K"]),
        (Mode::Stats, Accept, &["Enter"]),
        (Mode::Stats, Cancel, &["Esc", "q", "S"]),
        (Mode::Stats, Help, &["?"]),
        (Mode::Stats, Quit, &["ctrl-c"]),
        (Mode::Range, Up, &["Up", "k"]),
        (Mode::Range, Down, &["Down", "j"]),
        (Mode::Range, PageUp, &["PageUp"]),
        (Mode::Range, PageDown, &["PageDown"]),
        (Mode::Range, Home, &["Home"]),
        (Mode::Range, End, &["End"]),
        (Mode::Range, Accept, &["Enter"]),
        (Mode::Range, CopyReference, &["y"]),
        (Mode::Range, FocusPanel, &["p", "Tab"]),
        (Mode::Range, PanelScrollUp, &["{"]),
        (Mode::Range, PanelScrollDown, &["}"]),
        (Mode::Range, NextOccurrence, &["n"]),
        (Mode::Range, PrevOccurrence, &["N"]),
        (Mode::Range, Cancel, &["Esc", "q"]),
        (Mode::Range, Help, &["?"]),
        (Mode::Range, Quit, &["ctrl-c"]),
        (Mode::NvtxTree, Up, &["Up", "k"]),
        (Mode::NvtxTree, Down, &["Down", "j"]),
        (Mode::NvtxTree, PageUp, &["PageUp"]),
        (Mode::NvtxTree, PageDown, &["PageDown"]),
        (Mode::NvtxTree, Home, &["Home"]),
        (Mode::NvtxTree, End, &["End"]),
        (Mode::NvtxTree, Accept, &["Enter"]),
        (Mode::NvtxTree, NextThread, &["Tab"]),
        (Mode::NvtxTree, Cancel, &["Esc", "q", "T"]),
        (Mode::NvtxTree, Help, &["?"]),
        (Mode::NvtxTree, Quit, &["ctrl-c"]),
        (Mode::Bookmarks, Up, &["Up", "k"]),
        (Mode::Bookmarks, Down, &["Down", "j"]),
        (Mode::Bookmarks, Accept, &["Enter"]),
        (Mode::Bookmarks, Cancel, &["Esc", "q", "'"]),
        (Mode::Bookmarks, Help, &["?"]),
        (Mode::Bookmarks, Quit, &["ctrl-c"]),
        (Mode::Behind, Up, &["Up", "k"]),
        (Mode::Behind, Down, &["Down", "j"]),
        (Mode::Behind, Accept, &["Enter"]),
        (Mode::Behind, Cancel, &["Esc", "q", "W"]),
        (Mode::Behind, Help, &["?"]),
        (Mode::Behind, Quit, &["ctrl-c"]),
        (Mode::BigEvents, Up, &["Up", "k"]),
        (Mode::BigEvents, Down, &["Down", "j"]),
        (Mode::BigEvents, Accept, &["Enter"]),
        (Mode::BigEvents, SortList, &["s"]),
        (Mode::BigEvents, Cancel, &["Esc", "q", "b"]),
        (Mode::BigEvents, Help, &["?"]),
        (Mode::BigEvents, Quit, &["ctrl-c"]),
        (Mode::Messages, Up, &["Up", "k"]),
        (Mode::Messages, Down, &["Down", "j"]),
        (Mode::Messages, PageUp, &["PageUp"]),
        (Mode::Messages, PageDown, &["PageDown"]),
        (Mode::Messages, Cancel, &["Esc", "q", "Enter", "!"]),
        (Mode::Messages, Help, &["?"]),
        (Mode::Messages, Quit, &["ctrl-c"]),
    ];
    for &(mode, action, keys) in spec {
        assert_eq!(
            bound(&km, mode, action),
            keys,
            "{} {}",
            mode.name(),
            action.name()
        );
    }
    // Nothing bound beyond the spec.
    for mode in Mode::ALL {
        let expected = spec.iter().filter(|s| s.0 == mode).count();
        assert_eq!(km.bindings(mode).len(), expected, "{}", mode.name());
    }
    // Every timeline action except the list ones is reachable there.
    for &action in Action::ALL {
        let stats_only = [
            SortNext,
            SortPrev,
            SortReverse,
            NextTable,
            ToggleScope,
            Filter,
            NextThread,
            NextFigure,
            PrevFigure,
        ];
        if ![Up, Down, Accept, Cancel, SortList].contains(&action) && !stats_only.contains(&action)
        {
            assert!(
                !km.keys_for(Mode::Timeline, action).is_empty(),
                "{}",
                action.name()
            );
        }
    }
}

#[test]
fn the_panel_focus_key_is_bound_once_in_each_keymap() {
    let vim = {
        let mut km = Keymap::default_keymap();
        km.apply(file::parse(Path::new("vim.toml"), VIM_SOURCE).unwrap());
        km
    };
    for km in [Keymap::default_keymap(), vim] {
        for mode in Mode::ALL {
            let p: Vec<Action> = km
                .bindings(mode)
                .iter()
                .filter(|b| b.keys.contains(&key("p")))
                .map(|b| b.action)
                .collect();
            // Only the focus itself: in the timeline, and in the panel
            // mode to go on to the next panel.
            let want: &[Action] = match mode {
                Mode::Timeline | Mode::Panel | Mode::Range => &[Action::FocusPanel],
                _ => &[],
            };
            assert_eq!(p, want, "{}", mode.name());
        }
        assert_eq!(km.keys_for(Mode::Timeline, Action::FocusPanel), "p");
    }
}

#[test]
fn default_file_has_a_desc_for_every_entry() {
    let sections = file::parse(Path::new(DEFAULT_PATH), DEFAULT_SOURCE).unwrap();
    let modes: Vec<_> = sections.iter().map(|s| s.mode).collect();
    assert_eq!(modes, Mode::ALL);
    for section in &sections {
        for entry in &section.entries {
            let desc = entry.desc.as_deref().unwrap_or("");
            assert!(
                !desc.trim().is_empty(),
                "{} {}",
                section.mode.name(),
                entry.action.name()
            );
        }
    }
}

#[test]
fn ctrl_c_quits_in_every_mode() {
    let km = Keymap::default_keymap();
    for mode in Mode::ALL {
        assert_eq!(
            km.action(mode, &ctrl('c')),
            Some(Action::Quit),
            "{}",
            mode.name()
        );
    }
}

#[test]
fn finder_leaves_plain_characters_to_the_query() {
    let km = Keymap::default_keymap();
    for c in (' '..='~').chain(['é', 'ß']) {
        assert_eq!(km.action(Mode::Finder, &ch(c)), None, "{c:?}");
    }
}

#[test]
fn action_lookup() {
    let km = Keymap::default_keymap();
    let t = Mode::Timeline;
    assert_eq!(km.action(t, &ch('a')), Some(Action::PanLeft));
    assert_eq!(
        km.action(t, &press(KeyCode::Left, KeyModifiers::NONE)),
        Some(Action::PanLeft)
    );
    assert_eq!(km.action(t, &ch('n')), Some(Action::NextOccurrence));
    assert_eq!(
        km.action(t, &press(KeyCode::Char('N'), KeyModifiers::SHIFT)),
        Some(Action::PrevOccurrence)
    );
    assert_eq!(
        km.action(t, &press(KeyCode::Char('?'), KeyModifiers::SHIFT)),
        Some(Action::Help)
    );
    assert_eq!(
        km.action(t, &press(KeyCode::BackTab, KeyModifiers::SHIFT)),
        Some(Action::PrevEvent)
    );
    assert_eq!(km.action(t, &ch(' ')), Some(Action::ToggleCollapse));
    assert_eq!(km.action(t, &ch('c')), None);
    assert_eq!(
        km.action(t, &press(KeyCode::Left, KeyModifiers::CONTROL)),
        None
    );
    assert_eq!(km.action(Mode::Help, &ch('?')), Some(Action::Cancel));
    assert_eq!(km.action(Mode::Panel, &ch('q')), Some(Action::Cancel));

    let release = KeyEvent::new_with_kind_and_state(
        KeyCode::Char('q'),
        KeyModifiers::NONE,
        KeyEventKind::Release,
        KeyEventState::NONE,
    );
    assert_eq!(km.action(t, &release), None);
    let repeat = KeyEvent::new_with_kind(KeyCode::Left, KeyModifiers::NONE, KeyEventKind::Repeat);
    assert_eq!(km.action(t, &repeat), Some(Action::PanLeft));
}

#[test]
fn help_lists_file_order_with_labels() {
    let km = Keymap::default_keymap();
    let help = km.help(Mode::Timeline);
    assert_eq!(help[0], ("← a".to_string(), "Pan left".to_string()));
    assert_eq!(help[1], ("→ d".to_string(), "Pan right".to_string()));
    assert_eq!(
        help.last().unwrap(),
        &("q ctrl-c".to_string(), "Quit".to_string())
    );
    assert_eq!(help.len(), km.bindings(Mode::Timeline).len());
    assert_eq!(
        km.help(Mode::Help),
        [
            ("↑ k".to_string(), "Scroll up".to_string()),
            ("↓ j".to_string(), "Scroll down".to_string()),
            ("PgUp".to_string(), "Page up".to_string()),
            ("PgDn Space".to_string(), "Page down".to_string()),
            ("Esc q ?".to_string(), "Close the help".to_string()),
            ("L".to_string(), "Close the legend (L opens it)".to_string()),
            ("ctrl-c".to_string(), "Quit".to_string()),
        ]
    );
    assert_eq!(km.keys_for(Mode::Timeline, Action::NextBigEvent), "]");
    assert_eq!(km.keys_for(Mode::Timeline, Action::PrevEvent), "shift-Tab");
    assert_eq!(km.keys_for(Mode::Finder, Action::PanLeft), "");
}

#[test]
fn vim_preset_applies_over_defaults() {
    let km = with_user(VIM_SOURCE);
    let t = Mode::Timeline;
    assert_eq!(bound(&km, t, Action::PanLeft), ["h", "Left"]);
    assert_eq!(bound(&km, t, Action::PanRight), ["l", "Right"]);
    assert_eq!(bound(&km, t, Action::ZoomIn), ["i", "+", "="]);
    assert_eq!(bound(&km, t, Action::ZoomOut), ["o", "-"]);
    assert_eq!(bound(&km, t, Action::PageUp), ["ctrl-u", "PageUp"]);
    assert_eq!(bound(&km, t, Action::PageDown), ["ctrl-d", "PageDown"]);
    assert_eq!(bound(&km, t, Action::Home), ["0", "Home"]);
    assert_eq!(bound(&km, t, Action::End), ["$", "End"]);
    assert_eq!(km.action(t, &ch('a')), None);
    assert_eq!(km.action(t, &ctrl('c')), Some(Action::Quit));
    assert_eq!(km.action(Mode::Help, &ctrl('d')), Some(Action::PageDown));
    assert_eq!(bound(&km, t, Action::PanelScrollDown), ["}"]);
    // The straggler map: H opens it, h/l move across instances.
    assert_eq!(bound(&km, t, Action::StragglerMap), ["H"]);
    let s = Mode::Stragglers;
    assert_eq!(bound(&km, s, Action::PanLeft), ["h", "Left"]);
    assert_eq!(bound(&km, s, Action::PanRight), ["l", "Right"]);
    assert_eq!(km.action(s, &ch('H')), Some(Action::Cancel));
    // Untouched modes keep the defaults.
    assert_eq!(bound(&km, Mode::Finder, Action::Up), ["Up", "ctrl-p"]);
    // Help order is still the default file's.
    assert_eq!(km.help(t)[0].1, "Pan left");
}

// ---- overrides ----

#[test]
fn override_replaces_one_binding_and_keeps_desc() {
    let km = with_user("[timeline]\npan_left = { keys = [\"x\"] }\n");
    assert_eq!(bound(&km, Mode::Timeline, Action::PanLeft), ["x"]);
    assert_eq!(
        km.help(Mode::Timeline)[0],
        ("x".to_string(), "Pan left".to_string())
    );
    assert_eq!(km.action(Mode::Timeline, &ch('a')), None);
    assert_eq!(bound(&km, Mode::Timeline, Action::PanRight), ["Right", "d"]);
}

#[test]
fn override_steals_the_key_from_other_actions_in_that_mode_only() {
    let km = with_user("[panel]\nup = { keys = [\"q\"], desc = \"Up we go\" }\n");
    assert_eq!(bound(&km, Mode::Panel, Action::Up), ["q"]);
    assert_eq!(bound(&km, Mode::Panel, Action::Cancel), ["Esc"]);
    assert_eq!(km.help(Mode::Panel)[0].1, "Up we go");
    assert_eq!(km.action(Mode::Timeline, &ch('q')), Some(Action::Quit));
}

#[test]
fn override_with_no_keys_unbinds_and_hides_from_help() {
    let km = with_user("[timeline]\nlegend = { keys = [] }\n");
    assert_eq!(km.keys_for(Mode::Timeline, Action::Legend), "");
    assert!(km.help(Mode::Timeline).iter().all(|(_, d)| d != "Legend"));
}

#[test]
fn override_can_bind_an_action_new_to_a_mode() {
    let km = with_user(
        "[finder]\nlegend = { keys = [\"F1\"] }\n[panel]\naccept = { keys = [\"l\"], desc = \"Open\" }\n",
    );
    assert_eq!(
        km.action(Mode::Finder, &press(KeyCode::F(1), KeyModifiers::NONE)),
        Some(Action::Legend)
    );
    assert_eq!(
        km.help(Mode::Finder).last().unwrap(),
        &("F1".to_string(), "Legend".to_string())
    );
    assert_eq!(bound(&km, Mode::Panel, Action::Accept), ["l"]);
    assert_eq!(
        km.action(Mode::Panel, &press(KeyCode::Enter, KeyModifiers::NONE)),
        None
    );
}

// ---- errors ----

#[test]
fn error_display_is_one_line_with_path_and_line() {
    let e = KeymapError {
        path: PathBuf::from("/x/keymap.toml"),
        line: Some(3),
        message: "unknown action `foo` in [timeline]".into(),
    };
    assert_eq!(
        e.to_string(),
        "/x/keymap.toml:3: unknown action `foo` in [timeline]"
    );
    let e = KeymapError { line: None, ..e };
    assert_eq!(
        e.to_string(),
        "/x/keymap.toml: unknown action `foo` in [timeline]"
    );
}

#[test]
fn errors_name_the_offending_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("[timeline]\npan_left = { keys = [\"a\" }\n", 2, ""),
        (
            "[timeline]\npan_left = { keys = [\"a\"] }\npan_left = { keys = [\"b\"] }\n",
            3,
            "",
        ),
        ("# comment\n\n[timelin]\n", 3, "unknown mode `timelin`"),
        ("quit = 1\n", 1, "inside a mode table"),
        ("timeline = 1\n", 1, "must be a table"),
        (
            "[timeline]\n\n\npan_lft = { keys = [\"a\"] }\n",
            4,
            "unknown action `pan_lft`",
        ),
        (
            "[help]\nup = { keys = [\"k\"] }\ncancel = \"q\"\n",
            3,
            "must look like",
        ),
        ("[help]\ncancel = [\"q\"]\n", 2, "must look like"),
        (
            "[help]\ncancel = { desc = \"Close\" }\n",
            2,
            "has no `keys`",
        ),
        ("[help]\ncancel = { keys = \"q\" }\n", 2, "must look like"),
        (
            "[help]\ncancel = { keys = [\"q\"], desc = 3 }\n",
            2,
            "must look like",
        ),
        (
            "[help]\ncancel = { keys = [\"q\"], help = \"x\" }\n",
            2,
            "unknown field `help`",
        ),
        (
            "[help]\ncancel = { keys = [1] }\n",
            2,
            "keys must be strings",
        ),
        (
            "[help]\ncancel = { keys = [\"ctrl-fo\"] }\n",
            2,
            "bad key \"ctrl-fo\"",
        ),
        (
            "[timeline]\nquit = { keys = [\n  \"q\",\n  \"Escap\",\n] }\n",
            4,
            "bad key \"Escap\"",
        ),
        (
            "[timeline]\npan_left = { keys = [\"x\"] }\nquit = { keys = [\"x\"] }\n",
            3,
            "bound to both `pan_left` and `quit`",
        ),
    ];
    for &(src, line, needle) in cases {
        let e = parse_err(src);
        assert_eq!(e.line, Some(line), "{src:?} gave {e}");
        assert!(e.message.contains(needle), "{src:?} gave {e}");
        assert!(
            !e.to_string().contains('\n'),
            "{src:?} gave a multi-line error: {e}"
        );
        assert_eq!(e.path, Path::new("user.toml"));
    }
}

// ---- where the user file comes from ----

#[test]
fn user_path_resolution() {
    let os = |s: &'static str| Some(OsStr::new(s));
    assert_eq!(
        resolve_user_path(os("/cfg"), os("/home/u")),
        Some(PathBuf::from("/cfg/rankline/keymap.toml"))
    );
    assert_eq!(
        resolve_user_path(None, os("/home/u")),
        Some(PathBuf::from("/home/u/.config/rankline/keymap.toml"))
    );
    assert_eq!(
        resolve_user_path(os(""), os("/home/u")),
        Some(PathBuf::from("/home/u/.config/rankline/keymap.toml"))
    );
    assert_eq!(
        resolve_user_path(os("relative/cfg"), os("/home/u")),
        Some(PathBuf::from("/home/u/.config/rankline/keymap.toml"))
    );
    assert_eq!(
        resolve_user_path(os("/cfg"), None),
        Some(PathBuf::from("/cfg/rankline/keymap.toml"))
    );
    assert_eq!(resolve_user_path(None, None), None);
    assert_eq!(resolve_user_path(None, os("")), None);
}

#[test]
fn load_from_xdg_dir() {
    let dir = scratch_dir("xdg");
    let xdg = dir.join("config");
    let path =
        resolve_user_path(Some(xdg.as_os_str()), Some(OsStr::new("/nonexistent-home"))).unwrap();
    assert_eq!(path, xdg.join("rankline/keymap.toml"));

    // Not there yet: the defaults.
    let km = load_from(None, Some(&path)).unwrap();
    assert_eq!(km.action(Mode::Timeline, &ch('a')), Some(Action::PanLeft));
    assert_eq!(km.source(), "the built-in keymaps/default.toml");

    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "[timeline]\nzoom_in = { keys = [\"a\"] }\n").unwrap();
    let km = load_from(None, Some(&path)).unwrap();
    assert_eq!(km.action(Mode::Timeline, &ch('a')), Some(Action::ZoomIn));
    assert_eq!(bound(&km, Mode::Timeline, Action::PanLeft), ["Left"]);

    // An explicit file wins over the user file.
    let explicit = dir.join("other.toml");
    std::fs::write(&explicit, "[timeline]\nlegend = { keys = [\"a\"] }\n").unwrap();
    let km = load_from(Some(&explicit), Some(&path)).unwrap();
    assert_eq!(km.action(Mode::Timeline, &ch('a')), Some(Action::Legend));
    assert_eq!(
        km.source(),
        format!(
            "{} over the built-in keymaps/default.toml",
            explicit.display()
        )
    );
    assert_eq!(bound(&km, Mode::Timeline, Action::ZoomIn), ["w", "+", "="]);

    // A broken user file is an error naming it.
    std::fs::write(&path, "[timeline]\nzoom_in = { keys = [\"nope\"] }\n").unwrap();
    let e = load_from(None, Some(&path)).unwrap_err();
    assert_eq!((e.path.as_path(), e.line), (path.as_path(), Some(2)));
}

#[test]
fn missing_explicit_file_is_an_error() {
    let dir = scratch_dir("missing");
    let missing = dir.join("nope.toml");
    let e = load_from(Some(&missing), None).unwrap_err();
    assert_eq!(e.path, missing);
    assert_eq!(e.line, None);
    assert!(
        e.to_string()
            .starts_with(&format!("{}: cannot read keymap", missing.display())),
        "{e}"
    );
}

#[test]
fn no_user_file_anywhere_means_defaults() {
    assert!(load_from(None, None).is_ok());
}

#[test]
fn action_names_take_a_hyphen_for_an_underscore() {
    let km =
        with_user("[timeline]\nrange-start = { keys = [\"(\"] }\nrange-end = { keys = [\")\"] }\n");
    assert_eq!(
        km.action(Mode::Timeline, &ch('(')),
        Some(Action::RangeStart)
    );
    assert_eq!(km.action(Mode::Timeline, &ch(')')), Some(Action::RangeEnd));
}
