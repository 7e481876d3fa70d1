//! The overlap part of `diff` text: per device, the `report overlap`
//! figures before, after and their change.

use super::layout::{Layout, signed, signed_pct};
use crate::analysis::overlap::DeviceOverlap;
use crate::report::fit::Keep;
use crate::report::overlap::{FIGURE_COLUMNS, figure_cells};
use crate::report::table::Table;

fn overlap_delta(b: &DeviceOverlap, a: &DeviceOverlap) -> Vec<String> {
    let d = |f: fn(&DeviceOverlap) -> i64| signed((f(a) - f(b)) as f64 / 1e6);
    vec![
        d(|o| o.span_ns),
        d(|o| o.compute_only_ns),
        d(|o| o.nccl_only_ns),
        d(|o| o.overlap_ns),
        d(|o| o.copy_only_ns),
        d(|o| o.idle_ns),
        match (b.nccl_overlapped_pct(), a.nccl_overlapped_pct()) {
            (Some(x), Some(y)) => signed_pct(Some(y - x)),
            _ => "-".into(),
        },
    ]
}

pub(super) fn overlap(l: &Layout) -> String {
    let mut out =
        String::from("\nOverlap per device (as `report overlap`; devices paired by label)\n");
    let mut t =
        Table::new(&[&["device", "side"][..], &FIGURE_COLUMNS].concat()).shorten(0, Keep::Middle);
    for o in &l.diff.overlap {
        let name = o.device.text.clone();
        let mut row = |first: bool, side: &str, cells: Vec<String>| {
            let mut r = vec![
                if first { name.clone() } else { String::new() },
                side.into(),
            ];
            r.extend(cells);
            t.row(r);
        };
        match (&o.before, &o.after) {
            (Some(b), Some(a)) => {
                row(true, "before", figure_cells(b));
                row(false, "after", figure_cells(a));
                row(false, "delta", overlap_delta(b, a));
            }
            (Some(b), None) => row(true, "before only", figure_cells(b)),
            (None, Some(a)) => row(true, "after only", figure_cells(a)),
            (None, None) => {}
        }
    }
    if t.is_empty() {
        out += "  no device with GPU activity on either side\n";
        return out;
    }
    out += &t.render(l.cols);
    out +=
        &l.note("hidden_% = share of NCCL time under compute; its delta is in percentage points");
    if let Some(e) = l.diff.exposed_nccl() {
        out += &l.note(&format!(
            "exposed NCCL (nccl_only_ms, mean over devices with NCCL) per {}: {:.3} ms before, {:.3} ms after ({}%) — an upper bound on what better overlap could save",
            e.per.name(),
            e.before_ms,
            e.after_ms,
            signed_pct(e.delta_pct()),
        ));
    }
    out
}
