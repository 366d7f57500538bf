-- dbstress: bmk's built-in dbSTRESS workload (docs/workloads-tpcc-dbstress.md).
--
--   bmk dbstress --obj-tables=10 --obj-table-size=1000000 --threads=32 prepare
--   bmk dbstress --obj-tables=10 --obj-table-size=1000000 --scenario=RW1 --threads=64 run
--   bmk dbstress --obj-tables=10 cleanup
--
-- One event = one transaction: [BEGIN] SEL1 group, SEL2 group, and on one event out
-- of --rw-ratio the UPDATE group and the DELETE+INSERT group; [COMMIT]. The BMK
-- scenario names (RO, RO-SEL1, RO-SEL2, RW1, RW10, RW1-UPD, RW10-UPD, xDEAD, xREF) are
-- option sets (--scenario=NAME; see docs/workloads-tpcc-dbstress.md).

require("dbstress_common")
local ws = require("bmk_workload_support")
local shm = require("bmk_shared")

local fmt = string.format
local floor = math.floor
local rand = sysbench.rand

sysbench.cmdline.commands = {
  create = { function() return cmd_create() end, sysbench.cmdline.PARALLEL_COMMAND },
  prepare = { function() return cmd_prepare() end, sysbench.cmdline.PARALLEL_COMMAND },
  warmup = { function() return cmd_warmup() end, sysbench.cmdline.PARALLEL_COMMAND },
  prewarm = { function() return cmd_warmup() end, sysbench.cmdline.PARALLEL_COMMAND },
}

function prepare()
  return cmd_prepare()
end

function cleanup()
  return cmd_cleanup()
end

local stmts = {}
local ops = 0
local S, P, T, tid = 0, 1, 1, 0
local slice = 0
local opt = {}
local in_trx = false
local XS = string.rep("X", 24)

-- Per-worker counters shared with the main state (bmk_shared), slot base = tid * SLOTS:
-- committed transactions of each kind and the query groups they ran, added when an
-- event ends (a restarted event counts only once it commits), and the first and last
-- event times, so done() can print the rate of each over the run.
local SLOTS = 10
local COUNTED = { "read_only", "read_write", "sel1", "sel2", "update", "delete_insert" }
local SLOT_START, SLOT_END = 7, 8
shm.block("dbstress_run", shm.MAX_THREADS * SLOTS) -- at load time, like tpcc_run
local counters = nil
local base = 0
-- This event's query groups so far: SEL1, SEL2, UPDATE, DELETE+INSERT.
local pending = { 0, 0, 0, 0 }
local NOTE_TAIL = XS .. " " .. XS .. " " .. XS .. " " .. XS

local function get_set()
  return rand.uniform(1, T)
end

-- REF of the next object: in this worker's own slice with --anti-dead (so no two
-- workers ever touch the same object), anywhere otherwise.
local function get_ref()
  if opt.anti_dead then
    return fmt("%010d", rand.default(5, slice - 5) + tid * slice)
  end
  return fmt("%010d", rand.default(0, S - 1))
end

