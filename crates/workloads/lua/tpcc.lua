-- tpcc: bmk's built-in TPC-C-like workload (docs/workloads-tpcc-dbstress.md):
-- Percona's sysbench-tpcc model with the BMK-kit options, written for bmk.
--
--   bmk tpcc --tables=10 --scale=100 --threads=32 prepare   # parallel loader
--   bmk tpcc --tables=10 --scale=100 --threads=64 --time=300 run
--   bmk tpcc --tables=10 --scale=100 --threads=8 check      # consistency checks
--   bmk tpcc --tables=10 cleanup
--
-- Reference quirks are reproduced only with --tpcc-compat=percona|bmk (see
-- docs/workloads-tpcc-dbstress.md). `run` prints the committed transactions per type,
-- new_order rollbacks, tpmC and each type's latency before the final report.

require("tpcc_common")
local ws = require("bmk_workload_support")
require("tpcc_run")
require("tpcc_check")

function prepare()
  return cmd_prepare()
end

function cleanup()
  return cmd_cleanup()
end

sysbench.cmdline.commands = {
  prepare = { function() return cmd_prepare() end, sysbench.cmdline.PARALLEL_COMMAND },
  check = { function() return cmd_check() end, sysbench.cmdline.PARALLEL_COMMAND },
}

function init()
  tpcc_check_options()
  if ws.opt_bool("report_csv") then
    sysbench.hooks.report_intermediate = sysbench.report_csv
  end
  ws.sync_clean_stale()
end

function thread_init()
  tpcc_thread_init()
end

function event()
  tpcc_event()
end

function thread_done()
  tpcc_thread_done()
end

function done()
  ws.sync_finish()
  tpcc_print_summary()
end

function sysbench.hooks.before_restart_event()
  pcall(con.query, con, "ROLLBACK")
end
