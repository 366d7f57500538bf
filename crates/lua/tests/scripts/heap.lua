-- Each worker reports its Lua heap after loading, then churns strings and tables of
-- many sizes (freed blocks move between states through the shared pool) and checks
-- that what it kept is intact.
local done = false

function event()
  if done then
    return true
  end
  done = true
  collectgarbage()
  collectgarbage()
  local loaded_kb = collectgarbage("count")
  local keep = {}
  for i = 1, 20000 do
    local n = i % 97
    local t = {}
    for j = 1, n do
      t[j] = j * i
    end
    keep[i % 200] = { string.rep(string.char(65 + i % 26), i % 1500) .. i, t, i }
  end
  for _, v in pairs(keep) do
    local i = v[3]
    assert(v[1] == string.rep(string.char(65 + i % 26), i % 1500) .. i, "string changed")
    assert(#v[2] == i % 97, "table length changed")
    for j = 1, #v[2] do
      assert(v[2][j] == j * i, "table element changed")
    end
  end
  io.write(string.format("state_kb=%.1f\n", loaded_kb))
  io.flush()
end
