//! A script in the style of sysbench 0.5 (options read as globals, the db_* API,
//! sb_rand*) runs unchanged on every driver, as it does on sysbench 1.0.

mod support;

use support::{bmk, lua_script, stats, Db, Kind};

const SCRIPT_0_5: &str = r####"
function set_vars()
  oltp_table_size = tonumber(oltp_table_size) or 10000
end

function prepare()
  set_vars()
  db_connect()
  local engine = ""
  if db_driver == "mysql" then
    engine = " ENGINE=" .. mysql_table_engine
  end
  db_query("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER, c VARCHAR(20))" .. engine)
  db_bulk_insert_init("INSERT INTO sbtest1 (id, k, c) VALUES")
  for i = 1, oltp_table_size do
    db_bulk_insert_next(string.format("(%d, %d, '%s')", i, sb_rand(1, oltp_table_size),
      sb_rand_str("###-@@@")))
  end
  db_bulk_insert_done()
end

function thread_init(thread_id)
  set_vars()
  db_connect()
  stmt = db_prepare("SELECT c FROM sbtest1 WHERE id = ?")
  params = { 1 }
  db_bind_param(stmt, params)
end

function event(thread_id)
  params[1] = sb_rand(1, oltp_table_size)
  local rs = db_execute(stmt)
  db_free_results(rs)
  -- Each row is bumped at most once: ids from sb_rand_uniq never repeat.
  db_query("UPDATE sbtest1 SET k = -1 WHERE id = " .. sb_rand_uniq(1, oltp_table_size))
end

function cleanup()
  db_connect()
  db_query("DROP TABLE sbtest1")
end
"####;

fn runs_unchanged(kind: Kind) {
    let Some(db) = Db::new(kind) else {
        return;
    };
    let (_dir, script) = lua_script("oltp_05.lua", SCRIPT_0_5);
    let run = |command: &str, extra: &[&str]| {
        let mut args = vec![script.clone()];
        args.extend(db.args());
        args.push("--oltp-table-size=300".into());
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(command.into());
        bmk(&args).ok()
    };
    run("prepare", &["--mysql-table-engine=MyISAM"]);
    assert_eq!(db.scalar("SELECT count(*) FROM sbtest1"), "300");
    assert_eq!(
        db.scalar("SELECT count(*) FROM sbtest1 WHERE c LIKE '___-___'"),
        "300"
    );
    if kind == Kind::Mysql {
        let engine = db.scalar(
            "SELECT engine FROM information_schema.tables WHERE table_schema = DATABASE() \
             AND table_name = 'sbtest1'",
        );
        assert_eq!(engine, "MyISAM", "--mysql-table-engine reaches the script");
    }
    let out = run("run", &["--threads=3", "--events=120"]);
    let s = stats(&out.stdout);
    assert_eq!((s.read, s.write, s.ignored_errors), (120, 120, 0));
    assert_eq!(
        db.scalar("SELECT count(*) FROM sbtest1 WHERE k = -1"),
        "120",
        "120 distinct rows updated"
    );
    run("cleanup", &[]);
    assert!(db.tables().is_empty(), "{:?}", db.tables());
}

#[test]
fn a_0_5_script_runs_unchanged_on_sqlite() {
    runs_unchanged(Kind::Sqlite);
}

#[test]
fn a_0_5_script_runs_unchanged_on_mariadb() {
    runs_unchanged(Kind::Mysql);
}

#[test]
fn a_0_5_script_runs_unchanged_on_postgresql() {
    runs_unchanged(Kind::Pgsql);
}
