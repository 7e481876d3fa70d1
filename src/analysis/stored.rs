//! The analyses as the cache stores them: encoded with [`crate::binary`],
//! keyed by the settings that change them, and checked against the profile
//! when read back (a stored id that does not exist in the profile is an
//! error, never an index out of bounds later).

use super::pipeline::Analysis;
use super::pipeline::Stages;
use super::settings::Settings;
use crate::profile::Profile;
use crate::profile::cache::{AnalysesSlot, Stored};
use std::path::PathBuf;

/// Bump when an analysis result type, or what an analysis computes,
/// changes: stored analyses of another version are recomputed.
pub const FORMAT: u32 = 31;

/// The key of the analyses of `p` under `s`: every setting (derived from
/// the whole value, [`Settings::key`]), with what else of `p` the inputs'
/// identities do not cover (a `-wal` file beside an input, which warnings
/// mention). The window is not among them: only whole-capture analyses
/// are stored.
pub fn settings_key(s: &Settings, p: &Profile) -> String {
    let wal: Vec<String> = p.files.iter().map(|f| format!("{:?}", f.wal)).collect();
    format!(
        "rankline {} analyses {FORMAT}\n{}\nwal {wal:?}",
        env!("CARGO_PKG_VERSION"),
        s.key()
    )
}

/// The one policy for stored analyses, whoever asks (the timeline,
/// `report`, `diff`, `index`, `bench`):
/// - the whole-capture analyses of `p` are read from `slot` when stored
///   there and valid: the caller's own section is decoded by `read_view`
///   on another core meanwhile, and `from_stored` makes the caller's
///   result of both, saying whether to store them again (its section was
///   missing);
/// - otherwise `compute` runs the stages it is given: every stage when
///   there is a slot to store them in, else only the `wanted` ones;
/// - what `to_store` gives of the result is stored when it holds every
///   stage (a part is never stored).
///
/// A stale or damaged entry is told to `note` (one line naming it).
/// Returns the result and, when the analyses could not be stored, why
/// (caching is then off).
#[allow(clippy::too_many_arguments)]
pub fn read_or_compute<V: Send, R>(
    slot: Option<&AnalysesSlot>,
    p: &Profile,
    wanted: Stages,
    note: &mut dyn FnMut(String),
    read_view: impl FnOnce(&[u8]) -> V + Send,
    from_stored: impl FnOnce(Analysis, V) -> (R, bool),
    compute: impl FnOnce(Stages) -> R,
    to_store: impl FnOnce(&R) -> Result<(&Analysis, Vec<u8>), String>,
) -> (R, Option<String>) {
    let found = slot.and_then(|slot| read_then(slot, p, note, read_view));
    let (result, store) = match found {
        Some((a, view)) => from_stored(a, view),
        None if slot.is_some() => (compute(Stages::all()), true),
        None => (compute(wanted), false),
    };
    let Some(slot) = slot.filter(|_| store) else {
        return (result, None);
    };
    let written = to_store(&result).and_then(|(a, view)| {
        if a.holds == Stages::all() {
            write(slot, a, &view).map(|_| ())
        } else {
            Ok(())
        }
    });
    let failed = written.err().map(|why| format!("{why}; caching is off"));
    (result, failed)
}

/// The bytes of `a`.
pub fn encode(a: &Analysis) -> Result<Vec<u8>, String> {
    crate::binary::to_bytes(a).map_err(|e| e.to_string())
}

/// The analyses `bytes` hold, if they decode and fit `p`.
pub fn decode(bytes: &[u8], p: &Profile) -> Result<Analysis, String> {
    let mut a: Analysis = crate::binary::from_bytes(bytes).map_err(|e| e.to_string())?;
    fits(&a, p)?;
    a.matching.index_rows();
    Ok(a)
}

/// Why `a` cannot be the analyses of `p`, if it cannot.
fn fits(a: &Analysis, p: &Profile) -> Result<(), String> {
    let device = |d: u32| (d as usize) < p.devices.len();
    let lane = |l: u32| (l as usize) < p.lanes.len();
    let row = |r: usize| r < p.gpu.len();
    let check = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("stored {what} do not fit the profile"))
        }
    };
    let c = &a.completeness;
    check(
        c.devices.iter().all(|d| device(d.device))
            && [&c.expected, &c.with_kernels, &c.missing, &c.listed_unused]
                .iter()
                .all(|ds| ds.iter().all(|&d| device(d))),
        "completeness figures",
    )?;
    check(a.clock.file_count() == p.files.len(), "clock alignments")?;
    check(
        a.nccl
            .iter()
            .all(|d| device(d.device) && d.streams.iter().all(|s| lane(s.lane))),
        "NCCL figures",
    )?;
    check(a.sizes.fits(p), "message sizes")?;
    check(
        a.overlap.iter().all(|o| device(o.device)),
        "overlap figures",
    )?;
    check(a.steps.fits(p), "steps")?;
    let groups = &a.matching.groups;
    check(
        groups.iter().all(|g| g.fits(p)) && a.matching.unpaired.iter().all(|&l| lane(l)),
        "collective groups",
    )?;
    let instance = |g: usize, k: usize| groups.get(g).is_some_and(|gr| k < gr.instances());
    check(
        a.skews.iter().all(|s| {
            let Some(g) = groups.get(s.group) else {
                return false;
            };
            let n = g.devices.len();
            let inst = |i: &super::skew::InstanceSkew| {
                i.index < g.instances() && i.late < n.max(1) && i.early < n.max(1)
            };
            s.instances.iter().all(inst)
                && s.big_events.iter().all(|b| {
                    inst(&b.instance)
                        && b.late_host
                            .is_none_or(|h| (h.host as usize) < p.hosts.len())
                })
                && s.late_counts.len() == n
                && s.early_counts.len() == n
                && s.mean_lateness_ms_excluding_big.len() == n
        }),
        "skew figures",
    )?;
    let l = &a.launch;
    check(
        l.devices.iter().all(|d| device(d.device))
            && l.late.iter().all(|x| {
                instance(x.group, x.instance)
                    && device(x.device)
                    && row(x.row)
                    && x.api.is_none_or(|s| (s as usize) < p.strings.len())
                    && x.preceding
                        .as_ref()
                        .is_none_or(|pr| row(pr.row) && lane(pr.lane))
            }),
        "launch figures",
    )?;
    check(
        a.anomalies
            .iter()
            .all(|e| instance(e.group, e.instance) && e.devices.iter().all(|&d| device(d))),
        "anomalies",
    )?;
    Ok(())
}

