//! What belongs to the screen around the captures: which screen and
//! overlay are up, the side panels, the ruler, and where the last frame
//! drew things. `B` swaps the captures and leaves all of this as it is.

use super::overlay::Overlay;
use crate::tui::panel::{FrameLayout, PanelView};
use crate::tui::selection::Screen;
use crate::tui::stats_view::StatsState;
use crate::tui::timescale::Ruler;

pub struct Chrome {
    pub screen: Screen,
    pub overlay: Overlay,
    /// Which side panels are open, their scrolls and cursors.
    pub panels: PanelView,
    /// Where the last frame drew things, for keys and the mouse.
    pub layout: FrameLayout,
    /// What the ruler reads.
    pub ruler: Ruler,
    /// The big-events list in time order instead of by skew.
    pub big_list_by_time: bool,
    /// The stats view's sort, filter and cursor between openings (its
    /// table belongs to the capture it was computed from).
    pub stats_state: Option<StatsState>,
}

impl Default for Chrome {
    fn default() -> Chrome {
        Chrome {
            screen: Screen::Timeline,
            overlay: Overlay::None,
            panels: PanelView::default(),
            layout: FrameLayout {
                timeline_width: 100,
                ..FrameLayout::default()
            },
            ruler: Ruler::default(),
            big_list_by_time: false,
            stats_state: None,
        }
    }
}
