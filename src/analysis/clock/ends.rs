//! Step 3 of the clock ladder, after matching: the alignment refined from the
//! ends of matched collectives, and the residuals of any alignment over them.
//! It reads a matching's rows only ([`MatchedRows`]): the matching is
//! itself made on an [`Alignment`], and the clock never depends on how.

use super::fit::{LineFit, median, outlier_limit, robust_line};
use super::joint;
use super::vote;
use super::{
    Alignment, ClockMethod, DRIFT_MIN_INSTANCES, DRIFT_MIN_SPAN_NS, KEEP_FLOOR_NS, MAX_DRIFT_PPM,
    MAX_END_MAD_NS, MIN_INSTANCES, MatchedRows,
};
use crate::analysis::stats::{Spread, percentile_select};
use crate::profile::Profile;

/// A matched instance seen across domains: its GPU rows, each with its
/// file (found once: every fit reads them per domain).
struct Inst {
    /// Its place in [`instances`].
    index: usize,
    /// The GPU rows of the ranks that have it.
    raw: Vec<u32>,
    /// (file, GPU row) of each rank.
    rows: Vec<(usize, usize)>,
}

fn instances(p: &Profile, m: &MatchedRows) -> Vec<Inst> {
    m.0.iter()
        .cloned()
        .enumerate()
        .map(|(index, raw): (usize, Vec<u32>)| Inst {
            index,
            rows: raw
                .iter()
                .map(|&r| (p.gpu.file(r as usize), r as usize))
                .collect(),
            raw,
        })
        .collect()
}

