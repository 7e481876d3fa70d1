use super::*;

/// A fresh directory under `target/test-tmp`.
fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-tmp")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/two_node_a.sqlite")
}

/// A stand-in nsys: copies the fixture to the output, recording where it
/// wrote and whether the file was there yet.
fn stand_in(outputs: &mut Vec<PathBuf>) -> impl FnMut(&Path, &Path) -> Result<(), LoadError> + '_ {
    |_, out| {
        assert!(!out.exists(), "nsys writes a fresh file");
        std::fs::copy(fixture(), out).unwrap();
        outputs.push(out.to_path_buf());
        Ok(())
    }
}

#[test]
fn on_a_network_cache_nsys_writes_to_local_temp_space_and_the_export_is_moved() {
    let d = dir("nsys-export-network");
    let report = d.join("run").join("r0.nsys-rep");
    std::fs::create_dir_all(report.parent().unwrap()).unwrap();
    std::fs::write(&report, b"not really a report").unwrap();
    let cache = CacheDir {
        dir: d.join("cache"),
        cap_bytes: u64::MAX,
    };
    let mut outputs = Vec::new();
    let export = export_into(&report, &cache, true, &mut stand_in(&mut outputs)).unwrap();
    assert!(export.ran_nsys);
    assert_eq!(outputs.len(), 1);
    let local = &outputs[0];
    assert!(
        local.starts_with(std::env::temp_dir()) && !local.starts_with(&cache.dir),
        "nsys wrote to {}",
        local.display()
    );
    assert!(
        !local.parent().unwrap().exists(),
        "the local temp directory is removed"
    );
    let exports = exports_dir(&cache.dir);
    assert_eq!(export.sqlite.parent(), Some(exports.as_path()));
    assert_eq!(
        std::fs::read(&export.sqlite).unwrap(),
        std::fs::read(fixture()).unwrap()
    );
    // Nothing else is left: no staging directory, nothing beside the report.
    let left: Vec<_> = std::fs::read_dir(&exports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(left, vec![export.sqlite.clone()]);
    assert_eq!(
        std::fs::read_dir(report.parent().unwrap()).unwrap().count(),
        1
    );
}

#[test]
fn on_a_local_cache_nsys_writes_inside_it_and_a_whole_export_is_reused() {
    let d = dir("nsys-export-local");
    let report = d.join("r0.nsys-rep");
    std::fs::write(&report, b"report v1").unwrap();
    let cache = CacheDir {
        dir: d.join("cache"),
        cap_bytes: u64::MAX,
    };
    let mut outputs = Vec::new();
    let first = export_into(&report, &cache, false, &mut stand_in(&mut outputs)).unwrap();
    assert!(
        outputs[0].starts_with(exports_dir(&cache.dir)),
        "{:?}",
        outputs
    );
    assert_eq!(first.sqlite.file_name(), outputs[0].file_name());
    // Reused: nsys does not run again.
    let mut never = |_: &Path, _: &Path| -> Result<(), LoadError> { panic!("nsys ran again") };
    let again = export_into(&report, &cache, false, &mut never).unwrap();
    assert!(!again.ran_nsys);
    assert_eq!(again.sqlite, first.sqlite);
    // A changed report is exported anew.
    std::fs::write(&report, b"report v2, longer").unwrap();
    let mut outputs = Vec::new();
    let changed = export_into(&report, &cache, false, &mut stand_in(&mut outputs)).unwrap();
    assert!(changed.ran_nsys);
    assert_ne!(changed.sqlite, first.sqlite);
}

#[test]
fn a_failed_export_leaves_nothing_behind() {
    let d = dir("nsys-export-fails");
    let report = d.join("r0.nsys-rep");
    std::fs::write(&report, b"report").unwrap();
    let cache = CacheDir {
        dir: d.join("cache"),
        cap_bytes: u64::MAX,
    };
    for on_network in [false, true] {
        let mut half = |_: &Path, out: &Path| {
            std::fs::write(out, b"SQLite format 3\0 half").unwrap();
            Err(LoadError::new(&report, "nsys export failed"))
        };
        assert!(export_into(&report, &cache, on_network, &mut half).is_err());
        let left = std::fs::read_dir(exports_dir(&cache.dir)).unwrap().count();
        assert_eq!(left, 0, "on network: {on_network}");
    }
}

#[test]
fn a_cache_that_cannot_hold_exports_gets_a_private_export_instead() {
    let d = dir("nsys-export-unwritable");
    let report = d.join("r0.nsys-rep");
    std::fs::write(&report, b"report").unwrap();
    let cache = CacheDir {
        dir: d.join("cache"),
        cap_bytes: u64::MAX,
    };
    std::fs::create_dir_all(&cache.dir).unwrap();
    // `exports` taken by a file: no directory can be made there.
    std::fs::write(exports_dir(&cache.dir), b"in the way").unwrap();
    let mut outputs = Vec::new();
    let export = export_into(&report, &cache, false, &mut stand_in(&mut outputs)).unwrap();
    assert!(export.sqlite.starts_with(std::env::temp_dir()));
    assert!(export.sqlite.is_file());
    let private = export.sqlite.parent().unwrap().to_path_buf();
    drop(export);
    assert!(!private.exists(), "a private export is removed after use");
}
