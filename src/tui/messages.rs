//! The session's messages: what loading said (inputs that failed, inputs
//! given twice, the cache turned off) and what the keys answered ("no
//! later event on this row"). One list kept for the whole session: the
//! status line shows the answer to the last key until the next one, else
//! the newest warning; `!` lists them all, each with the time it was
//! said.

/// How much a message matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing; nothing is missing.
    Info,
    /// The timeline works, with a caveat (the cache is off…).
    Warn,
    /// Something asked for is not shown (a file that failed).
    Error,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Info, Level::Warn, Level::Error];

    pub fn name(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warning",
            Level::Error => "error",
        }
    }

    /// The mark in front of the message in the status line and the list.
    pub fn icon(self) -> &'static str {
        match self {
            Level::Info => "·",
            Level::Warn => "⚠",
            Level::Error => "✗",
        }
    }
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub level: Level,
    pub text: String,
    /// When it was (last) said, ns since the Unix epoch: the list shows
    /// it in UTC, to be read beside a job's own logs.
    pub at_epoch_ns: i64,
}

/// Now, ns since the Unix epoch (0 on a clock set before 1970).
fn now_epoch_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The messages of a session, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Messages {
    list: Vec<Message>,
    /// The answer to the last key (an index into `list`), shown until the
    /// next key.
    answer: Option<usize>,
}

impl Messages {
    /// Adds a message unless the same text is already listed (at any
    /// level: a cache refusal said by two files is one fact). Returns
    /// whether it was added.
    pub fn push(&mut self, level: Level, text: impl Into<String>) -> bool {
        let text = text.into();
        if self.list.iter().any(|m| m.text == text) {
            return false;
        }
        self.list.push(Message {
            level,
            text,
            at_epoch_ns: now_epoch_ns(),
        });
        true
    }

    /// Answers the last key with `text` (in the status line until the
    /// next key), and lists it; said again, the listed one is shown.
    pub fn answer(&mut self, level: Level, text: impl Into<String>) {
        let text = text.into();
        let at = match self.list.iter().position(|m| m.text == text) {
            Some(i) => {
                self.list[i].at_epoch_ns = now_epoch_ns();
                i
            }
            None => {
                self.list.push(Message {
                    level,
                    text,
                    at_epoch_ns: now_epoch_ns(),
                });
                self.list.len() - 1
            }
        };
        self.answer = Some(at);
    }

    /// A new key: the last answer leaves the status line (not the list).
    pub fn clear_answer(&mut self) {
        self.answer = None;
    }

    /// The answer to the last key, while it stands.
    pub fn answered(&self) -> Option<&Message> {
        self.answer.and_then(|i| self.list.get(i))
    }

    /// The newest warning or error: what the status line shows when no
    /// key has been answered.
    pub fn newest(&self) -> Option<&Message> {
        self.list.iter().rev().find(|m| m.level >= Level::Warn)
    }

    /// The errors, oldest first (files that could not be opened).
    pub fn errors(&self) -> impl Iterator<Item = &Message> {
        self.list.iter().filter(|m| m.level == Level::Error)
    }

    /// Every message, oldest first.
    pub fn all(&self) -> &[Message] {
        &self.list
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The highest level listed, for the list's title.
    pub fn worst(&self) -> Option<Level> {
        self.list.iter().map(|m| m.level).max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_empty() {
        let m = Messages::default();
        assert!(m.is_empty());
        assert_eq!(m.newest(), None);
        assert_eq!(m.worst(), None);
    }

    #[test]
    fn keeps_every_message_in_order_and_the_newest_last() {
        let mut m = Messages::default();
        assert!(m.push(Level::Error, "a.sqlite: no such file"));
        assert!(m.push(Level::Warn, "cache off: not a directory"));
        assert_eq!(m.len(), 2);
        assert_eq!(m.all()[0].text, "a.sqlite: no such file");
        assert_eq!(m.all()[0].level, Level::Error);
        let newest = m.newest().unwrap();
        assert_eq!(
            (newest.level, newest.text.as_str()),
            (Level::Warn, "cache off: not a directory")
        );
        assert_eq!(m.worst(), Some(Level::Error));
    }

    #[test]
    fn a_duplicate_is_not_added_twice() {
        let mut m = Messages::default();
        assert!(m.push(Level::Warn, "cache off"));
        assert!(m.push(Level::Error, "b: no such file"));
        assert!(!m.push(Level::Warn, "cache off"));
        assert!(!m.push(Level::Error, "cache off"));
        assert_eq!(m.len(), 2);
        // The repeat does not make an old message the newest again.
        assert_eq!(m.newest().unwrap().text, "b: no such file");
    }

    #[test]
    fn an_answer_stands_until_the_next_key_and_stays_listed() {
        let mut m = Messages::default();
        m.push(Level::Warn, "cache off");
        m.answer(Level::Info, "no later event on this row");
        assert_eq!(m.answered().unwrap().text, "no later event on this row");
        // The status line falls back to warnings, not to old answers.
        assert_eq!(m.newest().unwrap().text, "cache off");
        m.clear_answer();
        assert_eq!(m.answered(), None);
        assert_eq!(m.len(), 2);
        // Said again: shown again, listed once.
        m.answer(Level::Info, "no later event on this row");
        assert_eq!(m.answered().unwrap().text, "no later event on this row");
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn levels_are_ordered_by_weight_and_named() {
        assert!(Level::Info < Level::Warn && Level::Warn < Level::Error);
        let names: Vec<&str> = Level::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(names, ["info", "warning", "error"]);
    }
}
