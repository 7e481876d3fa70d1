//! Hosts of a job and their clocks: which ranks each file holds (the whole job, a node, or a
//! rank), each host's boot instant, drift and UTC stamp error, each file's capture start — as
//! clock.rs writes them — and the truth of how each file's timestamps map onto true time and
//! onto the reference file's (the first file; its host has no drift, so its clock keeps true
//! time up to a constant).

use serde_json::{Value, json};

use super::keyed;
use super::simulate::ORIGIN;
use super::spec::{Fault, Files, Spec};
use crate::clock::{Capture, FileClock, Timebase};

const MS: i64 = 1_000_000;
const S: i64 = 1_000 * MS;
const HOUR: i64 = 3_600 * S;
/// A host that booted this long before its capture: a boot reading under a minute.
const BOOT43: i64 = 43 * S;

/// One file of a job: where it goes, whose host it is, which ranks it holds.
pub struct FileDef {
    pub path: String,
    pub host: String,
    pub node: usize,
    pub ranks: Vec<usize>,
    /// False for a file of the base job that no fault touches: the same bytes are there.
    pub written: bool,
}

/// The host name of node `n` (the spec's host for a one-host job).
pub fn host_name(spec: &Spec, n: usize) -> String {
    match spec.files {
        Files::Job => spec.host.clone(),
        _ => format!("{}{n:02}", spec.host),
    }
}

/// The job's files under `stem`: `<stem>.sqlite`, or `<stem>/node<k>.sqlite` /
/// `<stem>/rank<k>.sqlite`; with a base job, the files no fault touches are the base's.
pub fn files(spec: &Spec, stem: &str) -> Vec<FileDef> {
    let mut v = cut(spec, stem);
    if let Some(base) = &spec.base {
        let base = std::path::Path::new(stem).with_file_name(base);
        let base = base.to_str().expect("a UTF-8 path");
        for (f, b) in v.iter_mut().zip(cut(spec, base)) {
            if !spec.faults.iter().any(|x| touches(x, f)) {
                f.path = b.path;
                f.written = false;
            }
        }
    }
    v
}

/// Whether fault `x` changes file `f`.
fn touches(x: &Fault, f: &FileDef) -> bool {
    match x {
        Fault::Scaled { rank, .. } => f.ranks == [*rank],
        Fault::Boot43 { node } => f.node == *node,
    }
}

fn cut(spec: &Spec, stem: &str) -> Vec<FileDef> {
    let world = spec.world();
    let on = |n: usize| (0..world).filter(|&r| spec.node_of(r) == n).collect();
    match spec.files {
        Files::Job => {
            assert_eq!(spec.nodes(), 1, "one file holds one host");
            vec![FileDef {
                path: format!("{stem}.sqlite"),
                host: spec.host.clone(),
                node: 0,
                ranks: on(0),
                written: true,
            }]
        }
        Files::Node => (0..spec.nodes())
            .map(|n| FileDef {
                path: format!("{stem}/node{n}.sqlite"),
                host: host_name(spec, n),
                node: n,
                ranks: on(n),
                written: true,
            })
            .collect(),
        Files::Rank => (0..world)
            .map(|r| FileDef {
                path: format!("{stem}/rank{r}.sqlite"),
                host: host_name(spec, spec.node_of(r)),
                node: spec.node_of(r),
                ranks: vec![r],
                written: true,
            })
            .collect(),
    }
}

/// A host's clock: its boot-clock reading `boot_at_anchor` at true time `anchor_true` (its
/// first capture start), ticking `1 + drift_ppm·10⁻⁶` true ns per ns; its NTP-set UTC off by
/// `utc_error_ns`.
pub struct HostClock {
    pub anchor_true: i64,
    pub boot_at_anchor: i64,
    pub drift_ppm: f64,
    pub utc_error_ns: i64,
}

impl HostClock {
    fn rate(&self) -> f64 {
        1.0 + self.drift_ppm * 1e-6
    }

    /// The boot-clock reading at true time `t`.
    fn boot_at(&self, t: i64) -> i64 {
        self.boot_at_anchor + ((t - self.anchor_true) as f64 / self.rate()).round() as i64
    }
}