/// Step 3 of the ladder: refines every non-reference domain of `utc` from
/// the ends of the collectives in `m` (matched on `utc`), then records the
/// residuals. Without a cross-domain instance, `utc` stays (with a warning).
pub fn refine_from_ends(p: &Profile, utc: &Alignment, m: &MatchedRows) -> Alignment {
    let mut a = utc.clone();
    let insts = instances(p, m);
    let cross: Vec<&Inst> = insts
        .iter()
        .filter(|i| a.spans_domains(p, &i.raw))
        .collect();
    if !a.several_domains() {
        return with_residuals(p, a, m);
    }
    if cross.is_empty() {
        a.warn("--align ends: no collective spans two clock domains, so clocks stay on UTC".into());
        for c in a
            .files
            .iter_mut()
            .filter(|c| c.domain != 0 && c.refused.is_none())
        {
            c.refused = Some("no collective spans two clock domains".into());
        }
        return with_residuals(p, a, m);
    }
    let domains: Vec<usize> = {
        let mut d: Vec<usize> = a.files.iter().map(|c| c.domain).collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    // Instances whose ends a domain's accepted fit rejected: not one
    // collective across nodes (or a rank leaving late), so no residual.
    let mut rejected = vec![false; insts.len()];
    // Hosts are fitted over the graph of communicators that connect them:
    // each round takes the unaligned domain sharing the most instances
    // with the domains already aligned (the reference first) and fits it
    // against all of them, so a host that shares nothing with the
    // reference is reached through the hosts it shares with.
    let mut aligned = vec![false; a.files.len()];
    aligned[0] = true;
    // How many domains were aligned when a domain was last refused: it is
    // tried again only once more are.
    let mut tried: Vec<Option<usize>> = vec![None; a.files.len()];
    let mut results: Vec<Option<Result<(), Refusal>>> = (0..a.files.len()).map(|_| None).collect();
    let pending = |a: &Alignment, dom: usize| {
        dom != 0 && !a.files.iter().any(|c| c.domain == dom && c.isolated)
    };
    loop {
        let count = aligned.iter().filter(|&&x| x).count();
        let next = domains
            .iter()
            .copied()
            .filter(|&d| pending(&a, d) && !aligned[d] && tried[d] != Some(count))
            .map(|d| (shared_with(&a, &cross, d, &aligned), d))
            .filter(|&(n, _)| n > 0)
            .max_by_key(|&(n, d)| (n, std::cmp::Reverse(d)));
        let Some((_, dom)) = next else { break };
        let result = fit_domain(p, &a, &cross, dom, &aligned);
        if let Err(Refusal {
            why, isolate: true, ..
        }) = &result
        {
            a.isolate(dom, why);
            continue;
        }
        let via = via_domain(&a, &cross, dom, &aligned);
        match result {
            Ok(fit) => {
                for &k in &fit.rejected {
                    rejected[k] = true;
                }
                set_line(&mut a, dom, &fit.line, fit.t0);
                for c in a.files.iter_mut().filter(|c| c.domain == dom) {
                    c.method = ClockMethod::CollectiveEnds;
                    c.drift_fitted = fit.line.slope != 0.0;
                    c.instances_used = fit.line.kept;
                    c.voted = fit.voted;
                    c.fitted_via = via;
                    c.refused = None;
                    c.disagreement_ms = None;
                }
                aligned[dom] = true;
                results[dom] = Some(Ok(()));
            }
            Err(r) => {
                tried[dom] = Some(count);
                results[dom] = Some(Err(r));
            }
        }
    }
    refine_jointly(p, &mut a, &cross, &aligned, &rejected);
    let never: Vec<usize> = domains
        .iter()
        .copied()
        .filter(|&d| pending(&a, d) && !aligned[d])
        .collect();
    for dom in never {
        let (why, disagreement_ms) = match results[dom].take() {
            Some(Err(r)) => (r.why, r.disagreement_ms),
            _ => (unreachable_why(p, &a, &cross, dom, &aligned), None),
        };
        for c in a.files.iter_mut().filter(|c| c.domain == dom) {
            c.refused = Some(why.clone());
            c.disagreement_ms = disagreement_ms;
        }
    }
    a.method = if a
        .files
        .iter()
        .all(|c| c.domain == 0 || c.isolated || c.method == ClockMethod::CollectiveEnds)
    {
        ClockMethod::CollectiveEnds
    } else {
        ClockMethod::Utc
    };
    residuals_over(p, a, m, &|k| !rejected[k])
}

/// Sets domain `dom`'s files to `line`, fitted in the domain's clock from
/// `t0`: each file counts drift from its own t0.
fn set_line(a: &mut Alignment, dom: usize, line: &LineFit, t0: i64) {
    for c in a.files.iter_mut().filter(|c| c.domain == dom) {
        let host = c.host_shift_ns;
        c.drift_ppm = line.slope * 1e6;
        c.offset_ns =
            host as f64 + line.offset + line.slope * (c.t0.saturating_add(host) - t0) as f64;
    }
}

/// The domain's first timestamp on its own clock: where its line's drift
/// counts from.
fn domain_t0(a: &Alignment, dom: usize) -> i64 {
    a.files
        .iter()
        .enumerate()
        .filter(|(_, c)| c.domain == dom)
        .map(|(f, c)| a.on_domain_clock(f, c.t0))
        .min()
        .unwrap_or(0)
}

/// After the one-by-one fits, every fitted host's line is corrected by
/// the fit of all hosts at once ([`joint`]) over the instances those fits
/// kept. A host whose drift was not fitted keeps none; a solve that would
/// give a drift no clock has leaves every host as it was.
fn refine_jointly(
    p: &Profile,
    a: &mut Alignment,
    cross: &[&Inst],
    aligned: &[bool],
    rejected: &[bool],
) {
    let fitted: Vec<usize> = (1..a.files.len())
        .filter(|&d| aligned[d] && a.files[d].domain == d && !a.files[d].isolated)
        .collect();
    if fitted.len() < 2 {
        return;
    }
    let t0: Vec<i64> = (0..a.files.len()).map(|d| domain_t0(a, d)).collect();
    let instances: Vec<Vec<joint::HostEnd>> = cross
        .iter()
        .filter(|i| !rejected[i.index])
        .map(|inst| {
            let mut domains: Vec<usize> = inst
                .rows
                .iter()
                .map(|&(f, _)| a.domain(f))
                .filter(|&d| aligned[d])
                .collect();
            domains.sort_unstable();
            domains.dedup();
            domains
                .into_iter()
                .filter_map(|d| {
                    let mine = |f: usize| a.domain(f) == d && !a.isolated(f);
                    let end = median_of(&inst.rows, mine, |f, r| a.to_reference(f, p.gpu.end(r)))?;
                    let raw =
                        median_of(&inst.rows, mine, |f, r| a.on_domain_clock(f, p.gpu.end(r)))?;
                    Some(joint::HostEnd {
                        domain: d,
                        since_s: (raw - t0[d] as f64) / 1e9,
                        end_ns: end,
                    })
                })
                .collect()
        })
        .collect();
    let unknowns = joint::Unknowns::new(
        a.files.len(),
        fitted.iter().map(|&d| (d, a.files[d].drift_fitted)),
    );
    let Some(corrections) = joint::solve(&unknowns, &instances, KEEP_FLOOR_NS) else {
        return;
    };
    let lines: Vec<(usize, LineFit)> = fitted
        .iter()
        .map(|&d| {
            let c = &a.files[d];
            let slope = c.drift_ppm * 1e-6 + corrections[d].ns_per_s / 1e9;
            let at_t0 = c.offset_ns + c.drift_ppm * 1e-6 * (t0[d] - c.t0) as f64;
            let line = LineFit {
                offset: at_t0 + corrections[d].offset_ns,
                slope,
                kept: c.instances_used,
                mad_all: 0.0,
            };
            (d, line)
        })
        .collect();
    if lines
        .iter()
        .any(|(_, l)| l.slope.abs() * 1e6 > MAX_DRIFT_PPM)
    {
        return;
    }
    for (d, line) in lines {
        set_line(a, d, &line, t0[d]);
    }
}

/// Instances with ranks both in domain `dom` and in an aligned domain.
fn shared_with(a: &Alignment, cross: &[&Inst], dom: usize, aligned: &[bool]) -> usize {
    cross
        .iter()
        .filter(|i| {
            i.rows.iter().any(|&(f, _)| a.domain(f) == dom)
                && i.rows
                    .iter()
                    .any(|&(f, _)| aligned[a.domain(f)] && a.domain(f) != dom)
        })
        .count()
}

/// The aligned domain sharing the most instances with `dom`: the host
/// its clock was reached through.
fn via_domain(a: &Alignment, cross: &[&Inst], dom: usize, aligned: &[bool]) -> Option<usize> {
    let mut n: std::collections::BTreeMap<usize, usize> = Default::default();
    for i in cross {
        if !i.rows.iter().any(|&(f, _)| a.domain(f) == dom) {
            continue;
        }
        let mut ds: Vec<usize> = i
            .rows
            .iter()
            .map(|&(f, _)| a.domain(f))
            .filter(|&d| d != dom && aligned[d])
            .collect();
        ds.sort_unstable();
        ds.dedup();
        for d in ds {
            *n.entry(d).or_default() += 1;
        }
    }
    n.into_iter()
        .max_by_key(|&(d, k)| (k, std::cmp::Reverse(d)))
        .map(|(d, _)| d)
}

/// Why a domain that was never fitted could not be connected to the
/// aligned hosts.
fn unreachable_why(
    p: &Profile,
    a: &Alignment,
    cross: &[&Inst],
    dom: usize,
    aligned: &[bool],
) -> String {
    let mut others: Vec<usize> = cross
        .iter()
        .filter(|i| i.rows.iter().any(|&(f, _)| a.domain(f) == dom))
        .flat_map(|i| i.rows.iter().map(|&(f, _)| a.domain(f)))
        .filter(|&d| d != dom && !aligned[d])
        .collect();
    others.sort_unstable();
    others.dedup();
    if others.is_empty() {
        return "no collective links it to another host".into();
    }
    let names: Vec<String> = others
        .iter()
        .map(|&d| {
            p.files
                .get(d)
                .map_or_else(|| format!("file {d}"), |f| f.name())
        })
        .collect();
    format!(
        "its collectives link it only to hosts whose clocks could not be aligned ({})",
        names.join(", ")
    )
}

/// The median of the values of `rows` (file, row) whose file passes
/// `keep`.
fn median_of(
    rows: &[(usize, usize)],
    keep: impl Fn(usize) -> bool,
    value: impl Fn(usize, usize) -> i64,
) -> Option<f64> {
    let v: Vec<f64> = rows
        .iter()
        .filter(|&&(f, _)| keep(f))
        .map(|&(f, r)| value(f, r) as f64)
        .collect();
    (!v.is_empty()).then(|| median(v))
}

/// An accepted fit of a domain: its line (in the domain's raw time from
/// `t0`) and the instances (by index) whose ends it rejected.
struct DomainFit {
    line: LineFit,
    t0: i64,
    rejected: Vec<usize>,
    /// When the instances disagreed and the communicators decided.
    voted: Option<vote::Voted>,
}

/// Why a domain's ends were not used.
struct Refusal {
    why: String,
    /// How far (ms, p90) its ends stray from the best fit, when that is
    /// why.
    disagreement_ms: Option<f64>,
    /// The fit says its clock data cannot be right: left out of cross-file
    /// figures, not kept on UTC.
    isolate: bool,
}

impl Refusal {
    fn kept_on_utc(why: String, disagreement_ms: Option<f64>) -> Self {
        Refusal {
            why,
            disagreement_ms,
            isolate: false,
        }
    }
}

/// Fits domain `dom` against the reference domain: the offset (and drift)
/// mapping its raw ends onto the reference's; `Err` says why not.
fn fit_domain(
    p: &Profile,
    a: &Alignment,
    cross: &[&Inst],
    dom: usize,
    aligned: &[bool],
) -> Result<DomainFit, Refusal> {
    let is_aligned = |f: usize| aligned[a.domain(f)];
    let t0 = domain_t0(a, dom);
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut used = Vec::new();
    for inst in cross {
        let mine = median_of(
            &inst.rows,
            |f| a.domain(f) == dom,
            |f, r| a.on_domain_clock(f, p.gpu.end(r)),
        );
        let reference = median_of(&inst.rows, is_aligned, |f, r| {
            a.to_reference(f, p.gpu.end(r))
        });
        if let (Some(x), Some(y)) = (mine, reference) {
            xs.push(x - t0 as f64);
            ys.push(y - x);
            used.push(inst);
        }
    }
    if xs.len() < MIN_INSTANCES {
        let count = format!(
            "only {} collective(s) shared with the hosts aligned (needs {MIN_INSTANCES})",
            xs.len()
        );
        // The few there are may already disagree: that decides, with its
        // figure; the count rule is said beside it.
        return Err(match few_disagree(&xs, &ys) {
            Some((apart_ms, why)) => {
                Refusal::kept_on_utc(format!("{why}; {count}"), Some(apart_ms))
            }
            None => Refusal::kept_on_utc(count, None),
        });
    }
    let span =
        xs.iter().copied().fold(f64::MIN, f64::max) - xs.iter().copied().fold(f64::MAX, f64::min);
    let fit_drift = span >= DRIFT_MIN_SPAN_NS && xs.len() >= DRIFT_MIN_INSTANCES;
    let mut f = robust_line(&xs, &ys, fit_drift, KEEP_FLOOR_NS)
        .ok_or_else(|| Refusal::kept_on_utc("no fit".into(), None))?;
    let holds = |f: &LineFit| f.mad_all <= MAX_END_MAD_NS && f.kept >= MIN_INSTANCES;
    let mut voted = None;
    if !holds(&f)
        && let Some((agreed, v)) = by_communicators(p, a, &used, dom, &xs, &ys, fit_drift)
        && holds(&agreed)
    {
        f = agreed;
        voted = Some(v);
    }
    let ppm = f.slope * 1e6;
    if ppm.abs() > MAX_DRIFT_PPM {
        return Err(Refusal {
            why: format!(
                "its timestamps run {:+.0} ppm against the aligned hosts' over {} collectives (real clocks drift by tens; the bound is ±{MAX_DRIFT_PPM:.0})",
                rate_ppm(f.slope),
                xs.len()
            ),
            disagreement_ms: None,
            // Only a line the ends hold to says the clock runs at another
            // pace; ends that wander (pairings the clocks do not confirm
            // yet) say nothing about the file: kept on UTC, tried again.
            isolate: f.mad_all <= MAX_END_MAD_NS && f.kept >= DRIFT_MIN_INSTANCES,
        });
    }
    if !holds(&f) {
        let mut off: Vec<f64> = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| (y - f.offset - f.slope * x).abs())
            .collect();
        let p90 = percentile_select(&mut off, 90.0);
        return Err(Refusal::kept_on_utc(
            format!(
                "ends disagree by {:.1} ms (p90 over {} instances, {} agreeing; needs {MIN_INSTANCES} agreeing and a median deviation ≤ {} ms)",
                p90 / 1e6,
                xs.len(),
                f.kept,
                MAX_END_MAD_NS / 1e6
            ),
            Some(p90 / 1e6),
        ));
    }
    let tolerance = outlier_limit(f.mad_all, KEEP_FLOOR_NS);
    f.offset += arrival_bias(p, a, &used, &xs, &ys, &f, tolerance, dom, aligned);
    // Never an impossible order: no rank may end an instance before the
    // last rank started it (beyond the fit's own noise).
    let map = |file: usize, t: i64| -> f64 {
        if a.domain(file) == dom {
            let t = a.on_domain_clock(file, t);
            let x = (t - t0) as f64;
            t as f64 + f.offset + f.slope * x
        } else {
            a.to_reference(file, t) as f64
        }
    };
    let out_of_order = |inst: &Inst, keep: &dyn Fn(usize) -> bool| {
        let rows = inst.rows.iter().copied().filter(|&(f, _)| keep(f));
        let last_start = rows
            .clone()
            .map(|(f, r)| map(f, p.gpu.start(r)))
            .fold(f64::MIN, f64::max);
        let first_end = rows
            .map(|(f, r)| map(f, p.gpu.end(r)))
            .fold(f64::MAX, f64::min);
        first_end < last_start - tolerance
    };
    // An instance already in that order on one clock is not one collective
    // (e.g. two communicators on one stream id): the fit did not cause it;
    // nor is one whose ends the fit rejected (e.g. node-local all-reduces
    // paired across nodes by a shared stream id). Only the two domains
    // compared count: the others are still on UTC.
    let agrees = |i: usize| (ys[i] - f.offset - f.slope * xs[i]).abs() <= tolerance;
    let impossible = used
        .iter()
        .enumerate()
        .filter(|&(i, _)| agrees(i))
        .map(|(_, inst)| inst)
        .filter(|inst| {
            !out_of_order(inst, &|f| a.domain(f) == dom)
                && !out_of_order(inst, &is_aligned)
                && out_of_order(inst, &|f| a.domain(f) == dom || is_aligned(f))
        })
        .count();
    if impossible > 0 {
        return Err(Refusal::kept_on_utc(
            format!(
                "aligning ends would put a rank's end before the last rank's start in {impossible} instance(s)"
            ),
            None,
        ));
    }
    let rejected = (0..used.len())
        .filter(|&i| !agrees(i))
        .map(|i| used[i].index)
        .collect();
    Ok(DomainFit {
        line: f,
        t0,
        rejected,
        voted,
    })
}

