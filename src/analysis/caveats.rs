//! Caveats of a matched group: every reason its skew figures may not mean
//! what they seem to, as values the report writes both as JSON and as text.

use super::clock::ClockMethod;
use super::completeness::rank_ranges;
use super::matching::{Desync, Group, GroupClocks, MatchMethod};
use crate::profile::{DevId, Profile};
use std::collections::BTreeSet;

/// One caveat of a group.
#[derive(Debug, Clone, PartialEq)]
pub enum Caveat {
    /// Why the group stands apart (split off a shared stream id, or by
    /// communicator id).
    Origin(String),
    /// Matched by a rung built against synthetic data only.
    Unverified(MatchMethod),
    /// Four or more members that never parted and never all waited for
    /// one late member: they may be several communicators in lockstep.
    LockstepAmbiguous(Vec<DevId>),
    /// Kernels of these devices that no NCCL call named (a lost range or
    /// payload): (device, placed by order, left out as their ends did not fit).
    WithoutCalls(Vec<(DevId, usize, usize)>),
    /// Sequences differ where no placement explains it; only the instances
    /// before it are paired.
    Desync(Vec<DevId>, Desync),
    /// Captures that start or stop at different instances: (device, first,
    /// last) of those that do not cover the whole sequence, of this many.
    PartialCaptures(Vec<(DevId, usize, usize)>, usize),
    /// Devices whose place in the sequence is not confirmed.
    Unconfirmed(Vec<DevId>),
    /// p90 end skew of 1 ms or more. When every rank's place in the
    /// sequence is confirmed (ops or ends agree at one offset only), the
    /// places fit but the group may hold more than one communicator (ms,
    /// p90); otherwise the pairing is not confirmed.
    EndsNotAligned {
        confirmed: bool,
        p90_ms: Option<f64>,
    },
    /// The group's devices are on several clocks (of these hosts), aligned
    /// as said; whether every rank's place in the sequence is confirmed
    /// without the ends (on UTC only, the ends cannot confirm it).
    HostClocks(Vec<String>, GroupClocks, bool),
    /// Devices with a CUDA context but no GPU activity (whole capture): a
    /// rank of this group may be missing.
    MissingDevices(Vec<DevId>),
    /// A group spanning every file lacks these ranks of a world of this
    /// size (from the capture environment).
    MissingRanks(u32, Vec<u32>),
}

