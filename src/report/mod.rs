//! `report`: headless text and JSON output of the analysis sections.

mod anomalies;
mod clock;
mod context;
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
use crate::analysis::bundle::align_and_match;
use crate::analysis::completeness::completeness;
use crate::analysis::kernel_class::KernelClasses;
use crate::analysis::launch::launch_report;
use crate::analysis::nccl_breakdown::nccl_breakdown;
use crate::analysis::overlap::overlap;
use crate::analysis::skew::skew;
use crate::analysis::steps::Steps;
use crate::profile::Profile;
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
    let classes = KernelClasses::new(p, options.comm_pattern.as_ref());
    let no_gpu_activity = p.gpu.is_empty();
    let w = options.window;
    let needs_matching = sections.iter().any(|s| {
        matches!(
            s,
            Section::Skew | Section::Launch | Section::Anomalies | Section::Stragglers
        )
    });
    let (clock, matching) = align_and_match(p, &classes, options.align);
    let cx = Context {
        profile: p,
        options,
        classes,
        no_gpu_activity,
        clock,
    };
    let skews = if needs_matching {
        let steps = Steps::new(p, &options.step_marker);
        skew(p, &matching, &steps, w, options.big_skew_ns, &cx.clock)
    } else {
        Vec::new()
    };
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
                let c = completeness(p, w);
                emit(&|| summary::to_json(&cx, &c), &|| summary::to_text(&cx, &c))
            }
            Section::Clock => emit(&|| clock::to_json(&cx, &cx.clock), &|| {
                clock::to_text(&cx, &cx.clock)
            }),
            Section::Nccl => {
                let n = nccl_breakdown(p, &cx.classes, w);
                emit(&|| nccl::to_json(&cx, &n), &|| nccl::to_text(&cx, &n))
            }
            Section::Overlap => {
                let o = overlap(p, &cx.classes, w);
                emit(&|| overlap::to_json(&cx, &o), &|| overlap::to_text(&cx, &o))
            }
            Section::Skew => emit(&|| skew::to_json(&cx, &matching, &skews), &|| {
                skew::to_text(&cx, &matching, &skews)
            }),
            Section::Launch => {
                let l = launch_report(p, &cx.classes, &matching, &skews, w);
                emit(&|| launch::to_json(&cx, &matching, &l), &|| {
                    launch::to_text(&cx, &matching, &l)
                })
            }
            Section::Anomalies => {
                let r = options.anomaly_ratio;
                let (rows, events) = anomalies(p, &matching, &skews, r);
                emit(
                    &|| anomalies::to_json(&cx, &matching, r, rows, &events),
                    &|| anomalies::to_text(&cx, &matching, r, rows, &events),
                )
            }
            Section::Stragglers => emit(&|| stragglers::to_json(&cx, &matching, &skews), &|| {
                if options.format == Format::Csv {
                    stragglers::to_csv(&cx, &matching, &skews)
                } else {
                    stragglers::to_text(&cx, &matching, &skews)
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
