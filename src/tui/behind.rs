//! The behind list (`W`): per group, the hang (who waits in which instance,
//! who never launched it and what it was last seen doing), ranks whose
//! capture stopped earlier, desyncs and ranks with no file — each row with
//! the instance Enter opens.

use crate::analysis::behind::{Behind, LastSeen};
use crate::analysis::matching::Matching;
use crate::profile::Profile;
use crate::text_safe::escape_controls;

/// How a row reads: a hang is the finding, the rest context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Hang,
    Note,
    Quiet,
}

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BehindRow {
    pub text: String,
    pub tone: Tone,
    /// (group, 0-based instance) Enter opens.
    pub target: Option<(usize, usize)>,
}

/// "cudaStreamSynchronize · NVTX optimizer_step · OS pthread_cond_wait".
fn seen_text(p: &Profile, s: &LastSeen) -> String {
    let name =
        |x: crate::analysis::behind::Seen| escape_controls(p.strings.get(x.name)).into_owned();
    let mut parts = Vec::new();
    if let Some(c) = s.cuda_call {
        parts.push(format!("in {}", name(c)));
    }
    if let Some(n) = s.nvtx {
        parts.push(format!("NVTX {}", name(n)));
    }
    if let Some(o) = s.osrt {
        parts.push(format!("OS {}", name(o)));
    }
    if let Some(f) = s.frame {
        parts.push(format!("sampled in {}", name(f)));
    }
    if parts.is_empty() {
        "nothing recorded on its CPU threads".into()
    } else {
        parts.join(" · ")
    }
}

pub fn rows(p: &Profile, m: &Matching, b: &Behind) -> Vec<BehindRow> {
    let mut out = Vec::new();
    let row =
        |text: String, tone: Tone, target: Option<(usize, usize)>| BehindRow { text, tone, target };
    for (gi, g) in m.groups.iter().enumerate() {
        let key = escape_controls(&g.key);
        if let Some(x) = b.groups.iter().find(|x| x.group == gi) {
            let k = x.diverges_at;
            let op = g.ops.get(k - 1).map_or("?", |o| o.name());
            let at = Some((gi, k - 1));
            let complete = x.last_complete.map_or("none".into(), |c| format!("#{c}"));
            let since = x
                .waiting_since_ns
                .map_or(String::new(), |t| format!(" since {:.3} s", t as f64 / 1e9));
            if x.is_hang() {
                out.push(row(
                    format!(
                        "{key} HANG at #{k} {op}: {} waiting{since}, {} never launched it (last complete {complete})",
                        x.waiting.len(),
                        x.behind.len()
                    ),
                    Tone::Hang,
                    at,
                ));
                for &d in &x.behind {
                    let seen = x.last_seen_of(d).map(|s| seen_text(p, s));
                    out.push(row(
                        format!(
                            "  {} behind: {}",
                            p.device_label(g.devices[d]).tag(),
                            seen.unwrap_or_default()
                        ),
                        Tone::Hang,
                        at,
                    ));
                }
            } else if !x.waiting.is_empty() {
                out.push(row(
                    format!(
                        "{key} diverges at #{k} {op}: still running at capture end on {}{since}; the ranks lacking it stopped capturing first",
                        x.waiting.len()
                    ),
                    Tone::Note,
                    at,
                ));
            }
            for s in &x.stopped_early {
                out.push(row(
                    format!(
                        "{key} {} capture ends {} instance{} before the others' (last #{}): not a hang",
                        p.device_label(g.devices[s.device]).tag(),
                        s.before_end,
                        if s.before_end == 1 { "" } else { "s" },
                        s.last
                    ),
                    Tone::Note,
                    Some((gi, s.last - 1)),
                ));
            }
        }
        if let Some(d) = &g.desync {
            out.push(row(
                format!(
                    "{key} desync at #{}: the ranks ran different collectives (skew panel names them)",
                    d.instance
                ),
                Tone::Note,
                // The last paired instance, just before it.
                d.instance.checked_sub(2).map(|k| (gi, k)),
            ));
        }
    }
    if !b.never_captured.is_empty() {
        let ranks: Vec<String> = b.never_captured.iter().map(|r| r.to_string()).collect();
        out.push(row(
            format!(
                "never captured: rank {} of a world of {} (no file holds it)",
                ranks.join(" "),
                b.world_size.unwrap_or_default()
            ),
            Tone::Note,
            None,
        ));
    }
    if out.is_empty() {
        out.push(row(
            if m.groups.is_empty() {
                "no NCCL collectives matched across devices".into()
            } else {
                "no rank is behind: in every group, every rank completed every instance it captured"
                    .into()
            },
            Tone::Quiet,
            None,
        ));
    }
    out
}

/// The first 0-based instance rank `d` of group `g` never launched (it is
/// behind from there on), if it is behind.
pub fn never_launched_from(b: &Behind, g: usize, d: usize) -> Option<usize> {
    b.groups
        .iter()
        .find(|x| x.group == g && x.is_hang())
        .filter(|x| x.behind.contains(&d))
        .map(|x| x.diverges_at - 1)
}
