//! The statements of one event of each OLTP workload, as the floor client sends them:
//! the same statements, in the same order and number, as bmk's and sysbench's OLTP
//! workloads with their default options (10 point selects, one of each range select
//! 100 ids wide, two updates, a delete and an insert per read-write transaction), on
//! one table, with fixed parameter values. The `connect` workload has no requests: its
//! event is the connection and log-in itself (see [`super::connect`]).

use crate::statements::{C_VALUE, PAD_VALUE};

/// A parameter value of a prepared statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// An integer (`INT`).
    Int(i32),
    /// A string (`CHAR`).
    Text(&'static str),
}

/// One request of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A text query (`BEGIN`, `COMMIT`).
    Text(&'static str),
    /// An execution of prepared statement `n` of [`STATEMENTS`] with these values.
    Execute(usize, Vec<Param>),
}

/// The statements the floor client prepares, in `?` form.
pub const STATEMENTS: [&str; 9] = [
    "SELECT c FROM sbtest1 WHERE id=?",
    "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
    "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
    "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
    "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
    "UPDATE sbtest1 SET k=k+1 WHERE id=?",
    "UPDATE sbtest1 SET c=? WHERE id=?",
    "DELETE FROM sbtest1 WHERE id=?",
    "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
];

/// The workloads the floor client knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// One point select per event.
    PointSelect,
    /// BEGIN, 10 point selects, 4 range selects, COMMIT.
    ReadOnly,
    /// The read-only event plus 2 updates, a delete and an insert.
    ReadWrite,
    /// Open a connection, log in, close it cleanly; no statements.
    Connect,
}

impl Workload {
    /// The workload named `name` (`oltp_` prefix optional).
    pub fn from_name(name: &str) -> Option<Workload> {
        match name.strip_prefix("oltp_").unwrap_or(name) {
            "point_select" => Some(Workload::PointSelect),
            "read_only" => Some(Workload::ReadOnly),
            "read_write" => Some(Workload::ReadWrite),
            "connect" => Some(Workload::Connect),
            _ => None,
        }
    }

    /// The requests of one event; ranges are `range` ids wide. None for
    /// [`Workload::Connect`].
    pub fn event(self, range: i32) -> Vec<Step> {
        if self == Workload::Connect {
            return Vec::new();
        }
        let id = 5000;
        let point = || Step::Execute(0, vec![Param::Int(id)]);
        if self == Workload::PointSelect {
            return vec![point()];
        }
        let mut steps = vec![Step::Text("BEGIN")];
        steps.extend((0..10).map(|_| point()));
        for n in 1..=4 {
            steps.push(Step::Execute(
                n,
                vec![Param::Int(id), Param::Int(id + range - 1)],
            ));
        }
        if self == Workload::ReadWrite {
            steps.push(Step::Execute(5, vec![Param::Int(id)]));
            steps.push(Step::Execute(6, vec![Param::Text(C_VALUE), Param::Int(id)]));
            steps.push(Step::Execute(7, vec![Param::Int(id)]));
            steps.push(Step::Execute(
                8,
                vec![
                    Param::Int(id),
                    Param::Int(id),
                    Param::Text(C_VALUE),
                    Param::Text(PAD_VALUE),
                ],
            ));
        }
        steps.push(Step::Text("COMMIT"));
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_have_the_oltp_statement_counts() {
        assert_eq!(Workload::PointSelect.event(100).len(), 1);
        assert_eq!(Workload::ReadOnly.event(100).len(), 16);
        assert_eq!(Workload::ReadWrite.event(100).len(), 20);
        assert_eq!(
            Workload::from_name("oltp_read_write"),
            Some(Workload::ReadWrite)
        );
    }
}
