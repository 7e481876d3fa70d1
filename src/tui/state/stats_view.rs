//! The stats view's keys: opening it, its table (recomputed only when the
//! kind or the window changes), sorting, filtering, and Enter, which zooms
//! to the name's longest event with `n` / `N` through the next longest.

use super::{App, JumpSource, Overlay, Pick};
use crate::analysis::Window;
use crate::analysis::name_stats::{self, StatsOf};
use crate::tui::action::Action;
use crate::tui::data::Loaded;
use crate::tui::selection::{EventRef, Target};
use crate::tui::stats_view::{self, COLUMNS, KINDS, Scope, StatsState, StatsTable};
use crate::tui::timescale::format_duration;

impl App {
    /// `S`: the last table shown (the kernels at first); its table is
    /// derived off the UI thread ([`App::derive`]), again if its window
    /// was the view's and the view moved.
    pub(super) fn open_stats(&mut self) {
        let st = self.chrome.stats_state.clone().unwrap_or_default();
        self.chrome.overlay = Overlay::Stats(st);
    }

    /// The window a scope stands for now.
    fn stats_window(&self, scope: Scope) -> Window {
        match scope {
            Scope::Capture => Window::ALL,
            Scope::Window => self.capture.view.window(),
        }
    }

    /// The job deriving the open stats view's table, when needed.
    pub(super) fn stats_job(&mut self) -> Option<crate::tui::derive_jobs::DeriveJob> {
        let Overlay::Stats(st) = &self.chrome.overlay else {
            return None;
        };
        let (of, window) = (st.of, self.stats_window(st.scope));
        self.capture.stats_job(of, window)
    }

    /// The table the stats view shows (its state's kind and window), when
    /// derived.
    pub fn stats_table(&self) -> Option<&StatsTable> {
        let st = match &self.chrome.overlay {
            Overlay::Stats(st) => st,
            _ => self.chrome.stats_state.as_ref()?,
        };
        self.capture.stats_table(st.of, self.stats_window(st.scope))
    }

    pub(super) fn apply_stats(&mut self, a: Action, mut st: StatsState) {
        let Some(l) = self.data() else {
            self.chrome.overlay = Overlay::None;
            return;
        };
        let shown = |app: &App, st: &StatsState| {
            app.stats_table()
                .map(|t| stats_view::order(t, &l.profile.strings, st))
                .unwrap_or_default()
        };
        let len = shown(self, &st).len();
        let page = st.pick.scroll.visible.max(2) as isize - 1;
        if st.typing {
            // The filter's line: Enter keeps it, Esc clears it; the cursor
            // still moves.
            match a {
                Action::Accept => st.typing = false,
                Action::Cancel => {
                    st.typing = false;
                    st.filter.clear();
                    st.pick = Pick::default();
                }
                Action::Up => st.pick.step(-1, len),
                Action::Down => st.pick.step(1, len),
                _ => {}
            }
            self.keep_stats(st);
            return;
        }
        match a {
            Action::Up => st.pick.step(-1, len),
            Action::Down => st.pick.step(1, len),
            Action::PageUp => st.pick.step(-page, len),
            Action::PageDown => st.pick.step(page, len),
            Action::Home => st.pick.step(-(len as isize), len),
            Action::End => st.pick.step(len as isize, len),
            Action::SortNext => st.sort = (st.sort + 1) % COLUMNS.len(),
            Action::SortPrev => st.sort = (st.sort + COLUMNS.len() - 1) % COLUMNS.len(),
            Action::SortReverse => st.reverse = !st.reverse,
            Action::NextTable => {
                let at = KINDS.iter().position(|&k| k == st.of).unwrap_or(0);
                st.of = KINDS[(at + 1) % KINDS.len()];
                st.pick = Pick::default();
            }
            Action::ToggleScope => {
                st.scope = match st.scope {
                    Scope::Capture => Scope::Window,
                    Scope::Window => Scope::Capture,
                };
                st.pick = Pick::default();
            }
            Action::Filter => st.typing = true,
            Action::KernelNames => {
                self.switch_kernel_names();
                st.pick = Pick::default();
            }
            Action::Accept => {
                let row = shown(self, &st).get(st.pick.selected).copied();
                self.keep_stats(st);
                self.chrome.overlay = Overlay::None;
                if let Some(i) = row {
                    self.go_longest(&l, i);
                }
                return;
            }
            Action::Cancel | Action::StatsView => {
                self.keep_stats(st);
                self.chrome.overlay = Overlay::None;
                return;
            }
            _ => {}
        }
        self.keep_stats(st);
    }

    /// The state stays for the next `S`, and the overlay shows it.
    fn keep_stats(&mut self, st: StatsState) {
        self.chrome.stats_state = Some(StatsState {
            typing: false,
            ..st.clone()
        });
        self.chrome.overlay = Overlay::Stats(st);
    }

    /// Enter on row `i` of the table: the timeline zoomed to its longest
    /// event, and `n` / `N` through the rest, longest first.
    fn go_longest(&mut self, l: &Loaded, i: usize) {
        let Some(t) = self.stats_table() else { return };
        let r = &t.rows[i];
        let p = &l.profile;
        let rows = name_stats::longest_first(p, &l.analysis.clock, t.of, t.names, r.name, t.window);
        let as_event = |row: usize| match t.of {
            StatsOf::Kernels | StatsOf::Copies => EventRef::Gpu(row),
            StatsOf::Api => EventRef::Api(row),
            StatsOf::Nvtx => EventRef::Nvtx(row),
            StatsOf::Osrt => EventRef::Osrt(row),
        };
        // One per collective instance: its ranks' kernels are one event
        // (and a jump lands on the instance's late rank).
        let m = &l.analysis.matching;
        let mut seen = std::collections::HashSet::new();
        let events: Vec<EventRef> = rows
            .into_iter()
            .filter(|&row| !t.of.on_gpu() || m.instance_of(row).is_none_or(|i| seen.insert(i)))
            .map(as_event)
            .collect();
        if events.is_empty() {
            return;
        }
        let name = r.label(&p.strings).into_owned();
        let instances = if seen.is_empty() {
            String::new()
        } else {
            format!(
                " ({} to step through, one per collective instance)",
                events.len()
            )
        };
        let line = format!(
            "the longest of {} {}{instances}: {} (n / N: the next longest)",
            r.count,
            crate::text_safe::escape_controls(&name),
            format_duration(r.max_ns)
        );
        let source = JumpSource::Finder {
            label: name,
            events,
        };
        self.go_zoomed(Target::Step(source, 0));
        self.say(line);
    }
}
