//! `report`: headless text and JSON output of the analysis sections.

mod anomalies;
mod clock;
mod context;
pub mod diff;
mod fit;
mod json;
mod launch;
mod nccl;
mod overlap;
mod skew;
mod stragglers;
mod summary;
pub mod table;

use crate::analysis::anomalies::anomalies;
use crate::analysis::bundle::{Analysis, align_and_match};
use crate::analysis::clock::Alignment;
use crate::analysis::completeness::completeness;
use crate::analysis::kernel_class::KernelClasses;
use crate::analysis::launch::{LaunchReport, launch_report};
use crate::analysis::matching::Matching;
use crate::analysis::nccl_breakdown::nccl_breakdown;
use crate::analysis::overlap::overlap;
use crate::analysis::skew::skew;
use crate::analysis::steps::Steps;
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
}

impl Section {
    pub const ALL: [Section; 8] = [
        Section::Summary,
        Section::Clock,
        Section::Nccl,
        Section::Overlap,
        Section::Skew,
        Section::Launch,
        Section::Anomalies,
        Section::Stragglers,
    ];

    /// Part of `report all`: not the straggler matrix, which is as wide as
    /// the capture is long (it has its own section).
    pub fn in_all(self) -> bool {
        self != Section::Stragglers
    }

    /// Has a CSV form (one table); the others are text or JSON only.
    pub fn has_csv(self) -> bool {
        self == Section::Stragglers
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
        }
    }
}

/// Renders `sections` (one, or all for `report all`) in the chosen format.
pub fn render(p: &Profile, sections: &[Section], options: &Options) -> String {
    let computed = compute(p, sections, options);
    render_with(p, sections, options, &computed)
}

/// Whether `sections` need the clock alignment, and so the matching that
/// refines it: all sections but `nccl` and `overlap`.
pub fn needs_clock(sections: &[Section]) -> bool {
    needs(sections).0
}

/// Whether `sections` need the clock alignment (and so the matching that
/// refines it), and the matching and skew figures themselves.
fn needs(sections: &[Section]) -> (bool, bool) {
    let any = |want: &[Section]| sections.iter().any(|s| want.contains(s));
    let matching = any(&[
        Section::Skew,
        Section::Launch,
        Section::Anomalies,
        Section::Stragglers,
    ]);
    (
        matching || any(&[Section::Summary, Section::Clock]),
        matching,
    )
}

/// What of an export `sections` read over `window`: `nccl` and `overlap`
/// no runtime calls or NVTX ranges, `summary` only their counts, the others
/// everything; several sections read the union. The counts are of the
/// whole capture: `summary` in a window (`--trim`) loads the rows and
/// counts those inside it, as before.
pub fn need(sections: &[Section], window: Window) -> Need {
    sections.iter().fold(Need::Gpu, |need, s| match (s, need) {
        (Section::Nccl | Section::Overlap, need) => need,
        (Section::Summary, Need::Gpu | Need::Counts) if window.is_all() => Need::Counts,
        _ => Need::All,
    })
}

/// What `sections` need computed over `options.window`; the rest is left
/// empty.
fn compute(p: &Profile, sections: &[Section], options: &Options) -> Analysis {
    let w = options.window;
    let has = |s: Section| sections.contains(&s);
    let classes = KernelClasses::new(p, options.comm_pattern.as_ref());
    let (needs_clock, needs_matching) = needs(sections);
    let (clock, matching) = if needs_clock {
        align_and_match(p, &classes, options.align)
    } else {
        (Alignment::default(), Matching::default())
    };
    let steps = if needs_matching {
        Steps::new(p, &options.step_marker)
    } else {
        Steps::default()
    };
    let skews = if needs_matching {
        skew(p, &matching, &steps, w, options.big_skew_ns, &clock)
    } else {
        Vec::new()
    };
    let launch = if has(Section::Launch) {
        launch_report(p, &classes, &matching, &skews, w)
    } else {
        LaunchReport::default()
    };
    let (anomaly_rows, anomalies) = if has(Section::Anomalies) {
        anomalies(p, &matching, &skews, options.anomaly_ratio)
    } else {
        (0, Vec::new())
    };
    Analysis {
        completeness: if has(Section::Summary) {
            completeness(p, w)
        } else {
            Default::default()
        },
        nccl: if has(Section::Nccl) {
            nccl_breakdown(p, &classes, w)
        } else {
            Vec::new()
        },
        overlap: if has(Section::Overlap) {
            overlap(p, &classes, w)
        } else {
            Vec::new()
        },
        classes,
        clock,
        matching,
        steps,
        skews,
        launch,
        anomaly_rows,
        anomalies,
    }
}

/// Renders `sections` from analyses already computed: by [`render`], or
/// over the whole capture by [`crate::analysis::bundle::analyze`] (read
/// back from the cache), which must then agree with `options`' settings
/// and have no window.
pub fn render_with(p: &Profile, sections: &[Section], options: &Options, a: &Analysis) -> String {
    let cx = Context {
        profile: p,
        options,
        no_gpu_activity: p.gpu.is_empty(),
        clock: a.clock.clone(),
    };
    let matching = &a.matching;
    let skews = &a.skews;
    let mut json_out = Map::new();
    let mut text_out = Vec::new();
    let json = options.format == Format::Json;
    // Only the requested format is rendered (CSV takes the text path).
    let emit = |to_json: &dyn Fn() -> Value, to_text: &dyn Fn() -> String| {
        if json {
            (to_json(), String::new())
        } else {
            (Value::Null, to_text())
        }
    };
    for &s in sections {
        let (j, t) = match s {
            Section::Summary => {
                let c = &a.completeness;
                emit(&|| summary::to_json(&cx, c), &|| summary::to_text(&cx, c))
            }
            Section::Clock => emit(&|| clock::to_json(&cx, &cx.clock), &|| {
                clock::to_text(&cx, &cx.clock)
            }),
            Section::Nccl => {
                let n = &a.nccl;
                emit(&|| nccl::to_json(&cx, n), &|| nccl::to_text(&cx, n))
            }
            Section::Overlap => {
                let o = &a.overlap;
                emit(&|| overlap::to_json(&cx, o), &|| overlap::to_text(&cx, o))
            }
            Section::Skew => emit(&|| skew::to_json(&cx, matching, skews), &|| {
                skew::to_text(&cx, matching, skews)
            }),
            Section::Launch => {
                let l = &a.launch;
                emit(&|| launch::to_json(&cx, matching, l), &|| {
                    launch::to_text(&cx, matching, l)
                })
            }
            Section::Anomalies => {
                let r = options.anomaly_ratio;
                let (rows, events) = (a.anomaly_rows, &a.anomalies);
                emit(
                    &|| anomalies::to_json(&cx, matching, r, rows, events),
                    &|| anomalies::to_text(&cx, matching, r, rows, events),
                )
            }
            Section::Stragglers => emit(&|| stragglers::to_json(&cx, matching, skews), &|| {
                if options.format == Format::Csv {
                    stragglers::to_csv(&cx, matching, skews)
                } else {
                    stragglers::to_text(&cx, matching, skews)
                }
            }),
        };
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
