-- tpcc_common: options, schema, data loader and connection setup of bmk's built-in
-- TPC-C-like workload, with the BMK-kit options. Written for bmk; see
-- docs/workloads-tpcc-dbstress.md for every choice.
--
-- Globals defined here are used by tpcc_run (transactions), tpcc_check (consistency
-- checks) and tpcc (the workload script).

local shm = require("bmk_shared")
local ws = require("bmk_workload_support")

local ARG_INT = sysbench.cmdline.ARG_INT
local ARG_STRING = sysbench.cmdline.ARG_STRING

sysbench.cmdline.options = {
  scale = { "Warehouses per table set (each set holds w_id 1..scale)", 100, ARG_INT },
  tables = { "Number of table sets (suffix 1..N); total warehouses = scale x tables", 1,
    ARG_INT },
  use_fk = { "Foreign keys: 0 = none but keep their secondary indexes (NoFK), "
    .. "1 = foreign keys and indexes, 2 = neither (NoFK2)", 1, ARG_INT },
  force_pk = { "1 = give history an auto-increment id primary key", 0, ARG_INT },
  force_null = { "1 = NULL for undelivered o_carrier_id / ol_delivery_d in schema and "
    .. "queries (original TPC-C); 0 = NOT NULL columns with DEFAULT values", 0, ARG_INT },
  trx_level = { "Session isolation level: RR, RC or SER", "RR", ARG_STRING },
  enable_purge = { "yes = add the purge transaction to the mix", "no", ARG_STRING },
  report_csv = { "yes = intermediate reports in CSV", "no", ARG_STRING },
  pgsql_schema = { "PostgreSQL: schema put in search_path on every connection",
    "public", ARG_STRING },
  splittable = { "yes = START TRANSACTION READ WRITE / READ ONLY instead of BEGIN",
    "no", ARG_STRING },
  for_update = { "FOR UPDATE on locking reads: 0 = none, 1 = where TPC-C needs it, "
    .. "2 = also delivery's orders read", 1, ARG_INT },
  force_primary = { "1 = FORCE INDEX (PRIMARY) on order_line in order_status and "
    .. "delivery (MySQL)", 0, ARG_INT },
  trx_retry = { "Retry a transaction rolled back by a deadlock / lock wait timeout "
    .. "with the same type and inputs", false },
  trx_debug = { "Run only one transaction type: 1 new_order, 2 payment, "
    .. "3 order_status, 4 delivery, 5 stock_level, 6 purge (0 = the mix)", 0, ARG_INT },
  tpcc_compat = { "Reproduce a reference's quirks: none (the TPC-C intent), percona, "
    .. "or bmk", "none", ARG_STRING },
}
ws.declare_common_options(sysbench.cmdline.options, { "mysql_storage_engine",
  "mysql_table_options", "mysql_table_compression", "mysql_session_options",
  "mysql_check_charset", "sync_file", "sync_wait" })

-- Shared memory, created at load time by the main state (see bmk_shared).
shm.block("tpcc_prepare", shm.MAX_THREADS + 1)

-- Constants ----------------------------------------------------------------------------

MAXITEMS = 100000
DIST_PER_WARE = 10
CUST_PER_DIST = 3000
ORD_PER_DIST = 3000
NEW_ORD_FIRST = 2101 -- orders o_id >= 2101 are undelivered in the initial data
DEFAULT_DELIVERY_D = "1970-01-01 00:00:00"

TABLE_ORDER = { "warehouse", "district", "customer", "history", "orders", "new_orders",
  "order_line", "stock", "item" }
DROP_ORDER = { "history", "new_orders", "order_line", "orders", "customer", "district",
  "stock", "item", "warehouse" }

-- Quirk switches (--tpcc-compat) -------------------------------------------------------

Q = {}

