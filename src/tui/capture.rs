//! One loaded capture as the timeline holds it: its data (one view per file
//! and the analyses across them), the window on it, its lanes and cursor,
//! what is selected and what `n`/`N` step through, the jump history, the
//! straggler map last shown, and what is derived from the selection and
//! the window. The app holds one (two with a baseline: switching swaps
//! them); everything numbered per capture (events, groups, lanes) stays
//! with its capture.

pub mod facts;
pub mod time;

use crate::analysis::overlap::DeviceOverlap;
use crate::analysis::step_overview::StepOverview;
use crate::tui::data::Loaded;
use crate::tui::derive_jobs::{
    DeriveDone, DeriveJob, RangeKey, StatsKey, StepsKey, TreeKey, WindowKey, data_key,
};
use crate::tui::derived::Latest;
use crate::tui::history::History;
use crate::tui::lanes::{self, LaneKind, LaneRow};
use crate::tui::scroll::Scroll;
use crate::tui::selection::{EventRef, JumpSource, Place, Screen};
use crate::tui::stragglers::StragglerView;
use crate::tui::timescale::View;
use facts::Facts;
use std::collections::HashSet;
use std::sync::Arc;

/// The timeline's rows and the cursor over them.
#[derive(Debug, Clone, Default)]
pub struct Lanes {
    pub rows: Vec<LaneRow>,
    /// Host, device and API rows whose rows below are hidden.
    pub collapsed: HashSet<LaneKind>,
    /// Focus mode: only the selected group's lanes, latest first.
    pub focus: bool,
    /// The row the cursor is on.
    pub cursor: usize,
    /// Which rows are on screen; drawing records how many fit.
    pub scroll: Scroll,
}

impl Lanes {
    /// The rows on screen, as the last frame drew them (at least one).
    pub fn on_screen(&self) -> std::ops::Range<usize> {
        let s = &self.scroll;
        let end = (s.top + s.visible.max(1)).min(self.rows.len());
        s.top.min(end)..end
    }

    /// The row under the cursor.
    pub fn at_cursor(&self) -> Option<&LaneRow> {
        self.rows.get(self.cursor)
    }

    /// Moves the cursor by `by` rows, within the rows there are.
    pub fn move_cursor(&mut self, by: isize) {
        let n = self.rows.len();
        if n > 0 {
            self.cursor = (self.cursor as isize + by).clamp(0, n as isize - 1) as usize;
            self.keep_cursor_visible();
        }
    }

    /// Puts the cursor on row `row` (the last row when past it).
    pub fn put_cursor(&mut self, row: usize) {
        self.cursor = row.min(self.rows.len().saturating_sub(1));
        self.keep_cursor_visible();
    }

    /// Scrolls so the cursor row is on screen (after a resize too), and
    /// never past the last row: when the terminal grows, the view stays
    /// full rather than keeping rows scrolled off the top.
    pub fn keep_cursor_visible(&mut self) {
        // Before the first frame the height is not known: the first rows
        // stay on screen, the frame scrolls if the cursor is below them.
        let visible = self.scroll.visible;
        self.scroll.fit(self.rows.len(), visible);
        if visible > 0 {
            self.scroll.show(self.cursor);
        }
    }

    /// The position of the row of kind `kind`, if shown.
    pub fn find(&self, kind: LaneKind) -> Option<usize> {
        self.rows.iter().position(|r| r.kind == kind)
    }
}

