//! The command line of `bmk-null-server`: ports, threads, authentication, reported
//! versions and faults, and the help text that documents them.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use crate::faults::Faults;
use crate::mysql::auth::Plugin;
use crate::pgsql::auth::AuthMethod;

/// The help text (`--help`).
pub const HELP: &str = "\
bmk-null-server: a database server that stores nothing and answers at once

Speaks enough of the MySQL and PostgreSQL wire protocols for benchmark clients (bmk,
sysbench, the mysql/mariadb and psql clients) to log in with any user, password and
database, run session set-up statements, text queries and prepared statements, and get
well-formed answers to the OLTP statements: a point select answers one row, `id BETWEEN
a AND b` answers b-a+1 rows (at most 10000), SUM(k) one row, UPDATE/DELETE/INSERT the
rows they name as affected. Listens on 127.0.0.1 only and prints `ready` with the
addresses on stdout once it listens.

Usage: bmk-null-server [--mysql-port P] [--pgsql-port Q] [options]

  --mysql-port P        serve MySQL on 127.0.0.1:P (0 = any free port)
  --pgsql-port Q        serve PostgreSQL on 127.0.0.1:Q (0 = any free port)
  --threads N           event-loop threads (default: one per CPU)
  --mysql-auth PLUGIN   plugin the MySQL greeting names: mysql_native_password
                        (default) or caching_sha2_password (answered with its fast
                        authentication); any password is accepted either way
  --pgsql-auth METHOD   trust (default), password (cleartext asked) or md5 (MD5 asked);
                        any password is accepted
  --mysql-version S     version string of the MySQL greeting (default 8.0.40-bmk-null)
  --pgsql-version S     server_version reported to PostgreSQL clients (default 15.0)

Faults (each connection counts its own queries: every MySQL command after log-in, a
PostgreSQL Query, or the Sync or Flush that ends an extended-protocol batch):
  --delay-ms MS         send every answer to a query MS milliseconds late
  --drop-after N        answer N queries, then close the connection when the next
                        one arrives, without answering it
  --freeze-after N      answer N queries, then answer nothing more but keep the
                        connection open (what arrives is read and discarded) until
                        the client closes it
  --malformed-after N   answer N queries, then answer the next with bytes no client
                        can parse (MySQL: an OK packet cut inside its affected-rows
                        field; PostgreSQL: a message of a type that does not exist);
                        later queries are answered normally

  -h, --help            print this help
";

/// What the server is started with.
#[derive(Debug, Clone)]
pub struct Config {
    /// MySQL port, if MySQL is served.
    pub mysql_port: Option<u16>,
    /// PostgreSQL port, if PostgreSQL is served.
    pub pgsql_port: Option<u16>,
    /// Event-loop threads.
    pub threads: usize,
    /// Plugin the MySQL greeting names.
    pub mysql_auth: Plugin,
    /// How PostgreSQL clients authenticate.
    pub pgsql_auth: AuthMethod,
    /// MySQL server version string.
    pub mysql_version: Arc<str>,
    /// PostgreSQL `server_version`.
    pub pgsql_version: Arc<str>,
    /// Faults to inject.
    pub faults: Faults,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// Serve.
    Serve(Config),
    /// Print the help.
    Help,
}

/// A command line that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    /// Neither port given.
    #[error("give --mysql-port, --pgsql-port or both (see --help)")]
    NoPort,
    /// A value that does not parse.
    #[error("invalid value '{value}' for {option}: {why}")]
    Value {
        /// The option.
        option: String,
        /// What was given.
        value: String,
        /// What is expected.
        why: &'static str,
    },
    /// Anything lexopt rejects (unknown option, missing value).
    #[error("{0} (see --help)")]
    Syntax(#[from] lexopt::Error),
}

fn number<T: std::str::FromStr>(
    option: &str,
    v: OsString,
    why: &'static str,
) -> Result<T, OptionsError> {
    let s = v.to_string_lossy().into_owned();
    s.parse().map_err(|_| OptionsError::Value {
        option: option.to_string(),
        value: s,
        why,
    })
}