local function set_quirks()
  local c = ws.opt_str("tpcc_compat"):lower()
  if c ~= "none" and c ~= "percona" and c ~= "bmk" and c ~= "" then
    error("tpcc: --tpcc-compat must be none, percona or bmk", 0)
  end
  local p, b = c == "percona", c == "bmk"
  Q = {
    compat = c,
    percona = p,
    bmk = b,
    mix_percona = p,              -- t = uniform(1, 23|24): 10/10/1/1/1(/1)
    other_ware_home = p or b,     -- other_ware() always returns the home warehouse
    nurand_c_per_call = p,        -- NURand's C redrawn on every call
    amount_trunc = p or b,        -- ol_amount formatted as an integer
    ostatus_lines_by_d = p or b,  -- order_status reads the lines of order number d_id
    byname_percona = p,           -- count query + Percona row rule
    byname_bmk = b,               -- one query, row floor(n/2), none -> NURand id
    rbk_second_last = p,          -- the invalid item on line ol_cnt-1
    rbk_none = b,                 -- no intentional rollback
    rbk_is_error = p,             -- the rollback increments the error counter
    no_stock_counters = p or b,   -- s_ytd / s_order_cnt / s_remote_cnt not updated
    no_payment_cnt = p or b,      -- c_payment_cnt not incremented
    fk_checks_off = p,            -- SET FOREIGN_KEY_CHECKS=0 on every MySQL connection
    ddl_before_load = p,          -- indexes and FKs created before the load
    all_local_zero = b,           -- o_all_local always 0
    payment_local = b,            -- payment's customer always in the home district
    pin_sets = b,                 -- threads >= tables: set (tid mod tables)+1
    stock_level_dbt2 = b,         -- COUNT(*) join with an inclusive 21-order range
    bmk_lines = b,                -- line i remote when i >= 0.9 * ol_cnt
    wid_default = b,              -- w_id = default(1, scale) (--rand-type)
    catch_all = b,                -- every error: ROLLBACK and go on
  }
end

-- Validates the options; raises a one-line error on an unusable combination.
function tpcc_check_options()
  set_quirks()
  local drv = ws.driver_kind()
  if ws.opt_num("scale") < 1 then
    error("tpcc: --scale must be at least 1", 0)
  end
  if ws.opt_num("tables") < 1 then
    error("tpcc: --tables must be at least 1", 0)
  end
  local fk = ws.opt_num("use_fk")
  if fk ~= 0 and fk ~= 1 and fk ~= 2 then
    error("tpcc: --use-fk must be 0 (NoFK), 1 (FK) or 2 (NoFK2)", 0)
  end
  local lvl = ws.opt_str("trx_level"):upper()
  if lvl ~= "RR" and lvl ~= "RC" and lvl ~= "SER" then
    error("tpcc: --trx-level must be RR, RC or SER", 0)
  end
  local fu = ws.opt_num("for_update")
  if fu < 0 or fu > 2 then
    error("tpcc: --for-update must be 0, 1 or 2", 0)
  end
  local td = ws.opt_num("trx_debug")
  if td < 0 or td > 6 then
    error("tpcc: --trx-debug must be 0 (the mix) or 1..6", 0)
  end
  if ws.opt_num("force_primary") ~= 0 and drv ~= "mysql" then
    error("tpcc: --force-primary=1 needs MySQL/MariaDB (index hints); " .. drv
      .. " has none", 0)
  end
  if ws.opt_bool("splittable") and drv == "sqlite" then
    error("tpcc: --splittable=yes needs MySQL or PostgreSQL (SQLite has no "
      .. "START TRANSACTION READ WRITE/READ ONLY)", 0)
  end
end

-- SQL dialect pieces ---------------------------------------------------------------------

function sql_tiny()
  return ws.driver_kind() == "mysql" and "tinyint" or "smallint"
end

function sql_datetime()
  return ws.driver_kind() == "pgsql" and "timestamp" or "datetime"
end

use_null = false

function undelivered_carrier(col)
  if use_null then
    return col .. " IS NULL"
  end
  return col .. " = 0"
end

function delivered_carrier(col)
  if use_null then
    return col .. " IS NOT NULL"
  end
  return col .. " <> 0"
end

