//! Colours and glyphs. 256-colour indices work in 256-colour and true-colour
//! terminals alike; with `NO_COLOR` categories differ by glyph and text
//! attribute instead.

use crate::tui::index::Cat;
use ratatui::style::{Color, Modifier, Style};

const EIGHTHS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub no_color: bool,
}

fn color(cat: Cat) -> Color {
    Color::Indexed(match cat {
        Cat::Compute => 33,
        Cat::Memcpy => 178,
        Cat::Memset => 136,
        Cat::AllReduce => 160,
        Cat::AllGather => 40,
        Cat::ReduceScatter => 170,
        Cat::Broadcast => 208,
        Cat::Reduce => 124,
        Cat::SendRecv => 44,
        Cat::AllToAll => 99,
        Cat::CommOther => 245,
        Cat::Api => 110,
        Cat::Launch => 75,
        Cat::Nvtx => 150,
        Cat::Osrt => 180,
        Cat::OffCpu => 240,
        Cat::Sample => 114,
    })
}

/// The letter that stands for a collective type without colour.
pub fn comm_letter(cat: Cat) -> char {
    match cat {
        Cat::AllReduce => 'R',
        Cat::AllGather => 'G',
        Cat::ReduceScatter => 'S',
        Cat::Broadcast => 'B',
        Cat::Reduce => 'r',
        Cat::SendRecv => 'P',
        Cat::AllToAll => 'A',
        _ => 'C',
    }
}

fn eighth(busy: f32) -> char {
    let i = ((busy * 8.0).ceil() as usize).clamp(1, 8);
    EIGHTHS[i - 1]
}

impl Theme {
    /// Glyph and style of a timeline cell.
    pub fn cell(&self, cat: Cat, busy: f32) -> (char, Style) {
        if !self.no_color {
            return (eighth(busy), Style::default().fg(color(cat)));
        }
        let full = busy >= 0.5;
        match cat {
            c if c.is_comm() => {
                let s = Style::default().add_modifier(Modifier::BOLD);
                (
                    comm_letter(c),
                    if full {
                        s.add_modifier(Modifier::REVERSED)
                    } else {
                        s
                    },
                )
            }
            Cat::Memcpy | Cat::Memset => {
                let g = if cat == Cat::Memcpy { '▒' } else { '░' };
                if full {
                    (g, Style::default())
                } else {
                    ('▁', Style::default().add_modifier(Modifier::UNDERLINED))
                }
            }
            Cat::Api => (if full { '=' } else { '-' }, Style::default()),
            Cat::Launch => (
                if full { '>' } else { '›' },
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Cat::Nvtx => (
                if full { '▓' } else { eighth(busy) },
                Style::default().add_modifier(Modifier::DIM),
            ),
            Cat::Osrt => (if full { '≈' } else { '~' }, Style::default()),
            Cat::OffCpu => ('_', Style::default().add_modifier(Modifier::DIM)),
            Cat::Sample => (
                eighth(busy),
                Style::default().add_modifier(Modifier::ITALIC),
            ),
            _ => (eighth(busy), Style::default()),
        }
    }

    /// Text drawn on top of a wide event (its name).
    pub fn name_on(&self, cat: Cat) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default().fg(Color::Indexed(16)).bg(color(cat))
        }
    }

    /// A cell of the selected event or instance.
    pub fn selected(&self, s: Style) -> Style {
        if self.no_color {
            s.add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
        } else {
            s.fg(Color::Indexed(226))
                .bg(Color::Indexed(238))
                .add_modifier(Modifier::BOLD)
        }
    }

    /// Vertical markers of the selected instance.
    pub fn marker(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(Color::Indexed(220))
        }
    }

    pub fn label(&self) -> Style {
        Style::default()
    }

    pub fn cursor_label(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    pub fn late_label(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            Style::default()
                .fg(Color::Indexed(203))
                .add_modifier(Modifier::BOLD)
        }
    }

    pub fn warning(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
                .fg(Color::Indexed(203))
                .add_modifier(Modifier::BOLD)
        }
    }

    pub fn dim(&self) -> Style {
        Style::default().add_modifier(Modifier::DIM)
    }

    pub fn bar(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
                .fg(Color::Indexed(252))
                .bg(Color::Indexed(236))
        }
    }

    pub fn heading(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    /// A sample of a category for the legend.
    pub fn swatch(&self, cat: Cat) -> (char, Style) {
        self.cell(cat, 1.0)
    }
}
