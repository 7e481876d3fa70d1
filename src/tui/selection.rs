//! What the user is looking at, as plain values: the selected event, the
//! screen, and the places jumps go to and come back from. Apart from the
//! state so that the loader and the panel layout can name them without
//! reaching into the state.

use super::timescale::View;

/// A selected event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRef {
    Gpu(usize),
    Api(usize),
    Nvtx(usize),
    /// An OS runtime call (row of `Profile::osrt`).
    Osrt(usize),
    /// A descheduled span, by its switch out (row of `Profile::sched`).
    Sched(usize),
    /// A CPU sample (row of `Profile::samples`).
    Sample(usize),
}

/// The full-screen view: the timeline (with its panels) or the map.
/// Chosen here and drawn by `ui::draw`; each has its own keymap mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Screen {
    #[default]
    Timeline,
    /// The straggler map (`H`).
    Stragglers,
    /// The steps view (`P`).
    Steps,
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
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// An event, brought into view.
    Event(EventRef),
    /// A collective instance, (group, 0-based instance): its late rank's
    /// kernel, the one the question is about; `n`/`N` then step through
    /// the group.
    Instance(usize, usize),
    /// Occurrence `at` of what `n`/`N` step through, which it becomes.
    Step(JumpSource, usize),
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
    /// The rows of a step's critical path (step number, rows in time
    /// order), marked on the timeline.
    Path { step: usize, events: Vec<EventRef> },
}

impl JumpSource {
    /// The events stepped through, when it is a list of them.
    pub fn events(&self) -> Option<&[EventRef]> {
        match self {
            JumpSource::Group(_) => None,
            JumpSource::Finder { events, .. } | JumpSource::Path { events, .. } => Some(events),
        }
    }
}