pub struct Clocks {
    pub hosts: Vec<HostClock>,
    /// One per file.
    pub files: Vec<FileClock>,
}

/// Every host's clock and every file's; `spans[i]`: file i's first and last event (true).
pub fn clocks(spec: &Spec, files: &[FileDef], spans: &[(i64, i64)]) -> Clocks {
    // nsys starts on each node (or for each rank) a little apart, before the job's processes
    let session: Vec<i64> = (0..files.len())
        .map(|i| {
            let mut r = keyed::rng(spec.seed, &[keyed::label("session"), i as u64]);
            ORIGIN - 1_400 * MS + r.range(0, 1_000 * MS)
        })
        .collect();
    let hosts: Vec<HostClock> = (0..spec.nodes())
        .map(|n| {
            let mut r = keyed::rng(spec.seed, &[keyed::label("clock"), n as u64]);
            let anchor_true = (0..files.len())
                .filter(|&i| files[i].node == n)
                .map(|i| session[i])
                .min()
                .expect("a file per host");
            let boot43 = spec
                .faults
                .iter()
                .any(|f| matches!(f, Fault::Boot43 { node } if *node == n));
            // uptimes hours apart (distinct for up to 37 nodes), the seconds drawn
            let uptime = if boot43 {
                BOOT43 + r.range(0, 999 * MS)
            } else {
                (2 + (7 * n as i64 + 5) % 37) * HOUR + r.range(0, HOUR)
            };
            // the reference host keeps true time; the others drift 2–5 ppm, odd nodes fast
            let sign = if n % 2 == 1 { 1 } else { -1 };
            let drift_ppm = if n == 0 {
                0.0
            } else {
                (sign * r.range(20, 50)) as f64 / 10.0
            };
            let utc_sign = if r.range(0, 1) == 0 { -1 } else { 1 };
            let utc_error_ns = utc_sign * r.range(2 * MS, 9 * MS);
            HostClock {
                anchor_true,
                boot_at_anchor: uptime,
                drift_ppm,
                utc_error_ns,
            }
        })
        .collect();
    let files = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let h = &hosts[f.node];
            let s = session[i];
            assert!(
                s + 100 * MS < spans[i].0,
                "{}: events before capture",
                f.path
            );
            let mut c = match spec.files {
                Files::Job => unreachable!("a one-host job's file keeps the engine's time"),
                Files::Node => FileClock::boot(s, h.boot_at(s) - s, h.drift_ppm, h.utc_error_ns),
                Files::Rank => FileClock::session(s, h.boot_at(s), h.drift_ppm, h.utc_error_ns),
            };
            let mut r = keyed::rng(spec.seed, &[keyed::label("stop"), i as u64]);
            c.stop_true = spans[i].1 + 400 * MS + r.range(0, 300 * MS);
            for fault in &spec.faults {
                if let Fault::Scaled { factor, .. } = fault
                    && touches(fault, f)
                {
                    assert_eq!(spec.files, Files::Rank, "a scaled file is one rank's");
                    c.scale = *factor;
                }
            }
            c
        })
        .collect();
    Clocks { hosts, files }
}

/// What nsys recorded about the launch: torchrun per node, or each rank's own process with
/// its rank in the environment.
pub fn capture(spec: &Spec, f: &FileDef) -> Capture {
    let gpn = spec.gpus_per_node();
    let visible: Vec<String> = (0..gpn).map(|g| g.to_string()).collect();
    let uuid = crate::model::uuid(&mut keyed::rng(
        spec.seed,
        &[keyed::label("capture"), f.ranks[0] as u64],
    ));
    let master = host_name(spec, 0);
    match spec.files {
        Files::Rank => {
            let r = f.ranks[0];
            let env = [
                ("RANK", r.to_string()),
                ("WORLD_SIZE", spec.world().to_string()),
                ("LOCAL_RANK", (r % gpn).to_string()),
                ("LOCAL_WORLD_SIZE", gpn.to_string()),
                ("CUDA_VISIBLE_DEVICES", visible.join(",")),
                ("MASTER_ADDR", master),
                ("MASTER_PORT", "29500".into()),
            ];
            Capture {
                command: "python3",
                arguments: vec!["pretrain_gpt.py".into()],
                environment: env.into_iter().map(|(k, v)| (k.into(), v)).collect(),
                session_uuid: uuid,
            }
        }
        _ => Capture {
            command: "torchrun",
            arguments: vec![
                format!("--nnodes={}", spec.nodes()),
                format!("--nproc_per_node={gpn}"),
                format!("--node_rank={}", f.node),
                format!("--rdzv_endpoint={master}:29500"),
                "pretrain_gpt.py".into(),
            ],
            environment: vec![("CUDA_VISIBLE_DEVICES".into(), visible.join(","))],
            session_uuid: uuid,
        },
    }
}