impl Caveat {
    /// The caveat as one sentence.
    pub fn sentence(&self, p: &Profile) -> String {
        match self {
            Caveat::Origin(note) => note.clone(),
            Caveat::Unverified(m) => format!(
                "matched by {}, a rung built against synthetic data only (unverified)",
                m.name()
            ),
            Caveat::LockstepAmbiguous(devices) => format!(
                "its {} never parted and never all waited for one late member: this may be several communicators in lockstep, which the capture cannot tell apart (no payload names them); its skews and late ranks are over all of them, and each one's may be smaller",
                members_of(p, devices)
            ),
            Caveat::WithoutCalls(list) => {
                let kernels = |n: usize| if n == 1 { "kernel" } else { "kernels" };
                let lacked: Vec<String> = list
                    .iter()
                    .map(|&(d, placed, out)| {
                        format!(
                            "{} {} of device {}",
                            placed + out,
                            kernels(placed + out),
                            p.device_label(d)
                        )
                    })
                    .collect();
                let out: Vec<String> = list
                    .iter()
                    .filter(|x| x.2 > 0)
                    .map(|&(d, _, out)| format!("{out} of device {}", p.device_label(d)))
                    .collect();
                let placed: usize = list.iter().map(|x| x.1).sum();
                let mut line = format!(
                    "no NCCL call with a payload names {}: {placed} placed by their order on the stream, checked against the ends of the instance",
                    lacked.join(", ")
                );
                if !out.is_empty() {
                    line += &format!(
                        "; left out of every instance, their ends not fitting: {}",
                        out.join(", ")
                    );
                }
                line
            }
            Caveat::Desync(devices, d) => {
                let sides: Vec<String> = d
                    .ops
                    .iter()
                    .map(|(op, on)| {
                        let labels: Vec<String> = on
                            .iter()
                            .map(|&i| p.device_label(devices[i]).to_string())
                            .collect();
                        format!("{} on {}", op.name(), labels.join(" "))
                    })
                    .collect();
                format!(
                    "desync at instance {}: {}; only instances before it are paired",
                    d.instance,
                    sides.join(", ")
                )
            }
            Caveat::PartialCaptures(parts, total) => {
                let parts: Vec<String> = parts
                    .iter()
                    .map(|&(d, first, last)| format!("{} {first}–{last}", p.device_label(d)))
                    .collect();
                format!(
                    "captures cover different instances of {total}: {}; each instance is paired over the ranks that have it",
                    parts.join(", ")
                )
            }
            Caveat::Unconfirmed(devices) => {
                let labels: Vec<String> = devices
                    .iter()
                    .map(|&d| p.device_label(d).to_string())
                    .collect();
                format!(
                    "place in the sequence not confirmed for {} (several offsets fit the ops and ends): its pairing is a guess",
                    labels.join(" ")
                )
            }
            Caveat::EndsNotAligned {
                confirmed: true,
                p90_ms: Some(ms),
            } => format!(
                "ends spread by {ms:.3} ms (p90 end skew): every rank's place in the sequence fits its ops, but the members of one call end together, so this group may hold more than one communicator"
            ),
            Caveat::EndsNotAligned { .. } => {
                "ends are not aligned (p90 end skew ≥ 1 ms): the pairing is not confirmed".into()
            }
            Caveat::HostClocks(hosts, c, confirmed) => {
                let on = if hosts.len() > 1 {
                    format!("devices on {} hosts ({})", hosts.len(), hosts.join(", "))
                } else {
                    format!("devices on {} clocks of {}", c.domains, hosts.join(", "))
                };
                let residual = c.uncertainty_ns as f64 / 1e6;
                match c.method {
                    ClockMethod::CollectiveEnds => format!(
                        "{on}, clocks aligned by collective ends (residual p90 {residual:.3} ms): smaller skews are not resolvable"
                    ),
                    ClockMethod::Utc => format!(
                        "{on}, clocks aligned by UTC only (residual p90 {residual:.3} ms: the ends' own spread plus the clock error): smaller skews are not resolvable{}",
                        if *confirmed {
                            ""
                        } else {
                            ", and the ends could not confirm the pairing"
                        }
                    ),
                    _ => format!(
                        "{on} whose clocks are not aligned: start and end skews include the clock offset"
                    ),
                }
            }
            Caveat::MissingDevices(ds) => {
                let list: Vec<String> = ds.iter().map(|&d| p.device_label(d).to_string()).collect();
                let one = ds.len() == 1;
                format!(
                    "device{} {} had a CUDA context but recorded no GPU activity: if {} in this group, {} waits are not counted",
                    if one { "" } else { "s" },
                    list.join(", "),
                    if one {
                        "it was a rank"
                    } else {
                        "they were ranks"
                    },
                    if one { "its" } else { "their" },
                )
            }
            Caveat::MissingRanks(world, ranks) => format!(
                "this group spans every file but lacks rank{} {} of a world of {world}",
                if ranks.len() == 1 { "" } else { "s" },
                rank_ranges(ranks)
            ),
        }
    }
}

/// A group's members as a phrase: `ranks 0-3, 8` when every member's rank
/// is recorded, else `devices 0 1 4 5` by their labels, and past eight
/// devices `16 devices, node00:0 … node03:3`.
pub fn members(p: &Profile, g: &Group) -> String {
    members_of(p, &g.devices)
}

