//! `bmk-null-server`: a database server that stores nothing and answers at once, for
//! measuring how much load one client machine can make (the server is never the
//! limit) and for testing how clients cope with faults (slow answers, dropped or
//! frozen connections, malformed packets).
//!
//! It owns the MySQL and PostgreSQL wire protocols as far as benchmark clients use
//! them (log-in with any credentials, session set-up statements, text queries,
//! prepared statements, transactions), the analysis of a statement's text into the
//! shape of its answer, the event loops, and the faults. It must not store data,
//! depend on bmk's drivers or engine, or do work per query beyond parsing the request
//! and encoding the answer.
//!
//! Modules: [`options`] (command line), [`server`] (listeners and event loops),
//! [`session`] (the protocol interface the loop drives), [`mysql`] and [`pgsql`] (one
//! module per concept: framing, authentication, prepared statements, answers),
//! [`statements`] (what a statement answers with), [`faults`]. The minimal client of
//! the round-trip floor benchmark is [`floor`].

#![deny(missing_docs)]

pub mod faults;
pub mod floor;
pub mod flow;
pub mod mysql;
pub mod options;
pub mod pgsql;
pub mod server;
pub mod session;
pub mod statements;
