-- Recursion through a C function, which takes C stack at every level (table.sort calls
-- its comparator from C): --depth levels in each worker's one event.
sysbench.cmdline.options = {
  depth = {"levels of recursion", 150},
}

local function down(n, limit)
  if n >= limit then
    return n
  end
  local deepest = n
  local went = false
  table.sort({ 1, 2 }, function(a, b)
    if not went then
      went = true
      deepest = down(n + 1, limit)
    end
    return a < b
  end)
  return deepest
end

function event(tid)
  local ok, reached = pcall(down, 0, sysbench.opt.depth)
  print(string.format("worker %d: %s %s", tid, tostring(ok), tostring(reached)))
  return true
end
