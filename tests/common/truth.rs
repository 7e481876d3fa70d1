//! Comparing report JSON with a fixture's ground truth.

use serde_json::Value;

/// Every key and value in `truth` must be in `got` (extra keys in `got` are
/// allowed); numbers within 1e-6; lists of equal length, in order.
pub fn diff(truth: &Value, got: &Value, path: &str, out: &mut Vec<String>) {
    match (truth, got) {
        (Value::Object(t), Value::Object(g)) => {
            for (k, tv) in t {
                match g.get(k) {
                    Some(gv) => diff(tv, gv, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: missing")),
                }
            }
        }
        (Value::Array(t), Value::Array(g)) => {
            if t.len() != g.len() {
                out.push(format!("{path}: {} items, expected {}", g.len(), t.len()));
                return;
            }
            for (i, (tv, gv)) in t.iter().zip(g).enumerate() {
                diff(tv, gv, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(t), Value::Number(g)) => {
            let (a, b) = (
                t.as_f64().unwrap_or(f64::NAN),
                g.as_f64().unwrap_or(f64::NAN),
            );
            if (a - b).abs() > 1e-6 {
                out.push(format!("{path}: {b}, expected {a}"));
            }
        }
        (t, g) if t == g => {}
        (t, g) => out.push(format!("{path}: {g}, expected {t}")),
    }
}

/// Panics with every difference listed.
pub fn assert_matches(truth: &Value, got: &Value, what: &str) {
    let mut out = Vec::new();
    diff(truth, got, what, &mut out);
    assert!(
        out.is_empty(),
        "{} differences:\n{}",
        out.len(),
        out.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
