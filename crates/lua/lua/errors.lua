-- The error path of a state, loaded by the prelude when an error needs more than its
-- message handlers: describing error tables, and finishing an event whose run raised
-- an error (restarting it when the error is restartable, as sysbench does).

local core = ...
local sb, C, RESTART_EVENT = core.sb, core.C, core.RESTART_EVENT
local event_error = core.event_error
local type, tostring, xpcall, error = type, tostring, xpcall, error

local errors = {}

-- Text of an error value for the user.
local function describe(e)
  if type(e) == "table" then
    if e.__bmk_failure then
      return e.__bmk_failure
    elseif e.sql_errmsg ~= nil then
      return string.format("SQL error, errno = %s, state = '%s': %s",
        tostring(e.sql_errno), tostring(e.sql_state), tostring(e.sql_errmsg))
    end
  end
  return tostring(e)
end

local function fail(err)
  if type(err) == "table" and err.__bmk_failure then
    error(err, 0)
  end
  error({ __bmk_failure = describe(err) }, 0)
end

local abandon_event_if_stopping = core.host.api("abandon_event_if_stopping")

-- Finishes the event whose run raised `err`: raises it again unless it is
-- restartable, else calls before_restart_event and runs event() again until it
-- completes. Returns whether that run asked to stop the worker. Unlike sysbench's,
-- the restarts end when the run stops (the time limit, Ctrl-C): when every attempt
-- conflicts with another worker's, they would go on for ever. The event is then
-- given up, unrecorded, and so is the worker.
function errors.finish_event(tid, err)
  while true do
    if not (type(err) == "table" and err.errcode == RESTART_EVENT) then
      fail(err)
    end
    if abandon_event_if_stopping() then
      return true
    end
    local hook = sb.hooks.before_restart_event
    if hook then
      hook(err)
    end
    local ok, res = xpcall(event, event_error, tid)
    if ok then
      C.sb_event_stop(tid)
      return res
    end
    err = res
  end
end

errors.describe = describe

return errors
