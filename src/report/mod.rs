//! `report`: headless text and JSON output of the analysis sections.

mod anomalies;
mod bandwidth;
mod behind;
mod bookmarks;
mod captures;
mod clock;
mod context;
mod csv;
pub mod csv_columns;
pub mod csv_tables;
pub mod diff;
mod fit;
mod json;
mod launch;
mod metrics;
mod nccl;
mod nccl_links;
mod nvtx_tree;
mod overlap;
mod skew;
mod stats;
mod steps;
mod stragglers;
pub(crate) mod summary;
pub mod table;
mod timebase;
pub mod trace;
mod why;
pub(crate) mod why_clock;

use crate::analysis::Analysis;
use crate::analysis::pipeline::{self, Stage, Stages};
use crate::analysis::window::Window;
use crate::profile::{Need, Profile};
use serde_json::{Map, Value};

use context::Context;
pub use context::{Format, Options};

/// A report section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Summary,
    Nccl,
    Overlap,
    Skew,
    Launch,
    Anomalies,
    Stragglers,
    Clock,
    Behind,
    Why,
    Stats,
    Bookmarks,
    NvtxTree,
    Metrics,
    Steps,
}

impl Section {
    pub const ALL: [Section; 15] = [
        Section::Summary,
        Section::Clock,
        Section::Nccl,
        Section::Overlap,
        Section::Skew,
        Section::Launch,
        Section::Why,
        Section::Steps,
        Section::Anomalies,
        Section::Behind,
        Section::Stragglers,
        Section::Stats,
        Section::Bookmarks,
        Section::NvtxTree,
        Section::Metrics,
    ];

    /// Part of `report all`: not the straggler matrix, which is as wide as
    /// the capture is long (it has its own section).
    pub fn in_all(self) -> bool {
        !matches!(
            self,
            Section::Stragglers
                | Section::Stats
                | Section::Bookmarks
                | Section::NvtxTree
                | Section::Metrics
                // Its dependency graphs cost more than every other section
                // together; `report all` stays within issue 42's budget.
                | Section::Steps
        )
    }

    /// The pipeline stages whose results the section shows.
    pub fn stages(self) -> &'static [Stage] {
        match self {
            // The summary names the clocks and spans the capture on them.
            Section::Summary => &[Stage::Completeness, Stage::Clock],
            Section::Clock => &[Stage::Clock],
            // Bytes and bandwidth need the matching only with sizes: the
            // section computes it then (report::bandwidth::Figures).
            Section::Nccl => &[Stage::Nccl],
            Section::Overlap => &[Stage::Overlap],
            Section::Skew => &[Stage::Skew],
            Section::Launch => &[Stage::Launch],
            Section::Anomalies => &[Stage::Anomalies],
            Section::Stragglers => &[Stage::Skew],
            // Derived from the matching on the aligned clocks.
            Section::Behind => &[Stage::Skew],
            // The big events' late ranks, from the skew stage.
            Section::Why => &[Stage::Skew],
            // Plain durations; the clocks place a window in each file.
            Section::Stats => &[Stage::Clock],
            // The user's marks, no analysis.
            Section::Bookmarks => &[],
            // Launch links are the profile's; the clocks place the times.
            Section::NvtxTree => &[Stage::Clock],
            // Read from the files when asked, per device: no analysis.
            Section::Metrics => &[],
            // Steps numbered job-wide and collectives matched.
            Section::Steps => &[Stage::Skew],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Section::Summary => "summary",
            Section::Nccl => "nccl",
            Section::Overlap => "overlap",
            Section::Skew => "skew",
            Section::Launch => "launch",
            Section::Anomalies => "anomalies",
            Section::Stragglers => "stragglers",
            Section::Clock => "clock",
            Section::Behind => "behind",
            Section::Why => "why",
            Section::Stats => "stats",
            Section::Bookmarks => "bookmarks",
            Section::NvtxTree => "nvtx-tree",
            Section::Metrics => "metrics",
            Section::Steps => "steps",
        }
    }
}

/// Renders `sections` (one, or all for `report all`) in the chosen format.
pub fn render(p: &Profile, sections: &[Section], options: &Options) -> String {
    let a = pipeline::run(
        p,
        &options.settings,
        options.window,
        stages(sections),
        &mut |_| {},
    );
    render_with(p, sections, options, &a)
}

/// The stages `sections` show (and those they need).
pub fn stages(sections: &[Section]) -> Stages {
    Stages::of(
        &sections
            .iter()
            .flat_map(|s| s.stages())
            .copied()
            .collect::<Vec<_>>(),
    )
}

/// Whether `sections` need the clocks aligned from collective ends, which
/// costs the matching: all sections but `nccl` and `overlap`.
pub fn needs_clock(sections: &[Section]) -> bool {
    stages(sections).has(Stage::Clock)
}

/// What of an export `sections` read over `window`: `nccl` and `overlap`
/// no runtime calls or NVTX ranges, `summary` only their counts, the others
/// everything; several sections read the union. The counts are of the
/// whole capture: `summary` in a window (`--trim`) loads the rows and
/// counts those inside it, as before.
pub fn need(sections: &[Section], window: Window) -> Need {
    sections.iter().fold(Need::Gpu, |need, s| match (s, need) {
        (Section::Nccl | Section::Overlap | Section::Bookmarks | Section::Metrics, need) => need,
        (Section::Summary, Need::Gpu | Need::Counts) if window.is_all() => Need::Counts,
        _ => Need::All,
    })
}

/// Whether some group has ranks behind in a hang (`--fail-on-behind`).
pub fn any_behind(p: &Profile, a: &Analysis) -> bool {
    crate::analysis::behind::find(p, &a.matching, &a.clock).any_behind()
}

