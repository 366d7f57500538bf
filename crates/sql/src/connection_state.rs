//! What every driver's connection keeps for the [`Connection`](crate::Connection)
//! methods that are the same on every server: the bulk-insert buffer, the result sets a
//! multi-statement query left for `next_result`, and the affected-row count.
//!
//! [`KeepsConnectionState`] is how those provided methods reach it. It sits in a private
//! module, so no type outside this crate can implement it, and so none can implement
//! `Connection` (a sealed trait): the drivers are the crate's own.

use std::collections::VecDeque;

use crate::bulk::BulkBuffer;
use crate::driver_kind::DriverKind;
use crate::resultset::ResultSet;

/// The per-connection state the shared [`Connection`](crate::Connection) methods use.
#[derive(Debug)]
pub struct ConnectionState {
    /// The driver, for the errors the shared methods raise.
    pub(crate) driver: DriverKind,
    /// `bulk_insert_*` tuples not sent yet.
    pub(crate) bulk: BulkBuffer,
    /// Result sets of the last query after its first (`None`: a statement without one).
    pub(crate) pending: VecDeque<Option<ResultSet>>,
    /// Rows affected by the last statement without a result set.
    pub(crate) affected: u64,
}

impl ConnectionState {
    /// The state of a new connection of `driver`.
    pub(crate) fn new(driver: DriverKind) -> ConnectionState {
        ConnectionState {
            driver,
            bulk: BulkBuffer::default(),
            pending: VecDeque::new(),
            affected: 0,
        }
    }
}

/// Gives the provided [`Connection`](crate::Connection) methods the driver's
/// [`ConnectionState`].
pub trait KeepsConnectionState {
    /// The state, to read.
    fn state(&self) -> &ConnectionState;
    /// The state, to change.
    fn state_mut(&mut self) -> &mut ConnectionState;
}

/// Implements [`KeepsConnectionState`] for a driver connection that keeps its state in a field named `state`.
macro_rules! keeps_state_in_field {
    ($connection:ty) => {
        impl $crate::connection_state::KeepsConnectionState for $connection {
            fn state(&self) -> &$crate::connection_state::ConnectionState {
                &self.state
            }
            fn state_mut(&mut self) -> &mut $crate::connection_state::ConnectionState {
                &mut self.state
            }
        }
    };
}
pub(crate) use keeps_state_in_field;
