//! The words of the "why" account, shared by `report why` and the
//! timeline's launch panel and `b` list so that all three say the same:
//! what names each part, what it waited for, and the largest cause in a
//! few characters. Plain strings; callers escape names for the terminal.

use super::account::{CpuKind, Share};
use super::clock::Alignment;
use super::gpu_chain::{Link, LinkKind};
use super::launch::Preceding;
use super::why::{GPU_LATENCY_NS, Missing, Why};
use crate::profile::{Profile, Sym};

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// A GPU row's name and stream, e.g. "sm90_xmma_gemm… on S7".
fn work(p: &Profile, row: usize) -> String {
    format!(
        "{} on S{}",
        p.strings.get(p.gpu.name(row)),
        p.lanes[p.gpu.lane(row) as usize].stream
    )
}

/// A thread's name, else its tid.
pub fn thread_name(p: &Profile, t: crate::profile::ThreadId) -> String {
    let th = &p.threads[t as usize];
    match p.strings.get(th.name) {
        "" => format!("T{}", th.tid),
        n => format!("{n} (T{})", th.tid),
    }
}

/// What names a CPU share: the call, the OS function, "descheduled", or
/// the frame the samples share.
pub fn share_name(p: &Profile, kind: CpuKind, label: Sym) -> String {
    match (kind, p.strings.get(label)) {
        (CpuKind::OffCpu, _) => "descheduled".into(),
        (CpuKind::OnCpu, "") => "on-CPU (samples without call stacks)".into(),
        (_, "") => "(unnamed)".into(),
        (_, name) => name.into(),
    }
}

/// A CPU share of `w`'s account in a sentence: its name, and for a sync
/// what it returned after, for off-CPU where and who ran, for on-CPU how
/// many samples.
pub fn share_text(p: &Profile, w: &Why, x: &Share<Sym>) -> String {
    let mut s = share_name(p, x.kind, x.label);
    match x.kind {
        CpuKind::CudaSync => {
            if let Some(v) = w.waits.iter().rev().find(|v| v.name == x.label) {
                s += &format!(
                    ", returned after {} ended (it ran {:.3} ms)",
                    work(p, v.row),
                    ms(v.end_ns - v.start_ns)
                );
            }
        }
        CpuKind::OffCpu => {
            // Only the spans this part counts: an earlier kind (a call)
            // may claim the rest of a descheduled span.
            let spans = w.off_cpu_counted(x);
            let cpus: Vec<String> = dedup(spans.iter().map(|o| o.cpu.to_string()));
            let ran: Vec<String> = dedup(
                spans
                    .iter()
                    .flat_map(|o| o.ran.iter().map(|&t| thread_name(p, t))),
            );
            if !cpus.is_empty() {
                s += &format!(" from CPU {}", cpus.join(", "));
            }
            if !ran.is_empty() {
                s += &format!("; ran there meanwhile: {}", ran.join(", "));
            }
        }
        CpuKind::OnCpu => {
            if let Some(on) = &w.on_cpu {
                s += &match on.period_ns {
                    Some(period) => {
                        format!(" ({} samples, every {:.1} ms)", on.samples, ms(period))
                    }
                    None => format!(" ({} samples)", on.samples),
                };
            }
        }
        _ => {}
    }
    s
}

fn dedup(it: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// A chain link in a sentence.
pub fn link_text(p: &Profile, l: &Link) -> String {
    let what = match l.kind {
        LinkKind::Stream => format!("queued behind {}", work(p, l.row)),
        LinkKind::EventWait => format!(
            "waited on event {} recorded after {}",
            l.event.map_or("?".into(), |e| e.to_string()),
            work(p, l.row)
        ),
    };
    let mut s = format!(
        "{what} (it ran {:.3} ms, {:.6}–{:.6} s)",
        ms(l.end_ns - l.start_ns),
        l.start_ns as f64 / 1e9,
        l.end_ns as f64 / 1e9
    );
    if let Some(late) = &l.late_launch {
        s += &format!(
            "; its own launch call, on {}, ended {:.3} ms into the wait",
            thread_name(p, late.thread),
            ms(late.split.window.1 - late.split.window.0)
        );
    }
    s
}

/// A row of the GPU part: one link, or a run of links queued behind work
/// of one name on one stream (a queue of many small kernels reads as one
/// row with its count).
pub struct ChainRow<'a> {
    pub kind: LinkKind,
    pub links: &'a [Link],
    pub held_ns: i64,
}

impl ChainRow<'_> {
    /// The first link: where Enter goes, and whose launch may be late.
    pub fn first(&self) -> &Link {
        &self.links[0]
    }
}

/// `links` as rows: consecutive stream links of one name on one lane
/// together (a link whose own launch was late stays alone: its account
/// follows it).
pub fn chain_rows<'a>(p: &Profile, links: &'a [Link]) -> Vec<ChainRow<'a>> {
    let same = |a: &Link, b: &Link| {
        a.kind == LinkKind::Stream
            && b.kind == LinkKind::Stream
            && a.lane == b.lane
            && p.gpu.name(a.row) == p.gpu.name(b.row)
            && a.late_launch.is_none()
            && b.late_launch.is_none()
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < links.len() {
        let mut end = at + 1;
        while end < links.len() && same(&links[at], &links[end]) {
            end += 1;
        }
        let run = &links[at..end];
        out.push(ChainRow {
            kind: links[at].kind,
            links: run,
            held_ns: run.iter().map(|l| l.held_ns).sum(),
        });
        at = end;
    }
    out
}