/// Renders `sections` from analyses already computed: by [`render`], or
/// over the whole capture by the pipeline (read back from the cache),
/// which must then agree with `options`' settings and have no window.
pub fn render_with(p: &Profile, sections: &[Section], options: &Options, a: &Analysis) -> String {
    let cx = context(p, options, a);
    let json = options.format == Format::Json;
    let mut json_out = Map::new();
    let mut text_out = Vec::new();
    for &s in sections {
        let (j, t) = section(&cx, s, json);
        if json {
            json_out.insert(s.name().to_string(), j);
        } else {
            text_out.push(t);
        }
    }
    match options.format {
        Format::Json => {
            let v = if sections.len() == 1 {
                json_out
                    .into_iter()
                    .next()
                    .map(|(_, v)| v)
                    .unwrap_or(Value::Null)
            } else {
                Value::Object(json_out)
            };
            let mut s = crate::text_safe::to_json_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
        // Names are escaped where they are placed (so tables stay aligned);
        // this catches any that were not, keeping only our own newlines.
        Format::Text | Format::Csv => {
            let text = text_out.join("\n");
            crate::text_safe::escape_controls_keep_newlines(&text).into_owned()
        }
    }
}

fn context<'a>(p: &'a Profile, options: &'a Options, a: &'a Analysis) -> Context<'a> {
    Context {
        profile: p,
        options,
        no_gpu_activity: p.gpu.is_empty(),
        analysis: a,
        clock: &a.clock,
    }
}

/// One section, as JSON (`json`) or as text.
fn section(cx: &Context, s: Section, json: bool) -> (Value, String) {
    let (a, options) = (cx.analysis, cx.options);
    let (p, matching, skews) = (cx.profile, &a.matching, &a.skews);
    // Only the asked form is rendered.
    let emit = |to_json: &dyn Fn() -> Value, to_text: &dyn Fn() -> String| {
        if json {
            (to_json(), String::new())
        } else {
            (Value::Null, to_text())
        }
    };
    match s {
        Section::Summary => {
            let c = &a.completeness;
            emit(&|| summary::to_json(cx, c), &|| summary::to_text(cx, c))
        }
        Section::Clock => emit(&|| clock::to_json(cx, cx.clock), &|| {
            clock::to_text(cx, cx.clock)
        }),
        Section::Nccl => {
            let n = &a.nccl;
            emit(&|| nccl::to_json(cx, n), &|| nccl::to_text(cx, n))
        }
        Section::Overlap => {
            let o = &a.overlap;
            emit(&|| overlap::to_json(cx, o), &|| overlap::to_text(cx, o))
        }
        Section::Skew => emit(&|| skew::to_json(cx, matching, skews), &|| {
            skew::to_text(cx, matching, skews)
        }),
        Section::Launch => {
            let l = &a.launch;
            emit(&|| launch::to_json(cx, matching, l), &|| {
                launch::to_text(cx, matching, l)
            })
        }
        Section::Anomalies => {
            let r = options.settings.anomaly_ratio;
            let (rows, events) = (a.anomaly_rows, &a.anomalies);
            emit(
                &|| anomalies::to_json(cx, matching, r, rows, events),
                &|| anomalies::to_text(cx, matching, r, rows, events),
            )
        }
        Section::Why => emit(&|| why::to_json(cx), &|| why::to_text(cx)),
        Section::Behind => {
            let b = crate::analysis::behind::find(p, matching, cx.clock);
            emit(&|| behind::to_json(cx, &b), &|| behind::to_text(cx, &b))
        }
        Section::Stats => emit(&|| stats::to_json(cx), &|| stats::to_text(cx)),
        Section::Bookmarks => emit(&|| bookmarks::to_json(cx), &|| bookmarks::to_text(cx)),
        Section::NvtxTree => emit(&|| nvtx_tree::to_json(cx), &|| nvtx_tree::to_text(cx)),
        Section::Metrics => emit(&|| metrics::to_json(cx), &|| metrics::to_text(cx)),
        Section::Steps => emit(&|| steps::to_json(cx), &|| steps::to_text(cx)),
        Section::Stragglers => emit(&|| stragglers::to_json(cx, matching), &|| {
            stragglers::to_text(cx, matching)
        }),
    }
}

/// The CSV tables of `sections` (see [`csv_tables`]), from analyses
/// already computed as for [`render_with`].
pub fn tables_with(
    p: &Profile,
    sections: &[Section],
    options: &Options,
    a: &Analysis,
) -> Vec<csv_tables::Table> {
    let cx = context(p, options, a);
    let mut out = Vec::new();
    for &s in sections {
        match s {
            Section::Stragglers => out.push(stragglers::csv_table(&cx, &a.matching)),
            _ => out.extend(csv_tables::tables(s.name(), &section(&cx, s, true).0)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_read_the_union_of_what_they_need() {
        let trim = Window::from_seconds(1.0, 2.0);
        let all: Vec<Section> = Section::ALL.into_iter().filter(|s| s.in_all()).collect();
        let cases: [(&[Section], Window, Need); 7] = [
            (&[Section::Nccl], Window::ALL, Need::Gpu),
            (&[Section::Overlap], trim, Need::Gpu),
            (&[Section::Summary], Window::ALL, Need::Counts),
            (
                &[Section::Nccl, Section::Summary],
                Window::ALL,
                Need::Counts,
            ),
            (&[Section::Summary, Section::Overlap], trim, Need::All),
            (&[Section::Summary, Section::Clock], Window::ALL, Need::All),
            (&all, Window::ALL, Need::All),
        ];
        for (sections, window, want) in cases {
            assert_eq!(need(sections, window), want, "{sections:?} {window:?}");
        }
    }
}
