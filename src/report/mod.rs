//! `report`: headless text and JSON output of the analysis sections.

mod json;
mod nccl;
mod overlap;
mod summary;
pub mod table;

use crate::analysis::Window;
use crate::analysis::completeness::completeness;
use crate::analysis::kernel_class::KernelClasses;
use crate::analysis::nccl_breakdown::nccl_breakdown;
use crate::analysis::overlap::overlap;
use crate::profile::{DevId, Profile};
use regex::Regex;
use serde_json::{Map, Value};

/// A report section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Summary,
    Nccl,
    Overlap,
}

impl Section {
    pub const ALL: [Section; 3] = [Section::Summary, Section::Nccl, Section::Overlap];

    pub fn name(self) -> &'static str {
        match self {
            Section::Summary => "summary",
            Section::Nccl => "nccl",
            Section::Overlap => "overlap",
        }
    }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub window: Window,
    /// Devices to print (all when `None`); never changes what is computed.
    pub devices: Option<Vec<DevId>>,
    pub format: Format,
    pub comm_pattern: Option<Regex>,
}

/// Shared state of one report run.
pub struct Context<'a> {
    pub profile: &'a Profile,
    pub options: &'a Options,
    pub classes: KernelClasses,
    pub no_gpu_activity: bool,
}

impl Context<'_> {
    /// Whether `--device` lets this device be printed.
    pub fn shows(&self, d: DevId) -> bool {
        self.options
            .devices
            .as_ref()
            .is_none_or(|ds| ds.contains(&d))
    }

    pub fn filter_devices(&self, ds: &[DevId]) -> Vec<DevId> {
        ds.iter().copied().filter(|&d| self.shows(d)).collect()
    }
}

/// Renders `sections` (one, or all for `report all`) in the chosen format.
pub fn render(p: &Profile, sections: &[Section], options: &Options) -> String {
    let classes = KernelClasses::new(p, options.comm_pattern.as_ref());
    let no_gpu_activity = p.gpu.is_empty();
    let cx = Context {
        profile: p,
        options,
        classes,
        no_gpu_activity,
    };
    let w = options.window;
    let mut json_out = Map::new();
    let mut text_out = Vec::new();
    for &s in sections {
        let (j, t) = match s {
            Section::Summary => {
                let c = completeness(p, w);
                (summary::to_json(&cx, &c), summary::to_text(&cx, &c))
            }
            Section::Nccl => {
                let n = nccl_breakdown(p, &cx.classes, w);
                (nccl::to_json(&cx, &n), nccl::to_text(&cx, &n))
            }
            Section::Overlap => {
                let o = overlap(p, &cx.classes, w);
                (overlap::to_json(&cx, &o), overlap::to_text(&cx, &o))
            }
        };
        match options.format {
            Format::Json => {
                json_out.insert(s.name().to_string(), j);
            }
            Format::Text => text_out.push(t),
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
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Text => text_out.join("\n"),
    }
}
