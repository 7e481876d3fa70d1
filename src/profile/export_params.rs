//! How `nsys export` made a file, as it records its options in
//! `META_DATA_EXPORT` (`EXPORT_PARAM_*` rows; 2023.3 and later, more rows
//! in later versions): a window cut with `--times`, a subset of tables
//! with `--tables`, timestamps normalised (`--ts-normalize`) or shifted
//! (`--ts-shift`), payloads left out (`--include-blobs`). Every real export
//! here records them, all at their defaults. Values are the file's text:
//! untrusted, kept short.

/// The longest value kept (a `--tables` list can be long; more says
/// nothing a reader needs).
const VALUE_MAX: usize = 200;

/// The export options a file records (each None when it does not).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExportParams {
    /// `--include-blobs` (2026.2+): NCCL's payloads are in `binaryData`.
    pub include_blobs: Option<bool>,
    /// `--ts-normalize`: timestamps in the vClock domain, or UTC.
    pub time_normalize: Option<bool>,
    /// `--ts-shift`, ns added to every timestamp.
    pub time_shift_ns: Option<i64>,
    /// `--tables`: the tables exported (empty: all).
    pub tables: Option<String>,
    /// `--times`: the windows exported (empty: the whole capture).
    pub times: Option<String>,
}

impl ExportParams {
    /// Takes one `META_DATA_EXPORT` row (others are ignored).
    pub fn take(&mut self, name: &str, value: &str) {
        let flag = || match value.trim() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        let text = || {
            let v = value.trim();
            Some(match v.char_indices().nth(VALUE_MAX) {
                Some((at, _)) => format!("{}…", &v[..at]),
                None => v.to_string(),
            })
        };
        match name {
            "EXPORT_PARAM_INCLUDE_BLOBS" => self.include_blobs = flag(),
            "EXPORT_PARAM_TIME_NORMALIZE" => self.time_normalize = flag(),
            "EXPORT_PARAM_TIME_SHIFT" => self.time_shift_ns = value.trim().parse().ok(),
            "EXPORT_PARAM_TABLES_TO_EXPORT" => self.tables = text(),
            "EXPORT_PARAM_TIMES_TO_EXPORT" => self.times = text(),
            _ => {}
        }
    }

    /// `--tables` when it named some: not every table was exported.
    pub fn some_tables(&self) -> Option<&str> {
        self.tables.as_deref().filter(|t| !t.is_empty())
    }

    /// `--times` when it named a window: events outside it were left out.
    pub fn cut_times(&self) -> Option<&str> {
        self.times.as_deref().filter(|t| !t.is_empty())
    }

    /// `--ts-shift` when not 0.
    pub fn shift_ns(&self) -> Option<i64> {
        self.time_shift_ns.filter(|&s| s != 0)
    }

    /// Whether `--ts-normalize` was on.
    pub fn normalized(&self) -> bool {
        self.time_normalize == Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_name_and_odd_values_give_nothing() {
        let mut p = ExportParams::default();
        for (n, v) in [
            ("EXPORT_PARAM_INCLUDE_BLOBS", "false"),
            ("EXPORT_PARAM_TIME_NORMALIZE", "true"),
            ("EXPORT_PARAM_TIME_SHIFT", "-1500"),
            ("EXPORT_PARAM_TABLES_TO_EXPORT", ""),
            ("EXPORT_PARAM_TIMES_TO_EXPORT", "2s/3s"),
            ("EXPORT_PARAM_LAZY", "true"),
        ] {
            p.take(n, v);
        }
        assert_eq!(p.include_blobs, Some(false));
        assert!(p.normalized());
        assert_eq!(p.shift_ns(), Some(-1500));
        assert_eq!((p.some_tables(), p.cut_times()), (None, Some("2s/3s")));
        p.take("EXPORT_PARAM_TIME_SHIFT", "soon");
        p.take("EXPORT_PARAM_TIME_NORMALIZE", "yes");
        assert_eq!((p.shift_ns(), p.time_normalize), (None, None));
        p.take("EXPORT_PARAM_TABLES_TO_EXPORT", &"x".repeat(1000));
        assert_eq!(p.some_tables().unwrap().chars().count(), VALUE_MAX + 1);
    }
}