/// [`members`] of any list of devices (long lists said by their ends).
pub fn members_of(p: &Profile, devices: &[DevId]) -> String {
    let ranks: Option<Vec<u32>> = devices
        .iter()
        .map(|&d| p.devices[d as usize].rank)
        .collect();
    match ranks {
        Some(mut r) => {
            r.sort_unstable();
            format!("ranks {}", rank_ranges(&r))
        }
        None => {
            let labels: Vec<String> = devices
                .iter()
                .map(|&d| p.device_label(d).to_string())
                .collect();
            match labels.as_slice() {
                [first, .., last] if labels.len() > 8 => {
                    format!("{} devices, {first} … {last}", labels.len())
                }
                _ => format!("devices {}", labels.join(" ")),
            }
        }
    }
}

/// Every caveat that applies to `g`, why it stands apart first. `missing`:
/// devices that had a CUDA context but recorded no GPU activity.
/// `end_p90_ms` is the group's p90 end skew, when measured.
pub fn group_caveats(
    p: &Profile,
    g: &Group,
    missing: &[DevId],
    end_p90_ms: Option<f64>,
) -> Vec<Caveat> {
    let mut out = Vec::new();
    if let Some(note) = &g.note {
        out.push(Caveat::Origin(note.clone()));
    }
    if !g.method.verified() {
        out.push(Caveat::Unverified(g.method));
    }
    if g.lockstep_ambiguous {
        out.push(Caveat::LockstepAmbiguous(g.devices.clone()));
    }
    if !g.without_calls.is_empty() {
        out.push(Caveat::WithoutCalls(
            g.without_calls
                .iter()
                .map(|w| (g.devices[w.device], w.placed, w.left_out))
                .collect(),
        ));
    }
    if let Some(d) = &g.desync {
        out.push(Caveat::Desync(g.devices.clone(), d.clone()));
    }
    let partial: Vec<(DevId, usize, usize)> = g
        .devices
        .iter()
        .zip(&g.captured)
        .filter(|(_, c)| c.first != 1 || c.last != g.instances())
        .map(|(&d, c)| (d, c.first, c.last))
        .collect();
    if !partial.is_empty() {
        out.push(Caveat::PartialCaptures(partial, g.instances()));
    }
    let unconfirmed: Vec<DevId> = g
        .devices
        .iter()
        .zip(&g.captured)
        .filter(|(_, c)| {
            !c.basis.confirmed() && c.basis != crate::analysis::matching::Basis::Desync
        })
        .map(|(&d, _)| d)
        .collect();
    let confirmed = unconfirmed.is_empty() && g.captured.iter().all(|c| c.basis.confirmed());
    if !unconfirmed.is_empty() {
        out.push(Caveat::Unconfirmed(unconfirmed));
    }
    if !g.end_aligned {
        out.push(Caveat::EndsNotAligned {
            confirmed,
            p90_ms: end_p90_ms,
        });
    }
    let hosts: BTreeSet<&str> = g
        .devices
        .iter()
        .map(|&d| p.hosts[p.devices[d as usize].host as usize].as_str())
        .collect();
    if let Some(c) = g.clocks {
        out.push(Caveat::HostClocks(
            hosts.into_iter().map(String::from).collect(),
            c,
            confirmed,
        ));
    }
    if !missing.is_empty() {
        out.push(Caveat::MissingDevices(missing.to_vec()));
    }
    if let Some(c) = missing_ranks(p, g) {
        out.push(c);
    }
    out
}

/// The ranks of the recorded world size a group spanning every file lacks
/// (a group of some files only is not meant to hold every rank).
fn missing_ranks(p: &Profile, g: &Group) -> Option<Caveat> {
    let world = p.files.iter().filter_map(|f| f.world_size).max()?;
    let file_of = |lane: u32| p.processes[p.lanes[lane as usize].process as usize].file as usize;
    let files: BTreeSet<usize> = g.lanes.iter().map(|&l| file_of(l)).collect();
    if files.len() < p.files.len() {
        return None;
    }
    let ranks: BTreeSet<u32> = g
        .devices
        .iter()
        .filter_map(|&d| p.devices[d as usize].rank)
        .collect();
    if ranks.is_empty() {
        return None;
    }
    let lacking: Vec<u32> = (0..world).filter(|r| !ranks.contains(r)).collect();
    (!lacking.is_empty()).then_some(Caveat::MissingRanks(world, lacking))
}
