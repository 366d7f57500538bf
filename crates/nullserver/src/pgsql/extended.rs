//! The extended-query protocol's objects of one PostgreSQL connection: prepared
//! statements (`Parse`) and portals (`Bind`), by name, and the decoding of a `Bind`
//! message's parameter values (only integers are kept: they decide a range's rows).

use std::collections::HashMap;
use std::sync::Arc;

use super::framing::Reader;
use crate::statements::{Extent, Statement};

/// A statement made by `Parse`.
#[derive(Debug)]
pub struct Prepared {
    /// Its analysis.
    pub stmt: Statement,
    /// Parameter types the client declared (0 = let the server decide).
    pub declared: Vec<u32>,
}

/// A portal made by `Bind`: a statement with its parameter values applied.
#[derive(Debug)]
pub struct Portal {
    /// The statement.
    pub prepared: Arc<Prepared>,
    /// The rows its execution answers with.
    pub extent: Extent,
    /// Result format codes.
    pub formats: Vec<i16>,
}

/// Statements and portals of a connection. The unnamed ones, which most clients use
/// for every query, live in their own slots so that a `Bind` allocates nothing.
#[derive(Debug, Default)]
pub struct Objects {
    statements: HashMap<Box<[u8]>, Arc<Prepared>>,
    unnamed_statement: Option<Arc<Prepared>>,
    portals: HashMap<Box<[u8]>, Portal>,
    unnamed_portal: Option<Portal>,
}

/// Why a `Bind` cannot be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// The message ends before its fields do.
    #[error("invalid Bind message")]
    Malformed,
    /// The statement named does not exist.
    #[error("prepared statement \"{0}\" does not exist")]
    NoStatement(String),
    /// The number of values differs from the statement's parameters.
    #[error("bind message supplies {given} parameters, but prepared statement \"{name}\" requires {wanted}")]
    Count {
        /// Statement name.
        name: String,
        /// Values sent.
        given: usize,
        /// Parameters of the statement.
        wanted: usize,
    },
}

impl Objects {
    /// Stores a statement under `name` (replacing an unnamed one).
    pub fn add_statement(&mut self, name: &[u8], p: Prepared) {
        let p = Arc::new(p);
        if name.is_empty() {
            self.unnamed_statement = Some(p);
        } else {
            self.statements.insert(name.into(), p);
        }
    }

    /// The statement named `name`.
    pub fn statement(&self, name: &[u8]) -> Option<&Arc<Prepared>> {
        if name.is_empty() {
            self.unnamed_statement.as_ref()
        } else {
            self.statements.get(name)
        }
    }

    /// The portal named `name`.
    pub fn portal(&self, name: &[u8]) -> Option<&Portal> {
        if name.is_empty() {
            self.unnamed_portal.as_ref()
        } else {
            self.portals.get(name)
        }
    }

    /// Closes statement (`kind` `S`) or portal (`P`) `name`.
    pub fn close(&mut self, kind: u8, name: &[u8]) {
        match (kind, name.is_empty()) {
            (b'S', true) => self.unnamed_statement = None,
            (b'S', false) => {
                self.statements.remove(name);
            }
            (_, true) => self.unnamed_portal = None,
            (_, false) => {
                self.portals.remove(name);
            }
        }
    }

    /// Drops the unnamed portal (at the end of a transaction or a simple query).
    pub fn end_of_batch(&mut self) {
        self.portals.clear();
    }

