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
