//! `rankline export` run on inputs, and its trace read back.

use super::rankline;
use serde_json::Value;
use std::path::Path;

/// The export's output, and the trace parsed (gunzipped when `out` ends
/// in `.gz`) when it was written.
pub fn export(
    inputs: &[&Path],
    out: &Path,
    extra: &[&str],
) -> (std::process::Output, Option<Value>) {
    let mut args: Vec<&str> = vec!["export", "--no-cache", "--out", out.to_str().unwrap()];
    args.extend(extra);
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    let o = rankline(&args);
    let v = std::fs::read(out).ok().map(|bytes| {
        let text = if out.extension().is_some_and(|x| x == "gz") {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut s)
                .unwrap();
            s
        } else {
            String::from_utf8(bytes).unwrap()
        };
        serde_json::from_str(&text).expect("the trace parses")
    });
    (o, v)
}
