//! The SQL API of scripts as sysbench shows it: what its objects print as, how a bad
//! driver name, a failed prepare, a misused result set or a closed connection read,
//! when `SQL statistics` appear, and that `con:reconnect()` counts as a reconnect.
//! Scripts and expected outputs are this project's own.

use crate::server_db::ServerDb;
use crate::util::{assert_text_eq, Dir};
use bmk_sql::DriverKind;

/// Runs `script` (as `t.lua`) once through `sysbench`, with `args` after the script.
fn run_script(dir: &Dir, script: &str, args: &[String]) -> crate::util::Run {
    dir.write("t.lua", script);
    let mut cmd = dir.sysbench().arg("t.lua");
    for a in args {
        cmd = cmd.arg(a.as_str());
    }
    cmd.run()
}

/// `args` and `--verbosity=1` (no banner).
fn quiet(args: &[String]) -> Vec<String> {
    let mut a = args.to_vec();
    a.push("--verbosity=1".into());
    a
}

#[test]
fn an_unknown_driver_name_is_a_fatal_line_then_the_lua_error() {
    let dir = Dir::new();
    let run = run_script(
        &dir,
        "local ok, err = pcall(sysbench.sql.driver, 'nosuchdb')\nprint(ok, err)\n",
        &["--verbosity=1".to_string()],
    );
    assert_text_eq(
        "FATAL: invalid database driver name: 'nosuchdb'\nfalse\tfailed to initialize the DB driver\n",
        &run.stdout,
        &run.context(),
    );
}

/// The objects and misuse messages on one server.
fn objects_and_misuse(kind: DriverKind) {
    let db = bmk_testkit::require!(ServerDb::new(kind));
    let dir = Dir::new();
    let script = r#"
local con = sysbench.sql.driver():connect()
con:query("CREATE TABLE pets(n INT, name VARCHAR(20))")
local stmt = con:prepare("INSERT INTO pets VALUES (?, ?)")
local n = stmt:bind_create(sysbench.sql.type.INT)
local name = stmt:bind_create(sysbench.sql.type.VARCHAR, 20)
print(con, stmt, n, name)
print(pcall(stmt.bind_create, stmt, sysbench.sql.type.TIMESTAMP))
print(stmt:bind_param(), stmt:bind_param(n, name))
n:set(7)
name:set("rex")
local none = stmt:execute()
print(none, none == nil)
local rs = con:query("SELECT n, name FROM pets")
print(rs, rs.nrows, unpack(rs:fetch_row(), 1, rs.nfields))
print(rs:free())
print(pcall(rs.free, rs))
print(pcall(rs.free, rs))
print(pcall(rs.free, rs))
con:query("DROP TABLE pets")
con:disconnect()
print(select(2, pcall(con.query, con, "SELECT 1")) ~= nil)
con:disconnect()
"#;
    let run = run_script(&dir, script, &quiet(&db.args));
    assert_text_eq(
        "<sql_connection>\t<sql_statement>\t<sql_param>\t<sql_param>\n\
         false\tUnsupported argument type: 10\n\
         nil\t0\n\
         <sql_result>\ttrue\n\
         <sql_result>\t1\t7\trex\n\
         true\n\
         ALERT: attempt to free an invalid result set\n\
         false\tdb_free_results() failed\n\
         false\tdb_free_results() failed\n\
         false\tdb_free_results() failed\n\
         (last message repeated 2 times)\n\
         ALERT: attempt to use an already closed connection\n\
         true\n\
         ALERT: attempt to close an already closed connection\n",
        &run.stdout,
        &run.context(),
    );
}

#[test]
fn objects_print_and_misuse_reads_as_sysbench_on_mysql() {
    objects_and_misuse(DriverKind::Mysql);
}

#[test]
fn objects_print_and_misuse_reads_as_sysbench_on_pgsql() {
    objects_and_misuse(DriverKind::Pgsql);
}

/// A prepare of a statement on a missing table, caught.
const BAD_PREPARE: &str = "local con = sysbench.sql.driver():connect()\n\
    print(select(2, pcall(con.prepare, con, 'SELECT x FROM absent_table')))\n";

#[test]
fn a_failed_prepare_prints_the_client_library_lines_on_mysql() {
    let db = bmk_testkit::require!(ServerDb::new(DriverKind::Mysql));
    let dir = Dir::new();
    let run = run_script(&dir, BAD_PREPARE, &quiet(&db.args));
    assert_text_eq(
        &format!(
            "FATAL: mysql_stmt_prepare() failed\n\
             FATAL: MySQL error: 1146 \"Table '{}.absent_table' doesn't exist\"\n\
             SQL API error\n",
            db.name
        ),
        &run.stdout,
        &run.context(),
    );
}

#[test]
fn a_failed_prepare_points_into_the_query_on_pgsql() {
    let db = bmk_testkit::require!(ServerDb::new(DriverKind::Pgsql));
    let dir = Dir::new();
    let run = run_script(&dir, BAD_PREPARE, &quiet(&db.args));
    // The caret sits under the table name: after `LINE 1: ` and `SELECT x FROM `.
    let caret = format!("{}^", " ".repeat(8 + 14));
    assert_text_eq(
        &format!(
            "FATAL: PQprepare() failed: ERROR:  relation \"absent_table\" does not exist\n\
             LINE 1: SELECT x FROM absent_table\n{caret}\n\nSQL API error\n"
        ),
        &run.stdout,
        &run.context(),
    );
}

