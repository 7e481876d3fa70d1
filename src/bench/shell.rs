//! The baseline of `rankline bench`: the `sqlite3` shell scanning exactly
//! the columns rankline loads, opened as the loader opens the input.

use rankline::profile::{self, spec};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Rows and seconds of the `sqlite3` shell scanning exactly the columns
/// rankline loads, one query per table.
pub fn sqlite3_baseline(file: &Path) -> Result<(u64, Duration), String> {
    let conn = profile::open_readonly(file).map_err(|e| e.to_string())?;
    let mut rows = 0u64;
    let mut time = Duration::ZERO;
    for t in spec::LOADED {
        let cols: Vec<String> = {
            let mut st = conn
                .prepare(&format!("PRAGMA table_info(\"{}\")", t.table))
                .map_err(|e| e.to_string())?;
            st.query_map([], |r| r.get::<_, String>(1))
                .map_err(|e| e.to_string())?
                .filter_map(Result::ok)
                .collect()
        };
        if cols.is_empty() {
            continue;
        }
        let exprs: Vec<String> = t
            .columns()
            .filter(|c| cols.iter().any(|x| x == c.name))
            .map(|c| {
                if c.text {
                    format!("total(length(\"{}\"))", c.name)
                } else {
                    format!("total(\"{}\")", c.name)
                }
            })
            .collect();
        let n: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM \"{}\" {}", t.table, t.filter),
                [],
                |r| r.get(0),
            )
            .map_err(|e| e.to_string())?;
        let sql = format!(
            "SELECT {} FROM \"{}\" {}",
            exprs.join(", "),
            t.table,
            t.filter
        );
        let t0 = Instant::now();
        let out = baseline_command(file, &sql).output().map_err(|e| {
            format!("cannot run sqlite3 ({e}); install it (apt-get install sqlite3)")
        })?;
        time += t0.elapsed();
        if !out.status.success() {
            return Err(format!(
                "sqlite3 failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        rows += n as u64;
    }
    Ok((rows, time))
}

/// The call-stack rows the loader reads and joins to the samples without
/// keeping them as rows ([`spec::FRAMES`]); 0 without the table.
pub fn frame_rows(file: &Path) -> u64 {
    let Ok(conn) = profile::open_readonly(file) else {
        return 0;
    };
    let sql = format!(
        "SELECT count(*) FROM \"{}\" {}",
        spec::FRAMES.table,
        spec::FRAMES.filter
    );
    conn.query_row(&sql, [], |r| r.get::<_, i64>(0))
        .map_or(0, |n| n.max(0) as u64)
}

/// The `sqlite3` shell running `sql` on `file` opened exactly as the
/// loader opens it: read-only and immutable, so that it takes no locks and
/// creates no `-shm` or `-wal` beside a WAL-mode input.
fn baseline_command(file: &Path, sql: &str) -> Command {
    let mut c = Command::new("sqlite3");
    c.arg("-readonly").arg(profile::readonly_uri(file)).arg(sql);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_opens_the_input_read_only_and_immutable() {
        let c = baseline_command(Path::new("/data/run?1.sqlite"), "SELECT 1");
        let args: Vec<_> = c.get_args().map(|a| a.to_string_lossy()).collect();
        assert_eq!(c.get_program(), "sqlite3");
        assert_eq!(
            args,
            [
                "-readonly",
                "file:/data/run%3F1.sqlite?mode=ro&immutable=1",
                "SELECT 1"
            ]
        );
    }
}
