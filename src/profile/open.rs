//! Opening an export strictly read-only and discovering its schema.

use rusqlite::{Connection, OpenFlags};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Why a file could not be loaded: one line, naming the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: String,
    pub problem: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Paths and SQLite messages (table names) can hold control characters.
        use crate::text_safe::escape_controls as safe;
        write!(f, "{}: {}", safe(&self.path), safe(&self.problem))
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    pub fn new(path: &Path, problem: impl Into<String>) -> Self {
        LoadError {
            path: path.display().to_string(),
            problem: problem.into(),
        }
    }

    /// Turns an SQLite error met while reading `path` into a plain sentence.
    pub fn from_sqlite(path: &Path, err: &rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as C;
        let problem = match err.sqlite_error_code() {
            Some(C::NotADatabase) => "not an SQLite database".to_string(),
            Some(C::DatabaseCorrupt) => {
                format!("corrupted or truncated SQLite database ({})", one_line(err))
            }
            Some(C::SystemIoFailure) => format!("read error ({})", one_line(err)),
            Some(C::CannotOpen) => "cannot open the file".to_string(),
            _ => format!("SQLite error: {}", one_line(err)),
        };
        LoadError::new(path, problem)
    }
}

fn one_line(err: &rusqlite::Error) -> String {
    err.to_string().replace('\n', " ")
}

/// Escapes a path for an SQLite `file:` URI.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for b in path.to_string_lossy().bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            _ => out.push(b as char),
        }
    }
    out
}

/// Memory-map up to this many bytes of the file.
const MMAP_BYTES: i64 = 1 << 40;

/// Opens a database embedded in the binary (the demo profile), read-only.
pub fn open_embedded(name: &Path, bytes: &'static [u8]) -> Result<Connection, LoadError> {
    let mut conn = Connection::open_in_memory().map_err(|e| LoadError::from_sqlite(name, &e))?;
    conn.deserialize_bytes(rusqlite::MAIN_DB, bytes)
        .map_err(|e| LoadError::from_sqlite(name, &e))?;
    conn.execute_batch("PRAGMA query_only = 1;")
        .map_err(|e| LoadError::from_sqlite(name, &e))?;
    Ok(conn)
}

/// Opens `path` read-only and immutable: SQLite takes no locks and writes
/// no journal, WAL or shm file beside it (clusters' network file systems
/// hang on locks, and the input must never change).
pub fn open_readonly(path: &Path) -> Result<Connection, LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        LoadError::new(
            path,
            match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_string(),
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                _ => format!("cannot read ({e})"),
            },
        )
    })?;
    if meta.is_dir() {
        return Err(LoadError::new(
            path,
            "is a directory, not an nsys SQLite export",
        ));
    }
    if !meta.is_file() {
        // A FIFO or device would block the open below, or read forever.
        return Err(LoadError::new(
            path,
            "not a regular file, not an nsys SQLite export",
        ));
    }
    if meta.len() == 0 {
        return Err(LoadError::new(path, "empty file, not an SQLite database"));
    }
    // Read the header ourselves: SQLite would treat some non-database files
    // as empty databases rather than refuse them.
    let mut header = [0u8; 16];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path)
            .map_err(|e| LoadError::new(path, format!("cannot read ({e})")))?;
        if f.read_exact(&mut header).is_err() || &header != b"SQLite format 3\0" {
            return Err(LoadError::new(path, "not an SQLite database"));
        }
    }
    let uri = format!("file:{}?mode=ro&immutable=1", uri_path(path));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(uri, flags).map_err(|e| LoadError::from_sqlite(path, &e))?;
    conn.execute_batch(&format!(
        "PRAGMA query_only = 1; PRAGMA mmap_size = {MMAP_BYTES};"
    ))
    .map_err(|e| LoadError::from_sqlite(path, &e))?;
    Ok(conn)
}

/// The tables of an export and, on demand, their columns.
pub struct Schema {
    tables: HashSet<String>,
    columns: HashMap<String, Vec<String>>,
}

impl Schema {
    pub fn read(conn: &Connection, path: &Path) -> Result<Schema, LoadError> {
        let err = |e: rusqlite::Error| LoadError::from_sqlite(path, &e);
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view')")
            .map_err(err)?;
        let tables = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(err)?
            .collect::<Result<HashSet<_>, _>>()
            .map_err(err)?;
        let mut columns = HashMap::new();
        for t in &tables {
            let mut stmt = conn
                .prepare(&format!("PRAGMA table_info(\"{t}\")"))
                .map_err(err)?;
            let cols = stmt
                .query_map([], |r| r.get::<_, String>(1))
                .map_err(err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            columns.insert(t.clone(), cols);
        }
        Ok(Schema { tables, columns })
    }

    pub fn has_table(&self, t: &str) -> bool {
        self.tables.contains(t)
    }

    pub fn has_column(&self, t: &str, c: &str) -> bool {
        self.columns
            .get(t)
            .is_some_and(|cols| cols.iter().any(|x| x == c))
    }

    pub fn table_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.tables.iter().cloned().collect();
        v.sort();
        v
    }

    /// `SELECT` of the wanted columns by name, `NULL` for the optional ones
    /// this export lacks; `None` when a required column is missing.
    pub fn select(
        &self,
        table: &str,
        wanted: &[(&str, bool)],
        tail: &str,
    ) -> Result<String, String> {
        let mut parts = Vec::with_capacity(wanted.len());
        for &(col, required) in wanted {
            if self.has_column(table, col) {
                parts.push(format!("\"{col}\""));
            } else if required {
                return Err(format!("table {table} lacks its column {col}"));
            } else {
                parts.push("NULL".to_string());
            }
        }
        Ok(format!(
            "SELECT {} FROM \"{table}\" {tail}",
            parts.join(", ")
        ))
    }

    /// Whether this looks like an nsys export at all.
    pub fn is_nsys_export(&self) -> bool {
        let marker = [
            "StringIds",
            "META_DATA_EXPORT",
            "EXPORT_META_DATA",
            "TARGET_INFO_SESSION_START_TIME",
        ];
        marker.iter().any(|t| self.has_table(t))
            || self
                .tables
                .iter()
                .any(|t| t.starts_with("CUPTI_ACTIVITY_KIND_"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_uri_specials() {
        assert_eq!(
            uri_path(Path::new("/a/b?c#d%e.sqlite")),
            "/a/b%3Fc%23d%25e.sqlite"
        );
    }
}
