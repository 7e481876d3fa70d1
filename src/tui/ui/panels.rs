//! Side panels: skew, launch, overlap, summary and details of the selection.
//! Each states the field's caveat in one short line where it matters.

use super::theme::Theme;
use crate::analysis::Window;
use crate::analysis::launch::explain_late;
use crate::analysis::overlap::overlap;
use crate::analysis::skew::instance_skew;
use crate::profile::{NONE, Profile, ThreadId};
use crate::tui::data::Loaded;
use crate::tui::lanes::row_device;
use crate::tui::state::{App, EventRef};
use crate::tui::timescale::format_duration;
use ratatui::text::{Line, Span};

/// A device label as shown: a host name from the file, escaped before it
/// is padded into a column.
fn shown_label(p: &Profile, d: crate::profile::DevId) -> String {
    crate::text_safe::escape_controls(&p.device_label(d).to_string()).into_owned()
}

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn secs(ns: i64) -> String {
    format!("{:.6}s", ns as f64 / 1e9)
}

fn bar(value: f64, max: f64, width: usize) -> String {
    if max <= 0.0 || width == 0 {
        return String::new();
    }
    let cells = value / max * width as f64;
    let full = cells.floor() as usize;
    let mut s = "█".repeat(full.min(width));
    let rest = cells - full as f64;
    if full < width && rest > 0.125 {
        s.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][((rest * 8.0) as usize).clamp(1, 7) - 1]);
    }
    s
}

/// The skew of the selected instance, one row per rank.
pub fn skew(app: &App, l: &Loaded, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let Some((g, k)) = app.instance else {
        return vec![Line::from(
            "Select an NCCL kernel (Enter) or jump to a big event (]) to see its ranks.",
        )];
    };
    let p = &l.profile;
    let group = &l.analysis.matching.groups[g];
    let inst = instance_skew(p, group, k);
    let rows = group.instance_rows(k);
    let mut out = vec![Line::styled(
        format!(
            "{} · instance {}/{} · {}",
            group.key,
            k + 1,
            group.instances(),
            inst.op
        ),
        theme.heading(),
    )];

    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&d| (std::cmp::Reverse(p.gpu.start[rows[d] as usize]), d));
    let max_off = inst.start_skew_ns as f64;
    // Narrow panels (80-column terminals) get narrower columns and no bars.
    let narrow = width < 46;
    let (c0, c) = if narrow { (5, 9) } else { (8, 10) };
    let bar_w = width.saturating_sub(44).min(20);
    out.push(Line::styled(
        format!(
            "{:<c0$}{:>c$}{:>c$}{:>c$}",
            "rank", "start+ms", "dur ms", "wait ms"
        ),
        theme.dim(),
    ));
    for d in order {
        let r = rows[d] as usize;
        let off = p.gpu.start[r].saturating_sub(inst.earliest_start);
        let dur = p.gpu.end[r].saturating_sub(p.gpu.start[r]);
        let late = d == inst.late;
        let text = format!(
            "{:<c0$}{:>c$}{:>c$}{:>c$} {:<4} {}",
            format!("D{}", shown_label(p, group.devices[d])),
            format!("+{}", ms(off)),
            ms(dur),
            ms(dur - inst.baseline_ns),
            if late { "LATE" } else { "" },
            bar(off as f64, max_off, bar_w)
        );
        out.push(if late {
            Line::styled(text, theme.late_label())
        } else {
            Line::from(text)
        });
    }
    out.push(Line::from(format!(
        "start skew {} ms · end skew {} ms",
        ms(inst.start_skew_ns),
        ms(inst.end_skew_ns)
    )));
    if let Some(gs) = l.analysis.skews.iter().find(|s| s.group == g) {
        let f = |s: Option<crate::analysis::stats::Spread>| {
            s.map_or("-".into(), |s| {
                format!("p50 {:.3} p90 {:.3} max {:.3}", s.p50, s.p90, s.max)
            })
        };
        out.push(Line::from(format!(
            "group start skew ms: {}",
            f(gs.start_skew_ms)
        )));
        out.push(Line::from(format!(
            "group end skew ms:   {}",
            f(gs.end_skew_ms)
        )));
    }
    if l.profile.hosts.len() > 1 {
        out.push(Line::styled(
            "hosts' clocks are not aligned: skews include the offset",
            theme.warning(),
        ));
    }
    if !group.end_aligned {
        out.push(Line::styled(
            "ends NOT aligned in this group: pairing unconfirmed",
            theme.warning(),
        ));
    }
    out.push(Line::styled(
        "the long kernel is the rank that waited; the late one is short",
        theme.dim(),
    ));
    out.push(Line::styled(
        "wait = duration − shortest: waiting summed, not step time to win",
        theme.dim(),
    ));
    out
}