    /// Carries out a `Bind` message body.
    pub fn bind(&mut self, body: &[u8]) -> Result<(), BindError> {
        let mut r = Reader::new(body);
        let portal = r.cstr().ok_or(BindError::Malformed)?;
        let name = r.cstr().ok_or(BindError::Malformed)?;
        let prepared = self
            .statement(name)
            .cloned()
            .ok_or_else(|| BindError::NoStatement(String::from_utf8_lossy(name).into_owned()))?;
        let nformats = r.i16().ok_or(BindError::Malformed)?.max(0) as usize;
        let formats = r.bytes(2 * nformats).ok_or(BindError::Malformed)?;
        let format_of = |i: usize| -> i16 {
            let f = |k: usize| i16::from_be_bytes([formats[2 * k], formats[2 * k + 1]]);
            match nformats {
                0 => 0,
                1 => f(0),
                _ if i < nformats => f(i),
                _ => 0,
            }
        };
        let nvalues = r.i16().ok_or(BindError::Malformed)?.max(0) as usize;
        if nvalues != prepared.stmt.params {
            return Err(BindError::Count {
                name: String::from_utf8_lossy(name).into_owned(),
                given: nvalues,
                wanted: prepared.stmt.params,
            });
        }
        let mut values = [None; 8];
        for i in 0..nvalues {
            let len = r.i32().ok_or(BindError::Malformed)?;
            if len < 0 {
                continue;
            }
            let v = r.bytes(len as usize).ok_or(BindError::Malformed)?;
            if i >= values.len() {
                continue;
            }
            values[i] = if format_of(i) == 1 {
                match v.len() {
                    2 => Some(i64::from(i16::from_be_bytes([v[0], v[1]]))),
                    4 => Some(i64::from(i32::from_be_bytes(
                        v.try_into().expect("4 bytes"),
                    ))),
                    8 => Some(i64::from_be_bytes(v.try_into().expect("8 bytes"))),
                    _ => None,
                }
            } else {
                std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
            };
        }
        let nresults = r.i16().ok_or(BindError::Malformed)?.max(0) as usize;
        let results = r.bytes(2 * nresults).ok_or(BindError::Malformed)?;
        let extent = prepared.stmt.extent(&|i| values.get(i).copied().flatten());
        let mut p = match (portal.is_empty(), self.unnamed_portal.take()) {
            (true, Some(mut old)) => {
                old.prepared = prepared;
                old.extent = extent;
                old.formats.clear();
                old
            }
            _ => Portal {
                prepared,
                extent,
                formats: Vec::new(),
            },
        };
        p.formats.extend(
            results
                .chunks_exact(2)
                .map(|c| i16::from_be_bytes([c[0], c[1]])),
        );
        if portal.is_empty() {
            self.unnamed_portal = Some(p);
        } else {
            self.portals.insert(portal.into(), p);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statements::{analyse, Context, Dialect};

    fn bind_msg(stmt: &str, formats: &[i16], values: &[Option<&[u8]>], results: &[i16]) -> Vec<u8> {
        let mut b = vec![0];
        b.extend_from_slice(stmt.as_bytes());
        b.push(0);
        b.extend_from_slice(&(formats.len() as i16).to_be_bytes());
        formats
            .iter()
            .for_each(|f| b.extend_from_slice(&f.to_be_bytes()));
        b.extend_from_slice(&(values.len() as i16).to_be_bytes());
        for v in values {
            match v {
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        b.extend_from_slice(&(results.len() as i16).to_be_bytes());
        results
            .iter()
            .for_each(|f| b.extend_from_slice(&f.to_be_bytes()));
        b
    }

    #[test]
    fn bind_reads_text_and_binary_values() {
        let ctx = Context {
            version: "15.0",
            database: "d",
            user: "u",
            connection_id: 1,
            dialect: Dialect::Pgsql,
        };
        let mut o = Objects::default();
        let stmt = analyse("SELECT c FROM t WHERE id BETWEEN $1 AND $2", &ctx);
        o.add_statement(
            b"s1",
            Prepared {
                stmt,
                declared: vec![],
            },
        );
        let hi = 150i32.to_be_bytes();
        o.bind(&bind_msg("s1", &[0, 1], &[Some(b"101"), Some(&hi)], &[1]))
            .unwrap();
        let p = o.portal(b"").unwrap();
        assert_eq!((p.extent.rows, p.extent.first_id), (50, 101));
        assert_eq!(p.formats, vec![1]);
        assert!(matches!(
            o.bind(&bind_msg("s1", &[], &[None], &[])),
            Err(BindError::Count {
                given: 1,
                wanted: 2,
                ..
            })
        ));
        assert!(matches!(
            o.bind(&bind_msg("nope", &[], &[], &[])),
            Err(BindError::NoStatement(_))
        ));
        assert_eq!(o.bind(&[0]), Err(BindError::Malformed));
    }
}
