//! The session's messages (inputs that failed, inputs given twice, the
//! cache turned off): a list kept for the whole session, the newest shown
//! in the status line, all of it in the list `!` opens.

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
}

/// The messages of a session, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Messages {
    list: Vec<Message>,
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
        self.list.push(Message { level, text });
        true
    }

    /// The newest message: the one the status line shows.
    pub fn newest(&self) -> Option<&Message> {
        self.list.last()
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
    fn levels_are_ordered_by_weight_and_named() {
        assert!(Level::Info < Level::Warn && Level::Warn < Level::Error);
        let names: Vec<&str> = Level::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(names, ["info", "warning", "error"]);
    }
}
