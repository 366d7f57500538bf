//! Debian's own clients log in to the null server and run queries: `mariadb` (the
//! `mysql` command) with both authentication plugins, with and without a password, and
//! `psql` with trust, cleartext and MD5 authentication.

mod support;

use std::process::Command;

use support::{system_program, NullServer, Run};

fn mariadb(server: &NullServer, password: Option<&str>, sql: &str) -> Option<Run> {
    let prog = system_program("mariadb").or_else(|| system_program("mysql"))?;
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "KILL", "20"])
        .arg(prog)
        .args([
            "-h",
            "127.0.0.1",
            "-P",
            &server.mysql.to_string(),
            "-u",
            "sbtest",
            "--batch",
        ])
        .args(["--skip-ssl", "sbtest"]);
    if let Some(p) = password {
        cmd.arg(format!("-p{p}"));
    }
    cmd.args(["-e", sql]);
    Some(cmd.output().expect("run mariadb").into())
}

fn psql(server: &NullServer, sql: &str) -> Option<Run> {
    let prog = system_program("psql")?;
    let out = Command::new("timeout")
        .args(["-s", "KILL", "20"])
        .arg(prog)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &server.pgsql.to_string(),
            "-U",
            "sbtest",
            "-d",
            "sbtest",
        ])
        .args(["-X", "-A", "-t", "-c", sql])
        .env("PGPASSWORD", "secret")
        .env("PGSSLMODE", "prefer")
        .output()
        .expect("run psql");
    Some(out.into())
}

#[test]
fn mariadb_client_logs_in_with_either_plugin_and_queries() {
    for plugin in ["mysql_native_password", "caching_sha2_password"] {
        let server = NullServer::start(&["--mysql-auth", plugin]);
        for password in [Some("secret"), None] {
            let Some(out) = mariadb(
                &server,
                password,
                "SELECT 1; SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 3; SELECT @@max_allowed_packet",
            ) else {
                return;
            };
            let out = out.ok();
            let lines: Vec<&str> = out.stdout.lines().collect();
            // header + value, header + 3 rows, header + value: 8 lines
            assert_eq!(lines.len(), 8, "{plugin} {password:?}: {}", out.stdout);
            assert_eq!(lines[1], "1");
            assert_eq!(lines[3].len(), 119);
            assert_eq!(lines[7], (64 << 20).to_string());
        }
    }
}

#[test]
fn psql_logs_in_with_each_method_and_queries() {
    for method in ["trust", "password", "md5"] {
        let server = NullServer::start(&["--pgsql-auth", method]);
        let Some(out) = psql(
            &server,
            "SELECT id, c FROM sbtest1 WHERE id BETWEEN 7 AND 8",
        ) else {
            return;
        };
        let out = out.ok();
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{method}: {}", out.stdout);
        assert!(lines[0].starts_with("7|"), "{method}: {}", out.stdout);
        assert!(lines[1].starts_with("8|"), "{method}: {}", out.stdout);
    }
}

#[test]
fn psql_runs_several_statements_in_one_query() {
    let server = NullServer::start(&[]);
    let Some(out) = psql(&server, "BEGIN; SELECT 41 + 1; SELECT version(); COMMIT") else {
        return;
    };
    let out = out.ok();
    // psql prints each command tag; an expression is not evaluated: the null server
    // answers NULL (empty) for it.
    assert_eq!(
        out.stdout.lines().collect::<Vec<_>>(),
        ["BEGIN", "", "15.0", "COMMIT"],
        "{}",
        out.stdout
    );
}
