//! Users pinned to tables (--pin-tables): 8 users on 4 tables form 4 groups of 2,
//! each using only its own table; --trx-retry replays the same ids after a deadlock.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use support::{bmk, lua_script, stats, Db, Kind};

/// Records which tables each worker's events used (through get_table_num, which
/// every execute helper calls) and prints them at the end.
const PIN_SCRIPT: &str = r#"
require("oltp_common")
require("oltp_read_write")
local used = {}
local real = get_table_num
function get_table_num()
  local n = real()
  used[n] = true
  return n
end
local done = thread_done
function thread_done()
  local t = {}
  for n in pairs(used) do t[#t + 1] = n end
  table.sort(t)
  print(string.format("PIN tid=%d tables=%s", sysbench.tid, table.concat(t, ",")))
  done()
end
"#;

fn pinned_tables(db: &Db, script: &str, extra: &[&str]) -> BTreeMap<u32, BTreeSet<u32>> {
    let mut args = vec![script.to_string()];
    args.extend(db.args());
    args.extend(["--tables=4", "--table-size=200", "--threads=8", "--time=1"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("run".into());
    let out = bmk(&args).ok();
    // Two users share each 200-row table, so an occasional deadlock (an ignored
    // error) is legitimate; a worker reaching a missing table would fail the run.
    assert!(stats(&out.stdout).transactions > 0, "{}", out.stdout);
    out.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("PIN tid="))
        .map(|l| {
            let (tid, tables) = l.split_once(" tables=").unwrap();
            let set = tables
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap());
            (tid.parse().unwrap(), set.collect())
        })
        .collect()
}

#[test]
fn pinned_users_touch_only_their_table() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk(
        "oltp_read_write",
        "prepare",
        &["--tables=4", "--table-size=200", "--threads=4"],
    )
    .ok();
    // Per-table server statistics (MariaDB user statistics).
    db.exec("SET GLOBAL userstat=1");
    let (_dir, script) = lua_script("pin.lua", PIN_SCRIPT);
    let before = rows_read(&db);
    let used = pinned_tables(&db, &script, &["--pin-tables=on"]);
    assert_eq!(used.len(), 8);
    for (tid, tables) in &used {
        let own = tid % 4 + 1;
        assert_eq!(tables, &BTreeSet::from([own]), "worker {tid}");
    }
    let after = rows_read(&db);
    for n in 1..=4 {
        let t = format!("sbtest{n}");
        assert!(
            after.get(&t).copied().unwrap_or(0) > before.get(&t).copied().unwrap_or(0),
            "{t}: {after:?}"
        );
    }
    // Without pinning every worker draws its table at random.
    let used = pinned_tables(&db, &script, &[]);
    assert!(used.values().any(|t| t.len() > 1), "{used:?}");
    db.bmk("oltp_read_write", "cleanup", &["--tables=4"]).ok();
}

fn rows_read(db: &Db) -> BTreeMap<String, u64> {
    let mut c = db.conn();
    let sql = format!(
        "SELECT TABLE_NAME, ROWS_READ FROM information_schema.TABLE_STATISTICS WHERE \
         TABLE_SCHEMA = '{}'",
        db.name
    );
    let rs = c.query(&sql).unwrap().unwrap();
    (0..rs.nrows())
        .map(|r| {
            (
                rs.get_str(r, 0).unwrap(),
                rs.get_str(r, 1).unwrap().parse().unwrap(),
            )
        })
        .collect()
}

/// Two updates per transaction on a 4-row table with 4 workers: deadlocks. Every
/// restarted transaction must draw the same ids as the attempt that failed.
const RETRY_SCRIPT: &str = r#"
require("oltp_common")
function prepare_statements()
  prepare_begin()
  prepare_commit()
  prepare_index_updates()
end
local ids, failed = {}, nil
local replays, mismatches = 0, 0
local real = get_id
function get_id()
  local v = real()
  ids[#ids + 1] = v
  return v
end
local hook = sysbench.hooks.before_restart_event
sysbench.hooks.before_restart_event = function(err)
  failed = ids
  if hook then hook(err) end
end
function event()
  ids = {}
  begin()
  execute_index_updates()
  execute_index_updates()
  execute_index_updates()
  commit()
  if failed then
    replays = replays + 1
    for i = 1, #failed do
      if failed[i] ~= ids[i] then mismatches = mismatches + 1 end
    end
    failed = nil
  end
end
function thread_done()
  print(string.format("RETRY tid=%d replays=%d mismatches=%d", sysbench.tid, replays, mismatches))
end
"#;

#[test]
fn trx_retry_replays_the_same_ids_after_deadlocks() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk("oltp_read_write", "prepare", &["--table-size=4"])
        .ok();
    let (_dir, script) = lua_script("retry.lua", RETRY_SCRIPT);
    let run = |retry: &str| {
        let mut args = vec![script.clone()];
        args.extend(db.args());
        args.extend(["--table-size=4", "--threads=4", "--time=2"].map(String::from));
        args.push(format!("--trx-retry={retry}"));
        args.push("run".into());
        let out = bmk(&args).ok();
        let mut replays = 0;
        let mut mismatches = 0;
        for l in out.stdout.lines().filter_map(|l| l.strip_prefix("RETRY ")) {
            let f: Vec<u64> = l
                .split_whitespace()
                .map(|kv| kv.split_once('=').unwrap().1.parse().unwrap())
                .collect();
            replays += f[1];
            mismatches += f[2];
        }
        (stats(&out.stdout), replays, mismatches)
    };
    let (s, replays, mismatches) = run("on");
    assert!(s.ignored_errors > 0, "deadlocks expected");
    assert!(replays > 0);
    assert_eq!(mismatches, 0, "replayed transactions use the same ids");
    let (s, replays, mismatches) = run("off");
    assert!(s.ignored_errors > 0 && replays > 0);
    assert!(mismatches > 0, "without --trx-retry new ids are drawn");
    db.bmk("oltp_read_write", "cleanup", &[]).ok();
}