local function prepare_statements()
  local ty = sysbench.sql.type
  local fu = ""
  if opt.for_update and ws.driver_kind() ~= "sqlite" then
    fu = " FOR UPDATE"
  end
  for n = 1, T do
    local st = {}
    local function mk(key, sql, binds)
      local s = con:prepare(sql)
      local ps = {}
      for i, b in ipairs(binds) do
        ps[i] = s:bind_create(b[1], b[2])
      end
      s:bind_param(unpack(ps))
      st[key] = { s = s, p = ps }
    end
    local REF = { ty.CHAR, 10 }
    if opt.SEL1 > 0 then
      mk("SEL1", fmt("SELECT S.REF sref, S.NAME snm, Z.REF zref, Z.NAME znm, O.NAME onm, "
        .. "O.CREATE_DATE ocd, O.NOTE onote FROM OBJECT%d O, SECTION%d S, ZONE%d Z WHERE "
        .. "S.REF = O.REF_SECTION AND Z.REF = S.REF_ZONE AND O.REF = ?%s", n, n, n, fu),
        { REF })
    end
    if opt.SEL2 > 0 then
      mk("SEL2", fmt("SELECT S.REF stref, S.NAME stnm, H.HORDER hord, H.BEGIN_DATE hbeg, "
        .. "H.END_DATE hend, H.NOTE hnote FROM HISTORY%d H, STAT%d S WHERE "
        .. "S.REF = H.REF_STAT AND H.REF_OBJECT = ? ORDER BY H.HORDER%s", n, n, fu),
        { REF })
    end
    if opt.updates > 0 then
      mk("UPDATE", fmt("UPDATE HISTORY%d SET REF_STAT = ?, BEGIN_DATE = ?, END_DATE = ?, "
        .. "NOTE = ? WHERE REF_OBJECT = ? AND HORDER = ?", n),
        { { ty.CHAR, 3 }, { ty.CHAR, 12 }, { ty.CHAR, 12 }, { ty.CHAR, 100 }, REF,
          { ty.INT } })
    end
    if opt.delete_inserts > 0 then
      mk("DELETE", fmt("DELETE FROM HISTORY%d WHERE REF_OBJECT = ? AND HORDER = ?", n),
        { REF, { ty.INT } })
      mk("INSERT", fmt("INSERT INTO HISTORY%d (REF_OBJECT, HORDER, REF_STAT, BEGIN_DATE, "
        .. "END_DATE, NOTE) VALUES (?, ?, ?, ?, ?, ?)", n),
        { REF, { ty.INT }, { ty.CHAR, 3 }, { ty.CHAR, 12 }, { ty.CHAR, 12 },
          { ty.CHAR, 100 } })
    end
    stmts[n] = st
  end
end

local function exec(n, key, ...)
  local st = stmts[n][key]
  local vals = { ... }
  for i = 1, #vals do
    st.p[i]:set(vals[i])
  end
  local rs = st.s:execute()
  if rs ~= nil then
    rs:free()
  end
end

local function new_values(ref)
  local horder = rand.uniform(0, N_HISTORY - 1)
  local state = fmt("%03d", rand.uniform(0, 999))
  local date = ds_date(rand.uniform(0, 99))
  local note = fmt("%s NOTE State %s FOR REF#%s-%d %s", date, state, ref, horder,
    NOTE_TAIL):sub(1, 100)
  return horder, state, date, note
end

-- A query group: `count` times, the given set/ref for the first query (new ones when
-- not given) and a new REF from the second query on.
local function group(count, n, ref, fn)
  if count <= 0 then
    return
  end
  n = n or get_set()
  for i = 1, count do
    if i > 1 or ref == nil then
      ref = get_ref()
    end
    fn(n, ref)
  end
end

local function do_sel1(n, ref)
  pending[1] = pending[1] + 1
  exec(n, "SEL1", ref)
end

local function do_sel2(n, ref)
  pending[2] = pending[2] + 1
  exec(n, "SEL2", ref)
end

local function do_update(n, ref)
  pending[3] = pending[3] + 1
  local horder, state, date, note = new_values(ref)
  exec(n, "UPDATE", state, date, date, note, ref, horder)
end

local function do_insdel(n, ref)
  pending[4] = pending[4] + 1
  local horder, state, date, note = new_values(ref)
  exec(n, "DELETE", ref, horder)
  exec(n, "INSERT", ref, horder, state, date, date, note)
end

