//! The launch panel: the selected kernel's launch call and, for a
//! collective, why its late rank was late. One line per fact, each number
//! once, and only the cause that matches the verdict.

use super::lines::{PanelLines, secs};
use crate::analysis::account::{CpuKind, Share, Split};
use crate::analysis::launch::{Verdict, before_return};
use crate::analysis::thread_account::{Source, source_of};
use crate::analysis::why::Why;
use crate::analysis::why_words as words;
use crate::profile::names::KernelNames;
use crate::profile::{NONE, Sym, ThreadId};
use crate::text_safe::escape_controls;
use crate::tui::action::{Action, Mode};
use crate::tui::data::Loaded;
use crate::tui::state::{App, EventRef};
use crate::tui::timescale::format_duration;
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;

/// A duration that may be negative (the GPU part's rest).
fn signed_duration(ns: i64) -> String {
    if ns < 0 {
        format!("−{}", format_duration(ns.saturating_neg()))
    } else {
        format_duration(ns)
    }
}

/// Kernel start − launch call end, read as a sentence: a negative one is
/// the kernel starting before the call returned (the report's wording).
fn call_to_start(ns: i64) -> String {
    if ns < 0 {
        format!(
            "kernel started {}",
            before_return(ns.saturating_neg(), "its")
        )
    } else {
        format!(
            "launch call returned → kernel start: {}",
            format_duration(ns)
        )
    }
}

pub fn lines(app: &App, l: &Loaded, theme: &Theme) -> PanelLines {
    let p = &l.profile;
    let mut out = PanelLines::default();
    // A launch call selected (after `J`, or a click): the kernel it launched.
    let r = match (app.capture().selection, app.capture().facts.launched) {
        (Some(EventRef::Gpu(r)), _) => r,
        (Some(EventRef::Api(_)), Some(k)) => {
            out.push(Line::styled("the selected call launched:", theme.dim()));
            k
        }
        (Some(EventRef::Api(_)), None) => {
            return PanelLines::one("The selected call launched no GPU work.");
        }
        _ => return PanelLines::one("Select a kernel or a launch call to see the launch."),
    };
    out.push_to(
        Line::styled(
            p.strings
                .get(p.gpu.name_as(r, app.capture().show.names))
                .to_string(),
            theme.heading(),
        ),
        Some(EventRef::Gpu(r)),
    );
    let call = p.gpu.launch(r);
    if call == NONE {
        out.push(Line::styled(
            "no launch call in the capture (trimmed or partial): not guessed",
            theme.warning(),
        ));
    } else {
        let c = call as usize;
        let t = p.runtime.thread(c) as usize;
        out.push_to(
            format!(
                "launch call {} on T{}",
                p.strings.get(p.runtime.name(c)),
                p.threads[t].tid
            ),
            Some(EventRef::Api(c)),
        );
        // Shown on the reference clock, as the timeline.
        let (start, end) = crate::tui::capture::time::event_span(l, EventRef::Api(c));
        out.push(format!(
            "call took {} ({} → {})",
            format_duration(end.saturating_sub(start)),
            secs(start),
            secs(end)
        ));
        out.push(call_to_start(
            p.gpu.start(r).saturating_sub(p.runtime.end(c)),
        ));
        if p.gpu.graph_node(r) != crate::profile::NO_GRAPH {
            out.push("launched from a CUDA graph (linked to the graph launch)");
        }
        out.push(Line::styled(
            format!(
                "{}: jump to the launch call",
                app.session()
                    .keymap
                    .keys_for(Mode::Timeline, Action::JumpToLaunch)
            ),
            theme.dim(),
        ));
    }
    let Some(why) = &app.capture().facts.late else {
        // A rank that never started the instance has no launch to explain.
        if let (Some(s), Some((g, _))) = (&app.capture().facts.skew, app.capture().facts.instance)
            && s.open
        {
            let group = &l.analysis.matching.groups[g];
            out.push("");
            out.push(Line::styled(
                format!(
                    "{} never launched it: no launch to explain (W lists who is behind)",
                    p.device_label(group.devices[s.late]).tag()
                ),
                theme.late_label(),
            ));
        }
        return out;
    };
    out.push("");
    out.push_to(
        Line::styled(
            format!(
                "late rank {}: {}",
                p.device_label(why.device).tag(),
                why.verdict.name()
            ),
            theme.late_label(),
        ),
        Some(EventRef::Gpu(why.row)),
    );
    // The selected kernel's own call→start is above; another rank's is new.
    if why.row != r
        && let Some(d) = why.api_end_to_start_ns
    {
        out.push(format!("  its {}", call_to_start(d)));
    }
    // The verdict names the larger part; both parts are said whenever
    // the CPU one is past the clocks' error (never "in time" then).
    let cpu = why.cpu_delay_ns.unwrap_or(0);
    let queued = why.api_end_to_start_ns.unwrap_or(0);
    match why.verdict {
        Verdict::CpuLate => out.push(format!(
            "  its launch call ended {} after the first peer's kernel started",
            format_duration(cpu)
        )),
        Verdict::GpuSide => {
            if cpu > why.clock_error_ns {
                out.push(format!(
                    "  mostly on the GPU: launched {} late,",
                    format_duration(cpu)
                ));
                out.push(format!("  then queued {}", format_duration(queued)));
            } else {
                out.push("  issued in time; started late on the GPU");
            }
            // With an account, its GPU rows say what held it (or what
            // only competed), once; without one, what ran just before.
            if app.capture().facts.account.is_none()
                && let Some(pr) = &why.preceding
            {
                out.push_to(
                    format!(
                        "  {}",
                        escape_controls(&words::meanwhile_text(p, &l.analysis.clock, pr))
                    ),
                    Some(EventRef::Gpu(pr.row)),
                );
            }
        }
        Verdict::NotResolvable => {
            let d = why.cpu_delay_ns.unwrap_or(0);
            out.push(format!(
                "  its launch call ended {} {} the first peer's kernel started,",
                format_duration(d.saturating_abs()),
                if d > 0 { "after" } else { "before" }
            ));
            out.push("  within the clock error between their hosts: cannot tell");
        }
        Verdict::Unknown => out.push("  no launch call in the capture: cannot tell"),
    }
    // Two hosts' clocks compared: how far they can be trusted.
    if why.clock_error_ns > 0 {
        out.push(Line::styled(
            format!(
                "  across hosts: their clocks agree to ±{} (report clock)",
                format_duration(why.clock_error_ns)
            ),
            theme.dim(),
        ));
    }
    if let Some(w) = &app.capture().facts.account {
        account_lines(&mut out, l, app.capture().show.names, w, theme);
    }
    out
}