function undelivered_date(col)
  if use_null then
    return col .. " IS NULL"
  end
  return col .. " = '" .. DEFAULT_DELIVERY_D .. "'"
end

function delivered_date(col)
  if use_null then
    return col .. " IS NOT NULL"
  end
  return col .. " <> '" .. DEFAULT_DELIVERY_D .. "'"
end

-- FOR UPDATE at lock level `lvl` (SQLite: none — its write transactions start with
-- BEGIN IMMEDIATE and hold the database write lock).
function for_update(lvl)
  if ws.driver_kind() == "sqlite" then
    return ""
  end
  if ws.opt_num("for_update") >= lvl then
    return " FOR UPDATE"
  end
  return ""
end

-- Connections ----------------------------------------------------------------------------

-- Connects and applies the workload's session setup (isolation, search_path, the
-- session options; FOREIGN_KEY_CHECKS=0 only with --tpcc-compat=percona).
function tpcc_connect()
  drv, con = ws.connect(function(c, kind)
    local lvl = ws.opt_str("trx_level"):upper()
    local names = { RR = "REPEATABLE READ", RC = "READ COMMITTED", SER = "SERIALIZABLE" }
    if kind == "mysql" then
      c:query("SET SESSION TRANSACTION ISOLATION LEVEL " .. names[lvl])
      if Q.fk_checks_off then
        c:query("SET FOREIGN_KEY_CHECKS=0")
      end
    elseif kind == "pgsql" then
      c:query("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL " .. names[lvl])
      local schema = ws.opt_str("pgsql_schema")
      if schema ~= "" and schema ~= "public" then
        c:query("SET search_path TO " .. schema)
        if sysbench.tid == 0 and sysbench.cmdline.command == "run" then
          print("DB SCHEMA " .. schema)
        end
      end
    end
  end)
  return con
end

-- Schema ----------------------------------------------------------------------------------

