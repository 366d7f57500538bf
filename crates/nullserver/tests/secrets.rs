//! A password never leaves bmk except to the server: whichever way it is given (option,
//! password file, config file, `MYSQL_PWD`/`PGPASSWORD`), a run that prints all it can
//! (`--db-debug`, `--mysql-debug`, `--verbosity=5`, `--opt_debug=on`, `--histogram`,
//! `--results`) and its failure paths show it nowhere: not on stdout or stderr, not in
//! the results file, not in any file the run leaves in its directory.

mod support;

use std::path::Path;
use std::process::Command;

use support::{bmk_bin, NullServer};

/// A password no output could contain by chance.
const SECRET: &str = "Pw-9f3c1e7a-never-shown";

/// Everything under `dir`, as text.
/// Environment variables given to one bmk process.
type EnvVars = Vec<(&'static str, &'static str)>;

fn files_text(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.push_str(&files_text(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    all
}

/// Runs bmk in `dir` with `args` and `env`; fails the test if the secret shows in its
/// output or in any file of `dir` other than the ones the test wrote (`keep`).
fn run_clean(dir: &Path, args: &[String], env: &[(&str, &str)], keep: &[&str]) -> String {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "60"])
        .arg(bmk_bin())
        .args(args)
        .envs(env.iter().copied())
        .env_remove("MYSQL_SESSION_OPTIONS")
        .env_remove("BMK_NATIVE_OLTP")
        .current_dir(dir)
        .output()
        .expect("run bmk");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{stdout}{stderr}");
    assert!(
        !all.contains(SECRET),
        "the password shows in the output of {args:?}:\n{all}"
    );
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if keep.contains(&name.as_str()) {
            continue;
        }
        let text = if entry.path().is_dir() {
            files_text(&entry.path())
        } else {
            String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned()
        };
        assert!(!text.contains(SECRET), "the password is in {name}:\n{text}");
    }
    all
}

fn loud(server: &NullServer, driver: &str) -> Vec<String> {
    let port = if driver == "mysql" {
        server.mysql
    } else {
        server.pgsql
    };
    [
        "oltp_read_write".to_string(),
        format!("--db-driver={driver}"),
        format!("--{driver}-host=127.0.0.1"),
        format!("--{driver}-port={port}"),
        "--db-debug=on".into(),
        "--mysql-debug=on".into(),
        "--verbosity=5".into(),
        "--opt_debug=on".into(),
        "--histogram=on".into(),
        "--events=20".into(),
        "--time=0".into(),
        "--report-interval=1".into(),
        "--results=results.json".into(),
    ]
    .into()
}

#[test]
fn no_output_or_file_of_a_loud_run_shows_the_password() {
    let server = NullServer::start(&["--pgsql-auth", "password"]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("pw"), format!("{SECRET}\n")).unwrap();
    std::fs::write(d.join("bmk.cfg"), format!("mysql-password={SECRET}\n")).unwrap();
    let keep = ["pw", "bmk.cfg", "bad.cfg"];
    for driver in ["mysql", "pgsql"] {
        let with = |extra: &[String]| -> Vec<String> {
            let mut a = loud(&server, driver);
            a.splice(1..1, extra.iter().cloned());
            a.push("run".into());
            a
        };
        let ways: Vec<(Vec<String>, EnvVars)> = vec![
            (vec![format!("--{driver}-password={SECRET}")], vec![]),
            (vec![format!("--{driver}-password"), SECRET.into()], vec![]),
            (vec![format!("--{driver}-password-file=pw")], vec![]),
            (vec![], vec![("MYSQL_PWD", SECRET), ("PGPASSWORD", SECRET)]),
        ];
        for (extra, env) in ways {
            let out = run_clean(d, &with(&extra), &env, &keep);
            assert!(
                out.contains("total number of events:"),
                "{driver} {extra:?}: {out}"
            );
            // The option dump ran, with the password hidden.
            assert!(out.contains("= ***") || extra.is_empty(), "{out}");
            let results = std::fs::read_to_string(d.join("results.json")).unwrap();
            assert!(results.contains("\"status\":\"completed\""), "{results}");
        }
    }
    // The config file's password, and a config file that is not one.
    let mut a = loud(&server, "mysql");
    a.insert(1, "--config-file=bmk.cfg".into());
    a.push("run".into());
    run_clean(d, &a, &[], &keep);
    std::fs::write(
        d.join("bad.cfg"),
        format!("root:{SECRET}:19000:0:99999:7:::\n"),
    )
    .unwrap();
    let out = run_clean(
        d,
        &["--config-file=bad.cfg".into(), "cpu".into(), "run".into()],
        &[],
        &keep,
    );
    assert!(out.contains("line 1"), "{out}");
    std::fs::write(d.join("bad.cfg"), format!("mysql-pasword={SECRET}\n")).unwrap();
    run_clean(
        d,
        &["--config-file=bad.cfg".into(), "cpu".into(), "run".into()],
        &[],
        &keep,
    );
    // A mistyped option name, and a server that refuses the connection.
    for typo in ["--mysql-pasword", "--pgsql-passwrod", "--mysql-secret-pw"] {
        let out = run_clean(
            d,
            &[format!("{typo}={SECRET}"), "cpu".into(), "run".into()],
            &[],
            &keep,
        );
        assert!(out.contains("invalid option"), "{out}");
    }
    let refused = run_clean(
        d,
        &[
            "oltp_point_select".into(),
            "--mysql-host=127.0.0.1".into(),
            "--mysql-port=1".into(),
            format!("--mysql-password={SECRET}"),
            "--db-debug=on".into(),
            "--verbosity=5".into(),
            "run".into(),
        ],
        &[],
        &keep,
    );
    assert!(refused.contains("FATAL"), "{refused}");
}
