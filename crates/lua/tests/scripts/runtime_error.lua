-- A runtime error raised on line 6, two calls deep.
local function inner(n)
  local t = nil
  if n > 3 then
    -- the fourth event fails
    local y = t.field
    error("unreachable")
  end
end

local n = 0
function event()
  n = n + 1
  inner(n)
end
