//! `bmk kit ssh HOST... -- NAME USERS SECONDS`: clients on several "hosts" through a
//! stand-in for ssh (a script that runs the remote command line here), against the
//! machine's MariaDB (skipped when it is unreachable, unless `CI=true`).

use std::os::unix::fs::PermissionsExt;

use bmk_results::results_file::ResultsFile;
use bmk_sql::DriverKind;

use crate::server_db::ServerDb;
use crate::util::Dir;

/// What ssh does, without a network: log the host, run the command line here.
const FAKE_SSH: &str =
    "#!/bin/sh\nhost=\"$1\"; shift\necho \"$host $*\" >> ssh.log\nexec sh -c \"$*\"\n";

#[test]
fn two_hosts_pass_the_barrier_and_their_results_are_merged() {
    let Some(db) = ServerDb::new(DriverKind::Mysql) else {
        return;
    };
    let dir = Dir::new();
    dir.write("fake-ssh", FAKE_SSH);
    std::fs::set_permissions(dir.join("fake-ssh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let conn = db.args.join(" ");
    dir.bmk()
        .args(&format!(
            "oltp_read_only {conn} --tables=1 --table-size=200 prepare"
        ))
        .run()
        .ok();
    let bmk = env!("CARGO_BIN_EXE_bmk");
    let run = dir
        .bmk()
        .args(&format!(
            "kit ssh --ssh-command=./fake-ssh --remote-bmk={bmk} --remote-dir={} hostA hostB -- \
             OLTP_RO_200_1tab 2 2 {conn} --barrier=scale_ssh --results-dir=out",
            dir.path().display()
        ))
        .run();
    let run = run.code(0);
    let ctx = run.context();
    assert!(
        run.stdout
            .contains("[hostA] Barrier 'scale_ssh': 2 clients passed; measuring starts at "),
        "{ctx}"
    );
    assert!(run.stdout.contains("[hostB] [ 1s ] thds: 2 "), "{ctx}");
    assert!(run.stdout.contains("Merged 2 results: 4 threads"), "{ctx}");
    let log = std::fs::read_to_string(dir.join("ssh.log")).unwrap();
    assert!(log.contains("hostA env JOB_COMPLETION_INDEX=0 "), "{log}");
    assert!(log.contains("hostB env JOB_COMPLETION_INDEX=1 "), "{log}");
    assert!(log.contains("hostB cat "), "{log}");
    let clients: Vec<ResultsFile> = (0..2)
        .map(|i| ResultsFile::read(dir.join(&format!("out/clients/index-{i}.json"))).unwrap())
        .collect();
    let merged = ResultsFile::read(dir.join("out/result.json")).unwrap();
    let f = &merged.final_stats;
    assert_eq!(f.threads, 4);
    assert!(f.events > 0);
    assert_eq!(
        f.events,
        clients.iter().map(|c| c.final_stats.events).sum::<u64>()
    );
    assert_eq!(
        f.counters.reads,
        clients
            .iter()
            .map(|c| c.final_stats.counters.reads)
            .sum::<u64>()
    );
    for (i, c) in clients.iter().enumerate() {
        let b = c.start.as_ref().unwrap().barrier.as_ref().unwrap();
        assert_eq!(b.client, format!("index-{i}"));
        assert_eq!(b.clients.len(), 2);
    }
    // The remote copies were removed once fetched.
    assert!(!dir.join("bmk-scale_ssh-index-0.json").exists());
}