/// One capture and the timeline's state on it.
#[derive(Default)]
pub struct Capture {
    /// What was loaded; `None` until the loader's first frame arrives.
    pub data: Option<Arc<Loaded>>,
    /// The minimum duration drawn and the kernel names shown (the same on
    /// both captures of a `--baseline` pair: set on both at once).
    pub show: crate::tui::show::Show,
    /// The window on the timeline, on the reference clock.
    pub view: View,
    pub lanes: Lanes,
    pub selection: Option<EventRef>,
    /// What `n` / `N` step through.
    pub jump: Option<JumpSource>,
    /// Places left by jumps (`Backspace` back, `alt-Right` forward).
    pub history: History<Place>,
    /// The straggler map of the group last shown (kept while the group
    /// stays the same, so its cursor and sort survive a trip to the
    /// timeline).
    pub straggler: Option<StragglerView>,
    /// What is derived from the selection, when it changes.
    pub facts: Facts,
    /// The overlap of the view's window (derived off the UI thread while
    /// its panel is open).
    pub windowed: Latest<WindowKey, Vec<DeviceOverlap>>,
    /// The range marked on the ruler, and what it holds (derived off the
    /// UI thread for the rows in view while the range panel is open).
    pub range: crate::tui::range::RangeMarks,
    pub range_facts: Latest<RangeKey, crate::tui::range::RangeFacts>,
    // Derived from this capture's data: `B` takes them along, so one
    // capture's figures never show under the other's name.
    /// The stats view's table (derived off the UI thread).
    pub stats: Latest<StatsKey, crate::tui::stats_view::StatsTable>,
    /// This capture's bookmarks, read from disk when first asked for.
    pub bookmarks: Option<Vec<crate::profile::bookmarks::Bookmark>>,
    /// The thread the NVTX tree view shows, and its tree as rows
    /// (derived off the UI thread).
    pub nvtx_thread: Option<usize>,
    pub nvtx_tree: Latest<TreeKey, crate::tui::nvtx_view::NvtxTree>,
    /// The finder's hits (indices into the entries of the data they were
    /// searched in: its address is part of the key) for its query and the
    /// names shown: searched once per change, read by the key handler and
    /// the frame alike.
    pub finder: crate::tui::derived::Derived<FinderKey, Vec<usize>>,
    /// The steps' figures (derived off the UI thread when the steps view
    /// first opens) and the view's cursor and choices.
    pub steps: Latest<StepsKey, Arc<StepOverview>>,
    pub steps_view: Option<crate::tui::steps_view::StepsView>,
}

/// What the finder's hits were searched for: the data (its address), the
/// query and the kernel names shown.
pub type FinderKey = (usize, String, crate::profile::names::KernelNames);

impl Capture {
    /// The data as it is now: a cheap handle the caller may hold while it
    /// changes the capture.
    pub fn data(&self) -> Option<Arc<Loaded>> {
        self.data.clone()
    }

    /// The matched instance selected, if any.
    pub fn instance(&self) -> Option<(usize, usize)> {
        self.facts.instance
    }

    /// Installs `data`: the first time, the view fits everything; later
    /// (the analyses arrive, replacing the first frame's), the view, the
    /// selection and the lanes' state stay and what is derived is
    /// derived again.
    pub fn set_data(&mut self, data: Arc<Loaded>) {
        let first = self.data.is_none();
        self.data = Some(data.clone());
        if first && let Some((a, b)) = data.span {
            self.view = View::fit(a, b);
        }
        // Their keys hold the data's address, which new data could reuse
        // once the old is freed: nothing derived from the old is kept.
        self.windowed.forget();
        self.range_facts.forget();
        self.stats.forget();
        self.nvtx_tree.forget();
        if first {
            let p = &data.profile;
            let hosts: Vec<u32> = p.devices.iter().map(|d| d.host).collect();
            if lanes::hosts_start_collapsed(&hosts) {
                let all = (0..p.hosts.len() as u32).map(LaneKind::Host);
                self.lanes.collapsed.extend(all);
            }
        }
        self.rebuild_rows();
        if first {
            self.start_on_first_lane_with_events();
        } else {
            // The analyses may make the selection a matched collective.
            let s = self.selection;
            self.select(s, false);
        }
    }

    /// The rows again, after a collapse, a focus change or new data.
    pub fn rebuild_rows(&mut self) {
        let Some(l) = self.data() else { return };
        self.lanes.rows = match (self.lanes.focus, self.facts.instance) {
            (true, Some((g, k))) => lanes::focus(
                &l.profile,
                &l.analysis,
                &l.index,
                g,
                k,
                self.facts.account.as_ref(),
            ),
            _ => lanes::build(&l.profile, &l.analysis, &l.index, &self.lanes.collapsed),
        };
        let cursor = self.lanes.cursor;
        self.lanes.put_cursor(cursor);
    }

    /// Puts the cursor on the first lane that has events, so that the first
    /// Enter or Tab a new user presses does something.
    fn start_on_first_lane_with_events(&mut self) {
        let Some(l) = self.data() else { return };
        let first =
            self.lanes.rows.iter().position(|row| {
                time::track(&l, row.kind).is_some_and(|(track, _)| !track.is_empty())
            });
        if let Some(i) = first {
            self.lanes.put_cursor(i);
        }
    }