/// Where Enter on a part of the account goes.
fn target(l: &Loaded, thread: ThreadId, x: &Share<Sym>) -> Option<EventRef> {
    let at = x.spans.first()?.0;
    let a = &l.analysis;
    match source_of(&l.profile, &a.clock, thread, x.kind, x.label, at)? {
        Source::Call(r) => Some(EventRef::Api(r)),
        Source::Nvtx(r) => Some(EventRef::Nvtx(r)),
        Source::Osrt(r) => Some(EventRef::Osrt(r)),
        Source::Sched(r) => Some(EventRef::Sched(r)),
        Source::Sample(r) => Some(EventRef::Sample(r)),
    }
}

/// One row per share of a thread's split, largest first, each going to
/// what it came from; then what nothing explains.
fn split_lines(
    out: &mut PanelLines,
    l: &Loaded,
    names: KernelNames,
    w: &Why,
    thread: ThreadId,
    s: &Split<Sym>,
    indent: &str,
) {
    let p = &l.profile;
    let mut shares: Vec<_> = s.shares.iter().collect();
    shares.sort_by_key(|x| std::cmp::Reverse(x.ns()));
    for x in shares {
        out.push_to(
            format!(
                "{indent}{:<9} {:>9}  {}",
                x.kind.name(),
                format_duration(x.ns()),
                escape_controls(&words::share_text(p, w, x))
            ),
            target(l, thread, x),
        );
        if x.kind == CpuKind::CudaSync
            && let Some(v) = w.waits.iter().rev().find(|v| v.name == x.label)
        {
            out.push_to(
                format!(
                    "{indent}{:<9} {:>9}  ↳ waited for {} (S{})",
                    "",
                    "",
                    escape_controls(p.strings.get(p.gpu.name_as(v.row, names))),
                    p.lanes[v.lane as usize].stream
                ),
                Some(EventRef::Gpu(v.row)),
            );
        }
    }
    if s.unaccounted_ns() > 0 {
        out.push(format!(
            "{indent}{:<9} {:>9}  nothing recorded explains it",
            "unacc.",
            format_duration(s.unaccounted_ns())
        ));
    }
}

/// The late rank's delay part by part: the CPU part's explanations,
/// largest first, what nothing explains, the chain of GPU work that held
/// it, and what the capture did not record. Enter on a part goes there.
fn account_lines(out: &mut PanelLines, l: &Loaded, names: KernelNames, w: &Why, theme: &Theme) {
    let p = &l.profile;
    let delay = if w.split_known() {
        format!(
            "delay {} = CPU {} + GPU {}",
            format_duration(w.lateness_ns),
            format_duration(w.cpu_ns),
            format_duration(w.gpu_ns)
        )
    } else {
        format!(
            "delay {}: CPU and GPU parts unknown (no launch call)",
            format_duration(w.lateness_ns)
        )
    };
    out.push(Line::styled(delay, theme.heading()));
    if let (Some(s), Some(t)) = (&w.cpu, w.thread) {
        split_lines(out, l, names, w, t, s, "  ");
    }
    for row in words::chain_rows(p, &w.gpu_chain) {
        let link = row.first();
        out.push_to(
            format!(
                "  {:<9} {:>9}  {}",
                row.kind.name(),
                format_duration(row.held_ns),
                escape_controls(&words::chain_row_text(p, &row))
            ),
            Some(EventRef::Gpu(link.row)),
        );
        if let Some(late) = &link.late_launch {
            split_lines(out, l, names, w, late.thread, &late.split, "    ");
        }
    }
    // What the chain leaves of the GPU part, so the rows add up.
    if let Some(text) = words::gpu_rest_text(p, &l.analysis.clock, w) {
        out.push(format!(
            "  {:<9} {:>9}  {}",
            "gpu",
            signed_duration(w.gpu_rest_ns()),
            escape_controls(&text)
        ));
    }
    let names: Vec<&str> = w.listed_missing().iter().map(|m| m.name()).collect();
    if !names.is_empty() {
        out.push(Line::styled(
            format!(
                "  not recorded: {} (report why names the nsys options)",
                names.join(", ")
            ),
            theme.dim(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::call_to_start;

    #[test]
    fn a_kernel_starting_before_its_call_returned_reads_as_a_sentence() {
        assert_eq!(
            call_to_start(-2_000),
            "kernel started 2.0 µs before its launch call returned (clock granularity)"
        );
        assert!(call_to_start(-50_000).contains("beyond clock granularity"));
        assert!(call_to_start(3_000).starts_with("launch call returned → kernel start: "));
    }
}
