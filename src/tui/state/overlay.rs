//! The popups over the timeline.

use crate::tui::action::Mode;
use crate::tui::pick::Pick;
use crate::tui::scroll::Scroll;

/// A popup over the timeline; each owns its scroll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    None,
    /// The help, the keys of the view it was opened from first.
    Help(Scroll, Mode),
    Legend(Scroll),
    Finder {
        query: String,
        pick: Pick,
    },
    /// The largest start skews (`b`).
    BigEvents(Pick),
    /// Who is behind (`W`).
    Behind(Pick),
    /// The session's messages (`!`).
    Messages(Scroll),
    GotoTime {
        input: String,
    },
    /// The stats view (`S`).
    Stats(crate::tui::stats_view::StatsState),
    /// `M`: the new bookmark's name.
    BookmarkName {
        input: String,
    },
    /// `'`: the capture's bookmarks.
    Bookmarks(Pick),
    /// `T`: a thread's NVTX tree.
    NvtxTree(Pick),
}
