//! `x` and `K`: the minimum duration drawn and the kernel names shown,
//! on the capture in view and on the `--baseline` one alike.

use super::App;
use crate::tui::show::Show;

impl App {
    pub(super) fn cycle_min_duration(&mut self) {
        let show = Show {
            min_dur: self.capture.show.next_min_dur(),
            ..self.capture.show
        };
        self.set_show(show);
        match show.filter_label() {
            Some(at_least) => self.say(format!(
                "x: drawing only events {at_least}; the title counts those hidden in view (x: the next step)"
            )),
            None => self.say("x: every event drawn again"),
        }
    }

    pub(in crate::tui::state) fn switch_kernel_names(&mut self) {
        let show = Show {
            names: self.capture.show.names.other(),
            ..self.capture.show
        };
        self.set_show(show);
        self.say(format!(
            "K: {} kernel names in lanes, panels and the finder",
            show.names.describe()
        ));
    }

    fn set_show(&mut self, show: Show) {
        self.capture.set_show(show);
        if let Some(b) = self.baseline.as_mut() {
            b.other.set_show(show);
        }
    }
}
