-- A module with state of its own: each worker that requires it gets its own total.
local total = 0
return {
  add = function(n) total = total + n end,
  total = function() return total end,
}
