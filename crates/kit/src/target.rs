//! Named connection profiles (`bmk.toml`): where a benchmark connects, chosen with
//! `--target NAME`.
//!
//! ```toml
//! [targets.maria]
//! driver = "mysql"
//! host = "127.0.0.1"          # or hosts = ["db1", "db2"]
//! port = 3306
//! user = "sbtest"
//! database = "sbtest"
//! password_env = "MARIA_PASSWORD"    # or password_file = "/etc/bmk/maria.pw"
//! [targets.maria.options]
//! mysql-ignore-errors = "all"
//! ```
//!
//! A password is only ever named by reference (an environment variable or a file) and
//! is read when the target is used; an inline `password` is refused, so the file can be
//! shared and committed. The resolved value goes to the driver's password option only,
//! which every writer of results redacts. This module turns a target into plain option
//! assignments; it does not connect, and plain options given on the command line are
//! applied after these, so they override the target.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use bmk_engine::bounded_file;

use crate::error::KitError;

/// The file name looked for in `$BMK_HOME` and the current directory.
pub const CONFIG_FILE: &str = "bmk.toml";

/// One named target, as written in `bmk.toml`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TargetDef {
    /// `mysql`, `pgsql` or `sqlite`.
    pub driver: Spanned<String>,
    /// Host name(s): a string or a list.
    #[serde(default)]
    pub host: Option<OneOrMany<String>>,
    /// Same as `host`.
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// Port(s): a number or a list.
    #[serde(default)]
    pub port: Option<OneOrMany<u16>>,
    /// UNIX socket path (MySQL/MariaDB).
    #[serde(default)]
    pub socket: Option<String>,
    /// User name.
    #[serde(default)]
    pub user: Option<String>,
    /// Database (schema) name; for SQLite the database file.
    #[serde(default)]
    pub database: Option<String>,
    /// Environment variable holding the password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// File holding the password (first line; trailing newline ignored).
    #[serde(default)]
    pub password_file: Option<String>,
    /// Refused: passwords are never written inline. Kept to say so with its line.
    #[serde(default)]
    pub password: Option<Spanned<toml::Value>>,
    /// TLS mode (`--mysql-ssl` / `--pgsql-sslmode` value).
    #[serde(default)]
    pub ssl: Option<String>,
    /// TLS CA certificate file (MySQL).
    #[serde(default)]
    pub ssl_ca: Option<String>,
    /// TLS client certificate file (MySQL).
    #[serde(default)]
    pub ssl_cert: Option<String>,
    /// TLS client key file (MySQL).
    #[serde(default)]
    pub ssl_key: Option<String>,
    /// Any other options, `name = value`, applied as `--name=value`.
    #[serde(default)]
    pub options: BTreeMap<String, Spanned<toml::Value>>,
}

