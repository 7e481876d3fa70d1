//! Timebases a file's own data cannot decide (a boot reading under a
//! minute: [`FileInfo::timebase_alternative`]), read the way that places
//! the file's events among the rest of the job's in UTC: its host's files
//! whose timebase is certain decide first, then the other hosts'. The two
//! readings put the events `systemClockNs` apart, tens of seconds, where
//! UTC stamps err by milliseconds.

pub mod ends;

use crate::profile::{FileInfo, Profile, Timebase};
use std::collections::{BTreeMap, BTreeSet};

/// The other reading must put the events at least this much farther
/// from the others' than the chosen one: one job's captures start
/// seconds apart as launchers go.
const DECISIVE_NS: i64 = 1_000_000_000;

/// What the clock made of a file's ambiguous timebase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AmbiguousTimebase {
    /// The host's boot-clock reading at the session start
    /// (`systemClockNs`): how far apart the two readings put the events.
    pub system_clock_ns: i64,
    /// The reading used.
    pub chosen: Timebase,
    /// The reading not used.
    pub other: Timebase,
    /// What the file's events were compared with.
    pub compared_with: Compared,
    /// Whether the comparison decided; when not, `chosen` is the reading
    /// the file's data gives by default.
    pub decided: bool,
    /// How far (ns) outside the span of the compared files' events (UTC)
    /// the chosen reading puts the file's first or last event (0: inside).
    pub chosen_apart_ns: Option<i64>,
    /// ... and the other reading.
    pub other_apart_ns: Option<i64>,
}

/// The files an ambiguous timebase was compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Compared {
    /// Its host's files whose timebase is certain.
    HostFiles,
    /// The other hosts' files whose timebase is certain.
    OtherHosts,
    /// The collective ends, when the UTC stamps could not tell: where
    /// they place the hosts' clocks against where its UTC stamp does.
    Ends,
    /// None: no other file with a certain timebase, events and a UTC
    /// stamp (or the file itself has no events or UTC stamp).
    Nothing,
}

impl Compared {
    pub fn name(self) -> &'static str {
        match self {
            Compared::HostFiles => "host-files",
            Compared::OtherHosts => "other-hosts",
            Compared::Ends => "collective-ends",
            Compared::Nothing => "nothing",
        }
    }
}

/// One file as the choice sees it.
#[derive(Debug, Clone)]
struct Seen {
    /// Host name and index (boots of one name apart), when named.
    host: Option<(String, u32)>,
    /// The default reading and the other one, when ambiguous.
    readings: (Timebase, Option<Timebase>),
    /// The events' span in the file's time, with the UTC shift of each
    /// reading (default, other).
    span: Option<(i64, i64)>,
    shifts: (Option<i64>, Option<i64>),
    /// Its clock data can be right: it may decide another file.
    trusted: bool,
    system_clock_ns: i64,
}

impl Seen {
    fn of(f: &FileInfo, span: Option<(i64, i64)>, trusted: bool) -> Seen {
        Seen {
            host: f.host.clone().map(|h| (h, f.host_index)),
            readings: (f.timebase, f.timebase_alternative),
            span,
            shifts: (
                f.utc_shift_ns(),
                f.timebase_alternative.and_then(|t| f.utc_shift_ns_as(t)),
            ),
            trusted,
            system_clock_ns: f.system_clock_ns.unwrap_or(0),
        }
    }

    /// The events in UTC under `shift`.
    fn placed(&self, shift: Option<i64>) -> Option<(i64, i64)> {
        let ((lo, hi), s) = (self.span?, shift?);
        Some((lo.saturating_add(s), hi.saturating_add(s)))
    }

    fn decides(&self) -> bool {
        self.trusted && self.readings.1.is_none()
    }
}

/// Each file's timebase as the clock reads it, with what was made of it
/// when its own data could not decide (as `given` says for the files it
/// names). `untrusted` files (clock data that cannot be right) decide
/// nothing.
pub fn read(
    p: &Profile,
    untrusted: &BTreeSet<usize>,
    given: &BTreeMap<usize, AmbiguousTimebase>,
) -> Vec<(Timebase, Option<AmbiguousTimebase>)> {
    if p.files.iter().all(|f| f.timebase_alternative.is_none()) {
        return p.files.iter().map(|f| (f.timebase, None)).collect();
    }
    let seen: Vec<Seen> = p
        .files
        .iter()
        .zip(p.file_models())
        .enumerate()
        .map(|(i, (f, m))| Seen::of(f, m.span(), !untrusted.contains(&i)))
        .collect();
    (0..seen.len())
        .map(|i| {
            let s = &seen[i];
            let choice = match given.get(&i) {
                Some(&g) => s.readings.1.map(|_| g),
                None => s.readings.1.map(|other| choose(&seen, i, other)),
            };
            (choice.map_or(s.readings.0, |c| c.chosen), choice)
        })
        .collect()
}

