//! The timeline on some data, drawn off screen (ratatui's test backend):
//! what `rankline bench` times. Its figures come from here, so the bench
//! needs none of the UI's parts.

use crate::tui::action::Action;
use crate::tui::data::Loaded;
use crate::tui::keymap::Keymap;
use crate::tui::panel::PanelKind;
use crate::tui::state::App;
use crate::tui::timescale::View;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The timeline on `data` at a size, nothing drawn yet.
pub struct Offscreen {
    app: App,
    term: Terminal<TestBackend>,
}

impl Offscreen {
    pub fn new(data: Arc<Loaded>, width: u16, height: u16) -> Offscreen {
        let mut app = App::new(Keymap::default_keymap(), false);
        app.set_data(data);
        let term = Terminal::new(TestBackend::new(width, height)).expect("a test backend");
        Offscreen { app, term }
    }

    /// Shows `start`..`end` (ns, reference clock).
    pub fn show(&mut self, start: i64, end: i64) {
        self.app.capture_mut().view = View::fit(start, end);
    }

    /// Shows `span` ns from `t0`, however short.
    pub fn show_from(&mut self, t0: i64, span: f64) {
        self.app.capture_mut().view = View {
            t0: t0 as f64,
            span,
        };
    }

    /// Draws one frame; how long it took.
    pub fn frame(&mut self) -> Duration {
        let t0 = Instant::now();
        let app = &mut self.app;
        self.term
            .draw(|f| crate::tui::ui::draw(f, app))
            .expect("drawing off screen");
        t0.elapsed()
    }

    /// The mean time of a frame over `n` (after one not counted).
    pub fn mean_frame(&mut self, n: u32) -> Duration {
        self.frame();
        let t0 = Instant::now();
        for _ in 0..n {
            self.frame();
        }
        t0.elapsed() / n.max(1)
    }

    /// Opens the straggler map of the group shown first.
    pub fn open_straggler_map(&mut self) {
        self.app.apply(Action::StragglerMap);
    }

    /// The straggler map's ranks and rows, when it is open.
    pub fn straggler_map_size(&self) -> Option<(usize, usize)> {
        let v = self.app.capture().straggler.as_ref()?;
        Some((v.map.ranks(), v.rows.len()))
    }

    /// Opens the steps view, its figures derived on this thread (the
    /// loop derives them off its thread); returns how long that took.
    pub fn open_steps_view(&mut self) -> Duration {
        // From the timeline (the straggler map may be open).
        for _ in 0..4 {
            if self.app.mode() == crate::tui::action::Mode::Timeline {
                break;
            }
            self.app.apply(Action::Cancel);
        }
        self.app.apply(Action::StepsView);
        let t0 = Instant::now();
        self.app.derive();
        while let Some(job) = self.app.next_derive_job() {
            self.app.on_derived(job.run());
        }
        t0.elapsed()
    }

    /// The steps view's ranks and columns, when it is open and derived.
    pub fn steps_view_size(&self) -> Option<(usize, usize)> {
        let v = self.app.capture().steps_view.as_ref()?;
        Some((v.devices.len(), v.cols.len()))
    }

    /// Makes the steps view's cells show `figure`.
    pub fn steps_figure(&mut self, figure: crate::tui::steps_view::StepFigure) {
        if let Some(v) = self.app.capture_mut().steps_view.as_mut() {
            v.figure = figure;
        }
    }

    /// Unfolds every host of the steps view.
    pub fn expand_steps_hosts(&mut self) {
        if let Some(v) = self.app.capture_mut().steps_view.as_mut() {
            v.collapsed.clear();
            v.rebuild_cols();
        }
    }

    /// Opens every host of the straggler map.
    pub fn expand_straggler_hosts(&mut self) {
        if let Some(v) = self.app.capture_mut().straggler.as_mut() {
            v.collapsed.clear();
            v.rebuild_rows();
        }
    }

    /// With only `panel` open and `start`..`end` shown and marked as the
    /// range, the UI thread's work per key of `keys`: its handling (derived
    /// work asked for included) and the next frame. The derived work runs
    /// off the UI thread in the timeline: its jobs are dropped here.
    pub fn key_latency(
        &mut self,
        panel: PanelKind,
        start: i64,
        end: i64,
        keys: &str,
    ) -> Vec<Duration> {
        self.show(start, end);
        self.app.capture_mut().range.start = Some(start);
        self.app.capture_mut().range.end = Some(end);
        for k in PanelKind::ALL {
            if self.app.chrome().panels.is_open(k) != (k == panel) {
                self.app.chrome_mut().panels.toggle(k);
            }
        }
        keys.chars()
            .map(|c| {
                let t0 = Instant::now();
                self.app
                    .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
                self.frame();
                self.app.after_frame();
                let took = t0.elapsed();
                while self.app.next_derive_job().is_some() {}
                took
            })
            .collect()
    }
}
