//! Deterministic fixture generator: `cargo make-fixtures` (an alias in `.cargo/config.toml`).
//!
//! Writes nsys-schema SQLite files into `fixtures/` and, for each scenario, a ground-truth JSON
//! computed by an independent oracle over the generator's own event lists.
//!
//! `cargo make-fixtures scale [--kernels N] [--devices D] [--runtime M]
//! [--nvtx R] [--out PATH] [--cpu]` writes one large profile for benchmarks instead (default
//! 10 M kernels on 8 devices into `target/scale/scale_10m.sqlite`; see scale.rs); `--cpu` adds
//! the run's CPU side (OS runtime calls, scheduling, 1 kHz samples with callchains) and its
//! CUDA synchronization and event rows, into `scale_10m_cpu.sqlite` (see scale_cpu.rs).
//! `make-fixtures scale-nodes [--files N] [--gpus G] [--kernels K] [--out DIR]` writes one file
//! per node, each on its own clock (default 64 × 8 GPUs, about 1 M kernels, into
//! `target/scale/nodes/`; see scale_nodes.rs). `make-fixtures jobs` writes only the scenario
//! engine's jobs (`fixtures/jobs/`, from `make-fixtures/scenarios/*.toml`; see scenario/).
//! `make-fixtures scenario-scale [--nodes N --gpus G --tp T --pp P --dp D --steps S --out DIR]`
//! plays nodes_3d's job at benchmark size (default 32 × 8 GPUs, TP8 × PP4 × DP8, 3 steps)
//! into `target/scale/nodes_3d_scale/` (see scenario/scale.rs).

mod assemble;
mod clock;
mod crash;
mod ddl;
mod desync;
mod diff_pairs;
mod ends_disagree;
mod extras;
mod gpu_metrics;
mod hang;
mod job;
mod megatron;
mod model;
mod multinode;
mod names;
mod nic_metrics;
mod payload_tables;
mod payloads;
mod per_rank;
mod plan;
mod rng;
mod scale;
mod scale_nodes;
mod scale_step;
mod scenario;
mod sim;
mod staggered;
mod stats;
mod truth_basic;
mod truth_clock;
mod truth_faults;
mod truth_skew;
mod two_node;
mod why;
mod writer;

use std::path::PathBuf;

use serde_json::{Map, Value};

use model::Profile;
use truth_basic::Input;
use truth_skew::GroupSpec;

/// Where `fixtures/` is written: the project (the workspace root, one up from
/// this crate), or `MAKE_FIXTURES_ROOT` (the test that proves the committed
/// fixtures are reproducible uses a scratch directory).
/// `fixtures/payloads.sqlite`'s capture as a dynamic-tables export (payload_tables.rs).
const PAYLOAD_TABLES: &str = "fixtures/payload_tables.sqlite";

fn root() -> PathBuf {
    std::env::var_os("MAKE_FIXTURES_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            crate_dir.parent().expect("workspace root").to_path_buf()
        })
}

fn write_profile(p: &Profile) {
    let path = root().join(&p.path);
    let counts = writer::write(p, &path).unwrap_or_else(|e| panic!("writing {}: {e}", p.path));
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("{} ({} KiB)", p.path, size.div_ceil(1024));
    let line: Vec<String> = counts.iter().map(|(t, n)| format!("{t}={n}")).collect();
    println!("  {}", line.join(" "));
}

/// The truth: `summary`, `nccl`, `overlap`, and with group specs `skew`, `launch`, `anomalies`.
fn truth(files: &[&Profile], groups: &[GroupSpec], scenario: Value) -> Value {
    let inp = Input::new(files.to_vec());
    let mut m = Map::new();
    m.insert("summary".into(), truth_basic::summary(&inp));
    m.insert("nccl".into(), truth_basic::nccl(&inp));
    m.insert("overlap".into(), truth_basic::overlap(&inp));
    if !groups.is_empty() {
        let s = truth_skew::sections(&inp, groups);
        for g in s.skew["groups"].as_array().unwrap() {
            assert_eq!(
                g["end_aligned"], true,
                "group {} should be end-aligned",
                g["key"]
            );
        }
        m.insert("skew".into(), s.skew);
        m.insert("launch".into(), s.launch);
        m.insert("anomalies".into(), s.anomalies);
    }
    m.insert("scenario".into(), scenario);
    Value::Object(m)
}

fn save(name: &str, truth: &Value) {
    save_at(&root().join("fixtures").join(name), truth);
}