/// The reading of file `i` (ambiguous: `other` is its other reading).
fn choose(seen: &[Seen], i: usize, other: Timebase) -> AmbiguousTimebase {
    let me = &seen[i];
    let default = me.readings.0;
    let mut said = AmbiguousTimebase {
        system_clock_ns: me.system_clock_ns,
        chosen: default,
        other,
        compared_with: Compared::Nothing,
        decided: false,
        chosen_apart_ns: None,
        other_apart_ns: None,
    };
    let (Some(a), Some(b)) = (me.placed(me.shifts.0), me.placed(me.shifts.1)) else {
        return said;
    };
    let same_host = |j: usize| me.host.is_some() && seen[j].host == me.host;
    let groups = [(Compared::HostFiles, true), (Compared::OtherHosts, false)];
    for (compared, host) in groups {
        let span = (0..seen.len())
            .filter(|&j| j != i && seen[j].decides() && same_host(j) == host)
            .filter_map(|j| seen[j].placed(seen[j].shifts.0))
            .reduce(|(lo, hi), (x, y)| (lo.min(x), hi.max(y)));
        let Some(span) = span else { continue };
        let (da, db) = (apart(a, span), apart(b, span));
        let (near, far) = (da.min(db), da.max(db));
        let decided = decisive(near, far);
        said = AmbiguousTimebase {
            compared_with: compared,
            decided,
            ..said
        };
        if decided && db < da {
            (said.chosen, said.other) = (other, default);
            (said.chosen_apart_ns, said.other_apart_ns) = (Some(db), Some(da));
        } else {
            (said.chosen_apart_ns, said.other_apart_ns) = (Some(da), Some(db));
        }
        if decided {
            break;
        }
    }
    said
}

/// Whether distances `near` and `far` tell two readings apart.
fn decisive(near: i64, far: i64) -> bool {
    far.saturating_sub(near) >= DECISIVE_NS && near.saturating_mul(2) <= far
}

/// How far `x` reaches outside `span` (0 when inside).
fn apart((lo, hi): (i64, i64), (a, b): (i64, i64)) -> i64 {
    a.saturating_sub(lo).max(hi.saturating_sub(b)).max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const UTC: i64 = 1_780_000_000_000_000_000;
    const BOOT: i64 = 43 * S;

    /// A file of `host` whose events span 50 s from `first`, its UTC
    /// shift `shift`; ambiguous when `other` is given (its shift BOOT less).
    fn file(host: &str, first: i64, shift: i64, other: Option<Timebase>) -> Seen {
        Seen {
            host: Some((host.into(), 0)),
            readings: (Timebase::SessionRelative, other),
            span: Some((first, first + 50 * S)),
            shifts: (Some(shift), other.map(|_| shift - BOOT)),
            trusted: true,
            system_clock_ns: BOOT,
        }
    }

    fn boot() -> Option<Timebase> {
        Some(Timebase::BootClock)
    }

    #[test]
    fn the_reading_that_places_the_events_among_the_others_is_chosen() {
        // truly on the boot clock: the other hosts' events lie at UTC+1 s
        let mut job = vec![
            file("a", BOOT + S, UTC, boot()),
            file("b", S, UTC, None),
            file("c", 7 * S, UTC - 6 * S + 3_000_000, None),
        ];
        let c = choose(&job, 0, Timebase::BootClock);
        assert_eq!(
            (c.chosen, c.other),
            (Timebase::BootClock, Timebase::SessionRelative)
        );
        assert_eq!(c.compared_with, Compared::OtherHosts);
        assert!(c.decided);
        assert_eq!(
            (c.chosen_apart_ns, c.other_apart_ns),
            (Some(0), Some(BOOT - 3_000_000))
        );
        // truly from the session start
        job[0].shifts = (Some(UTC - BOOT), Some(UTC - 2 * BOOT));
        let c = choose(&job, 0, Timebase::BootClock);
        assert_eq!(c.chosen, Timebase::SessionRelative);
        assert!(c.decided);
        // a file of its own host whose timebase is certain decides first
        job.push(file("a", 2 * S, UTC - BOOT, None));
        let c = choose(&job, 0, Timebase::BootClock);
        assert_eq!(
            (c.chosen, c.compared_with),
            (Timebase::BootClock, Compared::HostFiles)
        );
    }

    #[test]
    fn without_a_file_to_compare_or_a_clear_difference_the_default_stays() {
        let alone = vec![file("a", BOOT + S, UTC, boot())];
        let c = choose(&alone, 0, Timebase::BootClock);
        assert_eq!((c.chosen, c.decided), (Timebase::SessionRelative, false));
        assert_eq!(c.compared_with, Compared::Nothing);
        // another ambiguous file, or one whose clock cannot be right, is
        // no measure
        let mut two = vec![file("a", BOOT + S, UTC, boot()), file("b", S, UTC, boot())];
        assert_eq!(
            choose(&two, 0, Timebase::BootClock).compared_with,
            Compared::Nothing
        );
        two[1].readings.1 = None;
        two[1].trusted = false;
        assert_eq!(
            choose(&two, 0, Timebase::BootClock).compared_with,
            Compared::Nothing
        );
        // the other hosts' capture covers both readings: undecided
        two[1].trusted = true;
        two[1].span = Some((-100 * S, 200 * S));
        let c = choose(&two, 0, Timebase::BootClock);
        assert_eq!((c.chosen, c.decided), (Timebase::SessionRelative, false));
        assert_eq!((c.chosen_apart_ns, c.other_apart_ns), (Some(0), Some(0)));
    }
}
