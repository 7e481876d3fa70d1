//! `report bookmarks`: the places marked in the timeline (`M`) for this
//! capture, as kept in rankline's state directory.

use super::context::Context;
use super::fit::Keep;
use super::table::Table;
use crate::profile::bookmarks::{self, Kept};
use crate::text_safe::escape_controls;
use serde_json::{Value, json};

fn read(cx: &Context) -> Result<(Kept, String), String> {
    let inputs = bookmarks::inputs(cx.profile);
    let file = bookmarks::file_of(&inputs)?;
    Ok((
        bookmarks::load(&inputs)?,
        crate::text_safe::path_text(&file),
    ))
}

pub fn to_json(cx: &Context) -> Value {
    match read(cx) {
        Ok((Kept { marks, left_out }, file)) => json!({
            "file": file,
            "left_out": left_out,
            "bookmarks": marks.iter().map(|b| json!({
                "name": escape_controls(&b.name),
                "group": b.group.as_deref().map(escape_controls),
                "instance": b.instance,
                "window_ns": b.window_ns,
                "created": escape_controls(&b.created),
            })).collect::<Vec<_>>(),
        }),
        Err(why) => json!({ "error": why }),
    }
}

pub fn to_text(cx: &Context) -> String {
    let mut out = String::from("Bookmarks (M in the timeline marks one; ' lists them)\n");
    let (Kept { marks, left_out }, file) = match read(cx) {
        Ok(r) => r,
        Err(why) => return out + &format!("  {why}\n"),
    };
    out += &format!("  kept in {file}\n");
    if let Some(why) = left_out {
        out += &format!("  {why}\n");
    }
    if marks.is_empty() {
        return out + "  none for this capture\n";
    }
    let mut t =
        Table::new(&["name", "instance", "start_s", "end_s", "created"]).shorten(0, Keep::Start);
    for b in &marks {
        let at = match (&b.group, b.instance) {
            (Some(g), Some(k)) => format!("{g}:{k}"),
            _ => "-".into(),
        };
        t.row(vec![
            b.name.clone(),
            at,
            format!("{:.6}", b.window_ns[0] as f64 / 1e9),
            format!("{:.6}", b.window_ns[1] as f64 / 1e9),
            b.created.clone(),
        ]);
    }
    out + &t.render(cx.cols())
}