/// `hosts`, `files` and `faults` of the truth (truth.rs describes the fields).
pub fn truth(spec: &Spec, files: &[FileDef], c: &Clocks) -> (Value, Value, Value) {
    let r = &c.files[0];
    assert!(
        r.drift_ppm == 0.0 && r.scale == 1.0,
        "the reference keeps true time"
    );
    // the reference file's timestamp at true time t
    let on_ref = |t: i64| t - r.session_true + r.session_file;
    let paths = |n: usize| -> Vec<&str> {
        files
            .iter()
            .filter(|f| f.node == n)
            .map(|f| f.path.as_str())
            .collect()
    };
    let timebase = match spec.files {
        Files::Node => Timebase::Boot,
        _ => Timebase::Session,
    };
    let hosts: Vec<Value> = c
        .hosts
        .iter()
        .enumerate()
        .map(|(n, h)| {
            json!({
                "host": host_name(spec, n),
                "node": n,
                "files": paths(n),
                "ranks": (0..spec.world()).filter(|&x| spec.node_of(x) == n).collect::<Vec<_>>(),
                "timebase": timebase.name(),
                "boot_ns": h.boot_at_anchor,
                "anchor_true_ns": h.anchor_true,
                "drift_ppm": h.drift_ppm,
                "utc_error_ns": h.utc_error_ns,
                "offset_ns_to_reference": on_ref(h.anchor_true) - h.boot_at_anchor,
            })
        })
        .collect();
    let list: Vec<Value> = files
        .iter()
        .zip(&c.files)
        .map(|(f, k)| {
            let stop_file = k.file_time(k.stop_true);
            json!({
                "path": f.path,
                "host": f.host,
                "node": f.node,
                "ranks": f.ranks,
                "timebase": k.timebase.name(),
                "session_true_ns": k.session_true,
                "stop_true_ns": k.stop_true,
                "anchor_file_ns": k.session_file,
                "system_clock_ns": k.boot_at_session,
                "utc_epoch_ns": k.utc_epoch_ns(),
                "utc_error_ns": k.utc_error_ns,
                "drift_ppm": k.drift_ppm,
                "scale": k.scale,
                "offset_ns_to_true": k.session_true - k.session_file,
                "offset_ns_to_reference": on_ref(k.session_true) - k.session_file,
                "stop_file_ns": stop_file,
            })
        })
        .collect();
    let faults: Vec<Value> = spec
        .faults
        .iter()
        .map(|fault| match fault {
            Fault::Scaled { rank, factor } => {
                let i = files.iter().position(|f| f.ranks == [*rank]).unwrap();
                json!({"kind": fault.name(), "file": files[i].path, "host": files[i].host,
                       "rank": rank, "factor": factor,
                       "what": "the file's timestamps from its capture start are factor times its host's clock; its host's other files are right"})
            }
            Fault::Boot43 { node } => {
                let h = &c.hosts[*node];
                json!({"kind": fault.name(), "files": paths(*node), "host": host_name(spec, *node),
                       "node": node, "boot_ns": h.boot_at_anchor,
                       "what": "the host booted 43 s before its capture: every file's systemClockNs is under a minute"})
            }
        })
        .collect();
    (json!(hosts), json!(list), json!(faults))
}
