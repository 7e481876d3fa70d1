//! The heat scale the straggler map and the steps view draw their cells
//! on: eight glyphs and colours, each level twice the one below, so a
//! 1 ms figure still shows beside a 40 ms one.

use super::theme::Theme;
use ratatui::style::{Color, Style};

/// The scale: level 1 (lowest) to 8; nothing (a lateness of 0: the first
/// to start; no time of the kind) is [`FIRST`].
pub const GLYPHS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
pub const FIRST: char = '·';
/// Colours of the levels, cool to hot.
pub const COLOURS: [u8; 8] = [66, 72, 108, 143, 179, 173, 167, 196];

/// The level (1..=8) of `ns` on a scale topped by `top`: each level
/// halves, so a 1 ms straggler still shows beside a 40 ms one.
pub fn level(ns: i64, top: i64) -> usize {
    if ns <= 0 || top <= 0 {
        return 0;
    }
    let halvings = (top as f64 / ns as f64).log2().floor().max(0.0) as usize;
    8usize.saturating_sub(halvings).max(1)
}

/// The upper bound of level `i` (1..=8), in ns.
pub fn level_top(i: usize, top: i64) -> f64 {
    top as f64 / f64::powi(2.0, 8 - i as i32)
}

/// Milliseconds with two significant digits ("0.36", "5.8", "47").
pub fn ms2(ns: f64) -> String {
    let ms = ns / 1e6;
    match ms {
        m if m >= 10.0 => format!("{m:.0}"),
        m if m >= 1.0 => format!("{m:.1}"),
        m if m >= 0.1 => format!("{m:.2}"),
        m => format!("{m:.3}"),
    }
}

pub fn glyph(level: usize) -> char {
    if level == 0 { FIRST } else { GLYPHS[level - 1] }
}

pub fn cell_style(theme: &Theme, level: usize) -> Style {
    if theme.no_color || level == 0 {
        return if level == 0 {
            theme.dim()
        } else {
            Style::default()
        };
    }
    Style::default().fg(Color::Indexed(COLOURS[level - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_halves_from_the_top() {
        let top = 64_000_000;
        assert_eq!(level(0, top), 0);
        assert_eq!(level(top, top), 8);
        assert_eq!(level(top / 2 + 1, top), 8);
        assert_eq!(level(top / 2, top), 7);
        assert_eq!(level(top / 4, top), 6);
        assert_eq!(level(1, top), 1);
        assert_eq!(level(5, 0), 0);
        assert_eq!(ms2(level_top(1, top)), "0.50");
        assert_eq!(ms2(level_top(8, top)), "64");
    }
}