local function create_tables(n)
  local T, D = sql_tiny(), sql_datetime()
  local kind = ws.driver_kind()
  local opts = ws.table_options(con)
  local carrier, delivery_d
  if use_null then
    carrier = "o_carrier_id " .. T
    delivery_d = "ol_delivery_d " .. D
  else
    carrier = "o_carrier_id " .. T .. " NOT NULL DEFAULT 0"
    delivery_d = "ol_delivery_d " .. D .. " NOT NULL DEFAULT '" .. DEFAULT_DELIVERY_D .. "'"
  end
  local hist_id, hist_pk = "", ""
  if ws.opt_num("force_pk") == 1 then
    if kind == "mysql" then
      hist_id, hist_pk = "id int NOT NULL AUTO_INCREMENT, ", ", PRIMARY KEY(id)"
    elseif kind == "pgsql" then
      hist_id = "id serial, "
      hist_pk = ", PRIMARY KEY(id)"
    else
      hist_id = "id integer PRIMARY KEY, "
    end
  end
  -- SQLite cannot ALTER TABLE ADD CONSTRAINT: its foreign keys go into CREATE TABLE
  -- (and are enforced only under PRAGMA foreign_keys=ON).
  local fks = {}
  if kind == "sqlite" and ws.opt_num("use_fk") == 1 then
    for _, f in ipairs(fk_defs(n)) do
      fks[f.child] = (fks[f.child] or "") .. string.format(
        ", CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s%d(%s)", f.name, f.cols,
        f.parent, n, f.pcols)
    end
  end
  local function fk(t)
    return fks[t] or ""
  end
  local ddl = {
    warehouse = "w_id smallint NOT NULL, w_name varchar(10), w_street_1 varchar(20), "
      .. "w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), "
      .. "w_tax decimal(4,2), w_ytd decimal(12,2), PRIMARY KEY (w_id)",
    district = "d_id " .. T .. " NOT NULL, d_w_id smallint NOT NULL, d_name varchar(10), "
      .. "d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), "
      .. "d_state char(2), d_zip char(9), d_tax decimal(4,2), d_ytd decimal(12,2), "
      .. "d_next_o_id int, PRIMARY KEY (d_w_id, d_id)",
    customer = "c_id int NOT NULL, c_d_id " .. T .. " NOT NULL, c_w_id smallint NOT NULL, "
      .. "c_first varchar(16), c_middle char(2), c_last varchar(16), "
      .. "c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), "
      .. "c_state char(2), c_zip char(9), c_phone char(16), c_since " .. D .. ", "
      .. "c_credit char(2), c_credit_lim bigint, c_discount decimal(4,2), "
      .. "c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt smallint, "
      .. "c_delivery_cnt smallint, c_data text, PRIMARY KEY (c_w_id, c_d_id, c_id)",
    history = hist_id .. "h_c_id int, h_c_d_id " .. T .. ", h_c_w_id smallint, h_d_id "
      .. T .. ", h_w_id smallint, h_date " .. D .. ", h_amount decimal(6,2), "
      .. "h_data varchar(24)" .. hist_pk,
    orders = "o_id int NOT NULL, o_d_id " .. T .. " NOT NULL, o_w_id smallint NOT NULL, "
      .. "o_c_id int, o_entry_d " .. D .. ", " .. carrier .. ", o_ol_cnt " .. T .. ", "
      .. "o_all_local " .. T .. ", PRIMARY KEY (o_w_id, o_d_id, o_id)",
    new_orders = "no_o_id int NOT NULL, no_d_id " .. T .. " NOT NULL, "
      .. "no_w_id smallint NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id)",
    order_line = "ol_o_id int NOT NULL, ol_d_id " .. T .. " NOT NULL, "
      .. "ol_w_id smallint NOT NULL, ol_number " .. T .. " NOT NULL, ol_i_id int, "
      .. "ol_supply_w_id smallint, " .. delivery_d .. ", ol_quantity " .. T .. ", "
      .. "ol_amount decimal(6,2), ol_dist_info char(24), "
      .. "PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
    stock = "s_i_id int NOT NULL, s_w_id smallint NOT NULL, s_quantity smallint, "
      .. "s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), "
      .. "s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), "
      .. "s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), "
      .. "s_dist_10 char(24), s_ytd decimal(8,0), s_order_cnt smallint, "
      .. "s_remote_cnt smallint, s_data varchar(50), PRIMARY KEY (s_w_id, s_i_id)",
    item = "i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price decimal(5,2), "
      .. "i_data varchar(50), PRIMARY KEY (i_id)",
  }
  for _, t in ipairs(TABLE_ORDER) do
    con:query(string.format("CREATE TABLE IF NOT EXISTS %s%d (%s%s)%s", t, n, ddl[t],
      fk(t), opts))
  end
end

-- The secondary indexes of set n; with use_fk=2 only those queries need.
function index_defs(n)
  local all = {
    { "idx_customer", "customer", "c_w_id, c_d_id, c_last, c_first", false },
    { "idx_orders", "orders", "o_w_id, o_d_id, o_c_id, o_id", false },
    { "fkey_stock_2", "stock", "s_i_id", true },
    { "fkey_order_line_2", "order_line", "ol_supply_w_id, ol_i_id", true },
    { "fkey_history_1", "history", "h_c_w_id, h_c_d_id, h_c_id", true },
    { "fkey_history_2", "history", "h_w_id, h_d_id", true },
  }
  local out = {}
  for _, d in ipairs(all) do
    if not (d[4] and ws.opt_num("use_fk") == 2) then
      out[#out + 1] = string.format("CREATE INDEX %s%d ON %s%d (%s)", d[1], n, d[2], n,
        d[3])
    end
  end
  return out
end