/// The selected kernel's launch call and, for a collective, the verdict.
pub fn launch(app: &App, l: &Loaded, theme: &Theme) -> Vec<Line<'static>> {
    let p = &l.profile;
    let Some(EventRef::Gpu(r)) = app.selection else {
        return vec![Line::from("Select a kernel to see its launch call.")];
    };
    let mut out = vec![Line::styled(
        p.strings.get(p.gpu.name[r]).to_string(),
        theme.heading(),
    )];
    let call = p.gpu.launch[r];
    if call == NONE {
        out.push(Line::styled(
            "no launch call in the capture (trimmed or partial): not guessed",
            theme.warning(),
        ));
    } else {
        let c = call as usize;
        let t = p.runtime.thread[c] as usize;
        out.push(Line::from(format!(
            "launch: {} on T{}",
            p.strings.get(p.runtime.name[c]),
            p.threads[t].tid
        )));
        out.push(Line::from(format!(
            "  call {} → {}",
            secs(p.runtime.start[c]),
            secs(p.runtime.end[c])
        )));
        out.push(Line::from(format!(
            "  queue to kernel start: {}",
            format_duration(p.gpu.start[r] - p.runtime.end[c])
        )));
        if p.gpu.graph_node[r] != crate::profile::NO_GRAPH {
            out.push(Line::from(
                "  launched from a CUDA graph (linked to the graph launch)",
            ));
        }
        out.push(Line::styled(
            format!(
                "  {}: jump to the launch call",
                app.keymap.keys_for(
                    crate::tui::action::Mode::Timeline,
                    crate::tui::action::Action::JumpToLaunch
                )
            ),
            theme.dim(),
        ));
    }
    if let Some((g, k)) = app.instance {
        let group = &l.analysis.matching.groups[g];
        let inst = instance_skew(p, group, k);
        let why = explain_late(p, &l.analysis.matching, g, &inst);
        out.push(Line::from(""));
        out.push(Line::styled(
            format!(
                "late rank D{}: {}",
                p.device_label(why.device),
                why.verdict.name()
            ),
            theme.late_label(),
        ));
        let explain = match why.verdict {
            crate::analysis::launch::Verdict::CpuLate => format!(
                "its launch call ended {} after the first peer's kernel started",
                format_duration(why.cpu_delay_ns.unwrap_or(0))
            ),
            crate::analysis::launch::Verdict::GpuSide => {
                "issued in time; started late on the GPU".to_string()
            }
            crate::analysis::launch::Verdict::Unknown => {
                "no launch call, or a CUDA graph: cannot tell".to_string()
            }
        };
        out.push(Line::from(format!("  {explain}")));
        if let Some(d) = why.api_end_to_start_ns {
            out.push(Line::from(format!(
                "  launch end → kernel start: {}",
                format_duration(d)
            )));
        }
        match &why.preceding {
            Some(pr) => out.push(Line::from(format!(
                "  queued behind {} (S{}), gap {}",
                p.strings.get(p.gpu.name[pr.row]),
                p.lanes[pr.lane as usize].stream,
                format_duration(pr.gap_ns)
            ))),
            None => out.push(Line::from(
                "  no kernel on another stream ended just before it",
            )),
        }
    }
    out
}

/// Compute/NCCL overlap per device, whole file and visible window.
pub fn overlap_panel(app: &App, l: &Loaded, theme: &Theme) -> Vec<Line<'static>> {
    let p = &l.profile;
    let w = Window {
        start: app.view.t0 as i64,
        end: app.view.end() as i64,
    };
    let visible = overlap(p, &l.analysis.classes, w);
    let mut out = vec![Line::styled(
        format!(
            "{:<6}{:>9}{:>9}{:>9}{:>9}{:>9}{:>7}",
            "dev", "comp", "nccl", "ovl", "copy", "idle", "hid%"
        ),
        theme.heading(),
    )];
    for (title, rows) in [
        ("whole file, ms", &l.analysis.overlap),
        ("visible window, ms", &visible),
    ] {
        out.push(Line::styled(title.to_string(), theme.dim()));
        for d in rows {
            out.push(Line::from(format!(
                "{:<6}{:>9}{:>9}{:>9}{:>9}{:>9}{:>7}",
                format!("D{}", shown_label(p, d.device)),
                ms(d.compute_only_ns),
                ms(d.nccl_only_ns),
                ms(d.overlap_ns),
                ms(d.copy_only_ns),
                ms(d.idle_ns),
                d.nccl_overlapped_pct()
                    .map_or("-".into(), |v| format!("{v:.1}"))
            )));
        }
    }
    out.push(Line::styled(
        "unions per device; nccl-only is an upper bound on savings",
        theme.dim(),
    ));
    out.push(Line::styled(
        "copy = memcpy/memset while no kernel runs",
        theme.dim(),
    ));
    out
}