/// Writes `truth` at `path`, pretty, its keys sorted.
fn save_at(path: &std::path::Path, truth: &Value) {
    // sorted keys: the same bytes whether or not serde_json's preserve_order is enabled
    let mut truth = truth.clone();
    truth.sort_all_objects();
    let text = serde_json::to_string_pretty(&truth).unwrap() + "\n";
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    let shown = path.strip_prefix(root()).unwrap_or(path);
    println!("{}", shown.display());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => fixtures(),
        // only the scenario engine's jobs (fixtures/jobs/), e.g. while editing scenarios/
        Some("jobs") => scenario::write_all(),
        Some("scale") => match scale::parse(&args[1..]).and_then(|a| scale::run(&a, &root())) {
            Ok(()) => {}
            Err(e) if e.is_empty() => println!("{}", scale::USAGE),
            Err(e) => {
                eprintln!("make-fixtures scale: {e}\n{}", scale::USAGE);
                std::process::exit(2);
            }
        },
        Some("scale-nodes") => {
            match scale_nodes::parse(&args[1..]).and_then(|a| scale_nodes::run(&a, &root())) {
                Ok(()) => {}
                Err(e) if e.is_empty() => println!("{}", scale::USAGE),
                Err(e) => {
                    eprintln!("make-fixtures scale-nodes: {e}\n{}", scale::USAGE);
                    std::process::exit(2);
                }
            }
        }
        Some("scenario-scale") => match scenario::scale::run(&args[1..], &root()) {
            Ok(()) => {}
            Err(e) if e.is_empty() => println!("{}", scenario::scale::USAGE),
            Err(e) => {
                eprintln!(
                    "make-fixtures scenario-scale: {e}\n{}",
                    scenario::scale::USAGE
                );
                std::process::exit(2);
            }
        },
        Some("-h" | "--help") => println!("{}\n{}", scale::USAGE, scenario::scale::USAGE),
        Some(other) => {
            eprintln!(
                "make-fixtures: unknown argument {other:?}\n{}",
                scale::USAGE
            );
            std::process::exit(2);
        }
    }
}

/// The small fixtures and their truth files, always the same bytes.
fn fixtures() {
    std::fs::create_dir_all(root().join("fixtures")).expect("cannot create fixtures/");

    let (mega, scenario) = megatron::build(&mut rng::Rng::new(0x5EED_0001));
    write_profile(&mega);
    let t = truth(&[&mega], &megatron::groups(), scenario);
    megatron::check(&t);
    save("megatron_tp8.truth.json", &t);
    diff_pairs::fixtures(&mega);
    let path = root().join(gpu_metrics::PATH);
    writer::write_with(&mega, &path, &|tx, _| gpu_metrics::extra(&mega, tx))
        .unwrap_or_else(|e| panic!("writing {}: {e}", gpu_metrics::PATH));
    println!("{}", gpu_metrics::PATH);
    save("gpu_metrics.truth.json", &gpu_metrics::truth(&mega));

    let (a, b, scenario) = two_node::build(&mut rng::Rng::new(0x5EED_0002));
    write_profile(&a);
    write_profile(&b);
    // the same two hosts with NIC counters (the model does not hold them: the truth is
    // plain SQL on the files)
    std::fs::create_dir_all(root().join(nic_metrics::DIR)).expect("fixtures/nic");
    for p in [&a, &b] {
        let path = nic_metrics::path_of(p);
        writer::write_with(p, &root().join(&path), &|tx, _| nic_metrics::extra(p, tx))
            .unwrap_or_else(|e| panic!("writing {path}: {e}"));
        println!("{path}");
    }
    save(
        "two_node.truth.json",
        &truth(&[&a, &b], &two_node::groups(), scenario),
    );

    type Builder = fn(&mut rng::Rng) -> extras::Fixture;
    let builders: [(&str, Builder); 3] = [
        ("mismatch_extra_collective", extras::mismatch),
        ("stream_ids_differ", extras::stream_ids),
        ("shared_stream_two_comms", extras::two_comms),
    ];
    for (i, (name, build)) in builders.into_iter().enumerate() {
        let fx = build(&mut rng::Rng::new(0x5EED_0010 + i as u64));
        write_profile(&fx.profile);
        let inp = Input::new(vec![&fx.profile]);
        for spec in &fx.unaligned {
            let p90 = truth_skew::end_skew_p90_ms(&inp, spec);
            assert!(
                p90 >= 1.0,
                "{name}: {} should not be end-aligned (p90 {p90})",
                spec.key
            );
        }
        let t = truth(&[&fx.profile], &fx.groups, fx.scenario);
        extras::check(name, &t);
        save(&format!("{name}.truth.json"), &t);
    }

    multi_file();
    failures();

    let (why, t, extra) = why::build();
    let path = root().join(why::PATH);
    writer::write_with(&why, &path, &extra)
        .unwrap_or_else(|e| panic!("writing {}: {e}", why::PATH));
    println!("{}", why::PATH);
    save("why.truth.json", &t);

    let pl = payloads::build(&mut rng::Rng::new(0x5EED_0020));
    let fx = &pl.fixture;
    let path = root().join(payloads::PATH);
    writer::write_with(&fx.profile, &path, &|tx, _| payloads::extra(&pl.blobs, tx))
        .unwrap_or_else(|e| panic!("writing {}: {e}", payloads::PATH));
    println!("{}", payloads::PATH);
    let mut t = truth(&[&fx.profile], &fx.groups, fx.scenario.clone());
    // Every call names its communicator: rung 2 of the matching names every instance.
    t["skew"]["groups"][0]["match_method"] = "nvtx".into();
    save("payloads.truth.json", &t);
    // The same capture exported with --dynamic-tables=all instead of --include-blobs=true.
    let path = root().join(PAYLOAD_TABLES);
    writer::write_with(&fx.profile, &path, &|tx, st| {
        payloads::extra(&pl.blobs, tx)?;
        payload_tables::convert(tx, st)
    })
    .unwrap_or_else(|e| panic!("writing {PAYLOAD_TABLES}: {e}"));
    println!("{PAYLOAD_TABLES}");

    scenario::write_all();
}

