//! Deterministic fixture generator: `cargo run --bin make-fixtures`.
//!
//! Writes nsys-schema SQLite files into `fixtures/` and, for each scenario, a ground-truth JSON
//! computed by an independent oracle over the generator's own event lists.

#[path = "make_fixtures/assemble.rs"]
mod assemble;
#[path = "make_fixtures/ddl.rs"]
mod ddl;
#[path = "make_fixtures/megatron.rs"]
mod megatron;
#[path = "make_fixtures/model.rs"]
mod model;
#[path = "make_fixtures/names.rs"]
mod names;
#[path = "make_fixtures/plan.rs"]
mod plan;
#[path = "make_fixtures/rng.rs"]
mod rng;
#[path = "make_fixtures/sim.rs"]
mod sim;
#[path = "make_fixtures/stats.rs"]
mod stats;
#[path = "make_fixtures/truth_basic.rs"]
mod truth_basic;
#[path = "make_fixtures/two_node.rs"]
mod two_node;
#[path = "make_fixtures/writer.rs"]
mod writer;

use std::path::PathBuf;

use serde_json::{Map, Value};

use model::Profile;
use truth_basic::Input;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn write_profile(p: &Profile) {
    let path = root().join(&p.path);
    let counts = writer::write(p, &path).unwrap_or_else(|e| panic!("writing {}: {e}", p.path));
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("{} ({} KiB)", p.path, size.div_ceil(1024));
    let line: Vec<String> = counts.iter().map(|(t, n)| format!("{t}={n}")).collect();
    println!("  {}", line.join(" "));
}

fn write_truth(name: &str, files: &[&Profile], scenario: Value) {
    let inp = Input::new(files.to_vec());
    let mut m = Map::new();
    m.insert("summary".into(), truth_basic::summary(&inp));
    m.insert("nccl".into(), truth_basic::nccl(&inp));
    m.insert("overlap".into(), truth_basic::overlap(&inp));
    m.insert("scenario".into(), scenario);
    let text = serde_json::to_string_pretty(&Value::Object(m)).unwrap() + "\n";
    let path = root().join("fixtures").join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    println!("fixtures/{name}");
}

fn main() {
    std::fs::create_dir_all(root().join("fixtures")).expect("cannot create fixtures/");

    let (mega, scenario) = megatron::build(&mut rng::Rng::new(0x5EED_0001));
    write_profile(&mega);
    write_truth("megatron_tp8.truth.json", &[&mega], scenario);

    let (a, b, scenario) = two_node::build(&mut rng::Rng::new(0x5EED_0002));
    write_profile(&a);
    write_profile(&b);
    write_truth("two_node.truth.json", &[&a, &b], scenario);
}
