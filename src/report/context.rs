//! What one report run reads: the user's options and the shared state every
//! section is written from (profile, kernel classes, clock alignment).

use super::fit;
use crate::analysis::clock::Alignment;
use crate::analysis::matching::Group;
use crate::analysis::{Analysis, Settings, Window};
use crate::profile::{DevId, Profile, SuspectEvents, SuspectTable};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    /// Tables read off the JSON ([`super::tables_with`]); rendered as
    /// text, it is the text.
    Csv,
}

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The analyses' settings, as the timeline and `diff` take them.
    pub settings: Settings,
    /// The events reported on, a window on the reference clock.
    pub window: Window,
    /// Devices to print (all when `None`); never changes what is computed.
    pub devices: Option<Vec<DevId>>,
    pub format: Format,
    /// Text: long names and paths whole instead of fitting 100 columns.
    pub wide: bool,
    /// `skew`: list every instance of each group, not only the big ones.
    pub instances: bool,
    /// `stats`: which events, and per what.
    pub stats_of: crate::analysis::name_stats::StatsOf,
    pub stats_by: crate::analysis::name_stats::StatsBy,
    /// `stats`: the names kernels are counted under (demangled, as nsys).
    pub kernel_names: crate::profile::names::KernelNames,
    /// `nvtx-tree`: one thread (`T4101` or `4101`), and how many levels.
    pub nvtx_thread: Option<String>,
    pub nvtx_depth: Option<usize>,
    /// `steps`: how many first steps are warm-up (left out of summaries).
    pub warmup_steps: usize,
}

/// Shared state of one report run.
pub struct Context<'a> {
    pub profile: &'a Profile,
    pub options: &'a Options,
    pub no_gpu_activity: bool,
    /// What the sections show.
    pub analysis: &'a Analysis,
    /// Each file's mapping to the reference clock.
    pub clock: &'a Alignment,
}

impl Context<'_> {
    /// Whether `--device` lets this device be printed.
    pub fn shows(&self, d: DevId) -> bool {
        self.options
            .devices
            .as_ref()
            .is_none_or(|ds| ds.contains(&d))
    }

    /// Whether `--device` lets a group be printed: any of its devices shown.
    pub fn shows_group(&self, g: &Group) -> bool {
        g.devices.iter().any(|&d| self.shows(d))
    }

    /// Rows of `table`, of every file, left out because their times
    /// cannot be right.
    pub fn suspect_rows(&self, table: SuspectTable) -> SuspectEvents {
        let mut all = SuspectEvents::default();
        for f in &self.profile.files {
            all.add(f.suspect_rows.of(table));
        }
        all
    }

    /// The rows of `tables` (those a section's figures read) left out, over
    /// every file.
    pub fn suspect_events_of(&self, tables: &[SuspectTable]) -> SuspectEvents {
        let mut all = SuspectEvents::default();
        for &t in tables {
            all.add(&self.suspect_rows(t));
        }
        all
    }

    /// GPU activity and CUDA calls left out: what the GPU-side figures
    /// (skew, launch, overlap) would read.
    pub fn suspect_events(&self) -> SuspectEvents {
        self.suspect_rows(SuspectTable::GpuOrCudaCalls)
    }

    /// The line a GPU-side section says of the rows it left out.
    pub fn suspect_note(&self) -> String {
        self.suspect_note_of(&[SuspectTable::GpuOrCudaCalls])
    }

    /// The lines a section whose figures read `tables` says of their rows
    /// left out: one per table that had any.
    pub fn suspect_note_of(&self, tables: &[SuspectTable]) -> String {
        let mut out = String::new();
        for &t in tables {
            let s = self.suspect_rows(t);
            let n = s.total();
            if n == 0 {
                continue;
            }
            let (rows, many, _) = t.rows(n);
            out += &self.note(&format!(
                "! {rows} whose {} cannot be right {} left out ({}): report summary lists them per file",
                t.times(n),
                if many { "were" } else { "was" },
                s.describe()
            ));
        }
        out
    }

    /// The width text fits: `None` with `--wide`.
    pub fn cols(&self) -> Option<usize> {
        (!self.options.wide).then_some(fit::TEXT_WIDTH)
    }

    /// A note (one of our sentences, names already escaped) wrapped to the
    /// width, indented by two.
    pub fn note(&self, text: &str) -> String {
        fit::wrap(text, "  ", self.cols())
    }

    /// A note `depth` levels under another (two spaces each).
    pub fn note_in(&self, depth: usize, text: &str) -> String {
        fit::wrap(text, &"  ".repeat(depth + 1), self.cols())
    }

    pub fn filter_devices(&self, ds: &[DevId]) -> Vec<DevId> {
        ds.iter().copied().filter(|&d| self.shows(d)).collect()
    }
}