/// The line through the instances of the offset most communicators give
/// ([`vote`]), each communicator named by the domain's streams in it.
fn by_communicators(
    p: &Profile,
    a: &Alignment,
    used: &[&&Inst],
    dom: usize,
    xs: &[f64],
    ys: &[f64],
    fit_drift: bool,
) -> Option<(LineFit, vote::Voted)> {
    let mut ids: std::collections::HashMap<Vec<u32>, usize> = Default::default();
    let keys: Vec<usize> = used
        .iter()
        .map(|inst| {
            let mut lanes: Vec<u32> = inst
                .rows
                .iter()
                .filter(|&&(f, _)| a.domain(f) == dom)
                .map(|&(_, r)| p.gpu.lane(r))
                .collect();
            lanes.sort_unstable();
            lanes.dedup();
            let next = ids.len();
            *ids.entry(lanes).or_insert(next)
        })
        .collect();
    let agreed = vote::agreed(&keys, ys, 2.0 * MAX_END_MAD_NS)?;
    let pick = |v: &[f64]| agreed.points.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    let mut f = robust_line(&pick(xs), &pick(ys), fit_drift, KEEP_FLOOR_NS)?;
    // Every instance is judged by the agreed line: those off it are the
    // misplaced communicators', rejected below like any outlier.
    f.mad_all = median(
        agreed
            .points
            .iter()
            .map(|&i| (ys[i] - f.offset - f.slope * xs[i]).abs())
            .collect(),
    );
    Some((f, agreed.communicators))
}

