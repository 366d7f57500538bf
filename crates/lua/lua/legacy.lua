-- sysbench 1.0's compatibility globals, made by the prelude when a state first reads
-- one of them: the sysbench 0.5 API that older scripts (and the OLTP scripts Debian
-- ships with sysbench 1.0.20) still call. Returns them as a table; the prelude copies
-- into _G those the script has not set itself.
--
-- The db_* functions act on one connection per state, made by db_connect() or, for
-- scripts that never call it, by their first use.

local core = ...
local sb = core.sb
local rand = sb.rand
local floor = math.floor
local unpack = unpack

local legacy = {
  sb_rand = rand.default,
  sb_rand_uniform = rand.uniform,
  sb_rand_gaussian = rand.gaussian,
  -- Not rand.special: sysbench.rand has it only at the 1.0 level.
  sb_rand_special = function(a, b) return require("ffi").C.sb_rand_special(a, b) end,
  sb_rand_str = rand.string,
  DB_ERROR_NONE = 0,
  DB_ERROR_RESTART_TRANSACTION = 1,
  DB_ERROR_FAILED = 2,
}

-- A uniform 32-bit value.
function legacy.sb_rnd()
  return floor(rand.uniform_double() * 4294967296)
end

-- A value in [a, b] that no thread has had from sb_rand_uniq before, an error once the
-- range is used up (sysbench 1.0 spins forever then); without a range,
-- sysbench.rand.unique().
local uniq = core.host.api("rand_uniq")
function legacy.sb_rand_uniq(a, b)
  if a == nil and b == nil then
    return rand.unique()
  end
  local v = uniq(a, b)
  if v == nil then
    error(string.format("sb_rand_uniq(%s, %s): every value of the range has been returned",
      tostring(a), tostring(b)), 2)
  end
  return v
end

local con
local function db()
  if not con then
    con = sb.sql.driver():connect()
  end
  return con
end

function legacy.db_connect()
  db()
end

function legacy.db_disconnect()
  if con then
    con:disconnect()
    con = nil
  end
end

-- As in sysbench 1.0, a query's rows are not handed back; an error raises as
-- con:query's does (restartable ones restart the event).
function legacy.db_query(text)
  db():query(text)
end

function legacy.db_prepare(text)
  return db():prepare(text)
end

-- 0.5's binding is by reference: db_execute sends the values the bound table holds
-- then, so a script binds once and changes the table's entries before each execute.
local bound = setmetatable({}, { __mode = "k" })
local types = sb.sql.type

function legacy.db_bind_param(stmt, values)
  local params = {}
  for i = 1, #values do
    local v = values[i]
    local ty = types.VARCHAR
    if type(v) == "number" then
      ty = v % 1 == 0 and types.BIGINT or types.DOUBLE
    end
    -- No length limit: sysbench sends a longer string set later whole.
    params[i] = stmt:bind_create(ty)
  end
  stmt:bind_param(unpack(params))
  bound[stmt] = { values = values, params = params }
end

function legacy.db_bind_result()
  error("db_bind_result() is not supported by bmk: read rows from the result of "
    .. "db_execute() with rs:fetch_row(), or use con:query()", 2)
end

function legacy.db_execute(stmt)
  local b = bound[stmt]
  if b then
    local values, params = b.values, b.params
    for i = 1, #params do
      params[i]:set(values[i])
    end
  end
  return stmt:execute()
end

function legacy.db_close(stmt)
  bound[stmt] = nil
  stmt:close()
end

-- Result sets are read whole when a statement runs, so storing them is done already.
function legacy.db_store_results() end

-- A statement without rows gave a NULL result (which equals nil): nothing to free.
function legacy.db_free_results(rs)
  if rs ~= nil then
    rs:free()
  end
end

function legacy.db_bulk_insert_init(prefix)
  db():bulk_insert_init(prefix)
end

function legacy.db_bulk_insert_next(values)
  db():bulk_insert_next(values)
end

function legacy.db_bulk_insert_done()
  db():bulk_insert_done()
end

return legacy
