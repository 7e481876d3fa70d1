//! `rankline bench --job DIR` prints the job view's figures (never asserts
//! them): here, that it runs on a job, says what it measured — ranks and
//! hosts as the fixture's truth has them — and leaves nothing beside the
//! input.

mod common;

use common::*;

#[test]
fn bench_job_measures_a_directory_of_files_and_writes_nothing_beside_it() {
    let d = temp_dir("bench_job");
    let job = d.join("job");
    std::fs::create_dir_all(&job).unwrap();
    for f in sqlite_files(&root().join("fixtures/multinode")) {
        std::fs::copy(&f, job.join(f.file_name().unwrap())).unwrap();
    }
    let listing = || {
        let mut v: Vec<_> = std::fs::read_dir(&job)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = listing();
    let cache = d.join("cache");
    let o = rankline(&[
        "bench",
        "--job",
        "--cache-dir",
        cache.to_str().unwrap(),
        job.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listing(), before, "bench wrote beside its input");
    let out = stdout(&o);
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/multinode.truth.json")).unwrap(),
    )
    .unwrap();
    let ranks = truth["devices"].as_array().unwrap().len();
    assert!(
        out.contains(&format!("  {ranks} ranks on 4 hosts, ")),
        "{out}"
    );
    for figure in [
        "timeline: first frame ",
        "analyses settled ",
        "peak anonymous memory ",
        "straggler map of 16 ranks, every host open (20 rows)",
        "report skew (first): ",
        "report skew (again): ",
    ] {
        assert!(out.contains(figure), "{figure} in {out}");
    }
}