    /// Where the user is, for the history.
    pub fn place(&self, screen: Screen) -> Place {
        Place {
            selection: self.selection,
            view: self.view,
            cursor: self.lanes.cursor,
            screen,
        }
    }

    /// Start and end of the selection on the reference clock (the whole
    /// instance for a collective).
    pub fn selection_span(&self) -> Option<(i64, i64)> {
        let l = self.data.as_ref()?;
        if let Some((g, k)) = self.facts.instance {
            let group = &l.analysis.matching.groups[g];
            let a = group.members(k).map(|m| m.2.0).min()?;
            let b = group.members(k).map(|m| m.2.1).max()?;
            return Some((a, b));
        }
        self.selection.map(|e| time::event_span(l, e))
    }

    /// Shows events and names as `show` says; what is said of the
    /// selection follows the names.
    pub fn set_show(&mut self, show: crate::tui::show::Show) {
        self.show = show;
        if let Some(l) = self.data() {
            self.facts = Facts::of(&l, self.selection, show.names);
        }
    }

    /// Selects an event (a matched NCCL kernel selects its whole
    /// instance) and derives its facts; with `center`, brings it into
    /// view. The cursor goes to the event's row, expanding what hides it.
    pub fn select(&mut self, e: Option<EventRef>, center: bool) {
        let Some(l) = self.data() else { return };
        let was_focus = self.lanes.focus;
        self.selection = e;
        self.facts = Facts::of(&l, e, self.show.names);
        let inst = self.facts.instance;
        if inst.is_some()
            && !matches!(
                self.jump,
                Some(JumpSource::Finder { .. } | JumpSource::Path { .. })
            )
        {
            self.jump = inst.map(|(g, _)| JumpSource::Group(g));
        }
        if was_focus && inst.is_none() {
            self.lanes.focus = false;
        }
        if self.lanes.focus || was_focus {
            self.rebuild_rows();
        }
        let Some(e) = e else { return };
        if center {
            let (a, b) = self
                .selection_span()
                .unwrap_or_else(|| time::event_span(&l, e));
            let len = b as f64 - a as f64;
            // A collective is shown whole and large enough to read its
            // ranks; a single event keeps the zoom unless it does not fit.
            let too_small = inst.is_some() && len < self.view.span / 20.0;
            if too_small || len > self.view.span * 0.8 {
                self.view.show(a, b);
            } else {
                self.view.center_on((a as f64 + b as f64) / 2.0);
            }
        }
        self.move_cursor_to_event(&l, e);
    }

    /// Puts the cursor on the row holding `e`, expanding what hides it.
    fn move_cursor_to_event(&mut self, l: &Loaded, e: EventRef) {
        let want = lanes::row_of_event(&l.profile, &l.index, e);
        if self.lanes.find(want).is_none() {
            let hidden_by = lanes::hidden_by(&l.profile, &l.index, want);
            let mut changed = false;
            for k in hidden_by {
                changed |= self.lanes.collapsed.remove(&k);
            }
            if changed {
                self.rebuild_rows();
            }
        }
        if let Some(p) = self.lanes.find(want) {
            self.lanes.put_cursor(p);
        }
    }

    /// What the range's facts are wanted for now: the range, the rows in
    /// view and the names shown (the range's kernels are counted under
    /// them); `None` without data or a range.
    pub fn range_key(&self) -> Option<RangeKey> {
        let l = self.data.as_ref()?;
        let w = self.range.window()?;
        let shown = self.lanes.on_screen();
        Some((
            data_key(l),
            w,
            shown.start,
            shown.end,
            self.lanes.rows.len(),
            self.show.names,
        ))
    }

    /// The range's facts for the rows in view, when derived.
    pub fn range_facts_now(&self) -> Option<&crate::tui::range::RangeFacts> {
        self.range_facts.get(&self.range_key()?)
    }

    /// The range's facts to show: those for the rows in view (true), else
    /// the last derived for the same range and names while those are
    /// computed (false) — the panel keeps its size, so the rows in view
    /// do not move again under it.
    pub fn range_facts_shown(&self) -> Option<(&crate::tui::range::RangeFacts, bool)> {
        let key = self.range_key()?;
        if let Some(f) = self.range_facts.get(&key) {
            return Some((f, true));
        }
        let (k, f) = self.range_facts.kept()?;
        (k.0 == key.0 && k.1 == key.1 && k.5 == key.5).then_some((f, false))
    }

