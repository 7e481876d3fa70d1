//! What `report clock` says of a timebase a file's data could not decide:
//! how it was read, against what, and how far the other reading would
//! have put its events.

use crate::analysis::clock::{AmbiguousTimebase, Compared};
use crate::profile::Timebase;
use serde_json::{Value, json};

/// The line for file `name` (escaped by the caller): `node0.sqlite:
/// timebase ambiguous (systemClockNs 43.958 s, under a minute): read as
/// boot clock, which puts its events within 0.004 s of the other hosts';
/// read from the session start they would lie 43.958 s apart`.
pub fn line(name: &str, t: &AmbiguousTimebase) -> String {
    let head = format!(
        "! {name}: timebase ambiguous (systemClockNs {}, under a minute): read {}",
        seconds(t.system_clock_ns),
        reading(t.chosen)
    );
    let whose = match t.compared_with {
        Compared::HostFiles => "its host's other files'",
        _ => "the other hosts'",
    };
    match (t.compared_with, t.chosen_apart_ns, t.other_apart_ns) {
        (Compared::Nothing, ..) | (_, None, _) | (_, _, None) => format!(
            "{head}, as its data reads by default: no other file with a certain timebase, events and a UTC stamp to compare it with, so it could not be decided"
        ),
        (Compared::Ends, Some(near), Some(far)) if t.decided => format!(
            "{head}, as the collective ends place the hosts' clocks (its UTC stamp could not tell): read so, its stamp puts them within {} of there; read {} it would put them {} away",
            seconds(near),
            reading(t.other),
            seconds(far)
        ),
        (_, Some(near), Some(far)) if t.decided => {
            let within = match near {
                0 => format!("within the span of {whose} events"),
                n => format!("within {} of {whose}", seconds(n)),
            };
            format!(
                "{head}, which puts its events {within}; read {} they would lie {} apart",
                reading(t.other),
                seconds(far)
            )
        }
        (_, Some(a), Some(b)) => format!(
            "{head}, as its data reads by default: it puts its events {} from {whose}, read {} {}: too close to decide",
            seconds(a),
            reading(t.other),
            seconds(b)
        ),
    }
}

/// The same facts for the JSON (`timebase_ambiguous` of a file).
pub fn to_json(t: &AmbiguousTimebase) -> Value {
    let ms = |ns: Option<i64>| ns.map(|n| n as f64 / 1e6);
    json!({
        "system_clock_ns": t.system_clock_ns,
        "read_as": t.chosen.name(),
        "other_reading": t.other.name(),
        // false: read as its data reads by default
        "decided": t.decided,
        "compared_with": t.compared_with.name(),
        // how far outside the compared files' events (UTC) its first or
        // last event lies, 0 inside; null with nothing to compare
        "apart_ms": ms(t.chosen_apart_ns),
        "other_reading_apart_ms": ms(t.other_apart_ns),
    })
}

fn reading(t: Timebase) -> &'static str {
    match t {
        Timebase::BootClock => "as boot clock",
        Timebase::SessionRelative => "from the session start",
        Timebase::UtcEpoch => "as UTC",
    }
}

/// ns as seconds to the ms, never a bare 0 for a distance that is not.
fn seconds(ns: i64) -> String {
    match ns {
        1..500_000 => "under 0.001 s".to_string(),
        n => format!("{:.3} s", n as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(compared_with: Compared, decided: bool, apart: Option<(i64, i64)>) -> String {
        let t = AmbiguousTimebase {
            system_clock_ns: 43_957_972_595,
            chosen: Timebase::BootClock,
            other: Timebase::SessionRelative,
            compared_with,
            decided,
            chosen_apart_ns: apart.map(|a| a.0),
            other_apart_ns: apart.map(|a| a.1),
        };
        line("node0.sqlite", &t)
    }

    #[test]
    fn the_line_says_the_reading_what_decided_it_and_both_distances() {
        assert_eq!(
            said(
                Compared::OtherHosts,
                true,
                Some((4_200_000, 43_957_972_595))
            ),
            "! node0.sqlite: timebase ambiguous (systemClockNs 43.958 s, under a minute): read as boot clock, which puts its events within 0.004 s of the other hosts'; read from the session start they would lie 43.958 s apart"
        );
        assert!(
            said(Compared::HostFiles, true, Some((0, 43_000_000_000))).contains(
                "which puts its events within the span of its host's other files' events;"
            )
        );
        assert!(
            said(Compared::Ends, true, Some((3_000_000, 43_950_000_000))).ends_with(
                "read as boot clock, as the collective ends place the hosts' clocks (its UTC stamp could not tell): read so, its stamp puts them within 0.003 s of there; read from the session start it would put them 43.950 s away"
            )
        );
        assert!(
            said(Compared::Nothing, false, None).ends_with(
                "read as boot clock, as its data reads by default: no other file with a certain timebase, events and a UTC stamp to compare it with, so it could not be decided"
            )
        );
        assert!(
            said(Compared::OtherHosts, false, Some((0, 200_000))).ends_with(
                "it puts its events 0.000 s from the other hosts', read from the session start under 0.001 s: too close to decide"
            )
        );
    }
}