/// A chain row in a sentence: the link's own, or for a run "queued behind
/// 12× <name> on S20 (they ran …, first start–last end)".
pub fn chain_row_text(p: &Profile, r: &ChainRow) -> String {
    if r.links.len() == 1 {
        return link_text(p, r.first());
    }
    // Links run back in time: the last is the earliest work.
    let first = r.links.iter().map(|l| l.start_ns).min().unwrap_or(0);
    let last = r.links.iter().map(|l| l.end_ns).max().unwrap_or(0);
    let ran: i64 = r.links.iter().map(|l| l.end_ns - l.start_ns).sum();
    format!(
        "queued behind {}× {} (they ran {:.3} ms, {:.6}–{:.6} s)",
        r.links.len(),
        work(p, r.first().row),
        ms(ran),
        first as f64 / 1e9,
        last as f64 / 1e9
    )
}

/// Another stream's kernel that ended just before `pr`'s kernel started:
/// competing work, not shown to hold it.
pub fn meanwhile_text(p: &Profile, clock: &Alignment, pr: &Preceding) -> String {
    let (a, b) = clock.gpu_span(p, pr.row);
    format!(
        "meanwhile the device ran {} ({:.3} ms, ended {:.3} ms before it started: competes, not proven to block)",
        work(p, pr.row),
        ms(b - a),
        ms(pr.gap_ns),
    )
}

/// The GPU part's rest, what the chain does not cover, in a sentence;
/// `None` when there is none. Negative when the kernel started before its
/// launch call returned; a few µs are the GPU's own launch latency;
/// beyond that, nothing recorded held it, and what else the device ran
/// just before is named as competing, not as a cause.
pub fn gpu_rest_text(p: &Profile, clock: &Alignment, w: &Why) -> Option<String> {
    let rest = w.gpu_rest_ns();
    if rest == 0 {
        return None;
    }
    if rest < 0 {
        return Some(format!(
            "the kernel started before its launch call returned: the call's last {:.3} ms are in the CPU part",
            ms(-rest)
        ));
    }
    if rest <= GPU_LATENCY_NS {
        return Some(format!(
            "the GPU's own launch latency (under {} µs)",
            GPU_LATENCY_NS / 1000
        ));
    }
    let mut s =
        "nothing recorded ahead of it on its stream or in an event it waited on".to_string();
    if w.missing.contains(&Missing::Graph) {
        s += &format!("; {}", Missing::Graph.sentence());
    }
    if let Some(pr) = w.competed(p, clock) {
        s += &format!("; {}", meanwhile_text(p, clock, &pr));
    }
    Some(s)
}

/// The largest part of `w`'s delay in a few words, for the `b` list:
/// "sync", "osrt", "off-cpu", "on-cpu", "nvtx", "call", "queued: S7 gemm",
/// "event: S24 gemm", "unaccounted", "gpu: ?".
pub fn largest_cause(p: &Profile, w: &Why) -> String {
    let mut best: Option<(i64, String)> = None;
    let mut offer = |ns: i64, what: String| {
        if ns > 0 && best.as_ref().is_none_or(|b| ns > b.0) {
            best = Some((ns, what));
        }
    };
    if let Some(s) = &w.cpu {
        for x in &s.shares {
            let short = match x.kind {
                CpuKind::CudaSync => "sync".to_string(),
                CpuKind::CudaCall => "call".to_string(),
                // An NVTX range is where the thread was, not a cause.
                CpuKind::Nvtx => format!("cpu, in {}", cut(p.strings.get(x.label))),
                other => other.name().to_string(),
            };
            offer(x.ns(), short);
        }
        offer(s.unaccounted_ns(), "unaccounted".into());
    }
    for l in &w.gpu_chain {
        let tag = match l.kind {
            LinkKind::Stream => "queued",
            LinkKind::EventWait => "event",
        };
        offer(
            l.held_ns,
            format!(
                "{tag}: S{} {}",
                p.lanes[l.lane as usize].stream,
                brief(p.strings.get(p.gpu.name(l.row)))
            ),
        );
    }
    offer(w.gpu_rest_ns(), "gpu: ?".into());
    best.map_or_else(|| "-".into(), |b| b.1)
}

/// A range's name in a few characters.
fn cut(name: &str) -> String {
    let mut w: String = name.chars().take(14).collect();
    if name.chars().count() > 14 {
        w.push('…');
    }
    w
}

/// A kernel name's gist: "gemm" for GEMMs, else its first word, cut.
fn brief(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if lower.contains("gemm") {
        return "gemm".into();
    }
    let word: String = name
        .trim_start_matches("void ")
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let mut w: String = word.chars().take(14).collect();
    if word.chars().count() > 14 {
        w.push('…');
    }
    w
}

#[cfg(test)]
mod tests {
    use super::brief;

    #[test]
    fn kernel_gists_are_short() {
        assert_eq!(brief("sm90_xmma_gemm_bf16bf16_bf16f32"), "gemm");
        assert_eq!(brief("vectorized_elementwise_kernel"), "vectorized_ele…");
        assert_eq!(brief("ncclDevKernel_AllReduce"), "ncclDevKernel_…");
    }
}
