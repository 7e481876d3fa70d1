//! The `clock` section: how each file's clock was mapped onto the
//! reference clock (the first file's), and how well.

use super::context::Context;
use super::fit::Keep;
use super::table::Table;
use crate::analysis::clock::{Alignment, ClockMethod, FileMapping, HostLink, short_ms};
use crate::figure_text::fixed;
use crate::profile::Timebase;
use crate::text_safe::escape_controls;
use crate::text_safe::path_text;
use serde_json::{Value, json};

/// `summary.clock` (also the `clock` section's JSON).
pub fn to_json(cx: &Context, a: &Alignment) -> Value {
    let p = cx.profile;
    let files: Vec<Value> = a
        .mappings()
        .zip(&p.files)
        .map(|(c, f)| {
            json!({
                "path": path_text(&f.path),
                "host": f.host,
                "timebase": c.timebase.name(),
                // read one way of two its data could not decide between
                "timebase_ambiguous": c.ambiguous_timebase.as_ref().map(super::timebase::to_json),
                "method": c.method.name(),
                "alignment_source": alignment_source(&c, f),
                // what nsys export did to its timestamps (null: not recorded)
                "export_time": {
                    "normalized": f.export.time_normalize,
                    "shift_ns": f.export.time_shift_ns,
                },
                "offset_ms": c.offset_ms,
                // null when not fitted: 0.0 would claim a perfect clock
                "drift_ppm": if c.drift_fitted { json!(c.ppm) } else { Value::Null },
                "drift_fitted": c.drift_fitted,
                "residual_end_skew_ms": c.residual_ms.map_or(Value::Null, |s| json!({"p50": s.p50, "p90": s.p90})),
                "instances_used": c.instances_used,
                // its instances implied offsets ms apart: the offset most
                // of its communicators agreed on (null: they agreed)
                "voted": c.voted.map(|v| json!({"agreeing": v.agreeing, "communicators": v.of})),
                // another file of its host: one clock with that file
                "host_clock": c.host_link.map(|l| json!({
                    "shared_with": path_text(&p.files[c.domain].path),
                    "via": l.name(),
                })),
                "host_agreement_ms": c.host_agreement_ms.map_or(Value::Null, |s| json!({"p50": s.p50, "p90": s.p90})),
                // its ends refuted sharing its host's clock
                "off_host_clock": c.off_host_clock,
                // the host (its first file) its clock was fitted against
                "fitted_via": c.fitted_via.map(|d| path_text(&p.files[d].path)),
                "refused": c.refused,
                "isolated": c.isolated,
            })
        })
        .collect();
    json!({
        "method": a.method().name(),
        "reference": p.files.first().map(|f| path_text(&f.path)),
        // one string, as before the lines were kept apart
        "warning": Some(a.said(p).join("; ")).filter(|w| !w.is_empty()),
        "files": files,
        // Ranks whose capture covers part of a group's sequence: the clock
        // fit pairs only the instances they have.
        "captured": super::captures::to_json(cx, &cx.analysis.matching),
    })
}

/// What placed a file on the reference clock, named as the Nsight GUI
/// names a report's alignment source: `collective-ends` (rankline's own
/// refinement), `boot` (one boot clock with another file of its host),
/// `utc` (its UTC stamps), `vclock-or-utc` (timestamps normalised at
/// export, which does not record whether vClock data was there), or
/// `reference` / `none`.
fn alignment_source(c: &FileMapping, f: &crate::profile::FileInfo) -> &'static str {
    match c.method {
        ClockMethod::None => "none",
        ClockMethod::Reference => "reference",
        ClockMethod::CollectiveEnds => "collective-ends",
        ClockMethod::SameHost => match c.host_link {
            Some(HostLink::UtcClock) => "utc",
            _ => "boot",
        },
        ClockMethod::Utc if f.export.normalized() => "vclock-or-utc",
        ClockMethod::Utc => "utc",
    }
}

