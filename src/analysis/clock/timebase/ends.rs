//! The collective ends as the second judge of an ambiguous timebase, when
//! the UTC stamps could not tell (the other hosts' captures cover both
//! readings): the ends place each host's clock on the reference's whatever
//! the stamps say, and the right reading's stamp puts it there within its
//! milliseconds, the wrong one's `systemClockNs` away.

use super::super::{AlignMode, Alignment, Apart, ClockMethod, from_utc_read, median};
use super::{AmbiguousTimebase, Compared, decisive};
use crate::profile::Profile;
use std::collections::BTreeMap;

/// What the ends decided: per file, its timebase as read.
#[derive(Debug, Default)]
pub struct Decided {
    pub read: BTreeMap<usize, AmbiguousTimebase>,
    /// Some file is to be read the other way than the stamps' default: the
    /// clocks are to be aligned again.
    pub flips: bool,
}

/// The ambiguous files `utc` left undecided, each the first file of its
/// clock domain, on which the ends of `aligned` (fitted from `utc`)
/// decide. Files of a domain but its first share its clock exactly (or
/// by its UTC clock): the ends do not place them apart.
pub fn decided(
    p: &Profile,
    apart: &BTreeMap<usize, Apart>,
    utc: &Alignment,
    aligned: &Alignment,
) -> Decided {
    let mut out = Decided::default();
    for (i, c) in utc.files.iter().enumerate() {
        let Some(t) = c.ambiguous_timebase.filter(|t| !t.decided && c.domain == i) else {
            continue;
        };
        // The reference's reading moves every other domain's UTC shift;
        // another domain's, its own.
        let fitted: Vec<usize> = (1..aligned.files.len())
            .filter(|&d| {
                let f = &aligned.files[d];
                f.domain == d
                    && f.method == ClockMethod::CollectiveEnds
                    && !f.isolated
                    && (i == 0 || d == i)
            })
            .collect();
        if fitted.is_empty() {
            continue;
        }
        let flipped = AmbiguousTimebase {
            chosen: t.other,
            other: t.chosen,
            compared_with: Compared::Ends,
            decided: true,
            ..t
        };
        let other = from_utc_read(p, AlignMode::Ends, apart, &BTreeMap::from([(i, flipped)]));
        // how far a UTC alignment's shifts lie from where the ends place
        // the clocks (at each domain's first event)
        let off = |a: &Alignment| {
            let d = fitted.iter().map(|&d| {
                (aligned.files[d].offset_ns - a.files.get(d).map_or(0.0, |c| c.offset_ns)).abs()
            });
            median(d.collect()).round() as i64
        };
        let (kept, flip) = (off(utc), off(&other));
        let (chosen_apart_ns, other_apart_ns) = (Some(flip), Some(kept));
        if decisive(flip, kept) {
            out.flips = true;
            out.read.insert(
                i,
                AmbiguousTimebase {
                    chosen_apart_ns,
                    other_apart_ns,
                    ..flipped
                },
            );
        } else if decisive(kept, flip) {
            out.read.insert(
                i,
                AmbiguousTimebase {
                    compared_with: Compared::Ends,
                    decided: true,
                    chosen_apart_ns: Some(kept),
                    other_apart_ns: Some(flip),
                    ..t
                },
            );
        }
    }
    out
}

/// Records on `a` the readings the ends confirmed (none flipped: its
/// clocks stand).
pub fn record(a: &mut Alignment, d: &Decided) {
    for (&i, &t) in &d.read {
        if let Some(c) = a.files.get_mut(i) {
            c.ambiguous_timebase = Some(t);
        }
    }
}