/// Capture completeness and the NCCL breakdown of the cursor's device.
pub fn summary(app: &App, l: &Loaded, theme: &Theme) -> Vec<Line<'static>> {
    let p = &l.profile;
    let c = &l.analysis.completeness;
    let list = |ds: &[u32]| {
        ds.iter()
            .map(|&d| format!("D{}", p.device_label(d)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = vec![
        Line::styled("capture completeness", theme.heading()),
        Line::from(format!("expected: {}", list(&c.expected))),
        Line::from(format!("with kernels: {}", list(&c.with_kernels))),
    ];
    if !c.missing.is_empty() {
        out.push(Line::styled(
            format!("MISSING: {}", list(&c.missing)),
            theme.warning(),
        ));
    }
    for w in &c.warnings {
        out.push(Line::styled(format!("! {w}"), theme.warning()));
    }
    let dev = app
        .rows
        .get(app.cursor)
        .and_then(|r| row_device(p, &l.index, r.kind));
    let Some(dev) = dev else {
        out.push(Line::from("move to a device row for its NCCL breakdown"));
        return out;
    };
    out.push(Line::from(""));
    match l.analysis.nccl.iter().find(|d| d.device == dev) {
        None => out.push(Line::from(format!(
            "D{}: no NCCL kernels",
            p.device_label(dev)
        ))),
        Some(d) => {
            out.push(Line::styled(
                format!(
                    "NCCL on D{}: {} ms (kernel time)",
                    p.device_label(dev),
                    ms(d.total_ns)
                ),
                theme.heading(),
            ));
            for s in &d.streams {
                for o in &s.ops {
                    out.push(Line::from(format!(
                        "S{:<4} {:<13} {:<5} {:>5} {:>10} ms {:>5.1}%",
                        p.lanes[s.lane as usize].stream,
                        o.op.name(),
                        o.dtype.unwrap_or("-"),
                        o.count,
                        ms(o.total_ns),
                        100.0 * o.total_ns as f64 / d.total_ns as f64
                    )));
                }
            }
            out.push(Line::styled(
                "name tokens (RING/LL) are hints, not the algorithm used",
                theme.dim(),
            ));
        }
    }
    out
}

/// NVTX push/pop ranges of `thread` enclosing `t`, outermost first.
fn nvtx_path(l: &Loaded, thread: ThreadId, t: i64) -> String {
    // One lookup per nesting depth: each depth's ranges do not overlap.
    let mut path = Vec::new();
    for &tr in &l.index.nvtx_of_thread[thread as usize] {
        let track = l.index.nvtx_track(tr);
        if l.index.nvtx_tracks[tr].depth.is_none() {
            continue;
        }
        let i = track.start.partition_point(|&s| s <= t);
        if i > 0 && track.end[i - 1] >= t {
            path.push(l.profile.strings.get(l.profile.nvtx.name[track.row(i - 1)]));
        }
    }
    if path.is_empty() {
        "-".into()
    } else {
        path.join(" › ")
    }
}

/// Details of a CPU-side event: (name, start, end, place, thread, NVTX time).
fn cpu_event(
    p: &Profile,
    kind: &str,
    name: crate::profile::Sym,
    start: i64,
    end: i64,
    t: ThreadId,
) -> (String, i64, i64, String, Option<ThreadId>, i64) {
    let th = &p.threads[t as usize];
    let proc = &p.processes[th.process as usize];
    let place = format!(
        "{kind}T{} · pid {} {}",
        th.tid,
        proc.pid,
        p.strings.get(proc.name)
    );
    (
        p.strings.get(name).to_string(),
        start,
        end,
        place,
        Some(t),
        start,
    )
}

/// Everything about the selected event.
pub fn details(app: &App, l: &Loaded, theme: &Theme) -> Vec<Line<'static>> {
    let p = &l.profile;
    let Some(e) = app.selection else {
        return vec![Line::from(
            "Nothing selected (Enter selects the event under the cursor).",
        )];
    };
    let (name, start, end, place, thread, at) = match e {
        EventRef::Gpu(r) => {
            let lane = &p.lanes[p.gpu.lane[r] as usize];
            let proc = &p.processes[lane.process as usize];
            let call = p.gpu.launch[r];
            let (th, at) = if call == NONE {
                (None, p.gpu.start[r])
            } else {
                (
                    Some(p.runtime.thread[call as usize]),
                    p.runtime.start[call as usize],
                )
            };
            (
                p.strings.get(p.gpu.long_name[r]).to_string(),
                p.gpu.start[r],
                p.gpu.end[r],
                format!(
                    "D{} S{} · pid {} {}",
                    p.device_label(lane.device),
                    lane.stream,
                    proc.pid,
                    p.strings.get(proc.name)
                ),
                th,
                at,
            )
        }
        EventRef::Api(r) => cpu_event(
            p,
            "",
            p.runtime.name[r],
            p.runtime.start[r],
            p.runtime.end[r],
            p.runtime.thread[r],
        ),
        EventRef::Nvtx(r) => cpu_event(
            p,
            "NVTX · ",
            p.nvtx.name[r],
            p.nvtx.start[r],
            p.nvtx.end[r],
            p.nvtx.thread[r],
        ),
    };
    let mut out = vec![Line::styled(name, theme.heading()), Line::from(place)];
    out.push(Line::from(vec![Span::raw(format!(
        "start {}  end {}",
        secs(start),
        secs(end)
    ))]));
    out.push(Line::from(format!(
        "duration {}",
        format_duration(end.saturating_sub(start))
    )));
    out.push(Line::from(format!(
        "NVTX: {}",
        thread.map_or("-".into(), |t| nvtx_path(l, t, at))
    )));
    if let EventRef::Gpu(r) = e {
        out.extend(super::launch_config::lines(p, r));
    }
    out
}
