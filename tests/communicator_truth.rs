//! Communicators as the job made them, against the generator's truth
//! (`fixtures/jobs/`: 3D TP×PP×DP with each stream policy, a four-stage
//! pipeline with one PP communicator, MoE expert groups on one stream id,
//! CUDA graphs; each with and without NCCL payloads). Every truth
//! instance — a collective call, or one exchange of a stage pair — must be
//! one rankline instance with exactly its kernels, its op, its start skew
//! to the ns and its late rank; or, where the truth says its siblings
//! never parted from it and no payload names them, lie in a group flagged
//! `lockstep_ambiguous` that says so. No big event may be false.

mod common;
use common::root;
use rankline::analysis::Analysis;
use rankline::analysis::caveats::{Caveat, group_caveats};
use rankline::profile::{LoadPlan, Profile};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

struct Job {
    truth: Value,
    p: Profile,
    a: Analysis,
}

fn job(name: &str) -> Job {
    let dir = root().join("fixtures/jobs");
    let text = std::fs::read_to_string(dir.join(format!("{name}.truth.json"))).unwrap();
    let out = rankline::profile::load(
        &rankline::profile::files(&[dir.join(format!("{name}.sqlite"))]),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{name}: {:?}", out.errors);
    let a = rankline::analysis::pipeline::analyze(&out.profile, &Default::default(), &mut |_| {});
    Job {
        truth: serde_json::from_str(&text).unwrap(),
        p: out.profile,
        a,
    }
}

/// What became of the truth's instances.
#[derive(Debug, Default)]
struct Outcome {
    /// One instance with exactly its kernels, op, skew and late rank (its
    /// group may still be flagged: four members that never all waited on
    /// one late rank fit several communicators in lockstep as well).
    exact: usize,
    /// Not exact, in a group flagged lockstep-ambiguous, where the truth
    /// says the instance's group has siblings that never parted.
    ambiguous_as_truth_says: usize,
    /// Not exact, in a flagged group, although the truth's siblings did
    /// part (the capture parted them in another op only).
    ambiguous_other: usize,
    wrong: Vec<String>,
}

/// GPU row of the kernel on `device` (CUDA id), `stream`, starting `start`.
fn rows_by_kernel(p: &Profile) -> HashMap<(u32, u32, i64), usize> {
    let mut out = HashMap::new();
    for lane in &p.lanes {
        let device = p.devices[lane.device as usize].id;
        for r in lane.rows.clone() {
            out.insert((device, lane.stream, p.gpu.start(r)), r);
        }
    }
    out
}

fn check(j: &Job) -> Outcome {
    let (p, m) = (&j.p, &j.a.matching);
    let rows = rows_by_kernel(p);
    let siblings = common::instances::has_siblings(&j.truth);
    let skew_of = common::instances::skews_by_instance(&j.a);
    let mut out = Outcome::default();
    for ti in j.truth["instances"].as_array().unwrap() {
        let name = format!("{}#{}", ti["group"].as_str().unwrap(), ti["index"]);
        let members: Vec<usize> = ti["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|mb| {
                let key = (
                    mb["device"].as_u64().unwrap() as u32,
                    mb["stream"].as_u64().unwrap() as u32,
                    mb["start"].as_i64().unwrap(),
                );
                *rows
                    .get(&key)
                    .unwrap_or_else(|| panic!("{name}: no kernel {key:?}"))
            })
            .collect();
        let (place, got) = match common::instances::one_instance(m, &members) {
            Ok(x) => x,
            Err(why) => {
                out.wrong.push(format!("{name}: {why}"));
                continue;
            }
        };
        let g = &m.groups[place.0];
        let mut want = members.clone();
        want.sort_unstable();
        let late_device = ti["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|mb| mb["rank"] == ti["late_rank"])
            .unwrap()["device"]
            .as_u64()
            .unwrap() as u32;
        let skew = skew_of.get(&place);
        let ok = got == want
            && g.ops[place.1].name() == ti["op"].as_str().unwrap()
            && skew.is_some_and(|s| {
                s.start_skew_ns == ti["start_skew_ns"].as_i64().unwrap()
                    && (s.start_skew_ns == 0
                        || p.devices[g.devices[s.late] as usize].id == late_device)
            });
        if ok {
            out.exact += 1;
        } else if g.lockstep_ambiguous {
            if siblings[ti["group"].as_str().unwrap()] {
                out.ambiguous_as_truth_says += 1;
            } else {
                out.ambiguous_other += 1;
            }
        } else {
            out.wrong.push(format!(
                "{name}: group {} instance {} (members {got:?} vs {want:?}, skew {:?} vs {})",
                g.key,
                place.1 + 1,
                skew.map(|s| s.start_skew_ns),
                ti["start_skew_ns"]
            ));
        }
    }
    out
}

/// Big events that hold no kernel of a truth instance whose start skew is
/// over the threshold (20 ms, less 1 ms for the merged groups' jitter).
fn false_big_events(j: &Job) -> Vec<String> {
    let rows = rows_by_kernel(&j.p);
    let mut big_rows: HashSet<usize> = HashSet::new();
    for ti in j.truth["instances"].as_array().unwrap() {
        if ti["start_skew_ns"].as_i64().unwrap() > 19_000_000 {
            for mb in ti["members"].as_array().unwrap() {
                let key = (
                    mb["device"].as_u64().unwrap() as u32,
                    mb["stream"].as_u64().unwrap() as u32,
                    mb["start"].as_i64().unwrap(),
                );
                big_rows.insert(rows[&key]);
            }
        }
    }
    common::instances::big_events_without(&j.a, &big_rows)
}

/// Each flagged group says so in its notes, and names its devices.
fn flagged_groups_say_so(j: &Job) {
    for g in j.a.matching.groups.iter().filter(|g| g.lockstep_ambiguous) {
        let said = group_caveats(&j.p, g, &[], None)
            .into_iter()
            .any(|c| matches!(c, Caveat::LockstepAmbiguous(ref d) if *d == g.devices));
        assert!(said, "{}: flagged but not said", g.key);
        assert!(
            g.devices.len() >= 4,
            "{}: flagged with {} members",
            g.key,
            g.devices.len()
        );
    }
}

fn exact_per_group(j: &Job, o: &Outcome) -> BTreeMap<String, usize> {
    let wrong: HashSet<String> = o
        .wrong
        .iter()
        .map(|w| w.split('#').next().unwrap().to_string())
        .collect();
    let mut all: BTreeMap<String, usize> = BTreeMap::new();
    for ti in j.truth["instances"].as_array().unwrap() {
        *all.entry(ti["group"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    all.retain(|g, _| !wrong.contains(g));
    all
}

#[test]
fn with_payloads_every_instance_and_exchange_is_exact() {
    for name in [
        "3d_dedicated_payloads",
        "3d_shared_payloads",
        "3d_lazy_payloads",
        "3d_sync_compute_payloads",
        "3d_lockstep_payloads",
        "pp4_payloads",
        "moe_ep_payloads",
        "cuda_graphs_payloads",
    ] {
        let j = job(name);
        let o = check(&j);
        let n = j.truth["instances"].as_array().unwrap().len();
        assert_eq!(o.exact, n, "{name}: {:#?}", o.wrong);
        assert!(false_big_events(&j).is_empty(), "{name}");
        // A pipeline's one PP communicator is its stage pairs.
        if name == "pp4_payloads" {
            let pairs = j
                .a
                .matching
                .groups
                .iter()
                .filter(|g| g.devices.len() == 2 && g.ops.iter().all(|o| o.name() == "SendRecv"))
                .count();
            assert_eq!(pairs, 6, "{name}: 3 stage pairs × 2 pipelines");
        }
    }
}

#[test]
fn without_payloads_instances_are_exact_or_honestly_ambiguous() {
    // (job, groups that must be exact: every instance of them).
    let jobs: [(&str, &[&str]); 8] = [
        ("3d_dedicated", &["tp/0", "tp/1", "tp/2", "tp/3"]),
        ("3d_shared", &["tp/0", "tp/1", "tp/2", "tp/3"]),
        ("3d_lazy", &["tp/0", "tp/1", "tp/2", "tp/3"]),
        ("3d_sync_compute", &["tp/0", "tp/1", "tp/2", "tp/3"]),
        ("3d_lockstep", &[]),
        ("pp4", &["tp/0", "tp/1", "pp/0:0-2", "pp/1:1-3"]),
        ("moe_ep", &["ep/0", "ep/1", "dp/0"]),
        ("cuda_graphs", &["pp/1:1-5"]),
    ];
    for (name, exact) in jobs {
        let j = job(name);
        let o = check(&j);
        assert!(o.wrong.is_empty(), "{name}: {:#?}", o.wrong);
        let n = j.truth["instances"].as_array().unwrap().len();
        assert_eq!(
            o.exact + o.ambiguous_as_truth_says + o.ambiguous_other,
            n,
            "{name}"
        );
        let right = exact_per_group(&j, &o);
        for g in exact {
            assert!(right.contains_key(*g), "{name}: {g} not exact");
        }
        // Never merged where the truth has no sibling that stayed with it:
        // the data parallel all-gathers of cuda_graphs, whose groups parted
        // in their reduce-scatters only, are read against those (the two
        // ops run in step on their streams), not flagged as one group.
        assert_eq!(o.ambiguous_other, 0, "{name}");
        assert!(
            false_big_events(&j).is_empty(),
            "{name}: {:?}",
            false_big_events(&j)
        );
        flagged_groups_say_so(&j);
    }
}

#[test]
fn lockstep_without_delays_is_said_and_never_split_by_guess() {
    let j = job("3d_lockstep");
    // Every sibling set the truth calls indistinguishable is one flagged
    // group: no instance is split between two guesses.
    let o = check(&j);
    assert!(o.wrong.is_empty(), "{:#?}", o.wrong);
    assert!(j.a.matching.groups.iter().any(|g| g.lockstep_ambiguous));
    assert!(j.a.skews.iter().all(|s| s.big_events.is_empty()));
}