/// The analyses stored in `slot` for `p`, with the entry's sections (the
/// UI keeps its own in section 1). A stale, truncated, corrupted or
/// inconsistent entry is told to `note` (one line naming it) and gives
/// `None`: the caller recomputes and stores again.
/// [`read`], handing the caller's own section (1: the timeline's render
/// index, empty when `report` stored the analyses alone) to `view` on
/// another core while the analyses decode: on a reopen of 10 M events the
/// two decodes take 0.2 and 0.15 s.
pub fn read_then<T: Send>(
    slot: &AnalysesSlot,
    p: &Profile,
    note: &mut dyn FnMut(String),
    view: impl FnOnce(&[u8]) -> T + Send,
) -> Option<(Analysis, T)> {
    let sections = match slot.lookup() {
        Stored::Missing => return None,
        Stored::Rejected(why) => {
            note(rejected(slot, &why));
            return None;
        }
        Stored::Hit(sections) => sections,
    };
    let (viewed, analysis) =
        crate::profile::parallel::beside(|| view(sections.get(1)), || decode(sections.get(0), p));
    match analysis {
        Ok(a) => Some((a, viewed)),
        Err(why) => {
            note(rejected(slot, &why));
            None
        }
    }
}

/// The stored analyses of the slot's inputs, if stored and valid; a
/// stale or damaged entry is reported through `note` and not used.
pub fn read(slot: &AnalysesSlot, p: &Profile, note: &mut dyn FnMut(String)) -> Option<Analysis> {
    read_then(slot, p, note, |_| ()).map(|(a, ())| a)
}

/// The line saying that the entry of `slot` was not used, and why.
pub fn rejected(slot: &AnalysesSlot, why: &str) -> String {
    format!(
        "{}: stored analyses rejected ({why}); recomputed",
        slot.path().display()
    )
}

/// Stores `a`, and the UI's `view` section (empty when there is none), in
/// `slot`: the entry written, `Ok(None)` when an input changed since it
/// was loaded, or why it could not be written (one line).
pub fn write(slot: &AnalysesSlot, a: &Analysis, view: &[u8]) -> Result<Option<PathBuf>, String> {
    slot.store(&[&encode(a)?, view])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::pipeline::analyze;

    fn fixture(name: &str) -> Profile {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(format!("{name}.sqlite"));
        let out = crate::profile::load(
            &crate::profile::files(&[path]),
            &crate::profile::LoadPlan::default(),
            &mut |_, _, _| {},
        );
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        out.profile
    }

    #[test]
    fn analyses_read_back_are_the_analyses_stored() {
        let p = fixture("megatron_tp8");
        let a = analyze(&p, &Settings::default(), &mut |_| {});
        let bytes = encode(&a).unwrap();
        let back = decode(&bytes, &p).unwrap();
        assert_eq!(encode(&back).unwrap(), bytes);
        // The row index is rebuilt, not stored.
        let g = &a.matching.groups[0];
        let row = g.row(1, 0).unwrap();
        assert_eq!(back.matching.instance_of(row), a.matching.instance_of(row));
        assert_eq!(back.matching.instance_of(row), Some((0, 1)));
    }

    #[test]
    fn analyses_of_another_profile_or_forged_bytes_are_refused() {
        let big = fixture("megatron_tp8");
        let small = fixture("shared_stream_two_comms");
        let a = analyze(&big, &Settings::default(), &mut |_| {});
        let err = decode(&encode(&a).unwrap(), &small).unwrap_err();
        assert!(err.contains("do not fit the profile"), "{err}");
        assert!(decode(b"not analyses", &big).is_err());
        assert!(decode(&[], &big).is_err());
    }

    #[test]
    fn the_key_holds_every_setting_and_the_files_wal() {
        let p = fixture("shared_stream_two_comms");
        let s = Settings::default();
        let key = settings_key(&s, &p);
        assert!(key.contains(&s.key()), "{key}");
        assert!(key.contains("wal [\"None\"]"), "{key}");
    }
}
