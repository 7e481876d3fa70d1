//! What the user is looking at, as plain values: the selected event, the open
//! side panels, the screen, and the places jumps go to and come back from.
//! Apart from the state so that the loader and the panel layout can name
//! them without reaching into the state.

use super::timescale::View;

/// A selected event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRef {
    Gpu(usize),
    Api(usize),
    Nvtx(usize),
}

/// Which side panels are open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Panels {
    pub skew: bool,
    pub launch: bool,
    pub overlap: bool,
    pub summary: bool,
    pub details: bool,
    pub diff: bool,
}

impl Panels {
    pub fn any(&self) -> bool {
        self.skew || self.launch || self.overlap || self.summary || self.details || self.diff
    }
}

/// The full-screen view: the timeline (with its panels) or the map.
/// Chosen here and drawn by `ui::draw`; each has its own keymap mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Screen {
    #[default]
    Timeline,
    /// The straggler map (`H`).
    Stragglers,
}

/// Where the user was: what was selected, the window and the lane, and
/// the screen (a jump from the straggler map goes back to it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Place {
    pub selection: Option<EventRef>,
    pub view: View,
    pub cursor: usize,
    pub screen: Screen,
}

/// Where a jump goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// An event, brought into view.
    Event(EventRef),
    /// A place from the history, restored as it was.
    Place(Place),
}

/// What `n` / `N` step through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JumpSource {
    /// The instances of a collective group.
    Group(usize),
    /// Occurrences of a finder entry (label, rows in time order).
    Finder {
        label: String,
        events: Vec<EventRef>,
    },
}
