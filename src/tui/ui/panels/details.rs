//! The details panel: everything about the selected event.

use super::lines::{PanelLines, secs};
use crate::profile::{NONE, Profile, ThreadId};
use crate::tui::data::Loaded;
use crate::tui::state::{App, EventRef};
use crate::tui::timescale::format_duration;
use crate::tui::ui::theme::Theme;
use ratatui::text::{Line, Span};

/// NVTX push/pop ranges of `thread` enclosing `t`, outermost first.
fn nvtx_path(l: &Loaded, thread: ThreadId, t: i64) -> String {
    // One lookup per nesting depth: each depth's ranges do not overlap.
    let mut path = Vec::new();
    for &tr in &l.index.nvtx_of_thread[thread as usize] {
        let track = l.index.nvtx_track(&l.profile, tr);
        if l.index.nvtx_tracks[tr].depth.is_none() {
            continue;
        }
        let i = track.start.partition_point(|&s| s <= t);
        if i > 0 && track.end[i - 1] >= t {
            path.push(l.profile.strings.get(l.profile.nvtx.name(track.row(i - 1))));
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

/// A copy's or a set's bytes, and the copies a batched record holds.
fn copy_size(bytes: u64, copies: u32) -> String {
    let size = crate::figure_text::bytes(bytes);
    match copies {
        0 | 1 => format!("bytes {size}"),
        n => format!(
            "bytes {size} in {n} copies batched in one record (copyCount: cudaMemcpyBatchAsync)"
        ),
    }
}

/// An NCCL kernel's message size as its call recorded it, or why not.
fn message_size<'a>(l: &Loaded, r: usize, theme: &Theme) -> Line<'a> {
    let sizes = &l.analysis.sizes;
    match sizes.of(r) {
        Some(b) => Line::from(format!(
            "message size {} (NCCL's call, per rank; payload decoding unverified)",
            crate::figure_text::bytes(b)
        )),
        None if sizes.recorded() => Line::styled(
            "message size not recorded (grouped calls that cannot be split, or no NCCL call with a payload around its launch)",
            theme.dim(),
        ),
        None => Line::styled(crate::analysis::bandwidth::NOT_RECORDED, theme.dim()),
    }
}

/// Everything about the selected event.
pub fn lines(app: &App, l: &Loaded, theme: &Theme) -> PanelLines {
    let p = &l.profile;
    let Some(e) = app.capture().selection else {
        return PanelLines::one("Nothing selected (Enter selects the event under the cursor).");
    };
    let (name, _, _, place, thread, at) = match e {
        EventRef::Gpu(r) => {
            let lane = &p.lanes[p.gpu.lane(r) as usize];
            let proc = &p.processes[lane.process as usize];
            let call = p.gpu.launch(r);
            let (th, at) = if call == NONE {
                (None, p.gpu.start(r))
            } else {
                (
                    Some(p.runtime.thread(call as usize)),
                    p.runtime.start(call as usize),
                )
            };
            (
                p.strings
                    .get(p.gpu.name_as(r, app.capture().show.names))
                    .to_string(),
                p.gpu.start(r),
                p.gpu.end(r),
                format!(
                    "{} S{} · pid {} {}",
                    p.device_label(lane.device).tag(),
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
            p.runtime.name(r),
            p.runtime.start(r),
            p.runtime.end(r),
            p.runtime.thread(r),
        ),
        EventRef::Nvtx(r) => cpu_event(
            p,
            "NVTX · ",
            p.nvtx.name(r),
            p.nvtx.start(r),
            p.nvtx.end(r),
            p.nvtx.thread(r),
        ),
        EventRef::Osrt(r) => cpu_event(
            p,
            "OS runtime · ",
            p.osrt.name(r),
            p.osrt.start(r),
            p.osrt.end(r),
            p.osrt.thread(r),
        ),
        EventRef::Sched(r) => {
            let mut x = cpu_event(p, "", 0, 0, 0, p.sched.thread(r));
            x.0 = format!("descheduled from CPU {}", p.sched.cpu(r));
            x.5 = p.sched.start(r);
            x
        }
        EventRef::Sample(r) => {
            let mut x = cpu_event(p, "sample · ", 0, 0, 0, p.samples.thread(r));
            let frames = crate::analysis::cpu_state::frames(p, r);
            x.0 = match frames.first() {
                Some(&f) => format!("on-CPU in {}", p.strings.get(f)),
                None => "on-CPU (no user-mode frame)".into(),
            };
            x.5 = p.samples.start(r);
            x
        }
    };
    // Shown on the reference clock, as the timeline.
    let (start, end) = crate::tui::capture::time::event_span(l, e);
    let mut out = PanelLines::one(Line::styled(name, theme.heading()));
    // The kernel's other name, when it says more (or less).
    if let EventRef::Gpu(r) = e {
        let names = app.capture().show.names;
        let (shown, other) = (p.gpu.name_as(r, names), p.gpu.name_as(r, names.other()));
        if shown != other {
            out.push(Line::styled(
                format!(
                    "{} name: {}",
                    names.other().describe(),
                    crate::text_safe::escape_controls(p.strings.get(other))
                ),
                theme.dim(),
            ));
        }
    }
    out.push(place);
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
        if l.analysis.classes.comm(p, r).is_some() {
            out.push(message_size(l, r, theme));
            if let Some(how) = l.analysis.sizes.how_to_get() {
                out.push(Line::styled(how, theme.dim()));
            }
        }
        for line in super::super::launch_config::lines(p, r) {
            out.push(line);
        }
        if p.gpu.kind(r) != crate::profile::GpuKind::Kernel {
            out.push(Line::from(copy_size(p.gpu.bytes(r), p.gpu.copies(r))));
        }
    }
    if let EventRef::Sample(r) = e {
        // The innermost user-mode frames the loader keeps, innermost first.
        for &f in &crate::analysis::cpu_state::frames(p, r) {
            out.push(format!(
                "  {}",
                crate::text_safe::escape_controls(p.strings.get(f))
            ));
        }
    }
    out
}
