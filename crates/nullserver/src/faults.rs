//! The faults the null server injects on request, for tests of how a client copes:
//! slow answers, connections dropped or frozen after a number of queries, and
//! malformed answers. Each connection counts its own queries (see
//! [`crate::session::Protocol::is_query`]), so every connection meets the fault.

use std::time::Duration;

/// Which faults are on (all off by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Every answer to a query is sent this much later.
    pub delay: Option<Duration>,
    /// After answering this many queries, the connection is closed when the next one
    /// arrives (unanswered).
    pub drop_after: Option<u64>,
    /// After answering this many queries, the server stops answering but keeps the
    /// socket open (what arrives is read and discarded) until the client closes it.
    pub freeze_after: Option<u64>,
    /// After answering this many queries, the next answer is replaced by bytes that
    /// do not parse; later queries are answered normally.
    pub malformed_after: Option<u64>,
}

/// What to do with the `n`-th query of a connection (counted from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Answer it.
    Answer,
    /// Close the connection without answering.
    Drop,
    /// Stop answering; keep the socket.
    Freeze,
    /// Answer with a malformed packet.
    Malformed,
}

impl Faults {
    /// What to do with query number `n` (1-based) of a connection.
    pub fn action(&self, n: u64) -> Action {
        let past = |limit: Option<u64>| limit.is_some_and(|l| n > l);
        if past(self.drop_after) {
            Action::Drop
        } else if past(self.freeze_after) {
            Action::Freeze
        } else if self.malformed_after.is_some_and(|l| n == l + 1) {
            Action::Malformed
        } else {
            Action::Answer
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_start_after_their_count() {
        let none = Faults::default();
        assert_eq!(none.action(1_000_000), Action::Answer);
        let drop = Faults {
            drop_after: Some(2),
            ..Faults::default()
        };
        assert_eq!(drop.action(2), Action::Answer);
        assert_eq!(drop.action(3), Action::Drop);
        let freeze = Faults {
            freeze_after: Some(0),
            ..Faults::default()
        };
        assert_eq!(freeze.action(1), Action::Freeze);
        let bad = Faults {
            malformed_after: Some(1),
            ..Faults::default()
        };
        assert_eq!(
            [bad.action(1), bad.action(2), bad.action(3)],
            [Action::Answer, Action::Malformed, Action::Answer]
        );
    }
}