function fk_defs(n)
  local defs = {
    { "new_orders", 1, "no_w_id, no_d_id, no_o_id", "orders", "o_w_id, o_d_id, o_id" },
    { "orders", 1, "o_w_id, o_d_id, o_c_id", "customer", "c_w_id, c_d_id, c_id" },
    { "customer", 1, "c_w_id, c_d_id", "district", "d_w_id, d_id" },
    { "history", 1, "h_c_w_id, h_c_d_id, h_c_id", "customer", "c_w_id, c_d_id, c_id" },
    { "history", 2, "h_w_id, h_d_id", "district", "d_w_id, d_id" },
    { "district", 1, "d_w_id", "warehouse", "w_id" },
    { "order_line", 1, "ol_w_id, ol_d_id, ol_o_id", "orders", "o_w_id, o_d_id, o_id" },
    { "order_line", 2, "ol_supply_w_id, ol_i_id", "stock", "s_w_id, s_i_id" },
    { "stock", 1, "s_w_id", "warehouse", "w_id" },
    { "stock", 2, "s_i_id", "item", "i_id" },
  }
  local out = {}
  for _, d in ipairs(defs) do
    out[#out + 1] = { name = string.format("fkey_%s_%d_%d", d[1], d[2], n), child = d[1],
      cols = d[3], parent = d[4], pcols = d[5] }
  end
  return out
end

local function create_indexes_and_fks(n)
  for _, s in ipairs(index_defs(n)) do
    con:query(s)
  end
  if ws.opt_num("use_fk") == 1 and ws.driver_kind() ~= "sqlite" then
    if ws.driver_kind() == "mysql" and not Q.fk_checks_off then
      -- the data is consistent by construction: let InnoDB add the keys in place
      con:query("SET FOREIGN_KEY_CHECKS=0")
    end
    for _, f in ipairs(fk_defs(n)) do
      con:query(string.format(
        "ALTER TABLE %s%d ADD CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s%d(%s)",
        f.child, n, f.name, f.cols, f.parent, n, f.pcols))
    end
    if ws.driver_kind() == "mysql" and not Q.fk_checks_off then
      con:query("SET FOREIGN_KEY_CHECKS=1")
    end
  end
end

-- Random helpers --------------------------------------------------------------------------

local rand = sysbench.rand
local floor = math.floor

local SYLLABLES = { "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION",
  "EING" }

function lastname(num)
  return SYLLABLES[floor(num / 100) + 1] .. SYLLABLES[floor(num / 10) % 10 + 1]
    .. SYLLABLES[num % 10 + 1]
end

local nurand_c = {}