/// How fast a clock runs (ppm) whose correction has slope `slope`: its
/// timestamps advance 1/(1 + slope) per reference unit.
pub fn rate_ppm(slope: f64) -> f64 {
    (1.0 / (1.0 + slope) - 1.0) * 1e6
}

/// When the offsets implied by a few shared collectives lie further apart
/// than any accepted fit allows: how far (ms), and the sentence.
fn few_disagree(xs: &[f64], ys: &[f64]) -> Option<(f64, String)> {
    if xs.len() < 2 {
        return None;
    }
    let (lo, hi) = ys
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &y| (a.min(y), b.max(y)));
    let apart = hi - lo;
    if apart <= 2.0 * MAX_END_MAD_NS {
        return None;
    }
    let (x0, x1) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let over = x1 - x0;
    let ppm = if over > 0.0 {
        format!(
            " (≈ {:.0} ppm over {:.1} s)",
            apart / over * 1e6,
            over / 1e9
        )
    } else {
        String::new()
    };
    Some((
        apart / 1e6,
        format!(
            "the {} shared collectives imply offsets {:.1} ms apart{ppm}: their ends disagree",
            xs.len(),
            apart / 1e6
        ),
    ))
}

/// Fewest instances in each arrival direction for [`arrival_bias`] to act.
const BALANCE_MIN: usize = 3;

