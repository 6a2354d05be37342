//! The one error type of scenario loading and validation.

use std::fmt;

/// A scenario that failed to load: where, which key, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(
                f,
                "{}:{}: key `{}`: {}",
                self.file, l, self.key, self.message
            ),
            None => write!(f, "{}: key `{}`: {}", self.file, self.key, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}