/// Parses the arguments (without the program name).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, OptionsError> {
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(args);
    let mut c = Config {
        mysql_port: None,
        pgsql_port: None,
        threads: std::thread::available_parallelism().map_or(1, usize::from),
        mysql_auth: Plugin::Native,
        pgsql_auth: AuthMethod::Trust,
        mysql_version: "8.0.40-bmk-null".into(),
        pgsql_version: "15.0".into(),
        faults: Faults::default(),
    };
    let count = |o: &str, v| number::<u64>(o, v, "a whole number");
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Long("mysql-port") => {
                c.mysql_port = Some(number("--mysql-port", p.value()?, "a port number")?)
            }
            Long("pgsql-port") => {
                c.pgsql_port = Some(number("--pgsql-port", p.value()?, "a port number")?)
            }
            Long("threads") => {
                c.threads = number("--threads", p.value()?, "a number of threads from 1")?;
                if c.threads == 0 {
                    return Err(OptionsError::Value {
                        option: "--threads".into(),
                        value: "0".into(),
                        why: "a number of threads from 1",
                    });
                }
            }
            Long("mysql-auth") => {
                let v = p.value()?.to_string_lossy().into_owned();
                c.mysql_auth = match v.as_str() {
                    "mysql_native_password" | "native" => Plugin::Native,
                    "caching_sha2_password" | "caching-sha2" => Plugin::CachingSha2,
                    _ => {
                        return Err(OptionsError::Value {
                            option: "--mysql-auth".into(),
                            value: v,
                            why: "mysql_native_password or caching_sha2_password",
                        })
                    }
                };
            }
            Long("pgsql-auth") => {
                let v = p.value()?.to_string_lossy().into_owned();
                c.pgsql_auth = match v.as_str() {
                    "trust" => AuthMethod::Trust,
                    "password" | "cleartext" => AuthMethod::Password,
                    "md5" => AuthMethod::Md5,
                    _ => {
                        return Err(OptionsError::Value {
                            option: "--pgsql-auth".into(),
                            value: v,
                            why: "trust, password or md5",
                        })
                    }
                };
            }
            Long("mysql-version") => c.mysql_version = p.value()?.to_string_lossy().into(),
            Long("pgsql-version") => c.pgsql_version = p.value()?.to_string_lossy().into(),
            Long("delay-ms") => {
                c.faults.delay = Some(Duration::from_millis(count("--delay-ms", p.value()?)?));
            }
            Long("drop-after") => c.faults.drop_after = Some(count("--drop-after", p.value()?)?),
            Long("freeze-after") => {
                c.faults.freeze_after = Some(count("--freeze-after", p.value()?)?)
            }
            Long("malformed-after") => {
                c.faults.malformed_after = Some(count("--malformed-after", p.value()?)?);
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    if c.mysql_port.is_none() && c.pgsql_port.is_none() {
        return Err(OptionsError::NoPort);
    }
    Ok(Command::Serve(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn options_parse_and_bad_values_are_named() {
        let Command::Serve(c) = parse(args(&[
            "--mysql-port",
            "0",
            "--threads=2",
            "--drop-after",
            "5",
        ]))
        .unwrap() else {
            panic!("serve expected");
        };
        assert_eq!((c.mysql_port, c.pgsql_port, c.threads), (Some(0), None, 2));
        assert_eq!(c.faults.drop_after, Some(5));
        assert!(matches!(parse(args(&["--help"])), Ok(Command::Help)));
        assert!(matches!(parse(args(&[])), Err(OptionsError::NoPort)));
        let e = parse(args(&["--pgsql-port", "x"])).unwrap_err().to_string();
        assert_eq!(e, "invalid value 'x' for --pgsql-port: a port number");
        assert!(parse(args(&["--bogus"]))
            .unwrap_err()
            .to_string()
            .contains("--bogus"));
    }
}
