-- tpcc_run: the TPC-C transactions of bmk's built-in TPC-C-like workload (with the
-- BMK variants, docs/workloads-tpcc-dbstress.md), their mix, the
-- per-worker counters behind the tpmC line and latency histograms behind the latency
-- block, and the event function.
--
-- Every transaction is split in gen() (draws its inputs) and run(inputs) (talks SQL),
-- so --trx-retry can replay exactly the same transaction after a deadlock.

require("tpcc_common")
local ws = require("bmk_workload_support")
local latency = require("bmk_latency")

local ffi = require("ffi")
local rand = sysbench.rand
local floor = math.floor
local fmt = string.format

NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL, PURGE = 1, 2, 3, 4, 5, 6
TRX_NAMES = { "new_order", "payment", "order_status", "delivery", "stock_level", "purge" }

-- Shared per-worker counters (bmk_shared): slot base = tid * SLOTS.
SLOTS = 16
SLOT_ROLLBACKS = 7   -- new_order rollbacks (invalid item)
SLOT_RETRIES = 8     -- transactions replayed by --trx-retry
SLOT_START = 9       -- monotonic time of the worker's first event
SLOT_END = 10        -- monotonic time of the end of its last event
counters = nil
local base = 0
tpcc_shm.block("tpcc_run", tpcc_shm.MAX_THREADS * SLOTS) -- at load time (bmk_shared)
-- Per worker and transaction type: the latency of each completed transaction.
local latencies = latency.set("tpcc_latency", #TRX_NAMES)

-- SQL helpers -----------------------------------------------------------------------------

local function q(sql)
  return con:query(sql)
end

-- The first row of sql as multiple values; raises when there is none.
local function row1(sql)
  local rs = con:query(sql)
  if rs == nil or rs.nrows == 0 then
    error("tpcc: no row returned by: " .. sql, 0)
  end
  return unpack(rs:fetch_row(), 1, rs.nfields)
end

local function begin(rw)
  if ws.opt_bool("splittable") then
    q(rw and "START TRANSACTION READ WRITE" or "START TRANSACTION READ ONLY")
  elseif rw and ws.driver_kind() == "sqlite" then
    q("BEGIN IMMEDIATE")
  else
    q("BEGIN")
  end
end

local function commit()
  q("COMMIT")
end

local function force_primary()
  if ws.opt_num("force_primary") >= 1 then
    return " FORCE INDEX (PRIMARY)"
  end
  return ""
end

local set_pinned = nil

local function pick_set()
  if set_pinned then
    return set_pinned
  end
  return rand.uniform(1, ws.opt_num("tables"))
end

local function pick_w()
  if Q.wid_default then
    return rand.default(1, ws.opt_num("scale"))
  end
  return rand.uniform(1, ws.opt_num("scale"))
end

-- By-name customer lookup (payment, order_status): the customer id, plus the
-- extra columns of Percona's order_status form when `cols` is given.
local function by_name(n, w, d, last, c_id, cols)
  local where = fmt("c_w_id = %d AND c_d_id = %d AND c_last = '%s'", w, d, last)
  if Q.byname_percona then
    local cnt = tonumber(row1(fmt("SELECT count(c_id) namecnt FROM customer%d WHERE %s",
      n, where)))
    local rs = q(fmt("SELECT %s FROM customer%d WHERE %s ORDER BY c_first",
      cols or "c_id", n, where))
    if cnt > 1 and cnt % 2 == 1 then
      cnt = cnt + 1
    end
    local pick, r = floor(cnt / 2 + 1), nil
    for _ = 1, math.min(pick, rs.nrows) do
      r = rs:fetch_row()
    end
    if r == nil then
      error("tpcc: no customer named " .. last, 0)
    end
    return tonumber(r[#r])
  end
  local rs = q(fmt("SELECT c_id FROM customer%d WHERE %s ORDER BY c_first", n, where))
  local cnt = rs.nrows
  local pick
  if Q.byname_bmk then
    if cnt == 0 then
      return c_id
    end
    pick = cnt == 1 and 1 or floor(cnt / 2)
  else
    if cnt == 0 then
      return c_id
    end
    pick = floor((cnt + 1) / 2) -- TPC-C 2.5.2.2: position ceil(n/2)
  end
  local r
  for _ = 1, pick do
    r = rs:fetch_row()
  end
  return tonumber(r[1])
end

-- The transactions ----------------------------------------------------------------------

local TRX = {}

TRX[NEW_ORDER] = {
  gen = function()
    local w = pick_w()
    local t = { n = pick_set(), w = w, d = rand.uniform(1, DIST_PER_WARE),
      c = nurand(1023, 1, CUST_PER_DIST), ol_cnt = rand.uniform(5, 15), all_local = 1,
      lines = {} }
    local rbk = rand.uniform(1, 100)
    local bad_line = nil
    if rbk == 1 and not Q.rbk_none then
      bad_line = Q.rbk_second_last and t.ol_cnt - 1 or t.ol_cnt
    end
    local other_w = Q.bmk_lines and other_ware(w) or nil
    for i = 1, t.ol_cnt do
      local item = nurand(8191, 1, MAXITEMS)
      if i == bad_line then
        item = Q.percona and -1 or MAXITEMS + 1
      end
      local supply = w
      if Q.bmk_lines then
        if i >= 0.9 * t.ol_cnt then
          supply = other_w
        end
      elseif rand.uniform(1, 100) == 1 then
        supply = other_ware(w)
        if Q.percona or supply ~= w then
          t.all_local = 0
        end
      end
      t.lines[i] = { item = item, supply = supply, qty = rand.uniform(1, 10) }
    end
    if Q.all_local_zero then
      t.all_local = 0
    end
    return t
  end,
  run = function(t)
    local n, w, d = t.n, t.w, t.d
    begin(true)
    local c_discount, _, _, w_tax = row1(fmt("SELECT c_discount, c_last, c_credit, w_tax "
      .. "FROM customer%d, warehouse%d WHERE w_id = %d AND c_w_id = w_id AND c_d_id = %d "
      .. "AND c_id = %d", n, n, w, d, t.c))
    local next_o, d_tax = row1(fmt("SELECT d_next_o_id, d_tax FROM district%d WHERE "
      .. "d_w_id = %d AND d_id = %d%s", n, w, d, for_update(1)))
    local o_id = tonumber(next_o)
    q(fmt("UPDATE district%d SET d_next_o_id = %d WHERE d_id = %d AND d_w_id = %d", n,
      o_id + 1, d, w))
    -- undelivered marker: omitted (percona; SQLite has no DEFAULT keyword in VALUES),
    -- literal NULL (--force-null=1) or the DEFAULT keyword
    local carrier_col, carrier_val = "", ""
    if not Q.percona and ws.driver_kind() ~= "sqlite" then
      carrier_col = "o_carrier_id, "
      carrier_val = use_null and "NULL, " or "DEFAULT, "
    elseif use_null and ws.driver_kind() == "sqlite" then
      carrier_col, carrier_val = "o_carrier_id, ", "NULL, "
    end
    q(fmt("INSERT INTO orders%d (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, %so_ol_cnt, "
      .. "o_all_local) VALUES (%d, %d, %d, %d, CURRENT_TIMESTAMP, %s%d, %d)", n,
      carrier_col, o_id, d, w, t.c, carrier_val, t.ol_cnt, t.all_local))
    q(fmt("INSERT INTO new_orders%d (no_o_id, no_d_id, no_w_id) VALUES (%d, %d, %d)", n,
      o_id, d, w))
    local tax = 1 + tonumber(w_tax) + tonumber(d_tax)
    local disc = 1 - tonumber(c_discount)
    local ddcol = fmt("s_dist_%02d", d)
    for i, l in ipairs(t.lines) do
      local rs = q(fmt("SELECT i_price, i_name, i_data FROM item%d WHERE i_id = %d", n,
        l.item))
      if rs == nil or rs.nrows == 0 then
        q("ROLLBACK")
        return "rollback"
      end
      local price = tonumber(rs:fetch_row()[1])
      local s_quantity, _, s_dist = row1(fmt("SELECT s_quantity, s_data, %s s_dist FROM "
        .. "stock%d WHERE s_i_id = %d AND s_w_id = %d%s", ddcol, n, l.item, l.supply,
        for_update(1)))
      s_quantity = tonumber(s_quantity)
      local newq = s_quantity > l.qty and s_quantity - l.qty or s_quantity - l.qty + 91
      if Q.no_stock_counters then
        q(fmt("UPDATE stock%d SET s_quantity = %d WHERE s_i_id = %d AND s_w_id = %d", n,
          newq, l.item, l.supply))
      else
        q(fmt("UPDATE stock%d SET s_quantity = %d, s_ytd = s_ytd + %d, "
          .. "s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + %d "
          .. "WHERE s_i_id = %d AND s_w_id = %d", n, newq, l.qty,
          l.supply ~= w and 1 or 0, l.item, l.supply))
      end
      local amount = l.qty * price * tax * disc
      local amount_s = Q.amount_trunc and fmt("%d", amount) or fmt("%.2f", amount)
      local dd_col, dd_val = "", ""
      if not Q.percona and ws.driver_kind() ~= "sqlite" then
        dd_col = "ol_delivery_d, "
        dd_val = use_null and "NULL, " or "DEFAULT, "
      elseif use_null and ws.driver_kind() == "sqlite" then
        dd_col, dd_val = "ol_delivery_d, ", "NULL, "
      end
      q(fmt("INSERT INTO order_line%d (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, "
        .. "ol_supply_w_id, %sol_quantity, ol_amount, ol_dist_info) VALUES "
        .. "(%d, %d, %d, %d, %d, %d, %s%d, %s, '%s')", n, dd_col, o_id, d, w, i, l.item,
        l.supply, dd_val, l.qty, amount_s, s_dist or ""))
    end
    commit()
  end,
}

TRX[PAYMENT] = {
  gen = function()
    local w, d = pick_w(), rand.uniform(1, DIST_PER_WARE)
    local t = { n = pick_set(), w = w, d = d, c = nurand(1023, 1, CUST_PER_DIST),
      h = rand.uniform(1, 5000), last = lastname(nurand(255, 0, 999)),
      byname = rand.uniform(1, 100) <= 60, cw = w, cd = d }
    if not Q.payment_local and rand.uniform(1, 100) > 85 then
      t.cw = other_ware(w)
      t.cd = rand.uniform(1, DIST_PER_WARE)
    end
    return t
  end,
  run = function(t)
    local n, w, d, h = t.n, t.w, t.d, t.h
    begin(true)
    q(fmt("UPDATE warehouse%d SET w_ytd = w_ytd + %d WHERE w_id = %d", n, h, w))
    local _, _, _, _, _, w_name = row1(fmt("SELECT w_street_1, w_street_2, w_city, "
      .. "w_state, w_zip, w_name FROM warehouse%d WHERE w_id = %d", n, w))
    q(fmt("UPDATE district%d SET d_ytd = d_ytd + %d WHERE d_w_id = %d AND d_id = %d", n, h,
      w, d))
    local _, _, _, _, _, d_name = row1(fmt("SELECT d_street_1, d_street_2, d_city, "
      .. "d_state, d_zip, d_name FROM district%d WHERE d_w_id = %d AND d_id = %d", n, w, d))
    local c = t.c
    if t.byname then
      c = by_name(n, t.cw, t.cd, t.last, c)
    end
    local key = fmt("c_w_id = %d AND c_d_id = %d AND c_id = %d", t.cw, t.cd, c)
    local r = { row1(fmt("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, "
      .. "c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, "
      .. "c_ytd_payment, c_since FROM customer%d WHERE %s%s", n, key, for_update(1))) }
    local credit = r[10]
    local balance = tonumber(r[13]) - h
    local ytd = tonumber(r[14]) + h
    local cnt = Q.no_payment_cnt and "" or ", c_payment_cnt = c_payment_cnt + 1"
    if credit == "BC" then
      local c_data = row1(fmt("SELECT c_data FROM customer%d WHERE %s", n, key))
      local new = fmt("| %4d %2d %4d %2d %4d $%7.2f %12d %s", c, t.cd, t.cw, d, w, h,
        os.time(), c_data or ""):sub(1, 500)
      q(fmt("UPDATE customer%d SET c_balance = %.2f, c_ytd_payment = %.2f%s, "
        .. "c_data = '%s' WHERE %s", n, balance, ytd, cnt, new, key))
    else
      q(fmt("UPDATE customer%d SET c_balance = %.2f, c_ytd_payment = %.2f%s WHERE %s", n,
        balance, ytd, cnt, key))
    end
    q(fmt("INSERT INTO history%d (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, "
      .. "h_amount, h_data) VALUES (%d, %d, %d, %d, %d, CURRENT_TIMESTAMP, %d, "
      .. "'%10s %10s   ')", n, t.cd, t.cw, c, d, w, h, w_name or "", d_name or ""))
    commit()
  end,
}

TRX[ORDER_STATUS] = {
  gen = function()
    return { n = pick_set(), w = pick_w(), d = rand.uniform(1, DIST_PER_WARE),
      c = nurand(1023, 1, CUST_PER_DIST), last = lastname(nurand(255, 0, 999)),
      byname = rand.uniform(1, 100) <= 60 }
  end,
  run = function(t)
    local n, w, d = t.n, t.w, t.d
    begin(false)
    local c = t.c
    if t.byname and Q.byname_percona then
      c = by_name(n, w, d, t.last, c, "c_balance, c_first, c_middle, c_id")
    else
      if t.byname then
        c = by_name(n, w, d, t.last, c)
      end
      row1(fmt("SELECT c_balance, c_first, c_middle, c_last FROM customer%d WHERE "
        .. "c_w_id = %d AND c_d_id = %d AND c_id = %d", n, w, d, c))
    end
    local limit = Q.compat == "none" and " LIMIT 1" or ""
    local rs = q(fmt("SELECT o_id, o_carrier_id, o_entry_d FROM orders%d WHERE o_w_id = %d "
      .. "AND o_d_id = %d AND o_c_id = %d ORDER BY o_id DESC%s", n, w, d, c, limit))
    if rs ~= nil and rs.nrows > 0 then
      local o_id = tonumber(rs:fetch_row()[1])
      if Q.ostatus_lines_by_d then
        o_id = d
      end
      q(fmt("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM "
        .. "order_line%d%s WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", n,
        force_primary(), w, d, o_id))
    end
    commit()
  end,
}

TRX[DELIVERY] = {
  gen = function()
    return { n = pick_set(), w = pick_w(), carrier = rand.uniform(1, 10) }
  end,
  run = function(t)
    local n, w = t.n, t.w
    local fp = force_primary()
    begin(true)
    for d = 1, DIST_PER_WARE do
      local rs = q(fmt("SELECT no_o_id FROM new_orders%d WHERE no_d_id = %d AND "
        .. "no_w_id = %d ORDER BY no_o_id ASC LIMIT 1%s", n, d, w, for_update(1)))
      if rs ~= nil and rs.nrows > 0 then
        local o = tonumber(rs:fetch_row()[1])
        local key = fmt("o_id = %d AND o_d_id = %d AND o_w_id = %d", o, d, w)
        local olkey = fmt("ol_o_id = %d AND ol_d_id = %d AND ol_w_id = %d", o, d, w)
        q(fmt("DELETE FROM new_orders%d WHERE no_o_id = %d AND no_d_id = %d AND "
          .. "no_w_id = %d", n, o, d, w))
        local o_c_id = row1(fmt("SELECT o_c_id FROM orders%d WHERE %s%s", n, key,
          for_update(2)))
        q(fmt("UPDATE orders%d SET o_carrier_id = %d WHERE %s", n, t.carrier, key))
        q(fmt("UPDATE order_line%d%s SET ol_delivery_d = CURRENT_TIMESTAMP WHERE %s", n, fp,
          olkey))
        local sm = row1(fmt("SELECT SUM(ol_amount) sm FROM order_line%d%s WHERE %s", n, fp,
          olkey))
        q(fmt("UPDATE customer%d SET c_balance = c_balance + %s, "
          .. "c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = %d AND c_d_id = %d AND "
          .. "c_w_id = %d", n, sm or "0", tonumber(o_c_id), d, w))
      end
    end
    commit()
  end,
}

TRX[STOCK_LEVEL] = {
  gen = function()
    return { n = pick_set(), w = pick_w(), d = rand.uniform(1, DIST_PER_WARE),
      level = rand.uniform(10, 20) }
  end,
  run = function(t)
    local n, w, d = t.n, t.w, t.d
    begin(false)
    local nxt = tonumber(row1(fmt("SELECT d_next_o_id FROM district%d WHERE d_id = %d AND "
      .. "d_w_id = %d", n, d, w)))
    if Q.stock_level_dbt2 then
      q(fmt("SELECT count(*) FROM order_line%d, stock%d, district%d WHERE d_id = %d AND "
        .. "d_w_id = %d AND d_id = ol_d_id AND d_w_id = ol_w_id AND ol_i_id = s_i_id AND "
        .. "ol_w_id = s_w_id AND s_quantity < %d AND ol_o_id BETWEEN %d AND %d", n, n, n,
        d, w, t.level, nxt - 20, nxt))
    else
      q(fmt("SELECT COUNT(DISTINCT (s_i_id)) FROM order_line%d, stock%d WHERE "
        .. "ol_w_id = %d AND ol_d_id = %d AND ol_o_id < %d AND ol_o_id >= %d AND "
        .. "s_w_id = %d AND s_i_id = ol_i_id AND s_quantity < %d", n, n, w, d, nxt,
        nxt - 20, w, t.level))
    end
    commit()
  end,
}

TRX[PURGE] = {
  gen = function()
    local t = {}
    for i = 1, 10 do
      t[i] = { n = pick_set(), w = pick_w(), d = rand.uniform(1, DIST_PER_WARE) }
    end
    return t
  end,
  run = function(t)
    local kind = ws.driver_kind()
    for _, p in ipairs(t) do
      local n, w, d = p.n, p.w, p.d
      begin(true)
      local m = row1(fmt("SELECT min(no_o_id) mo FROM new_orders%d WHERE no_w_id = %d AND "
        .. "no_d_id = %d", n, w, d))
      if m ~= nil then
        local rs = q(fmt("SELECT o_id FROM orders%d o, (SELECT o_c_id, o_w_id, o_d_id, "
          .. "count(distinct o_id) cnt FROM orders%d WHERE o_w_id = %d AND o_d_id = %d AND "
          .. "o_id > %d AND o_id < %s GROUP BY o_c_id, o_d_id, o_w_id HAVING "
          .. "count(distinct o_id) > 1 LIMIT 1) t WHERE t.o_w_id = o.o_w_id AND "
          .. "t.o_d_id = o.o_d_id AND t.o_c_id = o.o_c_id LIMIT 1", n, n, w, d,
          NEW_ORD_FIRST - 1, m))
        if rs ~= nil and rs.nrows > 0 then
          local x = tonumber(rs:fetch_row()[1])
          q(fmt("DELETE FROM order_line%d WHERE ol_w_id = %d AND ol_d_id = %d AND "
            .. "ol_o_id = %d", n, w, d, x))
          q(fmt("DELETE FROM orders%d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", n,
            w, d, x))
          local where = fmt("h_w_id = %d AND h_d_id = %d", w, d)
          if kind == "mysql" then
            q(fmt("DELETE FROM history%d WHERE %s LIMIT 10", n, where))
          elseif kind == "pgsql" then
            q(fmt("DELETE FROM history%d WHERE ctid IN (SELECT ctid FROM history%d WHERE "
              .. "%s LIMIT 10)", n, n, where))
          else
            q(fmt("DELETE FROM history%d WHERE rowid IN (SELECT rowid FROM history%d "
              .. "WHERE %s LIMIT 10)", n, n, where))
          end
        end
      end
      commit()
    end
  end,
}

-- Mix ----------------------------------------------------------------------------------

local function pick_type()
  local dbg = ws.opt_num("trx_debug")
  if dbg >= 1 and dbg <= 6 then
    return dbg
  end
  local purge = ws.opt_bool("enable_purge")
  if Q.mix_percona then
    local t = rand.uniform(1, purge and 24 or 23)
    if t <= 10 then
      return NEW_ORDER
    elseif t <= 20 then
      return PAYMENT
    end
    return t - 18
  end
  local t = rand.uniform(1, purge and 104 or 100)
  if t <= 45 then
    return NEW_ORDER
  elseif t <= 88 then
    return PAYMENT
  elseif t <= 92 then
    return ORDER_STATUS
  elseif t <= 96 then
    return DELIVERY
  elseif t <= 100 then
    return STOCK_LEVEL
  end
  return PURGE
end

-- Worker life cycle -------------------------------------------------------------------------

local trx_retry = false
local RESTART = sysbench.error.RESTART_EVENT
local MAX_RETRIES = 100
local pending_kind = nil

function tpcc_thread_init()
  tpcc_check_options()
  use_null = ws.opt_num("force_null") == 1
  trx_retry = ws.opt_bool("trx_retry")
  tpcc_connect()
  local T = ws.opt_num("tables")
  if Q.pin_sets and sysbench.opt.threads >= T then
    set_pinned = (sysbench.tid % T) + 1
  end
  if sysbench.tid < tpcc_shm.MAX_THREADS then
    counters = tpcc_shm.block("tpcc_run", tpcc_shm.MAX_THREADS * SLOTS)
    base = sysbench.tid * SLOTS
  end
  if sysbench.tid == 0 then
    local dbg = ws.opt_num("trx_debug")
    if dbg >= 1 and dbg <= 6 then
      print(fmt("=> trx-debug: running only %s", TRX_NAMES[dbg]))
    end
    if Q.compat ~= "none" then
      print(fmt("=> tpcc-compat: %s", Q.compat))
    end
  end
  ws.sync_wait()
end

function tpcc_thread_done()
  ws.sync_finish()
  con:disconnect()
end

local function note(slot)
  if counters ~= nil then
    counters[base + slot] = counters[base + slot] + 1
  end
end

function tpcc_event()
  if counters ~= nil and counters[base + SLOT_START] == 0 then
    counters[base + SLOT_START] = tpcc_shm.now()
  end
  -- An event restarted by the engine (deadlock, serialization failure, lock wait
  -- timeout) runs the same transaction type again, so the mix of completed
  -- transactions stays the standard one (Percona draws a new type).
  local kind = pending_kind or pick_type()
  pending_kind = nil
  local trx = TRX[kind]
  local started = tpcc_shm.now()
  local inputs = trx.gen()
  local tries = 0
  while true do
    local ok, res = pcall(trx.run, inputs)
    if ok then
      -- From the first try to the commit (or the rollback of an invalid new_order):
      -- --trx-retry's replays are part of the transaction's time.
      latencies:record(sysbench.tid, kind, (tpcc_shm.now() - started) * 1000)
      if res == "rollback" then
        note(SLOT_ROLLBACKS)
        if Q.rbk_is_error then
          ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
        end
      else
        note(kind)
      end
      if counters ~= nil then
        counters[base + SLOT_END] = tpcc_shm.now()
      end
      return
    end
    pcall(q, "ROLLBACK")
    tries = tries + 1
    local restart = type(res) == "table" and res.errcode == RESTART
    if Q.catch_all then
      -- BMK port: every error is swallowed; --trx-retry runs the same type again
      -- with new inputs
      if not trx_retry or tries > MAX_RETRIES then
        return
      end
      note(SLOT_RETRIES)
      inputs = trx.gen()
    elseif restart and trx_retry and tries <= MAX_RETRIES then
      note(SLOT_RETRIES)
    else
      if restart and not Q.percona then
        pending_kind = kind
      end
      error(res, 0)
    end
  end
end

-- The types the summary shows: purge only when it can run.
local function shown(k)
  return k < PURGE or ws.opt_bool("enable_purge") or ws.opt_num("trx_debug") == PURGE
end

-- Main state: the latency of each transaction type, summed over the workers: a table
-- for the reader, then each type's histogram (sum, min, max, and the count of each
-- non-empty bucket under its upper bound) for the kit, which adds the histograms of
-- several clients exactly (crates/kit/src/workload_results.rs).
local function print_latency(threads)
  local sums = {}
  print(fmt("%-26s %10s %10s %10s %10s %10s", "TPC-C latency (ms):", "count", "avg", "95th",
    "99th", "max"))
  for k = 1, #TRX_NAMES do
    if shown(k) then
      local s = latencies:summary(threads, k)
      sums[k] = s
      print(fmt("    %-22s %10d %10.3f %10.3f %10.3f %10.3f", TRX_NAMES[k] .. ":", s.count,
        s.count > 0 and s.sum / s.count or 0, latency.percentile(s, 95),
        latency.percentile(s, 99), s.max))
    end
  end
  print("TPC-C latency histograms (ms; bucket upper bound:count):")
  for k = 1, #TRX_NAMES do
    local s = sums[k]
    if s ~= nil then
      local parts = { fmt("    %s: sum=%.3f min=%.3f max=%.3f", TRX_NAMES[k], s.sum, s.min,
        s.max) }
      for i = 0, latency.BUCKETS - 1 do
        if s.buckets[i] then
          parts[#parts + 1] = fmt("%.6g:%d", latency.bound(i), s.buckets[i])
        end
      end
      print(table.concat(parts, " "))
    end
  end
end

-- Main state: the per-type counts and tpmC, printed by done() (before the final
-- report) from the shared per-worker counters.
function tpcc_print_summary()
  local blk = tpcc_shm.block("tpcc_run", tpcc_shm.MAX_THREADS * SLOTS)
  local threads = math.min(sysbench.opt.threads or 1, tpcc_shm.MAX_THREADS)
  local sum = {}
  for s = 1, SLOTS do
    sum[s] = 0
  end
  for tid = 0, threads - 1 do
    local b = tid * SLOTS
    for s = 1, SLOT_RETRIES do
      sum[s] = sum[s] + blk[b + s]
    end
  end
  local total = sum[SLOT_ROLLBACKS]
  for k = 1, 6 do
    total = total + sum[k]
  end
  local function pct(x, of)
    return of > 0 and 100 * x / of or 0
  end
  print("TPC-C transactions:")
  for k = 1, 6 do
    if shown(k) then
      local x = sum[k] + (k == NEW_ORDER and sum[SLOT_ROLLBACKS] or 0)
      print(fmt("    %-22s %10d (%.2f%%)", TRX_NAMES[k] .. ":", x, pct(x, total)))
    end
  end
  local nos = sum[NEW_ORDER] + sum[SLOT_ROLLBACKS]
  print(fmt("    %-22s %10d (%.2f%% of new_order)", "new_order rollbacks:",
    sum[SLOT_ROLLBACKS], pct(sum[SLOT_ROLLBACKS], nos)))
  print(fmt("    %-22s %10d", "retried (trx-retry):", sum[SLOT_RETRIES]))
  local secs = tpcc_shm.span(blk, threads, SLOTS, SLOT_START, SLOT_END)
  local tpmc = secs > 0 and sum[NEW_ORDER] * 60 / secs or 0
  print(fmt("tpmC: %.2f (committed new_order per minute over %.2f s)", tpmc, secs))
  print_latency(threads)
  print("")
end
