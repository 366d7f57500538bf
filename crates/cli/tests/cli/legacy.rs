//! Scripts written for sysbench 0.5 and 1.0 run unchanged: the 1.0 compatibility
//! globals (`sb_rand`, `db_query`, `DB_ERROR_*`, `thread_id`, `test`) and, for scripts
//! that declare no options, any `--name=value` as `sysbench.opt.name` and global `name`.

use crate::util::*;

/// A run of a script that uses sysbench 1.0's legacy API as `bmk`: it succeeds, and
/// says so once on stderr.
trait LegacyNotice {
    fn ok_with_notice(self) -> Run;
}

impl LegacyNotice for Run {
    fn ok_with_notice(self) -> Run {
        let run = self.code(0);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.context());
        assert!(
            run.stderr
                .starts_with("NOTE: this script uses sysbench 1.0's legacy API"),
            "{}",
            run.context()
        );
        run
    }
}

/// Declares no options; prints what sysbench 1.0 makes global, from a worker and from
/// a command.
const OPTIONS_AS_GLOBALS: &str = r#"
local function show(where)
  print(string.format("%s size=%s/%s/%s threads=%s/%s tid=%s test=%s debug=%s engine=%s",
    where, tostring(oltp_table_size), type(oltp_table_size),
    tostring(sysbench.opt.oltp_table_size), tostring(threads), type(threads),
    tostring(thread_id), tostring(test), type(debug), tostring(mysql_table_engine)))
end
function prepare() show("prepare") end
function thread_init() show("worker") end
function event() return true end
"#;

#[test]
fn scripts_that_declare_no_options_take_any_option_as_a_global() {
    let dir = Dir::new();
    dir.write("old.lua", OPTIONS_AS_GLOBALS);
    let run = dir
        .bmk()
        .args(
            "old.lua --oltp-table-size=77 --threads=2 --events=2 --debug=off \
             --mysql-table-engine=myisam run",
        )
        .run()
        .ok_with_notice();
    assert_eq!(
        run.stdout.matches("worker size=").count(),
        2,
        "{}",
        run.stdout
    );
    for tid in 0..2 {
        assert!(
            run.stdout.contains(&format!(
                "worker size=77/string/77 threads=2/number tid={tid} test=old.lua debug=table \
                 engine=myisam"
            )),
            "{}",
            run.stdout
        );
    }
    let run = dir
        .bmk()
        .args("old.lua --oltp-table-size=5 prepare")
        .run()
        .ok_with_notice();
    assert!(
        run.stdout.contains(
            "prepare size=5/string/5 threads=1/number tid=0 test=old.lua debug=table engine=innodb"
        ),
        "{}",
        run.stdout
    );
    // A bare switch is set, to the empty string, as sysbench 1.0.20 hands it over: true
    // in Lua, but not "on".
    dir.write(
        "flag.lua",
        "function event() print(string.format('flag=[%s] global=[%s] set=%s', \
         sysbench.opt.oltp_skip_trx, tostring(oltp_skip_trx), \
         tostring(oltp_skip_trx and true))) return true end\n",
    );
    let run = dir
        .bmk()
        .args("flag.lua --oltp-skip-trx --events=1 run")
        .run()
        .ok();
    assert!(
        run.stdout.contains("flag=[] global=[] set=true\n"),
        "{}",
        run.stdout
    );
    // A script that declares options still has them checked.
    dir.write(
        "new.lua",
        "sysbench.cmdline.options = { size = {'rows', 1} }\nfunction event() return true end\n",
    );
    dir.bmk()
        .args("new.lua --oltp-table-size=77 --events=1 run")
        .run()
        .fails_with("invalid option: --oltp-table-size=77");
}

/// The sysbench 0.5 API on SQLite: schema and rows through db_query and the bulk
/// insert, ids from sb_rand_uniq, a statement bound once by reference.
const API_0_5: &str = r###"
function prepare()
  db_connect()
  db_query("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, c VARCHAR(20))")
  db_bulk_insert_init("INSERT INTO t VALUES")
  for i = 1, 100 do
    db_bulk_insert_next(string.format("(%d, %d, '%s')", sb_rand_uniq(1, 100),
      sb_rand(1, 10), sb_rand_str("##-@@")))
  end
  db_bulk_insert_done()
  print("uniq used up:", pcall(sb_rand_uniq, 1, 100))
  db_disconnect()
end

function thread_init()
  db_connect()
  stmt = db_prepare("UPDATE t SET k = ? WHERE id = ?")
  values = { 0, 0 }
  db_bind_param(stmt, values)
end

function event()
  -- Bound by reference: the values the table holds at db_execute are sent.
  values[1] = 1000 + thread_id
  values[2] = sb_rand_uniform(1, 100)
  db_execute(stmt)
  db_query("SELECT c FROM t WHERE id = " .. sb_rand(1, 100))
end

function thread_done()
  db_close(stmt)
  db_disconnect()
end

function cleanup()
  local con = sysbench.sql.driver():connect()
  local rows, ks, fmt = con:query_row("SELECT count(*), count(DISTINCT id), " ..
    "sum(c GLOB '[0-9][0-9]-[a-z][a-z]') FROM t")
  local bumped = con:query_row("SELECT count(*) FROM t WHERE k >= 1000")
  print(string.format("rows=%s ids=%s formatted=%s bumped=%s rnd=%s errors=%d/%d/%d",
    rows, ks, fmt, tonumber(bumped) > 0, sb_rnd() >= 0 and sb_rnd() < 2^32,
    DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION, DB_ERROR_FAILED))
  con:query("DROP TABLE t")
end
"###;

#[test]
fn the_sysbench_0_5_api_runs_on_sqlite() {
    let dir = Dir::new();
    dir.write("api05.lua", API_0_5);
    let db = "--db-driver=sqlite --sqlite-db=legacy.db";
    let run = dir
        .bmk()
        .args(&format!("api05.lua {db} prepare"))
        .run()
        .ok_with_notice();
    assert!(
        run.stdout
            .contains("uniq used up:\tfalse\tsb_rand_uniq(1, 100): every value of the range has been returned"),
        "{}",
        run.stdout
    );
    let run = dir
        .bmk()
        .args(&format!("api05.lua {db} --threads=2 --events=200 run"))
        .run()
        .ok_with_notice();
    assert_eq!(run.total_events(), 200);
    assert_eq!(run.value("read:"), "200", "{}", run.stdout);
    assert_eq!(run.value("write:"), "200", "{}", run.stdout);
    let run = dir
        .bmk()
        .args(&format!("api05.lua {db} cleanup"))
        .run()
        .ok_with_notice();
    assert!(
        run.stdout
            .contains("rows=100 ids=100 formatted=100 bumped=true rnd=true errors=0/1/2"),
        "{}",
        run.stdout
    );
}