    /// The job deriving the range's facts for the rows in view, when they
    /// are not kept and no job runs.
    pub fn range_job(&mut self) -> Option<DeriveJob> {
        let key = self.range_key()?;
        if !self.range_facts.start(&key) {
            return None;
        }
        let rows = self.lanes.rows[key.2..key.3]
            .iter()
            .map(|r| r.kind)
            .collect();
        Some(DeriveJob::RangeFacts {
            data: self.data.clone()?,
            key,
            rows,
        })
    }

    /// What the view's window's overlap is wanted for now.
    pub fn window_key(&self) -> Option<WindowKey> {
        Some((data_key(self.data.as_ref()?), self.view.window()))
    }

    /// The overlap of the view's window, when derived.
    pub fn window_overlap(&self) -> Option<&Vec<DeviceOverlap>> {
        self.windowed.get(&self.window_key()?)
    }

    /// The job deriving the view's window's overlap, when it is not kept
    /// and no job runs.
    pub fn window_job(&mut self) -> Option<DeriveJob> {
        let key = self.window_key()?;
        if !self.windowed.start(&key) {
            return None;
        }
        Some(DeriveJob::WindowOverlap {
            data: self.data.clone()?,
            key,
        })
    }

    /// The stats table of `of` over `window` under the names shown, when
    /// derived.
    pub fn stats_table(
        &self,
        of: crate::analysis::name_stats::StatsOf,
        window: crate::analysis::Window,
    ) -> Option<&crate::tui::stats_view::StatsTable> {
        let data = data_key(self.data.as_ref()?);
        self.stats.get(&(data, of, self.show.names, window))
    }

    /// The job deriving that table, when it is not kept and no job runs.
    pub fn stats_job(
        &mut self,
        of: crate::analysis::name_stats::StatsOf,
        window: crate::analysis::Window,
    ) -> Option<DeriveJob> {
        let data = self.data.clone()?;
        let key = (data_key(&data), of, self.show.names, window);
        self.stats
            .start(&key)
            .then_some(DeriveJob::Stats { data, key })
    }

    /// The NVTX tree of the thread the view shows, when derived.
    pub fn nvtx_tree_now(&self) -> Option<&crate::tui::nvtx_view::NvtxTree> {
        let key = (data_key(self.data.as_ref()?), self.nvtx_thread?);
        self.nvtx_tree.get(&key)
    }

    /// The job deriving that tree, when it is not kept and no job runs.
    pub fn nvtx_tree_job(&mut self) -> Option<DeriveJob> {
        let data = self.data.clone()?;
        let key = (data_key(&data), self.nvtx_thread?);
        self.nvtx_tree
            .start(&key)
            .then_some(DeriveJob::NvtxTree { data, key })
    }

    /// The steps' figures, when derived.
    pub fn steps_now(&self) -> Option<&Arc<StepOverview>> {
        self.steps.get(&data_key(self.data.as_ref()?))
    }

    /// The job deriving the steps' figures, when they are not kept and no
    /// job runs.
    pub fn steps_job(&mut self) -> Option<DeriveJob> {
        let data = self.data.clone()?;
        let key = data_key(&data);
        self.steps
            .start(&key)
            .then_some(DeriveJob::Steps { data, key })
    }

    /// Takes a job's result when this capture started the job, keeping
    /// it if the capture still holds the data it was derived from; hands
    /// it back otherwise.
    pub fn on_derived(&mut self, done: DeriveDone) -> Result<(), DeriveDone> {
        let holds = self.data.as_ref().map(data_key) == Some(done.data());
        match done {
            DeriveDone::WindowOverlap { key, overlap } if self.windowed.runs(&key) => {
                self.windowed.done(key, overlap, holds)
            }
            DeriveDone::RangeFacts { key, facts } if self.range_facts.runs(&key) => {
                self.range_facts.done(key, *facts, holds)
            }
            DeriveDone::Stats { key, table } if self.stats.runs(&key) => {
                self.stats.done(key, *table, holds)
            }
            DeriveDone::NvtxTree { key, tree } if self.nvtx_tree.runs(&key) => {
                self.nvtx_tree.done(key, *tree, holds)
            }
            DeriveDone::Steps { key, overview } if self.steps.runs(&key) => {
                self.steps.done(key, overview, holds)
            }
            other => return Err(other),
        }
        Ok(())
    }
}
