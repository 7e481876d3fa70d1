//! Everything a key can do. Keymaps (`keymaps/*.toml`) bind keys to these
//! by name, per mode.

/// Input modes, each with its own bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// The timeline and its panels.
    Timeline,
    /// The straggler map (full screen).
    Stragglers,
    /// The steps view (full screen).
    Steps,
    /// The fuzzy finder (typing goes to the query).
    Finder,
    /// A side panel focused from the timeline (its rows under a cursor).
    Panel,
    /// The help overlay.
    Help,
    /// The stats view (`S`); while its filter is typed, `Finder`.
    Stats,
    /// The range panel focused from the timeline: a side panel that also
    /// copies its range.
    Range,
    /// The NVTX tree (`T`).
    NvtxTree,
    /// The bookmarks list (`'`).
    Bookmarks,
    /// Who is behind (`W`).
    Behind,
    /// The largest start skews (`b`).
    BigEvents,
    /// The session's messages (`!`).
    Messages,
}

impl Mode {
    /// In help order (and the order of the keymap file's tables).
    pub const ALL: [Mode; 13] = [
        Mode::Timeline,
        Mode::Stragglers,
        Mode::Steps,
        Mode::Finder,
        Mode::Panel,
        Mode::Help,
        Mode::Stats,
        Mode::Range,
        Mode::NvtxTree,
        Mode::Bookmarks,
        Mode::Behind,
        Mode::BigEvents,
        Mode::Messages,
    ];

    /// The table name in keymap files.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Timeline => "timeline",
            Mode::Stragglers => "stragglers",
            Mode::Steps => "steps",
            Mode::Finder => "finder",
            Mode::Panel => "panel",
            Mode::Help => "help",
            Mode::Stats => "stats",
            Mode::Range => "range",
            Mode::NvtxTree => "nvtx_tree",
            Mode::Bookmarks => "bookmarks",
            Mode::Behind => "behind",
            Mode::BigEvents => "big_events",
            Mode::Messages => "messages",
        }
    }

    /// What the mode's keys act on, for the help's headings.
    pub fn view(self) -> &'static str {
        match self {
            Mode::Timeline => "the timeline",
            Mode::Stragglers => "the straggler map",
            Mode::Steps => "the steps view",
            Mode::Finder => "the finder and the prompts",
            Mode::Panel => "a side panel with the keys",
            Mode::Help => "the help and the legend",
            Mode::Stats => "the stats view",
            Mode::Range => "the range panel with the keys",
            Mode::NvtxTree => "the NVTX tree",
            Mode::Bookmarks => "the bookmarks list",
            Mode::Behind => "who is behind",
            Mode::BigEvents => "the largest start skews",
            Mode::Messages => "the messages",
        }
    }

    /// The timeline's action that opens the mode's view (for the help:
    /// the key comes from the keymap).
    pub fn opened_by(self) -> Option<Action> {
        match self {
            Mode::Timeline => None,
            Mode::Stragglers => Some(Action::StragglerMap),
            Mode::Steps => Some(Action::StepsView),
            Mode::Finder => Some(Action::OpenFinder),
            Mode::Panel | Mode::Range => Some(Action::FocusPanel),
            Mode::Help => Some(Action::Help),
            Mode::Stats => Some(Action::StatsView),
            Mode::NvtxTree => Some(Action::NvtxTree),
            Mode::Bookmarks => Some(Action::Bookmarks),
            Mode::Behind => Some(Action::BehindList),
            Mode::BigEvents => Some(Action::BigEventList),
            Mode::Messages => Some(Action::Messages),
        }
    }
}

macro_rules! actions {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// A user action.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $($variant),*
        }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant),*];

            /// The action's name in keymap files.
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$variant => $name),*
                }
            }

            /// The action named `name` in a keymap file (`range-start`
            /// as well as `range_start`).
            pub fn from_name(name: &str) -> Option<Action> {
                match name.replace('-', "_").as_str() {
                    $($name => Some(Action::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

actions! {
    Quit = "quit",
    Help = "help",
    Legend = "legend",
    PanLeft = "pan_left",
    PanRight = "pan_right",
    ZoomIn = "zoom_in",
    ZoomOut = "zoom_out",
    LaneUp = "lane_up",
    LaneDown = "lane_down",
    PageUp = "page_up",
    PageDown = "page_down",
    FitAll = "fit_all",
    ZoomToSelection = "zoom_to_selection",
    GotoTime = "goto_time",
    Home = "home",
    End = "end",
    NextEvent = "next_event",
    PrevEvent = "prev_event",
    SelectUnderCursor = "select",
    ClearSelection = "clear_selection",
    ToggleRelativeTime = "toggle_relative_time",
    MinDuration = "min_duration",
    KernelNames = "kernel_names",
    ToggleCollapse = "toggle_collapse",
    NextOccurrence = "next_occurrence",
    PrevOccurrence = "prev_occurrence",
    NextBigEvent = "next_big_event",
    PrevBigEvent = "prev_big_event",
    BigEventList = "big_event_list",
    BehindList = "behind_list",
    FocusMode = "focus_mode",
    PanelSkew = "panel_skew",
    PanelLaunch = "panel_launch",
    PanelOverlap = "panel_overlap",
    PanelSummary = "panel_summary",
    PanelDetails = "panel_details",
    PanelDiff = "panel_diff",
    PanelScrollUp = "panel_scroll_up",
    PanelScrollDown = "panel_scroll_down",
    FocusPanel = "focus_panel",
    ToggleMouse = "toggle_mouse",
    JumpToLaunch = "jump_to_launch",
    OpenFinder = "open_finder",
    HistoryBack = "history_back",
    HistoryForward = "history_forward",
    Messages = "messages",
    CopyReference = "copy_reference",
    ExportTrace = "export_trace",
    NvtxTree = "nvtx_tree",
    AddBookmark = "add_bookmark",
    Bookmarks = "bookmarks",
    RangeStart = "range_start",
    RangeEnd = "range_end",
    PanelRange = "panel_range",
    StatsView = "stats_view",
    // The stats view: its column to sort by, the order, the table, over
    // what, and its filter.
    SortNext = "sort_next",
    SortPrev = "sort_prev",
    SortReverse = "sort_reverse",
    NextTable = "next_table",
    ToggleScope = "toggle_scope",
    Filter = "filter",
    // The NVTX tree: the next thread with ranges.
    NextThread = "next_thread",
    StragglerMap = "straggler_map",
    // The steps view, and the figure its cells show.
    StepsView = "steps_view",
    NextFigure = "next_figure",
    PrevFigure = "prev_figure",
    SwitchCapture = "switch_capture",
    // Lists (finder results, the big-events list, help pages).
    Up = "up",
    Down = "down",
    Accept = "accept",
    Cancel = "cancel",
    // The big-events list: by skew, or in time order; the straggler map:
    // by mean lateness, or in group order.
    SortList = "sort_list",
}