/// The multi-file scenarios of issue 10: one directory of exports each, on their own clocks,
/// and `<name>.truth.json` beside it (truth_clock.rs describes its fields).
fn multi_file() {
    type Build = fn(&mut rng::Rng) -> (Vec<truth_clock::File>, Vec<truth_clock::GroupDef>, Value);
    type Cap = fn(usize) -> clock::Capture;
    let scenarios: [(&str, Build, Cap, u64); 3] = [
        (
            "multinode",
            multinode::build,
            multinode::capture,
            0x5EED_0020,
        ),
        ("per_rank", per_rank::build, per_rank::capture, 0x5EED_0021),
        (
            "ends_disagree",
            ends_disagree::build,
            ends_disagree::capture,
            0x5EED_0022,
        ),
    ];
    for (name, build, capture, seed) in scenarios {
        let (mut files, groups, scenario) = build(&mut rng::Rng::new(seed));
        let world = (name == "per_rank").then_some(per_rank::WORLD_SIZE);
        let mut t = truth_clock::truth(&files, &groups, world, scenario);
        if name == "multinode" {
            t["single_clock_skew"] = multinode::single_clock_skew(&files, &groups);
            t["single_clock_launch"] = multinode::single_clock_launch(&files, &groups);
        }
        let expect = if name == "ends_disagree" {
            "refused"
        } else {
            "accepted"
        };
        for f in &t["files"].as_array().unwrap()[1..] {
            assert_eq!(f["refinement_expected"], expect, "{name}: {}", f["path"]);
        }
        for (i, f) in files.iter_mut().enumerate() {
            f.clock.apply(&mut f.profile);
            clock::write_file(&root(), &f.profile, &f.clock, &capture(i));
        }
        save(&format!("{name}.truth.json"), &t);
    }
}

/// The failure scenarios of issue 20 (job.rs): staggered captures, a hang, a crash, a desync;
/// one directory of exports each and `<name>.truth.json` beside it (truth_faults.rs describes
/// its fields).
fn failures() {
    type Build = fn(&mut rng::Rng) -> (Vec<truth_clock::File>, Value);
    type Cap = fn(usize) -> clock::Capture;
    let scenarios: [(&str, Build, Cap, u64); 3] = [
        (
            "staggered",
            staggered::build,
            staggered::capture,
            0x5EED_0030,
        ),
        ("crash", crash::build, crash::capture, 0x5EED_0031),
        ("desync", desync::build, desync::capture, 0x5EED_0032),
    ];
    for (name, build, capture, seed) in scenarios {
        let (mut files, t) = build(&mut rng::Rng::new(seed));
        for (i, f) in files.iter_mut().enumerate() {
            f.clock.apply(&mut f.profile);
            clock::write_file(&root(), &f.profile, &f.clock, &capture(i));
        }
        save(&format!("{name}.truth.json"), &t);
    }

    let (mut files, cpu, t) = hang::build(&mut rng::Rng::new(0x5EED_0033));
    for (i, (f, cpu)) in files.iter_mut().zip(&cpu).enumerate() {
        f.clock.apply(&mut f.profile);
        let c = f.clock;
        let extra =
            |tx: &rusqlite::Transaction, st: &mut writer::Strings| hang::write_cpu(tx, st, cpu, &c);
        clock::write_file_with(&root(), &f.profile, &f.clock, &hang::capture(i), &extra);
    }
    save("hang.truth.json", &t);
}