/// A value given as one item or a list.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// One.
    One(T),
    /// Several.
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    fn to_vec(&self) -> Vec<T> {
        match self {
            OneOrMany::One(v) => vec![v.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigDoc {
    #[serde(default)]
    targets: BTreeMap<String, TargetDef>,
}

/// A parsed `bmk.toml`.
#[derive(Debug, Clone)]
pub struct Targets {
    file: PathBuf,
    text: String,
    targets: BTreeMap<String, TargetDef>,
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Targets {
    /// Finds the configuration file: `explicit` (`--config`), else `$BMK_HOME/bmk.toml`,
    /// else `./bmk.toml`.
    pub fn locate(explicit: Option<&Path>, bmk_home: Option<&Path>) -> Result<PathBuf, KitError> {
        if let Some(p) = explicit {
            return Ok(p.to_path_buf());
        }
        let mut looked = Vec::new();
        if let Some(home) = bmk_home {
            let p = home.join(CONFIG_FILE);
            if p.exists() {
                return Ok(p);
            }
            looked.push(p);
        }
        let p = PathBuf::from(CONFIG_FILE);
        if p.exists() {
            return Ok(p);
        }
        looked.push(p);
        let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
        Err(KitError::Config {
            file: PathBuf::from(CONFIG_FILE),
            line: 0,
            problem: format!(
                "not found (looked for {}); give --config=FILE or set BMK_HOME",
                list.join(", ")
            ),
        })
    }

    /// Reads and checks `file`.
    pub fn load(file: &Path) -> Result<Targets, KitError> {
        let text = bounded_file::read_to_string(file, bounded_file::TARGETS_FILE).map_err(|e| {
            KitError::Config {
                file: file.to_path_buf(),
                line: 0,
                problem: format!("cannot read it: {e}"),
            }
        })?;
        Targets::parse(file, text)
    }

    /// Parses `text` as the contents of `file`.
    pub fn parse(file: &Path, text: String) -> Result<Targets, KitError> {
        let err = |line: usize, problem: String| KitError::Config {
            file: file.to_path_buf(),
            line,
            problem,
        };
        let doc: ConfigDoc = toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| line_of(&text, s.start)).unwrap_or(0);
            // The toml message spans several lines (a snippet of the file); its first
            // sentence is what matters once the line is named.
            let msg = e.message().lines().next().unwrap_or("").trim().to_string();
            err(line, msg)
        })?;
        for (name, t) in &doc.targets {
            let refuse = |start: usize| {
                err(
                    line_of(&text, start),
                    format!(
                        "target '{name}': passwords are not written in {CONFIG_FILE}; use password_env = \"VARIABLE\" or password_file = \"PATH\""
                    ),
                )
            };
            if let Some(p) = &t.password {
                return Err(refuse(p.span().start));
            }
            // The same password given as an option (`mysql-password = "..."` under
            // `[targets.NAME.options]`) would land in the file just the same.
            if let Some((_, v)) = t.options.iter().find(|(k, _)| is_password_option(k)) {
                return Err(refuse(v.span().start));
            }
            let driver = t.driver.get_ref().as_str();
            if !["mysql", "pgsql", "sqlite"].contains(&driver) {
                return Err(err(
                    line_of(&text, t.driver.span().start),
                    format!(
                        "target '{name}': unknown driver '{driver}' (use mysql, pgsql or sqlite)"
                    ),
                ));
            }
            if t.password_env.is_some() && t.password_file.is_some() {
                return Err(err(
                    line_of(&text, t.driver.span().start),
                    format!("target '{name}': give password_env or password_file, not both"),
                ));
            }
        }
        Ok(Targets {
            file: file.to_path_buf(),
            text,
            targets: doc.targets,
        })
    }

    /// The file read.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Target names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.targets.keys().map(String::as_str).collect()
    }

    /// The target called `name`.
    pub fn get(&self, name: &str) -> Result<&TargetDef, KitError> {
        self.targets.get(name).ok_or_else(|| KitError::Config {
            file: self.file.clone(),
            line: 0,
            problem: if self.targets.is_empty() {
                format!("no target '{name}': the file defines no [targets.NAME] table")
            } else {
                format!("no target '{name}' (defined: {})", self.names().join(", "))
            },
        })
    }

    /// The options target `name` stands for, password resolved. `env` reads
    /// environment variables (injectable for tests).
    pub fn options(
        &self,
        name: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Vec<(String, String)>, KitError> {
        let t = self.get(name)?;
        let line = line_of(&self.text, t.driver.span().start);
        let err = |problem: String| KitError::Config {
            file: self.file.clone(),
            line,
            problem: format!("target '{name}': {problem}"),
        };
        let driver = t.driver.get_ref().clone();
        let mut out: Vec<(String, String)> = vec![("db-driver".into(), driver.clone())];
        let mut push = |k: &str, v: String| out.push((format!("{driver}-{k}"), v));
        let mut hosts: Vec<String> = t.host.as_ref().map(|h| h.to_vec()).unwrap_or_default();
        hosts.extend(t.hosts.clone().unwrap_or_default());
        match driver.as_str() {
            "sqlite" => {
                if let Some(db) = &t.database {
                    push("db", db.clone());
                }
            }
            _ => {
                if !hosts.is_empty() {
                    push("host", hosts.join(","));
                }
                if let Some(p) = &t.port {
                    let ports: Vec<String> = p.to_vec().iter().map(u16::to_string).collect();
                    push("port", ports.join(","));
                }
                if let Some(s) = &t.socket {
                    if driver == "pgsql" {
                        // libpq takes a socket directory as the host.
                        push("host", s.clone());
                    } else {
                        push("socket", s.clone());
                    }
                }
                if let Some(u) = &t.user {
                    push("user", u.clone());
                }
                if let Some(d) = &t.database {
                    push("db", d.clone());
                }
                if let Some(ssl) = &t.ssl {
                    if driver == "pgsql" {
                        push("sslmode", ssl.clone());
                    } else {
                        push("ssl", ssl.clone());
                    }
                }
                for (k, v) in [
                    ("ssl-ca", &t.ssl_ca),
                    ("ssl-cert", &t.ssl_cert),
                    ("ssl-key", &t.ssl_key),
                ] {
                    if let Some(v) = v {
                        push(k, v.clone());
                    }
                }
                let password = match (&t.password_env, &t.password_file) {
                    (Some(var), _) => Some(env(var).ok_or_else(|| {
                        err(format!("password_env names '{var}', which is not set"))
                    })?),
                    (_, Some(path)) => {
                        let text = bounded_file::read_to_string(
                            Path::new(path),
                            bounded_file::PASSWORD_FILE,
                        )
                        .map_err(|e| err(format!("cannot read password_file '{path}': {e}")))?;
                        Some(text.lines().next().unwrap_or("").to_string())
                    }
                    _ => None,
                };
                if let Some(p) = password {
                    push("password", p);
                }
            }
        }
        for (k, v) in &t.options {
            let v = match v.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
                other => other.to_string(),
            };
            out.push((k.clone(), v));
        }
        Ok(out)
    }
}

