//! The committed fixtures are exactly what the generator writes: anyone can
//! regenerate them, and nobody can edit one by hand unnoticed.

mod common;
use common::*;

#[test]
fn generator_reproduces_committed_fixtures_byte_for_byte() {
    let out = temp_dir("regen");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_make-fixtures"))
        .env("MAKE_FIXTURES_ROOT", &out)
        .output()
        .expect("run make-fixtures");
    assert!(o.status.success(), "{}", stderr(&o));
    let committed = root().join("fixtures");
    let mut names: Vec<String> = std::fs::read_dir(out.join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 11, "{names:?}");
    let mut committed_names: Vec<String> = std::fs::read_dir(&committed)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    committed_names.sort();
    assert_eq!(
        committed_names, names,
        "fixtures/ holds files the generator does not write"
    );
    for n in &names {
        let a = std::fs::read(out.join("fixtures").join(n)).unwrap();
        let b = std::fs::read(committed.join(n)).unwrap_or_default();
        assert!(
            a == b,
            "fixtures/{n} differs from what make-fixtures writes"
        );
    }
}