-- NURand(A, x, y) of TPC-C 2.1.6. C is a per-worker constant per A (intent); with
-- --tpcc-compat=percona it is redrawn on every call (the reference's quirk).
function nurand(A, x, y)
  local c
  if Q.nurand_c_per_call then
    c = rand.uniform(0, A)
  else
    c = nurand_c[A]
    if c == nil then
      c = rand.uniform(0, A)
      nurand_c[A] = c
    end
  end
  return ((bit.bor(rand.uniform(0, A), rand.uniform(x, y)) + c) % (y - x + 1)) + x
end

-- A warehouse other than home (intent) — or home itself (reference quirk).
function other_ware(home)
  local scale = ws.opt_num("scale")
  if scale <= 1 or Q.other_ware_home then
    return home
  end
  local w = rand.uniform(1, scale - 1)
  if w >= home then
    w = w + 1
  end
  return w
end

function letters(n)
  return rand.string(string.rep("@", n))
end

function digits(n)
  return rand.string(string.rep("#", n))
end

-- ONE random letter repeated n times (the reference's compressible strings).
function letterx(n)
  return string.rep(rand.string("@"), n)
end

local function udouble()
  return rand.uniform_double()
end

-- Loader -----------------------------------------------------------------------------------

-- Bulk INSERTs on the loader connection (bmk_workload_support.bulk).
local function bulk(prefix, rows_fn)
  ws.bulk(con, prefix, rows_fn)
end

local function load_items(n)
  bulk(string.format("INSERT INTO item%d (i_id, i_im_id, i_name, i_price, i_data) VALUES",
    n), function(add)
    for i = 1, MAXITEMS do
      local im = rand.uniform(1, 10000)
      local price = udouble() * 100 + 1
      local name = string.format("item-%d-%f-%s", im, price, letters(5))
      local data = string.format("data-%s-%s", name, letters(5))
      add(string.format("(%d,%d,'%s',%.2f,'%s')", i, im, name:sub(1, 24), price,
        data:sub(1, 50)))
    end
  end)
end

local function address()
  return string.format("'street1-%s','street2-%s','city-%s','%s','zip-%s'", letters(10),
    letters(10), letters(10), letters(2), digits(5))
end

local function load_warehouse(w, n)
  local undelivered_carrier_v = use_null and "NULL" or "0"
  local undelivered_date_v = use_null and "NULL" or ("'" .. DEFAULT_DELIVERY_D .. "'")
  local now = "CURRENT_TIMESTAMP"

  con:query(string.format("INSERT INTO warehouse%d (w_id, w_name, w_street_1, w_street_2, "
    .. "w_city, w_state, w_zip, w_tax, w_ytd) VALUES (%d,'name-%s',%s,%.2f,300000)", n, w,
    letters(5), address(), udouble() * 0.2))

  bulk(string.format("INSERT INTO district%d (d_id, d_w_id, d_name, d_street_1, "
    .. "d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id) VALUES", n),
    function(add)
      for d = 1, DIST_PER_WARE do
        add(string.format("(%d,%d,'name-%s',%s,%.2f,30000,3001)", d, w, letters(5),
          address(), udouble() * 0.2))
      end
    end)

  bulk(string.format("INSERT INTO customer%d (c_id, c_d_id, c_w_id, c_first, c_middle, "
    .. "c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, "
    .. "c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, "
    .. "c_delivery_cnt, c_data) VALUES", n), function(add)
    for d = 1, DIST_PER_WARE do
      for c = 1, CUST_PER_DIST do
        local last
        if c <= 1000 then
          last = lastname(c - 1)
        else
          last = lastname(nurand(255, 0, 999))
        end
        local credit = rand.uniform(1, 100) > 10 and "GC" or "BC"
        add(string.format("(%d,%d,%d,'first-%s','OE','%s',%s,'%s',%s,'%s',50000,%.2f,"
          .. "-10,10,1,0,'%s')", c, d, w, letters(rand.uniform(2, 10)), last, address(),
          digits(16), now, credit, udouble() * 0.5, letterx(rand.uniform(300, 500))))
      end
    end
  end)

  bulk(string.format("INSERT INTO history%d (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, "
    .. "h_date, h_amount, h_data) VALUES", n), function(add)
    for d = 1, DIST_PER_WARE do
      for c = 1, CUST_PER_DIST do
        add(string.format("(%d,%d,%d,%d,%d,%s,10,'%s')", c, d, w, d, w, now,
          letterx(rand.uniform(12, 24))))
      end
    end
  end)

  -- One customer permutation per (warehouse, set), shared by the 10 districts.
  local perm = {}
  for i = 1, ORD_PER_DIST do
    perm[i] = i
  end
  for i = ORD_PER_DIST, 2, -1 do
    local j = rand.uniform(1, i)
    perm[i], perm[j] = perm[j], perm[i]
  end
  local ol_cnt = {}
  bulk(string.format("INSERT INTO orders%d (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, "
    .. "o_carrier_id, o_ol_cnt, o_all_local) VALUES", n), function(add)
    for d = 1, DIST_PER_WARE do
      ol_cnt[d] = {}
      for o = 1, ORD_PER_DIST do
        local cnt = rand.uniform(5, 15)
        ol_cnt[d][o] = cnt
        local carrier = o < NEW_ORD_FIRST and tostring(rand.uniform(1, 10))
          or undelivered_carrier_v
        add(string.format("(%d,%d,%d,%d,%s,%s,%d,1)", o, d, w, perm[o], now, carrier, cnt))
      end
    end
  end)

  bulk(string.format("INSERT INTO stock%d (s_i_id, s_w_id, s_quantity, s_dist_01, "
    .. "s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, "
    .. "s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data) VALUES", n),
    function(add)
      for i = 1, MAXITEMS do
        add(string.format("(%d,%d,%d,'%s','%s','%s','%s','%s','%s','%s','%s','%s','%s',"
          .. "0,0,0,'%s')", i, w, rand.uniform(10, 100), letterx(24), letterx(24),
          letterx(24), letterx(24), letterx(24), letterx(24), letterx(24), letterx(24),
          letterx(24), letterx(24), letterx(rand.uniform(26, 50))))
      end
    end)

  con:query(string.format("INSERT INTO new_orders%d (no_o_id, no_d_id, no_w_id) "
    .. "SELECT o_id, o_d_id, o_w_id FROM orders%d WHERE o_id >= %d AND o_w_id = %d", n, n,
    NEW_ORD_FIRST, w))

  bulk(string.format("INSERT INTO order_line%d (ol_o_id, ol_d_id, ol_w_id, ol_number, "
    .. "ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) "
    .. "VALUES", n), function(add)
    for d = 1, DIST_PER_WARE do
      for o = 1, ORD_PER_DIST do
        local delivered = o < NEW_ORD_FIRST
        for l = 1, ol_cnt[d][o] do
          add(string.format("(%d,%d,%d,%d,%d,%d,%s,5,%.2f,'%s')", o, d, w, l,
            rand.uniform(1, MAXITEMS), w, delivered and now or undelivered_date_v,
            delivered and 0 or udouble() * 9999.99, letterx(24)))
        end
      end
    end
  end)
end

-- prepare (PARALLEL_COMMAND): phase 1 creates the table sets n = tid+1, tid+1+P, ...
-- and loads their items; phase 2 loads warehouses w = tid+1, tid+1+P, ... into every
-- set; phase 3 adds the secondary indexes and foreign keys (before the load with
-- --tpcc-compat=percona). Phases are separated by an in-process barrier instead of the
-- reference's fixed 30 s sleep. SQLite (one writer): worker 0 does everything.
function cmd_prepare()
  tpcc_check_options()
  use_null = ws.opt_num("force_null") == 1
  local T, S = ws.opt_num("tables"), ws.opt_num("scale")
  ws.parallel_prepare("tpcc_prepare", function(tid, P, barrier)
    tpcc_connect()
    for n = tid + 1, T, P do
      print(string.format("Creating tables: table set %d", n))
      create_tables(n)
      if tonumber(con:query_row(string.format("SELECT COUNT(*) FROM warehouse%d", n))) > 0
      then
        error(string.format("tpcc: warehouse%d already holds rows; run cleanup first", n), 0)
      end
      if Q.ddl_before_load then
        create_indexes_and_fks(n)
      end
      print(string.format("Loading items: table set %d", n))
      ws.with_trx(con, function() load_items(n) end)
    end
    barrier.wait(tid, 1)
    if ws.driver_kind() == "mysql" then
      con:query("SET SESSION autocommit=1")
    end
    for w = tid + 1, S, P do
      for n = 1, T do
        print(string.format("Loading warehouse %d, table set %d", w, n))
        ws.with_trx(con, function() load_warehouse(w, n) end)
      end
    end
    barrier.wait(tid, 2)
    if not Q.ddl_before_load then
      for n = tid + 1, T, P do
        print(string.format("Creating secondary indexes%s: table set %d",
          (ws.opt_num("use_fk") == 1 and ws.driver_kind() ~= "sqlite") and " and foreign keys"
          or "", n))
        create_indexes_and_fks(n)
      end
    end
    con:disconnect()
  end)
end

function cmd_cleanup()
  tpcc_check_options()
  tpcc_connect()
  if ws.driver_kind() == "mysql" then
    con:query("SET FOREIGN_KEY_CHECKS=0")
  end
  for n = 1, ws.opt_num("tables") do
    print(string.format("Dropping table set %d ...", n))
    for _, t in ipairs(DROP_ORDER) do
      con:query(string.format("DROP TABLE IF EXISTS %s%d", t, n))
    end
  end
  con:disconnect()
end

tpcc_shm = shm
