//! Task ids: 128 bits from the operating system's CSPRNG, so an id can be
//! handed out as the only proof of knowing a task without being guessable.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How many random bytes an id carries.
const ID_BYTES: usize = 16;

/// The longest id a lookup accepts; anything longer cannot be ours and is
/// "not found" without a trip to the store.
pub const MAX_ID_LEN: usize = 128;

/// A task's id: 32 lowercase hex digits for ids this engine makes. Ids read
/// back from a client are taken as given; an id that names no task of the
/// caller is simply not found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(String);

impl TaskId {
    /// A fresh, unguessable id.
    pub fn generate() -> TaskId {
        let mut bytes = [0u8; ID_BYTES];
        getrandom::fill(&mut bytes).expect("the OS random source is available");
        let mut id = String::with_capacity(ID_BYTES * 2);
        for byte in bytes {
            id.push(char::from(HEX[usize::from(byte >> 4)]));
            id.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        TaskId(id)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this id could name a stored task at all (non-empty, not
    /// longer than [`MAX_ID_LEN`]).
    pub fn is_plausible(&self) -> bool {
        !self.0.is_empty() && self.0.len() <= MAX_ID_LEN
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl From<String> for TaskId {
    fn from(id: String) -> Self {
        TaskId(id)
    }
}

impl From<&str> for TaskId {
    fn from(id: &str) -> Self {
        TaskId(id.to_owned())
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn generated_ids_are_hex_of_full_length_and_distinct() {
        let ids: HashSet<TaskId> = (0..1000).map(|_| TaskId::generate()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            assert_eq!(id.as_str().len(), 32);
            assert!(id.as_str().bytes().all(|b| HEX.contains(&b)), "{id}");
            assert!(id.is_plausible());
        }
    }

    #[test]
    fn empty_and_overlong_ids_are_not_plausible() {
        assert!(!TaskId::from("").is_plausible());
        assert!(!TaskId::from("a".repeat(MAX_ID_LEN + 1)).is_plausible());
        assert!(TaskId::from("a".repeat(MAX_ID_LEN)).is_plausible());
    }
}