/// Whether option `name` (of `[targets.NAME.options]`) carries a password itself:
/// `mysql-password`, `pgsql_password`, ... (a `-file` option names a file instead).
fn is_password_option(name: &str) -> bool {
    let n = name.replace('_', "-");
    matches!(n.as_str(), "mysql-password" | "pgsql-password" | "password")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
# shared by the team
[targets.maria]
driver = "mysql"
host = ["db1", "db2"]
port = 3307
user = "bench"
database = "sb"
password_env = "MARIA_PW"

[targets.maria.options]
mysql-ignore-errors = "all"

[targets.pg]
driver = "pgsql"
host = "127.0.0.1"
user = "postgres"
ssl = "disable"

[targets.lite]
driver = "sqlite"
database = "/tmp/x.db"
"#;

    fn parse(text: &str) -> Result<Targets, KitError> {
        Targets::parse(Path::new("bmk.toml"), text.to_string())
    }

    #[test]
    fn targets_become_options() {
        let t = parse(SAMPLE).unwrap();
        assert_eq!(t.names(), ["lite", "maria", "pg"]);
        let env = |k: &str| (k == "MARIA_PW").then(|| "s3cret".to_string());
        let o = t.options("maria", &env).unwrap();
        let get = |k: &str| o.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("db-driver"), Some("mysql"));
        assert_eq!(get("mysql-host"), Some("db1,db2"));
        assert_eq!(get("mysql-port"), Some("3307"));
        assert_eq!(get("mysql-db"), Some("sb"));
        assert_eq!(get("mysql-password"), Some("s3cret"));
        assert_eq!(get("mysql-ignore-errors"), Some("all"));
        let o = t.options("pg", &|_| None).unwrap();
        assert!(o.contains(&("pgsql-sslmode".into(), "disable".into())));
        let o = t.options("lite", &|_| None).unwrap();
        assert_eq!(o[1], ("sqlite-db".into(), "/tmp/x.db".into()));
    }

    #[test]
    fn a_password_file_is_read_and_a_missing_variable_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let pw = dir.path().join("pw");
        std::fs::write(&pw, "hunter2\n").unwrap();
        let text = format!(
            "[targets.a]\ndriver = \"pgsql\"\npassword_file = \"{}\"\n[targets.b]\ndriver = \"mysql\"\npassword_env = \"NOPE\"\n",
            pw.display()
        );
        let t = parse(&text).unwrap();
        let o = t.options("a", &|_| None).unwrap();
        assert!(o.contains(&("pgsql-password".into(), "hunter2".into())));
        let e = t.options("b", &|_| None).unwrap_err().to_string();
        assert_eq!(
            e,
            "bmk.toml:5: target 'b': password_env names 'NOPE', which is not set"
        );
    }

    #[test]
    fn a_password_given_as_an_option_is_refused_like_password() {
        for (driver, opt) in [
            ("mysql", "mysql-password"),
            ("pgsql", "pgsql-password"),
            ("mysql", "mysql_password"),
        ] {
            let text = format!(
                "[targets.a]\ndriver = \"{driver}\"\n[targets.a.options]\nthreads = 4\n{opt} = \"hunter2\"\n"
            );
            let e = parse(&text).unwrap_err().to_string();
            assert_eq!(
                e,
                "bmk.toml:5: target 'a': passwords are not written in bmk.toml; use password_env = \"VARIABLE\" or password_file = \"PATH\""
            );
            assert!(!e.contains("hunter2"));
        }
        // A file holding the password is what the file may name.
        let ok = "[targets.a]\ndriver = \"mysql\"\n[targets.a.options]\nmysql-password-file = \"/etc/pw\"\n";
        assert!(parse(ok).is_ok());
    }

    #[test]
    fn files_that_never_end_are_refused_not_read() {
        let e = Targets::load(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/dev/zero: cannot read it: a character device, not a regular file"
        );
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("bmk.toml");
        std::fs::write(&big, "#".repeat(2 << 20)).unwrap();
        let e = Targets::load(&big).unwrap_err().to_string();
        assert!(
            e.ends_with("cannot read it: larger than 1 MiB, too large for a targets file"),
            "{e}"
        );
        let text = "[targets.a]\ndriver = \"mysql\"\npassword_file = \"/dev/zero\"\n";
        let e = parse(text).unwrap().options("a", &|_| None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bmk.toml:2: target 'a': cannot read password_file '/dev/zero': a character device, not a regular file"
        );
    }

    #[test]
    fn bad_files_name_file_line_and_problem() {
        let e = parse("[targets.a]\ndriver = \"mysql\"\npassword = \"x\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "bmk.toml:3: target 'a': passwords are not written in bmk.toml; use password_env = \"VARIABLE\" or password_file = \"PATH\""
        );
        let e = parse("[targets.a]\ndriver = \"oracle\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "bmk.toml:2: target 'a': unknown driver 'oracle' (use mysql, pgsql or sqlite)"
        );
        let e = parse("[targets.a]\ndriver = \"mysql\"\nprot = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bmk.toml:3: unknown field `prot`"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = parse("[targets.a]\ndriver = \"mysql\nx")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bmk.toml:2: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = parse(SAMPLE)
            .unwrap()
            .options("nope", &|_| None)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "bmk.toml: no target 'nope' (defined: lite, maria, pg)"
        );
        let e = Targets::load(Path::new("/nonexistent/bmk.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/nonexistent/bmk.toml: cannot read it: "),
            "{e}"
        );
    }
}