/// How far the fitted offset leans toward the more frequent arrival order.
///
/// Ends do not line up exactly: the rank that arrives last at a collective
/// finishes its kernel a few µs apart from the ranks that waited for it, by
/// an amount that depends on who waited (measured on a real 2-GPU SendRecv
/// capture: rank 1's kernels end 22 µs before rank 0's when rank 1 arrives
/// last, 5 µs when rank 0 does). When one side arrives last in most
/// instances, the median of the ends carries that side's bias. The midpoint
/// of the two directions' median residuals cancels the part that flips
/// with the order; without instances both ways nothing is corrected.
#[allow(clippy::too_many_arguments)]
fn arrival_bias(
    p: &Profile,
    a: &Alignment,
    used: &[&&Inst],
    xs: &[f64],
    ys: &[f64],
    f: &LineFit,
    tolerance: f64,
    dom: usize,
    aligned: &[bool],
) -> f64 {
    let (mut mine_last, mut reference_last) = (Vec::new(), Vec::new());
    for (i, inst) in used.iter().enumerate() {
        let residual = ys[i] - f.offset - f.slope * xs[i];
        if residual.abs() > tolerance {
            continue;
        }
        let mine = median_of(
            &inst.rows,
            |f| a.domain(f) == dom,
            |f, r| a.on_domain_clock(f, p.gpu.start(r)),
        );
        let reference = median_of(
            &inst.rows,
            |f| aligned[a.domain(f)],
            |f, r| a.to_reference(f, p.gpu.start(r)),
        );
        if let (Some(mine), Some(reference)) = (mine, reference) {
            let mine = mine + f.offset + f.slope * xs[i];
            if mine > reference {
                mine_last.push(residual);
            } else {
                reference_last.push(residual);
            }
        }
    }
    if mine_last.len() < BALANCE_MIN || reference_last.len() < BALANCE_MIN {
        return 0.0;
    }
    (median(mine_last) + median(reference_last)) / 2.0
}