function thread_init()
  dbstress_check_options()
  tid, P = sysbench.tid, sysbench.opt.threads
  S, T = ws.opt_num("obj_table_size"), ws.opt_num("obj_tables")
  opt = {
    SEL1 = ws.opt_num("SEL1"), SEL2 = ws.opt_num("SEL2"), updates = ws.opt_num("updates"),
    delete_inserts = ws.opt_num("delete_inserts"), rw_ratio = ws.opt_num("rw_ratio"),
    anti_dead = ws.opt_bool("anti_dead"), same_ref = ws.opt_bool("same_ref"),
    skip_trx = ws.opt_bool("skip_trx"), for_update = ws.opt_bool("for_update"),
  }
  slice = floor(S / P)
  if opt.anti_dead and slice <= 10 then
    error(fmt("dbstress: --anti-dead needs more than 10 objects per user "
      .. "(obj-table-size %d / threads %d); use --anti-dead=off", S, P), 0)
  end
  dbstress_connect()
  prepare_statements()
  if tid < shm.MAX_THREADS then
    counters = shm.block("dbstress_run", shm.MAX_THREADS * SLOTS)
    base = tid * SLOTS
  end
  if tid == 0 then
    print(fmt("=> dbSTRESS: users %d, objects %.2fM x %d set(s), anti-dead %s, same-ref %s, "
      .. "SEL1 %d, SEL2 %d, UPDATE %d, INSDEL %d, RW-ratio %d, trx %s, for-update %s", P,
      S / 1e6, T, opt.anti_dead and "on" or "off", opt.same_ref and "on" or "off", opt.SEL1,
      opt.SEL2, opt.updates, opt.delete_inserts, opt.rw_ratio,
      opt.skip_trx and "off" or "on", opt.for_update and "on" or "off"))
    if ws.opt_str("mysql_session_options") ~= "" then
      print("=> session-ops: " .. ws.opt_str("mysql_session_options"))
    end
    if ws.opt_bool("opt_debug") then
      local names = {}
      for k in pairs(sysbench.cmdline.options) do
        names[#names + 1] = k
      end
      table.sort(names)
      for _, k in ipairs(names) do
        print(fmt("   %-20s = %s", k, tostring(sysbench.cmdline.shown_value(k, sysbench.opt[k]))))
      end
    end
  end
  ws.sync_wait()
end

-- Adds the event that just committed to this worker's counters.
local function count_event(write)
  if counters == nil then
    return
  end
  local kind = write and 2 or 1
  counters[base + kind] = counters[base + kind] + 1
  for g = 1, 4 do
    counters[base + 2 + g] = counters[base + 2 + g] + pending[g]
  end
  counters[base + SLOT_END] = shm.now()
end

function event()
  if counters ~= nil and counters[base + SLOT_START] == 0 then
    counters[base + SLOT_START] = shm.now()
  end
  pending[1], pending[2], pending[3], pending[4] = 0, 0, 0, 0
  ops = ops + 1
  local write = ops % opt.rw_ratio == 0 and (opt.updates > 0 or opt.delete_inserts > 0)
  local n, ref
  if opt.same_ref then
    n, ref = get_set(), get_ref()
  end
  if not opt.skip_trx then
    con:query((write and ws.driver_kind() == "sqlite") and "BEGIN IMMEDIATE" or "BEGIN")
    in_trx = true
  end
  group(opt.SEL1, n, ref, do_sel1)
  group(opt.SEL2, n, ref, do_sel2)
  if write then
    group(opt.updates, n, ref, do_update)
    group(opt.delete_inserts, n, ref, do_insdel)
  end
  if in_trx then
    con:query("COMMIT")
    in_trx = false
  end
  count_event(write)
end

function sysbench.hooks.before_restart_event()
  if in_trx then
    pcall(con.query, con, "ROLLBACK")
    in_trx = false
  end
end

function thread_done()
  ws.sync_finish()
  for _, st in pairs(stmts) do
    for _, s in pairs(st) do
      s.s:close()
    end
  end
  con:disconnect()
end

function init()
  dbstress_check_options()
  ws.sync_clean_stale()
end

-- Main state: each kind of transaction and query group, with its rate over the time
-- from the first event to the last commit of any user; the kit keeps these in the
-- level's result.json (`workload`).
local function print_summary()
  local blk = shm.block("dbstress_run", shm.MAX_THREADS * SLOTS)
  local threads = math.min(sysbench.opt.threads or 1, shm.MAX_THREADS)
  local sum = { 0, 0, 0, 0, 0, 0 }
  for w = 0, threads - 1 do
    for k = 1, #COUNTED do
      sum[k] = sum[k] + blk[w * SLOTS + k]
    end
  end
  local secs = shm.span(blk, threads, SLOTS, SLOT_START, SLOT_END)
  print("dbSTRESS transactions:")
  for k, name in ipairs(COUNTED) do
    local rate = secs > 0 and sum[k] / secs or 0
    print(fmt("    %-22s %10d (%.2f per sec.)", name .. ":", sum[k], rate))
  end
  print(fmt("    %-22s %10.2f (first event to last commit)", "seconds:", secs))
  print("")
end

function done()
  ws.sync_finish()
  print_summary()
end