#[test]
fn a_driver_made_in_event_gets_sql_statistics_and_reconnects_count() {
    let db = bmk_testkit::require!(ServerDb::new(DriverKind::Mysql));
    let dir = Dir::new();
    let script = "function event()\n\
        \x20 c = c or sysbench.sql.driver():connect()\n\
        \x20 c:query('SELECT 1')\n\
        \x20 c:reconnect()\n\
        end\n";
    let mut args = db.args.clone();
    args.extend(["--events=4".to_string(), "run".to_string()]);
    let run = run_script(&dir, script, &args).ok();
    assert!(run.stdout.contains("SQL statistics:"), "{}", run.context());
    let reconnects = run.line_matching(r"^\s+reconnects:\s+(\d+)");
    assert_eq!(reconnects[1], "4", "{}", run.context());
}

#[test]
fn queries_of_thread_init_count_in_the_totals() {
    let dir = Dir::new();
    let script = "function thread_init()\n\
        \x20 con = sysbench.sql.driver():connect()\n\
        \x20 for _ = 1, 7 do con:query('SELECT 1') end\n\
        end\n\
        function event() end\n";
    let args: Vec<String> = [
        "--db-driver=sqlite",
        "--sqlite-db=init.db",
        "--events=2",
        "run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = run_script(&dir, script, &args).ok();
    assert_eq!(
        run.line_matching(r"^\s+read:\s+(\d+)")[1],
        "7",
        "{}",
        run.context()
    );
}

/// Statements whose counter depends on the server's answer, not on their text: each
/// event runs them once; `prepare` makes the table and its one row.
const COUNTED: &str = r#"
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE counted (id INT PRIMARY KEY, v INT)")
  con:query("INSERT INTO counted VALUES (1, 1)")
end
function thread_init()
  con = sysbench.sql.driver():connect()
  upd = con:prepare("UPDATE counted SET v = v + 1 WHERE id = ?")
  id = upd:bind_create(sysbench.sql.type.INT)
  upd:bind_param(id)
end
function event()
  con:query("UPDATE counted SET v = v WHERE id = 1")      -- the row, unchanged
  con:query("UPDATE counted SET v = v + 1 WHERE id = -1") -- no row
  con:query("DELETE FROM counted WHERE id = -1")          -- no row
  con:query("SELECT v FROM counted WHERE id = -1")        -- an empty result set
  id:set(-1) upd:execute()                                -- prepared, no row
  id:set(1) upd:execute()                                 -- prepared, one row
  con:query("BEGIN") con:query("COMMIT")
  if sysbench.opt.db_driver == "mysql" then
    con:query("INSERT IGNORE INTO counted VALUES (1, 5)") -- a duplicate, ignored
  else
    con:query("INSERT INTO counted VALUES (1, 5) ON CONFLICT DO NOTHING")
    con:query("INSERT INTO counted VALUES (2, 5) ON CONFLICT DO NOTHING RETURNING id")
    con:query("DELETE FROM counted WHERE id = 2")
  end
end
"#;

/// read, write and other as sysbench 1.1 and 1.0.20 count the `COUNTED` events: a
/// result set is a read, rows affected a write, anything else (also a write that
/// changed nothing) other. MySQL's unchanged row is not affected, PostgreSQL's is.
fn writes_that_change_nothing_count_as_other(kind: DriverKind, per_event: (u64, u64, u64)) {
    let db = bmk_testkit::require!(ServerDb::new(kind));
    let dir = Dir::new();
    let mut args = db.args.clone();
    args.push("prepare".into());
    run_script(&dir, COUNTED, &args).ok();
    for ps in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
        for level in ["1.1", "1.0"] {
            let mut cmd = dir
                .sysbench()
                .env("BMK_SYSBENCH_COMPAT", level)
                .arg("t.lua");
            for a in db
                .args
                .iter()
                .map(String::as_str)
                .chain([ps, "--events=5", "run"])
            {
                cmd = cmd.arg(a);
            }
            let run = cmd.run().ok();
            let count = |what: &str| -> u64 {
                run.line_matching(&format!(r"^\s+{what}:\s+(\d+)$"))[1]
                    .parse()
                    .unwrap()
            };
            assert_eq!(
                (count("read"), count("write"), count("other")),
                (5 * per_event.0, 5 * per_event.1, 5 * per_event.2),
                "{level} {ps}\n{}",
                run.context()
            );
        }
    }
}

#[test]
fn writes_that_change_nothing_count_as_other_on_mysql() {
    writes_that_change_nothing_count_as_other(DriverKind::Mysql, (1, 1, 7));
}

#[test]
fn writes_that_change_nothing_count_as_other_on_pgsql() {
    writes_that_change_nothing_count_as_other(DriverKind::Pgsql, (2, 3, 6));
}
