//! Where each rank's capture starts and ends in its group's sequence, as
//! `report skew` and `report clock` print it when the ranks' captures cover
//! different instances (per-rank captures start and stop on their own).

use super::context::Context;
use super::json;
use crate::analysis::matching::{Basis, Group, Matching};
use crate::text_safe::escape_controls as safe;
use serde_json::{Value, json};

/// Whether any rank of `g` lacks some of its instances, or was placed by
/// a guess.
fn differs(g: &Group) -> bool {
    let n = g.instances();
    g.captured
        .iter()
        .any(|c| c.first != 1 || c.last != n || !c.basis.confirmed())
}

/// One line per rank whose capture is not the whole sequence, then the
/// rest in one line; nothing when every rank has every instance.
pub fn to_text(cx: &Context, m: &Matching) -> String {
    let p = cx.profile;
    let mut out = String::new();
    for g in m.groups.iter().filter(|g| cx.shows_group(g) && differs(g)) {
        let n = g.instances();
        out += &format!("\nCaptured instances of {} (1–{n})\n", safe(&g.key));
        let mut whole = 0;
        for (&d, c) in g.devices.iter().zip(&g.captured) {
            if !cx.shows(d) {
                continue;
            }
            let guessed = !c.basis.confirmed();
            if c.first == 1 && c.last == n && !guessed {
                whole += 1;
                continue;
            }
            let mut line = if c.last < c.first {
                format!("{}: no instance paired", p.device_label(d))
            } else {
                format!(
                    "{}: first captured instance {}, last {}",
                    p.device_label(d),
                    c.first,
                    c.last
                )
            };
            match (&g.desync, c.basis) {
                // Its prefix is paired; where it departs is the group's desync.
                (Some(d), Basis::Desync) => {
                    line += &format!(
                        " (its ops depart from the others' at instance {})",
                        d.instance
                    )
                }
                _ if guessed => line += &format!(" (placed by {}, not confirmed)", c.basis.name()),
                _ => {}
            }
            out += &cx.note(&safe(&line));
        }
        if whole > 0 {
            out += &cx.note(&format!(
                "the other {whole} rank{}: every instance, 1–{n}",
                if whole == 1 { "" } else { "s" }
            ));
        }
    }
    out
}

/// `[{group, device, first, last, placed_by, confirmed}]` for the ranks
/// whose capture is not the whole sequence (the clock section's JSON; the
/// skew section lists every rank in its groups).
pub fn to_json(cx: &Context, m: &Matching) -> Value {
    let p = cx.profile;
    let mut out = Vec::new();
    for g in m.groups.iter().filter(|g| cx.shows_group(g)) {
        let n = g.instances();
        for (&d, c) in g.devices.iter().zip(&g.captured) {
            if cx.shows(d) && (c.first != 1 || c.last != n || !c.basis.confirmed()) {
                out.push(json!({
                    "group": g.key,
                    "device": json::device(p, d),
                    "first": c.first,
                    "last": c.last,
                    "placed_by": c.basis.name(),
                    "confirmed": c.basis.confirmed(),
                }));
            }
        }
    }
    Value::Array(out)
}
