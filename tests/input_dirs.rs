//! `FILE|DIR ...`: a directory is the exports directly inside it, in name
//! order, for `report` and `index`; one without exports is an input error.

mod common;
use common::*;

#[test]
fn a_directory_reads_as_its_exports_in_name_order() {
    let d = temp_dir("dir_inputs");
    let dir = d.join("captures");
    std::fs::create_dir_all(&dir).unwrap();
    // Natural order puts node2 before node10 whatever the listing says.
    std::fs::copy(
        root().join("fixtures/two_node_b.sqlite"),
        dir.join("node10.sqlite"),
    )
    .unwrap();
    std::fs::copy(
        root().join("fixtures/two_node_a.sqlite"),
        dir.join("node2.sqlite"),
    )
    .unwrap();
    std::fs::write(dir.join("job.log"), b"not an export").unwrap();
    let (o, paths) = summary_paths(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want = |n: &str| dir.join(n).display().to_string();
    assert_eq!(paths, vec![want("node2.sqlite"), want("node10.sqlite")]);

    // `index` caches each of them (at once), and says so in file order.
    let cache = d.join("cache");
    let o = rankline(&[
        "index",
        "--cache-dir",
        cache.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // A line per file, then the job's analyses.
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[2].starts_with("job of 2 files: analyses stored in "),
        "{out}"
    );
    assert!(
        lines[0].starts_with(&format!("{}: cached in ", want("node2.sqlite"))),
        "{out}"
    );
    assert!(
        lines[1].starts_with(&format!("{}: cached in ", want("node10.sqlite"))),
        "{out}"
    );
}

#[test]
fn a_directory_without_exports_is_an_input_error_on_one_line() {
    let d = temp_dir("dir_empty");
    let empty = d.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for args in [
        &["report", "summary", "--no-cache"][..],
        &["index", "--cache-dir", d.join("cache").to_str().unwrap()],
    ] {
        let mut args = args.to_vec();
        args.push(empty.to_str().unwrap());
        let o = rankline(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_one_line_error(
            &o,
            empty.to_str().unwrap(),
            "a directory with no .sqlite exports or .nsys-rep reports in it",
        );
    }
}