/// Adds each file's residual and host agreement ([`residuals_over`]).
pub fn with_residuals(p: &Profile, a: Alignment, m: &MatchedRows) -> Alignment {
    residuals_over(p, a, m, &|_| true)
}

/// Over the instances (numbered as by [`instances`]) that pass `used`,
/// each file's residual: |median aligned end of its domain's ranks −
/// median aligned end of the other domains' ranks| (the collective's own
/// end spread plus the clock error between hosts; compared with the whole
/// instance, a host's own ranks would pull the median toward it and hide
/// half the error of two hosts); and within a domain of several files,
/// how far each file's ranks end from its other files' ranks.
fn residuals_over(
    p: &Profile,
    mut a: Alignment,
    m: &MatchedRows,
    used: &dyn Fn(usize) -> bool,
) -> Alignment {
    let mut across: Vec<Vec<f64>> = vec![Vec::new(); a.files.len()];
    let mut within: Vec<Vec<f64>> = vec![Vec::new(); a.files.len()];
    let end = |f: usize, r: usize| a.to_reference(f, p.gpu.end(r));
    let insts = instances(p, m);
    // Instances each file shares with another host: its own count, while
    // the residual is its host's.
    let mut counts = vec![0; a.files.len()];
    for inst in insts.iter().filter(|i| used(i.index)) {
        // A file left out of cross-file figures is in no residual.
        let rows: Vec<(usize, usize)> = inst
            .rows
            .iter()
            .copied()
            .filter(|&(f, _)| !a.isolated(f))
            .collect();
        let inst = Inst {
            index: inst.index,
            raw: Vec::new(),
            rows,
        };
        let mut files: Vec<usize> = inst.rows.iter().map(|&(f, _)| f).collect();
        files.sort_unstable();
        files.dedup();
        let mut domains: Vec<usize> = files.iter().map(|&f| a.domain(f)).collect();
        domains.sort_unstable();
        domains.dedup();
        if domains.len() > 1 {
            for &f in &files {
                counts[f] += 1;
            }
        }
        for &d in &domains {
            let mine = || files.iter().copied().filter(|&f| a.domain(f) == d);
            let Some(host) = median_of(&inst.rows, |f| a.domain(f) == d, end) else {
                continue;
            };
            // One residual per host: every file of a domain states its
            // domain's, pooled over the instances any of them shares.
            if domains.len() > 1
                && let Some(others) = median_of(&inst.rows, |f| a.domain(f) != d, end)
            {
                across[d].push((host - others).abs() / 1e6);
            }
            if mine().nth(1).is_some() {
                for f in mine() {
                    let own = median_of(&inst.rows, |x| x == f, end);
                    let rest = median_of(&inst.rows, |x| x != f && a.domain(x) == d, end);
                    if let (Some(own), Some(rest)) = (own, rest) {
                        within[f].push((own - rest).abs() / 1e6);
                    }
                }
            }
        }
    }
    let several = a.several_domains();
    let across: Vec<Option<Spread>> = across.into_iter().map(Spread::of).collect();
    for ((c, within), shared) in a.files.iter_mut().zip(within).zip(counts) {
        if c.method != ClockMethod::CollectiveEnds {
            c.instances_used = if several { shared } else { within.len() };
        }
        c.residual_ms = across[c.domain];
        c.host_agreement_ms = Spread::of(within);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_shared_collectives_that_disagree_say_so_with_their_figure() {
        // two collectives 2 s apart implying offsets 6.1 ms apart
        let xs = [0.0, 2e9];
        let ys = [1e6, 7.1e6];
        let (ms, why) = few_disagree(&xs, &ys).expect("they disagree");
        assert!((ms - 6.1).abs() < 1e-9);
        assert_eq!(
            why,
            "the 2 shared collectives imply offsets 6.1 ms apart (≈ 3050 ppm over 2.0 s): their ends disagree"
        );
        // within what a fit accepts: only the count rule is said
        assert!(few_disagree(&xs, &[1e6, 1.3e6]).is_none());
        assert!(few_disagree(&xs[..1], &ys[..1]).is_none());
    }
}