pub fn to_text(cx: &Context, a: &Alignment) -> String {
    let p = cx.profile;
    let mut out = super::fit::wrap(
        &format!(
            "Clock alignment: {}",
            crate::text_safe::escape_controls(&a.describe_on(p))
        ),
        "",
        cx.cols(),
    );
    // A rank column when ranks are recorded; file names shortened from
    // the middle, so that a rank or host in the name stays visible (the
    // full paths are in the JSON).
    let ranks = p.files.iter().any(|f| f.rank.is_some());
    let mut t = Table::new(&[
        if ranks { "rank" } else { "#" },
        "file",
        "host",
        "timebase",
        "method",
        "offset_ms",
        "ppm",
        "resid_ms",
        "used",
        "refused",
    ])
    .shorten(1, Keep::Middle)
    // a host's first letters tell it apart (the note below names it whole)
    .shorten_to(2, Keep::Start, 8);
    for (i, (c, f)) in a.mappings().zip(&p.files).enumerate() {
        t.row(vec![
            match (ranks, f.rank) {
                (true, Some(r)) => r.to_string(),
                (true, None) => "-".into(),
                (false, _) => i.to_string(),
            },
            f.name(),
            f.host.clone().unwrap_or_else(|| "-".into()),
            short_timebase(c.timebase).into(),
            match c.method {
                _ if c.isolated => "left out",
                ClockMethod::CollectiveEnds => "ends",
                m => m.name(),
            }
            .into(),
            fixed(c.offset_ms, 3),
            if c.drift_fitted {
                fixed(c.ppm, 3)
            } else {
                "-".into()
            },
            c.residual_ms.map_or_else(
                || "-".into(),
                |s| format!("{}/{}", fixed(s.p50, 3), fixed(s.p90, 3)),
            ),
            c.instances_used.to_string(),
            match (&c.refused, c.isolated) {
                (Some(_), true) => "left out",
                (Some(_), false) => "yes",
                (None, _) => "-",
            }
            .into(),
        ]);
    }
    out += &t.render(cx.cols());
    // One line per reason, with the files it covers.
    let mut reasons: Vec<((&str, String), Vec<String>)> = Vec::new();
    for (c, f) in a.mappings().zip(&p.files) {
        if let Some(why) = c.refused {
            let what = if c.isolated {
                "left out of cross-file figures"
            } else {
                "kept on UTC"
            };
            let name = f.name();
            match reasons.iter_mut().find(|r| r.0 == (what, why.clone())) {
                Some(r) => r.1.push(name),
                None => reasons.push(((what, why), vec![name])),
            }
        }
    }
    for ((what, why), names) in reasons {
        let files = match names.len() {
            1 => "1 file".to_string(),
            n => format!("{n} files"),
        };
        out += &cx.note(&escape_controls(&format!(
            "! {files} {what} ({}): {why}",
            names.join(", ")
        )));
    }
    for (c, f) in a.mappings().zip(&p.files) {
        if let Some(v) = c.voted {
            out += &cx.note(&escape_controls(&format!(
                "! {}: its collectives implied offsets ms apart; {} of its {} communicators agree on the one fitted, the others' calls were placed apart on UTC and are paired again on the fitted clocks",
                f.name(),
                v.agreeing,
                v.of
            )));
        }
    }
    for (c, f) in a.mappings().zip(&p.files) {
        // (one left out says why above)
        if let Some(why) = c.off_host_clock.as_ref().filter(|_| !c.isolated) {
            out += &cx.note(&escape_controls(&format!(
                "! {} taken off its host's clock: {why}",
                f.name()
            )));
        }
    }
    for (c, f) in a.mappings().zip(&p.files) {
        if let Some(t) = &c.ambiguous_timebase {
            out += &cx.note(&escape_controls(&super::timebase::line(&f.name(), t)));
        }
        for t in crate::analysis::completeness::export_time(f) {
            out += &cx.note(&escape_controls(&format!("! {}: {t}", f.name())));
        }
    }
    out += &host_lines(cx, a);
    // (the files left out were said above, with the other refusals)
    for w in a.warnings() {
        out += &cx.note(&format!("! {w}"));
    }

    out += &cx.note("timebase: epoch = UTC ns, boot = the host's boot clock, session = ns from the session start; method ends = collective ends");
    out += &cx.note("t_ref = t_file + offset_ms·10⁶ + ppm·10⁻⁶·(t_file − the file's first event): offset and ppm are the correction applied, the opposite of how far the file's clock runs ahead (a clock running 5 ppm fast gets ppm −5); ppm - = not fitted; resid_ms = p50/p90 of |median end of the host's ranks − median end of the other hosts' ranks| over the instances used (the collective's own end spread plus the clock error between hosts); used = those instances");
    out += &super::captures::to_text(cx, &cx.analysis.matching);
    out
}

/// One line per host whose files share its clock: how they are tied, and
/// how well their ranks' ends agree (apart from the error between hosts).
fn host_lines(cx: &Context, a: &Alignment) -> String {
    let p = cx.profile;
    let maps: Vec<_> = a.mappings().collect();
    let mut out = String::new();
    for (d, first) in maps.iter().enumerate().filter(|(d, c)| c.domain == *d) {
        let mates: Vec<usize> = (0..maps.len())
            .filter(|&f| maps[f].domain == d && f != d)
            .collect();
        if mates.is_empty() {
            continue;
        }
        let names: Vec<String> = std::iter::once(d)
            .chain(mates.iter().copied())
            .map(|f| p.files[f].name())
            .collect();
        let exact = mates
            .iter()
            .all(|&f| maps[f].host_link == Some(HostLink::BootClock));
        let tie = if exact {
            "one boot clock: their session starts are known exactly (systemClockNs)"
        } else {
            "one system UTC clock: their session starts as its stamps give them"
        };
        let agree = std::iter::once(first)
            .chain(mates.iter().map(|&f| &maps[f]))
            .filter_map(|c| c.host_agreement_ms.map(|s| s.p90))
            .reduce(f64::max)
            .map_or_else(String::new, |ms| {
                format!(
                    "; their ranks' ends agree within {} (p90, apart from the error between hosts)",
                    short_ms(ms)
                )
            });
        let host = p.files[d].host.as_deref().unwrap_or("-");
        out += &cx.note(&escape_controls(&format!(
            "{} files of {host} share its clock ({}): {tie}{agree}",
            names.len(),
            names.join(", ")
        )));
    }
    out
}

/// The timebase in a table cell.
fn short_timebase(t: Timebase) -> &'static str {
    match t {
        Timebase::UtcEpoch => "epoch",
        Timebase::BootClock => "boot",
        Timebase::SessionRelative => "session",
    }
}
