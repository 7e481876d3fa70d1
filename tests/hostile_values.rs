//! Values a user or a file gives that once came out wrong: a share of
//! nothing printed `NaN`, a negative cache cap evicted everything, a huge
//! keymap was read whole, a huge gate printed hundreds of digits.

mod common;
use common::*;

#[test]
fn no_text_figure_is_nan_or_inf() {
    let d = temp_dir("hostile_nan");
    let f = d.join("a.sqlite");
    std::fs::copy(root().join("fixtures/two_node_a.sqlite"), &f).unwrap();
    // Every kernel lasts 0 ns: each device's NCCL time is 0.
    let c = rusqlite::Connection::open(&f).unwrap();
    c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start", [])
        .unwrap();
    drop(c);
    let path = f.to_str().unwrap();
    let out = text(&["report", "all", "--no-cache", path]);
    assert!(out.contains("of_dev_%"), "{out}");
    for word in out.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')') {
        let w = word.to_ascii_lowercase();
        assert!(
            !matches!(w.trim_end_matches('%'), "nan" | "inf" | "-inf" | "+inf"),
            "a figure reads {word}:\n{out}"
        );
    }
}

#[test]
fn a_cache_cap_below_zero_or_not_a_number_is_a_usage_error_and_evicts_nothing() {
    let d = temp_dir("hostile_cap");
    let cache = d.join("cache");
    let cache = cache.to_str().unwrap();
    text(&["index", "--cache-dir", cache, "fixtures/two_node_a.sqlite"]);
    let entries = || std::fs::read_dir(d.join("cache")).unwrap().count();
    let before = entries();
    for cap in ["-1", "NaN", "inf", "-0.5"] {
        let arg = format!("--cache-cap-gb={cap}");
        let o = rankline(&[
            "report",
            "summary",
            "--cache-dir",
            cache,
            &arg,
            "fixtures/two_node_a.sqlite",
        ]);
        assert_eq!(o.status.code(), Some(2), "{cap}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--cache-cap-gb") && err.contains(">= 0"),
            "{err}"
        );
    }
    assert_eq!(entries(), before);
}

#[test]
fn a_keymap_over_one_mib_is_refused_before_it_is_read() {
    let d = temp_dir("hostile_keymap");
    let keymap = d.join("keymap.toml");
    // 2 GiB, sparse: read whole it took 15 s and 4 GB.
    std::fs::File::create(&keymap)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let o = rankline(&[
        "fixtures/two_node_a.sqlite",
        "--keymap",
        keymap.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_one_line_error(
        &o,
        keymap.to_str().unwrap(),
        "over the 1 MiB a keymap can be",
    );
}

#[test]
fn a_huge_gate_is_said_in_a_few_digits() {
    let o = rankline(&[
        "diff",
        "--no-cache",
        "--fail-on-regression",
        "1e308",
        "fixtures/two_node_a.sqlite",
        "fixtures/two_node_b.sqlite",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = stdout(&o) + &stderr(&o);
    assert!(all.contains("growth above 1.000e308%"), "{all}");
    assert!(
        all.contains("nothing grew by more than 1.000e308%"),
        "{all}"
    );
    assert!(!all.contains("0000000000"), "{all}");
}

#[test]
fn ranks_and_world_sizes_that_cannot_all_be_right_are_said_by_file() {
    let d = temp_dir("hostile_ranks");
    let set = |file: &str, var: &str, value: &str| {
        let c = rusqlite::Connection::open(d.join(file)).unwrap();
        let n = c
            .execute(
                "UPDATE META_DATA_CAPTURE SET value = ?1 WHERE value LIKE ?2",
                [format!("{var}=\"{value}\""), format!("{var}=%")],
            )
            .unwrap();
        assert_eq!(n, 1, "{file} {var}");
    };
    for r in 0..4 {
        let f = format!("rank{r}.sqlite");
        std::fs::copy(root().join("fixtures/per_rank").join(&f), d.join(&f)).unwrap();
    }
    set("rank1.sqlite", "RANK", "0");
    set("rank2.sqlite", "WORLD_SIZE", "-1");
    set("rank3.sqlite", "WORLD_SIZE", "3");
    let summary = || text(&["report", "summary", "--no-cache", d.to_str().unwrap()]);
    let out = summary();
    for line in [
        "! rank 0 is claimed by 2 files (rank0.sqlite, rank1.sqlite): at most one can be it",
        "! rank2.sqlite records a world size that cannot be right (0 or below): not used",
        "! rank3.sqlite claims rank 3 of a world of 3: both cannot be right",
        "! files record different world sizes (3 in rank3.sqlite, 5 in rank0.sqlite): the largest is used",
        "! ranks 1, 4 of a world of 5 have no file",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    // An absurd size is said, not listed rank by rank (4 billion of them).
    set("rank2.sqlite", "WORLD_SIZE", "4294967295");
    let out = summary();
    assert!(
        out.contains(
            "! rank2.sqlite records a world size that cannot be right (4294967295): not used"
        ),
        "{out}"
    );
    assert!(out.contains("of a world of 5 have no file"), "{out}");
}
